"""The checker's state and vocabulary: the report it fills, how an error is added and placed,
dacite's errors as located ones, and how JSON values are named in messages."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, TypeVar

import dacite

from syntaxgym_helm.core.errors import SuiteError
from syntaxgym_helm.core.suite_data import Suite

#: Errors past this many are not collected: the first ones are what a person fixes first.
MAX_ERRORS = 50
#: Item and region numbers longer than this are refused before they are compared or printed.
MAX_NUMBER_DIGITS = 18
#: Item and region numbers must lie strictly between minus this and this.
NUMBER_LIMIT = 10 ** MAX_NUMBER_DIGITS

_T = TypeVar("_T")


@dataclass
class SuiteReport:
    """What checking one suite found."""

    source: str
    suite: Suite | None = None
    errors: list[SuiteError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    def raise_first(self) -> None:
        if self.errors:
            raise self.errors[0]
        if self.suite is None:  # a bug in this module; still a SuiteError for the caller
            raise SuiteError("the suite could not be built", self.source,
                             hint="please report this suite to the syntaxgym-helm developers")


class TooManyErrors(Exception):
    """Raised by :meth:`Checker.add` at ``MAX_ERRORS``, to end the walk."""


class Checker:
    """One pass over one suite's JSON, collecting errors instead of stopping at the first."""

    def __init__(self, source: str, default_name: str | None = None) -> None:
        self.report = SuiteReport(source)
        #: The suite's name when ``meta.name`` is missing (None: the stem of ``source``).
        self.default_name = default_name
        #: Each region whose text reading changed: (condition name, region number, text
        #: written, text scored), in the order met.
        self.text_changes: list[tuple[str, int, str, str]] = []
        #: Per item number, what reading changed in the item's text, for people.
        self.item_notes: dict[int, tuple[str, ...]] = {}

    def error(self, path: str, message: str, hint: str | None = None) -> None:
        self.add(SuiteError(message, self.report.source, path or None, hint=hint))

    def add(self, error: SuiteError) -> None:
        self.report.errors.append(error)
        if len(self.report.errors) >= MAX_ERRORS:
            raise TooManyErrors

    def add_located(self, error: SuiteError, path: str) -> None:
        self.add(error.located(file=self.report.source, path=path))

    def warn(self, path: str, message: str) -> None:
        self.report.warnings.append(f"{self.report.source}:{path}: {message}")

    def build(self, cls: type[_T], data: Any, path: str, what: str) -> _T | None:
        """dacite's ``from_dict`` with its error turned into a located SuiteError."""
        if not isinstance(data, dict):
            self.error(path, f"{what} must be a JSON object, got {describe(data)}")
            return None
        try:
            return dacite.from_dict(cls, data, config=dacite.Config(check_types=True))
        except dacite.MissingValueError as exc:
            self.error(join_path(path, exc.field_path),
                       f"{what} lacks the required field \"{exc.field_path}\"",
                       hint=f"add \"{exc.field_path}\"")
        except dacite.WrongTypeError as exc:
            self.error(join_path(path, exc.field_path),
                       f"expected {type_name(exc.field_type)}, got {describe(exc.value)}")
        except dacite.DaciteError as exc:
            self.error(path, f"malformed {what}: {exc}")
        return None


    def small_number(self, value: Any, path: str, what: str) -> bool:
        """Whether ``value`` (an int, as dacite checked) is a usable item or region number;
        reports a boolean or a number too long to be one. Checked before a number is compared
        or printed: Python cannot even print an integer of over 4,300 digits."""
        if isinstance(value, bool):
            self.error(path, f"expected an integer, got {describe(value)}")
            return False
        if abs(value) >= NUMBER_LIMIT:
            self.error(path, f"the {what} is too large: it has more than {MAX_NUMBER_DIGITS} "
                       "digits", hint=f"number {what}s 1, 2, 3, ...")
            return False
        return True


def join_path(path: str, field_path: str | None) -> str:
    """``field_path`` (dacite's path of the field inside the object; None: the object itself)
    under ``path``."""
    if field_path is None:
        return path
    return f"{path}.{field_path}" if path else field_path


def type_name(field_type: Any) -> str:
    names = {str: "a string", int: "an integer", dict: "a JSON object", list: "a JSON list"}
    if field_type in names:
        return names[field_type]
    args = getattr(field_type, "__args__", ())
    parts = [names.get(arg, getattr(arg, "__name__", str(arg))) for arg in args
             if arg is not type(None)]
    return " or ".join(parts) if parts else str(field_type)


def describe(value: Any) -> str:
    """E.g. ``an integer 5``, ``a JSON list``: what a person sees in the JSON."""
    kind = {dict: "a JSON object", list: "a JSON list", str: "a string", bool: "a boolean",
            int: "an integer", float: "a number", type(None): "null"}.get(type(value), "a value")
    if isinstance(value, (dict, list)):
        return kind
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        return f"{kind} too large to show"  # str() of one over 4,300 digits raises
    try:
        shown = json.dumps(value)
    except (TypeError, ValueError):  # not JSON (a caller's Python object)
        shown = type(value).__name__
    if len(shown) > 40:
        shown = shown[:37] + "..."
    return f"{kind} {shown}"
