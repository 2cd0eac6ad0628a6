"""Validation of suite JSON: every problem found, each located by file and JSON path.

:func:`check_suite` walks decoded JSON once, element by element (dacite checks each element's
fields and types; the walk adds the list indices dacite cannot know), and returns a
:class:`SuiteReport` holding the built :class:`~syntaxgym_helm.suite.Suite` (when there were no
errors), every :class:`SuiteError` found and the warnings for what it repaired (extra spaces in
region content, which real suites have, are normalised, not rejected).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, TypeVar

import dacite

from syntaxgym_helm.errors import SuiteError
from syntaxgym_helm.formula import FormulaError, legacy_to_formula, parse_formula
from syntaxgym_helm.region_stats import METRICS
from syntaxgym_helm.suite import (
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


# Raw shapes of each JSON element, for dacite. Lists stay as raw values so the walk can index them.
@dataclass
class _RawSuite:
    meta: dict
    region_meta: dict
    predictions: list
    items: list


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
            self.error(_join(path, exc.field_path), f"missing required field in {what}",
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
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return SuiteReport(source, errors=[SuiteError(f"cannot read the file: {exc}", source)])
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return SuiteReport(source, errors=[SuiteError(
            f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}", source)])
    except RecursionError:
        return SuiteReport(source, errors=[SuiteError("JSON nested too deeply to read", source)])
    return check_suite(data, source)


def _check(checker: _Checker, data: Any) -> None:
    raw = checker.build(_RawSuite, data, "", "the suite")
    if raw is None:
        return
    meta = _check_meta(checker, raw.meta, checker.report.source)
    region_meta = _check_region_meta(checker, raw.region_meta)
    items = _check_items(checker, raw.items, region_meta)
    condition_names = {c.condition_name for c in items[0].conditions} if items else set()
    predictions = _check_predictions(checker, raw.predictions, region_meta, condition_names)
    _check_refs_present(checker, items, predictions)
    if checker.report.errors or meta is None or region_meta is None:
        return
    checker.report.suite = Suite(meta, region_meta, tuple(predictions), tuple(items),
                                 checker.report.source)


def _check_meta(checker: _Checker, data: dict, source: str) -> SuiteMeta | None:
    raw = checker.build(_RawMeta, data, "meta", "meta")
    if raw is None:
        return None
    metrics = _check_metrics(checker, raw.metric)
    tags = tuple(raw.tags or ())
    for index, tag in enumerate(tags):
        if not isinstance(tag, str):
            checker.error(f"meta.tags[{index}]", f"a tag must be a string, got {_describe(tag)}")
    known = {"name", "metric", "author", "reference", "description", "comment", "tags"}
    extra = {key: value for key, value in data.items() if key not in known}
    name = raw.name
    if not name:
        name = Path(source).stem
        checker.warn("meta.name", f"no suite name; using the file name {name!r}")
    if metrics is None:
        return None
    return SuiteMeta(name=name, metrics=metrics, author=raw.author or "",
                     reference=raw.reference or "", description=raw.description or "",
                     comment=raw.comment or "", tags=tags, extra=extra)


def _check_metrics(checker: _Checker, metric: Any) -> tuple[str, ...] | None:
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
        if name not in METRICS:
            checker.error(path, f"unknown metric {name!r}", hint=_metric_hint())
            good = False
    if len(set(names)) != len(names):
        checker.error("meta.metric", "a metric is listed twice")
        good = False
    return tuple(names) if good else None


def _metric_hint() -> str:
    return f"use one of {', '.join(METRICS)}, a list of them, or \"all\""


def _check_region_meta(checker: _Checker, data: dict) -> dict[int, str] | None:
    numbers: dict[int, str] = {}
    for key, name in data.items():
        path = f"region_meta.{key}"
        if not re.fullmatch(r"[1-9][0-9]*", str(key)):
            checker.error(path, f"region key {key!r} is not a region number",
                          hint="number regions \"1\", \"2\", ... in order")
            continue
        if not isinstance(name, str):
            checker.error(path, f"a region name must be a string, got {_describe(name)}")
            continue
        numbers[int(key)] = name
    if not data:
        checker.error("region_meta", "no regions are declared",
                      hint="declare region names as {\"1\": \"subject\", \"2\": \"verb\", ...}")
        return None
    expected = list(range(1, len(data) + 1))
    if sorted(numbers) != expected and len(numbers) == len(data):
        checker.error("region_meta", f"regions must be numbered 1..{len(data)} without gaps, "
                      f"got {', '.join(str(n) for n in sorted(numbers))}")
        return None
    return dict(sorted(numbers.items())) if len(numbers) == len(data) else None


def _check_items(checker: _Checker, data: list, region_meta: dict[int, str] | None) -> list[Item]:
    if not data:
        checker.error("items", "the suite has no items")
        return []
    items: list[Item] = []
    seen_numbers: dict[int, int] = {}
    for index, raw_item in enumerate(data):
        path = f"items[{index}]"
        item = _check_item(checker, raw_item, path, region_meta)
        if item is None:
            continue
        if item.item_number in seen_numbers:
            checker.error(f"{path}.item_number", f"item number {item.item_number} is used "
                          f"twice (also items[{seen_numbers[item.item_number]}])",
                          hint="give every item its own number")
        seen_numbers.setdefault(item.item_number, index)
        if items:
            _check_same_conditions(checker, items[0], item, path)
        items.append(item)
    return items


def _check_item(checker: _Checker, data: Any, path: str,
                region_meta: dict[int, str] | None) -> Item | None:
    raw = checker.build(_RawItem, data, path, "an item")
    if raw is None:
        return None
    if isinstance(raw.item_number, bool):
        checker.error(f"{path}.item_number", "expected an integer, got a boolean")
    if not raw.conditions:
        checker.error(f"{path}.conditions", "the item has no conditions")
        return None
    conditions: list[Condition] = []
    names: set[str] = set()
    for index, raw_condition in enumerate(raw.conditions):
        condition = _check_condition(checker, raw_condition, f"{path}.conditions[{index}]",
                                     region_meta)
        if condition is None:
            continue
        if condition.condition_name in names:
            checker.error(f"{path}.conditions[{index}].condition_name",
                          f"condition {condition.condition_name!r} appears twice in this item")
            continue
        names.add(condition.condition_name)
        conditions.append(condition)
    return Item(raw.item_number, tuple(conditions))


def _check_condition(checker: _Checker, data: Any, path: str,
                     region_meta: dict[int, str] | None) -> Condition | None:
    raw = checker.build(_RawCondition, data, path, "a condition")
    if raw is None:
        return None
    if not re.fullmatch(r"[A-Za-z0-9_-]+", raw.condition_name):
        checker.error(f"{path}.condition_name",
                      f"condition name {raw.condition_name!r} cannot be used in formulas",
                      hint="use letters, digits, '_' and '-' only")
    regions: list[Region] = []
    for index, raw_region in enumerate(raw.regions):
        region = _check_region(checker, raw_region, f"{path}.regions[{index}]", region_meta)
        if region is None:
            continue
        if regions and region.region_number <= regions[-1].region_number:
            checker.error(f"{path}.regions[{index}].region_number",
                          f"region {region.region_number} comes after region "
                          f"{regions[-1].region_number}",
                          hint="list each region once, in increasing order")
            continue
        regions.append(region)
    if not any(region.content for region in regions):
        checker.error(f"{path}.regions", "the sentence is empty: no region has content")
    return Condition(raw.condition_name, tuple(regions))


def _check_region(checker: _Checker, data: Any, path: str,
                  region_meta: dict[int, str] | None) -> Region | None:
    raw = checker.build(_RawRegion, data, path, "a region")
    if raw is None:
        return None
    if isinstance(raw.region_number, bool):
        checker.error(f"{path}.region_number", "expected an integer, got a boolean")
        return None
    if region_meta is not None and raw.region_number not in region_meta:
        checker.error(f"{path}.region_number",
                      f"region {raw.region_number} is not declared in region_meta",
                      hint=f"declared regions are 1..{len(region_meta)}")
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
    if not data:
        checker.error("predictions", "the suite has no predictions",
                      hint="add e.g. {\"type\": \"formula\", \"formula\": \"(2;%a%) > (2;%b%)\"}")
    predictions: list[Prediction] = []
    for index, raw in enumerate(data):
        path = f"predictions[{index}]"
        text = _prediction_text(checker, raw, path)
        if text is None:
            continue
        formula_path = path if isinstance(raw, str) else (
            f"{path}.formula" if "formula" in raw else path)
        try:
            formula = parse_formula(text)
        except FormulaError as exc:
            checker.add(exc.located(file=checker.report.source, path=formula_path))
            continue
        _check_refs(checker, formula, formula_path, region_meta, condition_names)
        predictions.append(Prediction(index, formula))
    return predictions


def _prediction_text(checker: _Checker, raw: Any, path: str) -> str | None:
    """The formula text of a prediction in any of the three accepted shapes."""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, dict) and "relation" in raw:
        legacy = checker.build(_RawLegacyPrediction, raw, path, "a legacy prediction")
        if legacy is None:
            return None
        try:
            return legacy_to_formula(legacy.region_number, legacy.l_operand, legacy.relation,
                                     legacy.r_operand)
        except FormulaError as exc:
            checker.add(exc.located(file=checker.report.source, path=f"{path}.relation"))
            return None
    if isinstance(raw, dict):
        formula = checker.build(_RawFormulaPrediction, raw, path, "a prediction")
        if formula is None:
            return None
        if formula.type != "formula":
            checker.error(f"{path}.type", f"unknown prediction type {formula.type!r}",
                          hint="the only prediction type is \"formula\"")
            return None
        return formula.formula
    checker.error(path, f"a prediction must be a formula string or object, got {_describe(raw)}")
    return None


def _check_refs(checker: _Checker, formula: Any, path: str, region_meta: dict[int, str] | None,
                condition_names: set[str]) -> None:
    for ref in sorted(formula.region_refs, key=lambda r: (r.condition, r.region or 0)):
        if condition_names and ref.condition not in condition_names:
            checker.error(path, f"formula {formula.source!r} names unknown condition "
                          f"{ref.condition!r}",
                          hint=f"conditions are {', '.join(sorted(condition_names))}")
        if ref.region is not None and region_meta is not None and ref.region not in region_meta:
            checker.error(path, f"formula {formula.source!r} names region {ref.region}, which "
                          f"is not declared", hint=f"declared regions are 1..{len(region_meta)}")


def _check_refs_present(checker: _Checker, items: list[Item],
                        predictions: list[Prediction]) -> None:
    """Every region a prediction reads must be listed (possibly empty) in every item."""
    for prediction in predictions:
        for ref in prediction.formula.region_refs:
            if ref.region is None:
                continue
            for index, item in enumerate(items):
                names = [c.condition_name for c in item.conditions]
                if ref.condition not in names:
                    continue  # reported by the condition-set check
                position = names.index(ref.condition)
                if item.conditions[position].region(ref.region) is None:
                    checker.error(f"items[{index}].conditions[{position}].regions",
                                  f"region {ref.region} is missing, but prediction "
                                  f"{prediction.index} reads ({ref.region};%{ref.condition}%)",
                                  hint="list the region, with empty content if it is absent")


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
    kind = {dict: "a JSON object", list: "a JSON list", str: "a string", bool: "a boolean",
            int: "an integer", float: "a number", type(None): "null"}.get(type(value), "a value")
    shown = json.dumps(value)[:40] if not isinstance(value, (dict, list)) else ""
    return f"{kind} {shown}".rstrip()
