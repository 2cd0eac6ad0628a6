"""Typed access to decoded JSON that raises :class:`SuiteError` at the JSON path of a bad value."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from typing import Any

from syntaxgym_helm.core.errors import SuiteError


class Reader:
    """Typed access to the decoded config, raising located errors."""

    def __init__(self, source: str) -> None:
        self.source = source

    def error(self, path: str, message: str, hint: str | None = None) -> SuiteError:
        return SuiteError(message, self.source, path or None, hint=hint)

    def object(self, value: Any, path: str, keys: Iterable[str] | None = None,
               required: Iterable[str] = ()) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.error(path, f"expected an object, got {describe(value)}")
        if keys is not None:
            known = list(keys)
            for key in value:
                if key not in known:
                    raise self.error(join_path(path, key), f"unknown key {key!r}",
                                     hint=suggest(key, known, "known keys"))
        for key in required:
            if key not in value:
                raise self.error(join_path(path, key), f"missing required key {key!r}")
        return value

    def list(self, value: Any, path: str, nonempty: bool = True) -> list[Any]:
        if not isinstance(value, list):
            raise self.error(path, f"expected a list, got {describe(value)}")
        if nonempty and not value:
            raise self.error(path, "the list is empty")
        return value

    def string(self, value: Any, path: str, pattern: re.Pattern[str] | None = None,
               what: str = "a string") -> str:
        if not isinstance(value, str):
            raise self.error(path, f"expected {what}, got {describe(value)}")
        if pattern is not None and not pattern.fullmatch(value):
            raise self.error(path, f"{value!r} is not a valid name",
                             hint="use letters, digits and '_' (not starting with a digit)")
        return value

    def integer(self, value: Any, path: str, minimum: int, maximum: int | None = None) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(path, f"expected an integer, got {describe(value)}")
        if value < minimum or (maximum is not None and value > maximum):
            upper = f" and at most {maximum}" if maximum is not None else ""
            raise self.error(path, f"{value} is out of range",
                             hint=f"use at least {minimum}{upper}")
        return value


def join_path(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def suggest(name: str, known: list[str], what: str) -> str:
    close = difflib.get_close_matches(name, known, n=1)
    guess = f"; did you mean {close[0]!r}?" if close else ""
    return f"{what}: {', '.join(known) or 'none'}{guess}"


def describe(value: Any) -> str:
    kinds = {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
             int: "an integer", float: "a number", type(None): "null"}
    kind = kinds.get(type(value), type(value).__name__)
    if isinstance(value, (dict, list)):
        return kind
    shown = repr(value)
    return f"{kind} {shown[:37] + '...' if len(shown) > 40 else shown}"
