"""Checking a suite's structure: ``meta``, ``region_meta`` and the items, down to each region.

Each element is built with dacite (:meth:`Checker.build`) and then checked against what came
before it: region numbers against ``region_meta``, each item's conditions against the first
item's. An element with an error is left out (None), so what depends on it is not checked again.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

from syntaxgym_helm.core.region_stats import METRICS
from syntaxgym_helm.core.suite_data import (
    DEFAULT_SEPARATOR,
    SEPARATORS,
    Condition,
    Item,
    Region,
    SuiteMeta,
    join_regions,
    region_text,
)
from syntaxgym_helm.core.validation.checker import NUMBER_LIMIT, Checker, describe
from syntaxgym_helm.core.validation.raw import (
    NAME_RE,
    RawCondition,
    RawItem,
    RawMeta,
    RawRegion,
)


def check_meta(checker: Checker, data: dict[str, Any]) -> SuiteMeta | None:
    raw = checker.build(RawMeta, data, "meta", "meta")
    if raw is None:
        return None
    metrics = _check_metrics(checker, raw.metric)
    tags = tuple(raw.tags or ())
    for index, tag in enumerate(tags):
        if not isinstance(tag, str):
            checker.error(f"meta.tags[{index}]", f"a tag must be a string, got {describe(tag)}")
    known = {f.name for f in dataclasses.fields(RawMeta)}
    extra = {key: value for key, value in data.items() if key not in known}
    name = raw.name
    if not name:
        name = checker.default_name or Path(checker.report.source).stem
        checker.warn("meta.name", f"no suite name; using the file name {name!r}")
    separator = _check_separator(checker, raw.region_separator)
    if metrics is None or separator is None:
        return None
    return SuiteMeta(name=name, metrics=metrics, author=raw.author or "",
                     reference=raw.reference or "", description=raw.description or "",
                     comment=raw.comment or "", tags=tags, extra=extra,
                     region_separator=separator)


def _check_separator(checker: Checker, separator: str | None) -> str | None:
    if separator is None:
        return DEFAULT_SEPARATOR
    if separator not in SEPARATORS:
        checker.error("meta.region_separator", f"region separator {separator!r} is not one of "
                      f"{', '.join(map(repr, SEPARATORS))}",
                      hint='use " " (regions are words; the default) or "" (regions written '
                           'together, e.g. Mandarin)')
        return None
    return separator


def _check_metrics(checker: Checker, metric: str | list[Any] | None) -> tuple[str, ...] | None:
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
            shown = repr(name) if isinstance(name, str) else describe(name)
            checker.error(path, f"unknown metric {shown}", hint=_metric_hint())
            good = False
    if good and len(set(names)) != len(names):
        checker.error("meta.metric", "a metric is listed twice", hint="list each metric once")
        good = False
    return tuple(names) if good else None


def _metric_hint() -> str:
    return f"use one of {', '.join(METRICS)}, a list of them, or \"all\""


def check_region_meta(checker: Checker, data: dict[str, Any]) -> dict[int, str] | None:
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
            checker.error(path, f"a region name must be a string, got {describe(name)}")
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


def check_items(checker: Checker, data: list[Any], region_meta: dict[int, str] | None,
                separator: str = DEFAULT_SEPARATOR) -> list[tuple[int, Item]]:
    """The valid items with their indices in ``data``; ``separator`` joins their regions."""
    if not data:
        checker.error("items", "the suite has no items", hint="add at least one item")
        return []
    items: list[tuple[int, Item]] = []
    seen_numbers: dict[int, int] = {}
    known: KnownRegions = {}
    for index, raw_item in enumerate(data):
        path = f"items[{index}]"
        raw = _raw_item(checker, raw_item, path)
        if raw is None:
            continue
        number = raw.item_number
        # A bad number is reported, and the item is still checked: its regions are fine.
        if checker.small_number(number, f"{path}.item_number", "item number"):
            if number in seen_numbers:
                checker.error(f"{path}.item_number", f"item number {number} is used twice "
                              f"(also items[{seen_numbers[number]}])",
                              hint="give every item its own number")
            else:
                seen_numbers[number] = index
        changes = len(checker.text_changes)
        item = _check_item(checker, raw, path, region_meta, separator, known)
        if item is None:
            continue
        if len(checker.text_changes) > changes:
            checker.item_notes[item.item_number] = _item_notes(
                item, checker.text_changes[changes:])
        if items:
            _check_same_conditions(checker, items[0][1], item, path)
        items.append((index, item))
    return items


def _check_item(checker: Checker, raw: RawItem, path: str, region_meta: dict[int, str] | None,
                separator: str, known: KnownRegions) -> Item | None:
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
        condition = _check_condition(checker, raw_condition, condition_path, region_meta,
                                     separator, known)
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


def _check_condition(checker: Checker, data: Any, path: str,
                     region_meta: dict[int, str] | None, separator: str,
                     known: KnownRegions) -> Condition | None:
    """The condition, or None when it or any of its regions is invalid."""
    raw = _raw_condition(checker, data, path)
    if raw is None:
        return None
    complete = True
    if not NAME_RE.fullmatch(raw.condition_name):
        checker.error(f"{path}.condition_name",
                      f"condition name {raw.condition_name!r} cannot be used in formulas",
                      hint="use letters, digits, '_' and '-' only")
        complete = False
    regions: list[Region] = []
    for index, raw_region in enumerate(raw.regions):
        region_path = ""  # made only where something is reported or checked at length
        region = _usual_region(raw_region, region_meta, known)
        if region is None:
            region_path = f"{path}.regions[{index}]"
            region = _check_region(checker, raw_region, region_path, region_meta)
            if region is not None and region.content != raw_region.get("content"):
                checker.text_changes.append(
                    (raw.condition_name, region.region_number, raw_region["content"],
                     region.content))
        if region is None:
            complete = False
            continue
        if regions and region.region_number <= regions[-1].region_number:
            region_path = region_path or f"{path}.regions[{index}]"
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
    return Condition(raw.condition_name, tuple(regions), separator) if complete else None


# The usual item, condition and region (a dict of exactly its two fields, each of exactly its
# type) are built without dacite: suites hold hundreds of thousands of them, and dacite's checks
# of each would be most of the time spent loading and validating suites (a run loads its suite
# while the model loads). Anything else goes through dacite, which says what is wrong; it builds
# the same raw object when nothing is.

def _raw_item(checker: Checker, data: Any, path: str) -> RawItem | None:
    if (type(data) is dict and len(data) == 2 and type(data.get("item_number")) is int
            and type(data.get("conditions")) is list):
        return RawItem(data["item_number"], data["conditions"])
    return checker.build(RawItem, data, path, "an item")


def _raw_condition(checker: Checker, data: Any, path: str) -> RawCondition | None:
    if (type(data) is dict and len(data) == 2 and type(data.get("condition_name")) is str
            and type(data.get("regions")) is list):
        return RawCondition(data["condition_name"], data["regions"])
    return checker.build(RawCondition, data, path, "a condition")


def _raw_region(checker: Checker, data: Any, path: str) -> RawRegion | None:
    if (type(data) is dict and len(data) == 2 and type(data.get("region_number")) is int
            and type(data.get("content")) is str):
        return RawRegion(data["region_number"], data["content"])
    return checker.build(RawRegion, data, path, "a region")


#: The usual regions a suite's check has accepted, by number and text (see :func:`_usual_region`).
KnownRegions = dict[tuple[int, str], Region]


def _usual_region(data: Any, region_meta: dict[int, str] | None,
                  known: KnownRegions) -> Region | None:
    """The region when ``data`` is the usual valid one, which :func:`_check_region` would
    accept without a word: exactly its two fields, a number that is not too long (and declared),
    text already normalised and encodable. None: check it at length. (Millions of regions in the
    multilingual data sets: this skips building a path and four calls for each.) A region met
    before in the suite (``known``: most of a minimal pair's words are in both sentences) is
    that region again, not checked twice."""
    if type(data) is not dict or len(data) != 2:
        return None
    number, content = data.get("region_number"), data.get("content")
    if type(number) is not int or type(content) is not str:
        return None
    region = known.get((number, content))
    if region is None:
        if (not -NUMBER_LIMIT < number < NUMBER_LIMIT
                or (region_meta is not None and number not in region_meta)
                or region_text(content) != content
                or not (content.isascii() or _is_unicode(content))):  # ASCII: nothing to encode
            return None
        region = known[number, content] = Region(number, content)
    return region


def _check_region(checker: Checker, data: Any, path: str,
                  region_meta: dict[int, str] | None) -> Region | None:
    raw = _raw_region(checker, data, path)
    if raw is None:
        return None
    if not checker.small_number(raw.region_number, f"{path}.region_number", "region number"):
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
    content = region_text(raw.content)
    if content != raw.content:
        checker.warn(f"{path}.content", f"{raw.content!r} is scored as {content!r} (whitespace "
                     "at its ends removed; tabs, line breaks and repeated spaces made one space)")
    return Region(raw.region_number, content)


def _item_notes(item: Item, changes: list[tuple[str, int, str, str]]) -> tuple[str, ...]:
    """What reading changed in the item's text, for people: each region changed, and each pair
    of conditions the change made the same sentence (the item cannot tell them apart)."""
    notes = [f"condition {name!r} region {number}: {raw!r} is scored as {content!r}"
             for name, number, raw, content in changes]
    written = {}
    for condition in item.conditions:
        regions = {number: raw for name, number, raw, _ in changes
                   if name == condition.condition_name}
        written[condition.condition_name] = join_regions(
            (regions.get(r.region_number, r.content) for r in condition.regions),
            condition.separator)
    for index, one in enumerate(item.conditions):
        for other in item.conditions[index + 1:]:
            if (one.sentence == other.sentence
                    and written[one.condition_name] != written[other.condition_name]):
                notes.append(f"conditions {one.condition_name!r} and {other.condition_name!r} "
                             f"differ as written but are the same sentence as scored "
                             f"({one.sentence!r}): every comparison of them is a tie")
    return tuple(notes)


def _check_same_conditions(checker: Checker, first: Item, item: Item, path: str) -> None:
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


def _is_unicode(text: str) -> bool:
    """Whether ``text`` can be encoded (to UTF-8), i.e. has no lone surrogate code points."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
