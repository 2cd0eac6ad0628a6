"""Region templates: the text of one region of one condition, with slots to fill.

Syntax (inside a region template string):

- ``$subj`` is the ``form`` feature of the entry filling slot ``subj``;
- ``$subj.pl`` is its ``pl`` feature;
- ``${subj.pl}`` is the same, for text glued to letters (``${subj.sg}'s``), and takes filters:
  ``${subj.sg|cap}`` (first letter upper case), ``|upper``, ``|lower``;
- ``$$`` is a literal dollar sign.

Rendered text has its whitespace collapsed (an empty optional feature leaves no double space),
so a rendered region is exactly what a suite file holds.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from syntaxgym_helm.core.errors import SuiteError

#: Filters a ``${...|filter}`` reference may apply, by name.
FILTERS: dict[str, Callable[[str], str]] = {
    "cap": lambda text: text[:1].upper() + text[1:],
    "upper": str.upper,
    "lower": str.lower,
}
#: The feature a bare ``$slot`` stands for.
DEFAULT_FEATURE = "form"

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_BARE = re.compile(rf"\$({_NAME})(?:\.({_NAME}))?")
_BRACED = re.compile(rf"\s*({_NAME})(?:\.({_NAME}))?\s*((?:\|\s*{_NAME}\s*)*)")


@dataclass(frozen=True)
class Literal:
    """Text copied as it is."""

    text: str


@dataclass(frozen=True)
class SlotRef:
    """A reference to one feature of the entry that fills a slot."""

    slot: str
    feature: str
    filters: tuple[str, ...]
    column: int  # 1-based, for messages

    def __str__(self) -> str:
        suffix = "".join(f"|{name}" for name in self.filters)
        return f"${{{self.slot}.{self.feature}{suffix}}}"


Part = Literal | SlotRef


@dataclass(frozen=True)
class Template:
    """A parsed region template: literal text and slot references, in order."""

    source: str
    parts: tuple[Part, ...]

    @property
    def refs(self) -> tuple[SlotRef, ...]:
        return tuple(part for part in self.parts if isinstance(part, SlotRef))

    def render(self, lookup: Callable[[SlotRef], str]) -> str:
        """The region's text, with each reference's value from ``lookup``; whitespace collapsed."""
        pieces = []
        for part in self.parts:
            if isinstance(part, Literal):
                pieces.append(part.text)
                continue
            value = lookup(part)
            for name in part.filters:
                value = FILTERS[name](value)
            pieces.append(value)
        return " ".join("".join(pieces).split())


def parse_template(text: str) -> Template:
    """Parse a region template; raise :class:`SuiteError` (with a column) if it is malformed."""
    parts: list[Part] = []
    literal: list[str] = []
    pos = 0
    while pos < len(text):
        dollar = text.find("$", pos)
        if dollar < 0:
            literal.append(text[pos:])
            break
        literal.append(text[pos:dollar])
        if text.startswith("$$", dollar):
            literal.append("$")
            pos = dollar + 2
            continue
        if text.startswith("${", dollar):
            ref, pos = _braced(text, dollar)
        else:
            match = _BARE.match(text, dollar)
            if match is None:
                raise SuiteError(f"'$' must be followed by a slot name, '{{' or '$' in {text!r}",
                                 column=dollar + 1,
                                 hint="write $slot, $slot.feature, ${slot.feature} or $$")
            ref = SlotRef(match[1], match[2] or DEFAULT_FEATURE, (), dollar + 1)
            pos = match.end()
        if literal:
            parts.append(Literal("".join(literal)))
            literal = []
        parts.append(ref)
    if "".join(literal):
        parts.append(Literal("".join(literal)))
    return Template(text, tuple(parts))


def _braced(text: str, dollar: int) -> tuple[SlotRef, int]:
    close = text.find("}", dollar)
    if close < 0:
        raise SuiteError(f"'${{' is never closed in {text!r}", column=dollar + 1,
                         hint="close it with '}'")
    inner = text[dollar + 2:close]
    match = _BRACED.fullmatch(inner)
    if match is None:
        raise SuiteError(f"malformed reference '${{{inner}}}' in {text!r}", column=dollar + 1,
                         hint="write ${slot}, ${slot.feature} or ${slot.feature|cap}")
    filters = tuple(name.strip() for name in match[3].split("|")[1:])
    for name in filters:
        if name not in FILTERS:
            raise SuiteError(f"unknown filter {name!r} in '${{{inner}}}'", column=dollar + 1,
                             hint=f"filters are {', '.join(FILTERS)}")
    return SlotRef(match[1], match[2] or DEFAULT_FEATURE, filters, dollar + 1), close + 1

