"""Validation of suite JSON: every problem found, each located by file and JSON path.

:func:`check_suite` walks decoded JSON once, element by element (dacite checks each element's
fields and types; the walk adds the list indices dacite cannot know), and returns a
:class:`SuiteReport` holding the built :class:`~syntaxgym_helm.core.suite.Suite` (when there were no
errors), every :class:`SuiteError` found and the warnings for what it repaired (extra spaces in
region content, which real suites have, are normalised, not rejected).

An element with an error is left out of the checks that depend on it (an item with a broken
region is not compared with the other items, a formula naming an unknown condition is not
looked up in the items), so each mistake is reported once, where it is, and not again as the
knock-on problems it causes.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, TypeVar

import dacite

from syntaxgym_helm.core.errors import SuiteError
from syntaxgym_helm.core.formula import Formula, FormulaError, legacy_to_formula, parse_formula
from syntaxgym_helm.core.region_stats import METRICS
from syntaxgym_helm.core.suite import (
    Condition,
    Item,
    Prediction,
    Region,
    Suite,
    SuiteMeta,
)

#: Errors past this many are not collected: the first ones are what a person fixes first.
MAX_ERRORS = 50

_T = TypeVar("_T")

#: The top-level fields of a suite and their JSON types.
_TOP_LEVEL: dict[str, type] = {"meta": dict, "region_meta": dict, "predictions": list,
                               "items": list}
_LEGACY_KEYS = ("region_number", "l_operand", "relation", "r_operand")
_NAME_RE = re.compile(r"[A-Za-z0-9_-]+")


# Raw shapes of each JSON element, for dacite. Lists stay as raw values so the walk can index them.
@dataclass
class _RawMeta:
    name: str | None = None
    metric: str | list | None = None
    author: str | None = None
    reference: str | None = None
    description: str | None = None
    comment: str | None = None
    tags: list | None = None


@dataclass
class _RawItem:
    item_number: int
    conditions: list


@dataclass
class _RawCondition:
    condition_name: str
    regions: list


@dataclass
class _RawRegion:
    region_number: int
    content: str


@dataclass
class _RawFormulaPrediction:
    formula: str
    type: str = "formula"


@dataclass
class _RawLegacyPrediction:
    region_number: int
    l_operand: str
    relation: str
    r_operand: str


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


class _TooManyErrors(Exception):
    pass


class _Checker:
    """One pass over one suite's JSON, collecting errors instead of stopping at the first."""

    def __init__(self, source: str) -> None:
        self.report = SuiteReport(source)

    def error(self, path: str, message: str, hint: str | None = None) -> None:
        self.add(SuiteError(message, self.report.source, path or None, hint=hint))

    def add(self, error: SuiteError) -> None:
        self.report.errors.append(error)
        if len(self.report.errors) >= MAX_ERRORS:
            raise _TooManyErrors

    def add_located(self, error: SuiteError, path: str) -> None:
        self.add(error.located(file=self.report.source, path=path))

    def warn(self, path: str, message: str) -> None:
        self.report.warnings.append(f"{self.report.source}:{path}: {message}")

    def build(self, cls: Callable[..., _T], data: Any, path: str, what: str) -> _T | None:
        """dacite's ``from_dict`` with its error turned into a located SuiteError."""
        if not isinstance(data, dict):
            self.error(path, f"{what} must be a JSON object, got {_describe(data)}")
            return None
        try:
            return dacite.from_dict(cls, data, config=dacite.Config(check_types=True))  # type: ignore[arg-type]
        except dacite.MissingValueError as exc:
            self.error(_join(path, exc.field_path),
                       f"{what} lacks the required field \"{exc.field_path}\"",
                       hint=f"add \"{exc.field_path}\"")
        except dacite.WrongTypeError as exc:
            self.error(_join(path, exc.field_path),
                       f"expected {_type_name(exc.field_type)}, got {_describe(exc.value)}")
        except dacite.DaciteError as exc:
            self.error(path, f"malformed {what}: {exc}")
        return None


def check_suite(data: Any, source: str = "<suite>") -> SuiteReport:
    """Check decoded suite JSON and build the suite if it is valid."""
    checker = _Checker(source)
    try:
        _check(checker, data)
    except _TooManyErrors:
        checker.report.warnings.append(f"{source}: stopped after {MAX_ERRORS} errors")
    return checker.report


def check_suite_file(path: str | Path) -> SuiteReport:
    """Read a suite file and check it; unreadable or non-JSON files give one located error."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        return SuiteReport(source, errors=[SuiteError(
            f"cannot read the file: {exc}", source, hint="suite files are UTF-8 JSON")])
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        return SuiteReport(source, errors=[SuiteError(
            f"cannot read the file: {exc}", source, hint="check the path")])
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return SuiteReport(source, errors=[SuiteError(
            f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}", source,
            hint="a suite file is one JSON object")])
    except ValueError as exc:  # e.g. an integer longer than Python's digit limit
        return SuiteReport(source, errors=[SuiteError(f"not valid JSON: {exc}", source)])
    except RecursionError:
        return SuiteReport(source, errors=[SuiteError("JSON nested too deeply to read", source)])
    return check_suite(data, source)


def _check(checker: _Checker, data: Any) -> None:
    if not isinstance(data, dict):
        checker.error("", f"the suite must be a JSON object, got {_describe(data)}",
                      hint="a suite has \"meta\", \"region_meta\", \"predictions\" and \"items\"")
        return
    parts: dict[str, Any] = {}
    for key, kind in _TOP_LEVEL.items():
        if key not in data:
            checker.error(key, f"the suite lacks the required field \"{key}\"",
                          hint=f"add \"{key}\"")
        elif not isinstance(data[key], kind):
            checker.error(key, f"expected {_type_name(kind)}, got {_describe(data[key])}")
        else:
            parts[key] = data[key]
    meta = _check_meta(checker, parts["meta"]) if "meta" in parts else None
    region_meta = (_check_region_meta(checker, parts["region_meta"])
                   if "region_meta" in parts else None)
    items = _check_items(checker, parts["items"], region_meta) if "items" in parts else []
    condition_names = {c.condition_name for c in items[0][1].conditions} if items else set()
    predictions = (_check_predictions(checker, parts["predictions"], region_meta, condition_names)
                   if "predictions" in parts else [])
    _check_refs_present(checker, items, predictions)
    if checker.report.errors or meta is None or region_meta is None:
        return
    checker.report.suite = Suite(meta, region_meta, tuple(predictions),
                                 tuple(item for _, item in items), checker.report.source)


def _check_meta(checker: _Checker, data: dict) -> SuiteMeta | None:
    raw = checker.build(_RawMeta, data, "meta", "meta")
    if raw is None:
        return None
    metrics = _check_metrics(checker, raw.metric)
    tags = tuple(raw.tags or ())
    for index, tag in enumerate(tags):
        if not isinstance(tag, str):
            checker.error(f"meta.tags[{index}]", f"a tag must be a string, got {_describe(tag)}")
    known = {f.name for f in dataclasses.fields(_RawMeta)}
    extra = {key: value for key, value in data.items() if key not in known}
    name = raw.name
    if not name:
        name = Path(checker.report.source).stem
        checker.warn("meta.name", f"no suite name; using the file name {name!r}")
    if metrics is None:
        return None
    return SuiteMeta(name=name, metrics=metrics, author=raw.author or "",
                     reference=raw.reference or "", description=raw.description or "",
                     comment=raw.comment or "", tags=tags, extra=extra)


def _check_metrics(checker: _Checker, metric: str | list | None) -> tuple[str, ...] | None:
    if metric is None:
        return ("sum",)
    if metric == "all":
        return METRICS
    names = [metric] if isinstance(metric, str) else metric
    if not names:
        checker.error("meta.metric", "the metric list is empty", hint=_metric_hint())
        return None
    good = True
    for index, name in enumerate(names):
        path = "meta.metric" if isinstance(metric, str) else f"meta.metric[{index}]"
        if not isinstance(name, str) or name not in METRICS:
            shown = repr(name) if isinstance(name, str) else _describe(name)
            checker.error(path, f"unknown metric {shown}", hint=_metric_hint())
            good = False
    if good and len(set(names)) != len(names):
        checker.error("meta.metric", "a metric is listed twice", hint="list each metric once")
        good = False
    return tuple(names) if good else None


def _metric_hint() -> str:
    return f"use one of {', '.join(METRICS)}, a list of them, or \"all\""


def _check_region_meta(checker: _Checker, data: dict) -> dict[int, str] | None:
    if not data:
        checker.error("region_meta", "no regions are declared",
                      hint="declare region names as {\"1\": \"subject\", \"2\": \"verb\", ...}")
        return None
    numbers: dict[int, str] = {}
    for key, name in data.items():
        path = f"region_meta.{key}"
        if not isinstance(key, str) or not re.fullmatch(r"[1-9][0-9]{0,8}", key):
            checker.error(path, f"region key {key!r} is not a region number",
                          hint="number regions \"1\", \"2\", ... in order")
        elif int(key) in numbers:
            checker.error(path, f"region {key} is declared twice")
        elif not isinstance(name, str):
            checker.error(path, f"a region name must be a string, got {_describe(name)}")
        else:
            numbers[int(key)] = name
    if len(numbers) != len(data):
        return None  # each bad key was reported above
    if sorted(numbers) != list(range(1, len(numbers) + 1)):
        checker.error("region_meta", f"regions must be numbered 1..{len(numbers)} without gaps, "
                      f"got {', '.join(str(n) for n in sorted(numbers))}",
                      hint="renumber the regions (and the items' region_number) from 1")
        return None
    return dict(sorted(numbers.items()))


def _check_items(checker: _Checker, data: list,
                 region_meta: dict[int, str] | None) -> list[tuple[int, Item]]:
    """The valid items with their indices in ``data``."""
    if not data:
        checker.error("items", "the suite has no items", hint="add at least one item")
        return []
    items: list[tuple[int, Item]] = []
    seen_numbers: dict[int, int] = {}
    for index, raw_item in enumerate(data):
        path = f"items[{index}]"
        raw = checker.build(_RawItem, raw_item, path, "an item")
        if raw is None:
            continue
        number = raw.item_number
        if isinstance(number, bool):
            checker.error(f"{path}.item_number", f"expected an integer, got {_describe(number)}")
        elif number in seen_numbers:
            checker.error(f"{path}.item_number", f"item number {number} is used twice "
                          f"(also items[{seen_numbers[number]}])",
                          hint="give every item its own number")
        else:
            seen_numbers[number] = index
        item = _check_item(checker, raw, path, region_meta)
        if item is None:
            continue
        if items:
            _check_same_conditions(checker, items[0][1], item, path)
        items.append((index, item))
    return items


def _check_item(checker: _Checker, raw: _RawItem, path: str,
                region_meta: dict[int, str] | None) -> Item | None:
    """The item, or None when any of its conditions is invalid (the errors are reported)."""
    if not raw.conditions:
        checker.error(f"{path}.conditions", "the item has no conditions",
                      hint="list one sentence per condition")
        return None
    conditions: list[Condition] = []
    names: dict[str, int] = {}
    complete = True
    for index, raw_condition in enumerate(raw.conditions):
        condition_path = f"{path}.conditions[{index}]"
        condition = _check_condition(checker, raw_condition, condition_path, region_meta)
        if condition is None:
            complete = False
        elif condition.condition_name in names:
            checker.error(f"{condition_path}.condition_name",
                          f"condition {condition.condition_name!r} appears twice in this item "
                          f"(also conditions[{names[condition.condition_name]}])",
                          hint="give every condition of an item its own name")
            complete = False
        else:
            names[condition.condition_name] = index
            conditions.append(condition)
    return Item(raw.item_number, tuple(conditions)) if complete else None


def _check_condition(checker: _Checker, data: Any, path: str,
                     region_meta: dict[int, str] | None) -> Condition | None:
    """The condition, or None when it or any of its regions is invalid."""
    raw = checker.build(_RawCondition, data, path, "a condition")
    if raw is None:
        return None
    complete = True
    if not _NAME_RE.fullmatch(raw.condition_name):
        checker.error(f"{path}.condition_name",
                      f"condition name {raw.condition_name!r} cannot be used in formulas",
                      hint="use letters, digits, '_' and '-' only")
        complete = False
    regions: list[Region] = []
    for index, raw_region in enumerate(raw.regions):
        region_path = f"{path}.regions[{index}]"
        region = _check_region(checker, raw_region, region_path, region_meta)
        if region is None:
            complete = False
            continue
        if regions and region.region_number <= regions[-1].region_number:
            previous = regions[-1].region_number
            problem = ("is listed twice" if region.region_number == previous
                       else f"comes after region {previous}")
            checker.error(f"{region_path}.region_number",
                          f"region {region.region_number} {problem}",
                          hint="list each region once, in increasing order")
            complete = False
            continue
        regions.append(region)
    if complete and not any(region.content for region in regions):
        checker.error(f"{path}.regions", "the sentence is empty: no region has content",
                      hint="give at least one region some text")
        complete = False
    return Condition(raw.condition_name, tuple(regions)) if complete else None


def _check_region(checker: _Checker, data: Any, path: str,
                  region_meta: dict[int, str] | None) -> Region | None:
    raw = checker.build(_RawRegion, data, path, "a region")
    if raw is None:
        return None
    if isinstance(raw.region_number, bool):
        checker.error(f"{path}.region_number",
                      f"expected an integer, got {_describe(raw.region_number)}")
        return None
    if region_meta is not None and raw.region_number not in region_meta:
        checker.error(f"{path}.region_number",
                      f"region {raw.region_number} is not declared in region_meta",
                      hint=f"declared regions are 1..{len(region_meta)}")
        return None
    if not _is_unicode(raw.content):
        checker.error(f"{path}.content", f"{raw.content!r} is not valid Unicode text: it has "
                      "a lone surrogate (e.g. from a \\ud800 escape)",
                      hint="fix the text's escapes")
        return None
    content = " ".join(raw.content.split())
    if content != raw.content:
        checker.warn(f"{path}.content", f"extra whitespace in {raw.content!r} normalised to "
                     f"{content!r}")
    return Region(raw.region_number, content)


def _check_same_conditions(checker: _Checker, first: Item, item: Item, path: str) -> None:
    expected = [c.condition_name for c in first.conditions]
    actual = [c.condition_name for c in item.conditions]
    missing = [name for name in expected if name not in actual]
    extra = [name for name in actual if name not in expected]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"lacks {', '.join(map(repr, missing))}")
        if extra:
            parts.append(f"has unexpected {', '.join(map(repr, extra))}")
        checker.error(f"{path}.conditions",
                      f"item {item.item_number} {' and '.join(parts)} (the first item has "
                      f"{', '.join(map(repr, expected))})",
                      hint="every item must have the same conditions")


def _check_predictions(checker: _Checker, data: list, region_meta: dict[int, str] | None,
                       condition_names: set[str]) -> list[Prediction]:
    """The valid predictions (parsed, and naming only declared regions and known conditions)."""
    if not data:
        checker.error("predictions", "the suite has no predictions",
                      hint="add e.g. {\"type\": \"formula\", \"formula\": \"(2;%a%) > (2;%b%)\"}")
    predictions: list[Prediction] = []
    for index, raw in enumerate(data):
        path = f"predictions[{index}]"
        legacy = _is_legacy(raw)
        text = _legacy_text(checker, raw, path) if legacy else _formula_text(checker, raw, path)
        if text is None:
            continue
        formula_path = path if isinstance(raw, str) or legacy else f"{path}.formula"
        try:
            formula = parse_formula(text)
            if _check_refs(formula, region_meta, condition_names):
                predictions.append(Prediction(index, formula))
        except FormulaError as exc:
            if legacy:  # the formula was built here: a column in it would point at nothing
                exc = dataclasses.replace(exc, column=None)
            checker.add_located(exc, formula_path)
    return predictions


def _is_legacy(raw: Any) -> bool:
    return (isinstance(raw, dict) and "formula" not in raw
            and any(key in raw for key in _LEGACY_KEYS))


def _formula_text(checker: _Checker, raw: Any, path: str) -> str | None:
    """The formula of a prediction written as a string or a ``{"type": "formula"}`` object."""
    if isinstance(raw, str):
        return raw
    if not isinstance(raw, dict):
        checker.error(path, f"a prediction must be a formula string or object, got "
                      f"{_describe(raw)}", hint="write {\"type\": \"formula\", \"formula\": ...}")
        return None
    prediction = checker.build(_RawFormulaPrediction, raw, path, "a prediction")
    if prediction is None:
        return None
    if prediction.type != "formula":
        checker.error(f"{path}.type", f"unknown prediction type {prediction.type!r}",
                      hint="the only prediction type is \"formula\"")
        return None
    return prediction.formula


def _legacy_text(checker: _Checker, raw: dict, path: str) -> str | None:
    """The formula for a legacy ``{"region_number", "l_operand", "relation", "r_operand"}``."""
    legacy = checker.build(_RawLegacyPrediction, raw, path, "a legacy prediction")
    if legacy is None:
        return None
    good = True
    if isinstance(legacy.region_number, bool) or legacy.region_number < 1:
        checker.error(f"{path}.region_number", f"bad region number "
                      f"{_describe(legacy.region_number)}", hint="regions are numbered from 1")
        good = False
    for key in ("l_operand", "r_operand"):
        operand = getattr(legacy, key)
        if not _NAME_RE.fullmatch(operand):
            checker.error(f"{path}.{key}", f"bad condition name {operand!r}",
                          hint="condition names use letters, digits, '_' and '-' only")
            good = False
    if not good:
        return None
    try:
        return legacy_to_formula(legacy.region_number, legacy.l_operand, legacy.relation,
                                 legacy.r_operand)
    except FormulaError as exc:  # the other fields were checked above: it is the relation
        checker.add_located(exc, f"{path}.relation")
        return None


def _check_refs(formula: Formula, region_meta: dict[int, str] | None,
                condition_names: set[str]) -> bool:
    """Whether the formula can be checked against the items; raises :class:`FormulaError` at
    the first condition or region it names that the suite lacks. Without valid items or
    regions there is nothing to check against, and their errors are reported instead."""
    if not condition_names or region_meta is None:
        return False
    formula.check_references(condition_names, {name: region_meta.keys()
                                               for name in condition_names})
    return True


def _check_refs_present(checker: _Checker, items: list[tuple[int, Item]],
                        predictions: list[Prediction]) -> None:
    """Every region a prediction reads must be listed (possibly empty) in every item."""
    for prediction in predictions:
        for ref in sorted(prediction.formula.region_refs,
                          key=lambda r: (r.condition, r.region or 0)):
            if ref.region is None:
                continue
            for index, item in items:
                names = [c.condition_name for c in item.conditions]
                if ref.condition not in names:
                    continue  # reported by the condition-set check
                position = names.index(ref.condition)
                if item.conditions[position].region(ref.region) is None:
                    checker.error(f"items[{index}].conditions[{position}].regions",
                                  f"region {ref.region} is missing, but prediction "
                                  f"{prediction.index} reads ({ref.region};%{ref.condition}%)",
                                  hint="list the region, with empty content if it is absent")


def _is_unicode(text: str) -> bool:
    """Whether ``text`` can be encoded (to UTF-8), i.e. has no lone surrogate code points."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _join(path: str, field_path: str) -> str:
    return f"{path}.{field_path}" if path else field_path


def _type_name(field_type: Any) -> str:
    names = {str: "a string", int: "an integer", dict: "a JSON object", list: "a JSON list"}
    if field_type in names:
        return names[field_type]
    args = getattr(field_type, "__args__", ())
    parts = [names.get(arg, getattr(arg, "__name__", str(arg))) for arg in args
             if arg is not type(None)]
    return " or ".join(parts) if parts else str(field_type)


def _describe(value: Any) -> str:
    """E.g. ``an integer 5``, ``a JSON list``: what a person sees in the JSON."""
    kind = {dict: "a JSON object", list: "a JSON list", str: "a string", bool: "a boolean",
            int: "an integer", float: "a number", type(None): "null"}.get(type(value), "a value")
    if isinstance(value, (dict, list)):
        return kind
    try:
        shown = json.dumps(value)
    except (TypeError, ValueError):  # not JSON (a caller's Python object), or a huge integer
        shown = type(value).__name__
    if len(shown) > 40:
        shown = shown[:37] + "..."
    return f"{kind} {shown}"
