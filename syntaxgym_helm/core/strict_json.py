"""Decoding suite JSON strictly: a repeated key or an absurdly long number is an error, located.

Python's ``json`` keeps the last of two equal keys in an object and drops the other silently (a
suite with two ``predictions`` keys would lose one), and refuses integers of more than 4,300
digits with a message about ``sys.set_int_max_str_digits``. :func:`decode_json` refuses both
with the file, the JSON path, the line and the column.

Reading goes at the C decoder's speed; only when it finds a problem is the text read again,
by the pure-Python scanner with an object and an array parser that track where they are, to
say where the problem is.
"""

from __future__ import annotations

import json
import json.decoder
import json.scanner
import re
from collections.abc import Callable
from typing import Any, NoReturn

from syntaxgym_helm.core.errors import SuiteError

#: Longest integer read, in digits: what Python itself converts by default. Real suites' numbers
#: (item and region numbers) are short; the validator has its own, tighter bound on those.
MAX_INT_DIGITS = 4300

# The internals of CPython's json module that the slow pass drives, which typeshed does not
# declare: typed here once.
_Scan = Callable[[str, int], tuple[Any, int]]
_py_make_scanner: Callable[[json.JSONDecoder], _Scan] = (
    json.scanner.py_make_scanner)  # type: ignore[attr-defined]  # an internal (see above)
_scanstring: Callable[[str, int, bool], tuple[str, int]] = (
    json.decoder.scanstring)  # type: ignore[attr-defined]  # an internal (see above)
_WHITESPACE: re.Pattern[str] = json.decoder.WHITESPACE  # type: ignore[attr-defined]  # an internal


class _Refused(Exception):
    """A problem the fast pass found; the slow pass locates it."""


def decode_json(text: str, source: str) -> Any:
    """Decode ``text`` (the JSON of the file named ``source``); raise a located
    :class:`SuiteError` if it is not JSON, repeats a key in an object, holds an integer of
    more than ``MAX_INT_DIGITS`` digits, or nests too deeply."""
    try:
        return json.loads(text, object_pairs_hook=_no_repeats, parse_int=_bounded_int)
    except json.JSONDecodeError as exc:
        raise SuiteError(f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}",
                         source, hint="a suite file is one JSON object") from None
    except RecursionError:
        raise SuiteError("JSON nested too deeply to read", source) from None
    except _Refused:
        _Locator(text, source).locate()
        raise  # not reached: the locator raises


def _no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise _Refused
    return result


def _bounded_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise _Refused
    return int(digits)


class _Locator:
    """The slow pass: the pure-Python scanner, whose object and array parsers are replaced by
    ones that keep the JSON path, report a repeated key or a long integer where it is, and
    build nothing (the text was already read once, so it is known to be valid JSON)."""

    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.source = source
        self.path: list[str | int] = []
        self.value_at = 0  # offset of the value being scanned, for a long integer
        context = json.JSONDecoder(parse_int=self._int)
        # The pure-Python scanner reads its parsers from these attributes of the decoder.
        context.parse_object = self._object  # type: ignore[attr-defined]  # an internal hook
        context.parse_array = self._array  # type: ignore[attr-defined]  # an internal hook
        self.scan = _py_make_scanner(context)

    def locate(self) -> None:
        try:
            self._value(_skip(self.text, 0))
        except RecursionError:  # the Python scanner nests deeper per level than the C one
            pass
        raise SuiteError("the JSON has a repeated key or an integer that is too long",
                         self.source, hint="no other detail could be found")

    def _value(self, at: int) -> int:
        self.value_at = at
        return self.scan(self.text, at)[1]

    def _object(self, s_and_end: tuple[str, int], strict: bool, *_: Any) -> tuple[None, int]:
        text, end = s_and_end
        seen: dict[str, int] = {}
        end = _skip(text, end)
        if text[end] == "}":
            return None, end + 1
        while True:
            key, after = _scanstring(text, end + 1, strict)
            if key in seen:
                self._fail(f"the key {json.dumps(key)} appears twice in one object, at "
                           f"{self._line_column(seen[key])} and {self._line_column(end)}",
                           "remove one: JSON readers keep only the last, silently")
            seen[key] = end
            self.path.append(key)
            end = _skip(text, self._value(_skip(text, _skip(text, after) + 1)))
            self.path.pop()
            if text[end] == "}":
                return None, end + 1
            end = _skip(text, end + 1)

    def _array(self, s_and_end: tuple[str, int], *_: Any) -> tuple[None, int]:
        text, end = s_and_end
        end = _skip(text, end)
        if text[end] == "]":
            return None, end + 1
        index = 0
        while True:
            self.path.append(index)
            end = _skip(text, self._value(end))
            self.path.pop()
            if text[end] == "]":
                return None, end + 1
            end = _skip(text, end + 1)
            index += 1

    def _int(self, digits: str) -> int:
        if len(digits.lstrip("-")) > MAX_INT_DIGITS:
            self._fail(f"the number at {self._line_column(self.value_at)} is too large: it has "
                       f"{len(digits.lstrip('-'))} digits (at most {MAX_INT_DIGITS} are read)",
                       "suite numbers (item and region numbers) are small integers")
        return 0

    def _fail(self, message: str, hint: str) -> NoReturn:
        path = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in self.path)
        raise SuiteError(message, self.source, path.lstrip(".") or None, hint=hint)

    def _line_column(self, offset: int) -> str:
        line = self.text.count("\n", 0, offset) + 1
        return f"line {line}, column {offset - self.text.rfind(chr(10), 0, offset)}"


def _skip(text: str, at: int) -> int:
    """The offset of the first non-whitespace character at or after ``at``."""
    match = _WHITESPACE.match(text, at)  # matches the empty string too: never None
    assert match is not None
    return match.end()
