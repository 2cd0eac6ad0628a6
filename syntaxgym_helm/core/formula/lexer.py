"""The tokenizer of prediction formulas, and its error messages for malformed region references.

:func:`_tokenize` splits a formula into tokens (:class:`_Token`: numbers, region references, names,
operators, brackets), skipping whitespace, and raises :class:`FormulaError` with a 1-based column
and a hint for anything it cannot read: operators from other languages (``==``, ``&&``), region
references that are meant but malformed (:func:`_region_error` says which part is wrong), and
numbers or region numbers that are too large.  :func:`_quote` formats text for every error
message of the package.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from syntaxgym_helm.core.errors import FormulaError
from syntaxgym_helm.core.formula.nodes import RegionRef

# Region numbers are small; the cap keeps int() away from its digit limit.
_MAX_REGION_DIGITS = 9

_CONDITION_RE = re.compile(r"[A-Za-z0-9_-]+")
_REGION_SHAPE = (
    "a region reference looks like `(6;%condition%)`, or `(*;%condition%)` for the whole sentence"
)


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # "number", "region", "name", "op", "open", "close", "comma" or "end"
    text: str
    pos: int  # 0-based offset into the formula
    value: float | RegionRef | None = None

    @property
    def column(self) -> int:
        return self.pos + 1

    @property
    def end(self) -> int:
        return self.pos + len(self.text)


_WS = r"[ \t\r\n\f\v]*"
_REGION_RE = re.compile(
    rf"\({_WS}([0-9]+|\*){_WS};{_WS}%{_WS}([A-Za-z0-9_-]+){_WS}%{_WS}\)"
)
# An opener followed by one word and `;` or `%` is meant as a region reference, even if
# malformed: `;` and `%` mean nothing anywhere else.
_REGION_INTENT_RE = re.compile(rf"[(\[]{_WS}[^ \t\r\n\f\v()\[\];%]*{_WS}[;%]")
_NUMBER_RE = re.compile(r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WS_RE = re.compile(r"[ \t\r\n\f\v]+")
_TWO_CHAR_OPS = ("<=", ">=")
_ONE_CHAR_OPS = "+-*/<>=&|~"
# Operators from other languages, with what to write instead.
_MISTAKES = {
    "==": "use `=` (approximate equality)",
    "!=": "write `~[a = b]` for 'not equal'",
    "<>": "write `~[a = b]` for 'not equal'",
    "=<": "write `<=`",
    "=>": "write `>=`",
    "&&": "use a single `&`",
    "||": "use a single `|`",
    "!": "use `~` for 'not'",
}


def _quote(text: str, limit: int = 40) -> str:
    """``text`` in backticks for an error message, shortened, and escaped if unprintable."""
    if len(text) > limit:
        text = text[: limit - 11] + "..." + text[-8:]
    if text.isprintable() and "`" not in text:
        return f"`{text}`"
    return repr(text)


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    pos = 0
    while pos < len(text):
        space = _WS_RE.match(text, pos)
        if space:
            pos = space.end()
            continue
        token = _next_token(text, pos)
        tokens.append(token)
        pos = token.end
    # The end sits just after the last token, so "missing operand" points past real text.
    tokens.append(_Token("end", "", tokens[-1].end if tokens else 0))
    return tokens


def _next_token(text: str, pos: int) -> _Token:
    char = text[pos]
    if char in "([":
        return _bracket_token(text, pos)
    if char in ")]":
        return _Token("close", char, pos)
    if char == ",":
        return _Token("comma", char, pos)
    number = _NUMBER_RE.match(text, pos)
    if number:
        return _number_token(number.group(), pos)
    name = _NAME_RE.match(text, pos)
    if name:
        return _Token("name", name.group(), pos)
    for mistake, advice in _MISTAKES.items():
        if text.startswith(mistake, pos):
            raise FormulaError(f"{_quote(mistake)} is not an operator", column=pos + 1, hint=advice)
    two = text[pos : pos + 2]
    if two in _TWO_CHAR_OPS:
        return _Token("op", two, pos)
    if char in _ONE_CHAR_OPS:
        return _Token("op", char, pos)
    hint = (
        _REGION_SHAPE
        if char in ";%"
        else (
            "formulas use region references, numbers, `abs`, `+ - * /`, `< > <= >= =`, `& | ~` "
            "and brackets"
        )
    )
    raise FormulaError(f"unexpected character {_quote(char)}", column=pos + 1, hint=hint)


def _number_token(text: str, pos: int) -> _Token:
    value = float(text)
    if not math.isfinite(value):
        raise FormulaError(f"number {_quote(text)} is too large", column=pos + 1)
    return _Token("number", text, pos, value)


def _bracket_token(text: str, pos: int) -> _Token:
    region = _REGION_RE.match(text, pos) if text[pos] == "(" else None
    if region:
        number, condition = region.groups()
        ref = RegionRef(_region_number(number, region.start(1)), condition)
        return _Token("region", region.group(), pos, ref)
    if _REGION_INTENT_RE.match(text, pos):
        raise _region_error(text, pos)
    return _Token("open", text[pos], pos)


def _region_number(digits: str, pos: int) -> int | None:
    if digits == "*":
        return None
    if len(digits) > _MAX_REGION_DIGITS:
        raise FormulaError(f"region number {_quote(digits)} is too large", column=pos + 1)
    number = int(digits)
    if number < 1:
        raise FormulaError(
            f"region number {_quote(digits)} is not allowed",
            column=pos + 1,
            hint="regions are numbered from 1; use `*` for the whole sentence",
        )
    return number


def _skip_space(text: str, pos: int) -> int:
    space = _WS_RE.match(text, pos)
    return space.end() if space else pos


def _found(text: str, pos: int) -> str:
    return _quote(text[pos]) if pos < len(text) else "the end of the formula"


def _region_error(text: str, start: int) -> FormulaError:
    """Say what is wrong with the region reference that seems to start at ``start``."""

    def fail(message: str, pos: int) -> FormulaError:
        return FormulaError(message, column=pos + 1, hint=_REGION_SHAPE)

    pos = _skip_space(text, start + 1)
    match = re.match(r"[^ \t\r\n\f\v()\[\];%]*", text[pos:])
    word = match.group() if match else ""  # (it matches the empty string too)
    if not word:
        return fail("region reference is missing its region number", pos)
    if word != "*" and not re.fullmatch(r"[0-9]+", word):
        return fail(f"bad region number {_quote(word)}", pos)
    try:
        _region_number(word, pos)
    except FormulaError as error:
        return error
    pos = _skip_space(text, pos + len(word))
    if not text.startswith(";", pos):
        return fail(f"expected `;` after the region number, found {_found(text, pos)}", pos)
    pos = _skip_space(text, pos + 1)
    if not text.startswith("%", pos):
        return fail(f"expected `%` before the condition name, found {_found(text, pos)}", pos)
    pos = _skip_space(text, pos + 1)
    name = _CONDITION_RE.match(text, pos)
    if not name:
        if text.startswith("%", pos):
            return fail("empty condition name", pos)
        return fail(
            f"unexpected {_found(text, pos)} in a condition name (letters, digits, `_`, `-`)", pos
        )
    pos = name.end()
    if pos < len(text) and text[pos] not in "%) \t\r\n\f\v":
        return fail(
            f"unexpected {_found(text, pos)} in the condition name "
            f"{_quote(text[name.start() : pos + 1])}"
            " (letters, digits, `_` and `-` only)",
            pos,
        )
    pos = _skip_space(text, pos)
    if not text.startswith("%", pos):
        return fail(
            f"expected `%` after the condition name {_quote(name.group())}, "
            f"found {_found(text, pos)}",
            pos,
        )
    pos = _skip_space(text, pos + 1)
    if text[start] == "[":
        return fail("a region reference is written with round brackets, not `[`", start)
    return fail(f"expected `)` to close the region reference, found {_found(text, pos)}", pos)
