"""The SyntaxGym suite's data: what a test suite is, and its own JSON format both ways.

A suite has ``meta`` (name, metrics, provenance), ``region_meta`` (the region names, numbered
1..N), ``predictions`` (formulas over region values) and ``items``; every item has the same set of
conditions, and each condition is one sentence split into numbered regions.

Formats read and normalised to this one model:

1. predictions as ``{"type": "formula", "formula": "..."}`` objects (syntaxgym-core);
2. predictions as plain formula strings (the SyntaxGym documentation);
3. legacy predictions ``{"region_number", "l_operand", "relation", "r_operand"}``;
4. formulas with ``[ ]`` brackets (the original Hu et al. 2020 suites; the parser reads both).

``meta.metric`` may be one metric name, a list of them, ``"all"`` or absent (which means sum).
``meta.region_separator`` says how regions join into the sentence a model reads: ``" "`` (the
default, as syntaxgym-core joins them) or ``""`` (written together: Mandarin, which has no spaces).
Reading any of these, with every check, is :mod:`syntaxgym_helm.core.validation`'s work; this
module holds the data, writes it in the syntaxgym-core format (:meth:`Suite.to_json_dict`) and
reads back, without checks, what that wrote (:meth:`Suite.from_trusted_json`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from syntaxgym_helm.core.formula import Formula, parse_formula
from syntaxgym_helm.core.region_stats import METRICS

#: How regions join into a sentence, by default: a single space (how syntaxgym-core builds
#: sentences). A suite may say otherwise in ``meta.region_separator`` (see :data:`SEPARATORS`).
DEFAULT_SEPARATOR = " "
#: The separators a suite may declare: ``" "`` (words), ``""`` (regions written together, as
#: Mandarin is written without spaces, or punctuation glued to the word before it).
SEPARATORS = (" ", "")


#: Runs of ASCII whitespace inside a region's text (spaces, tabs, line breaks): made one space.
_ASCII_WHITESPACE = re.compile(r"[ \t\n\r\f\v]+")
#: What :func:`region_text` would change: ASCII whitespace other than single spaces, or any
#: whitespace at either end.
_CHANGED_BY_REGION_TEXT = re.compile(r"[\t\n\r\f\v]|  |^\s|\s$")


def region_text(text: str) -> str:
    """A region's text as it is scored: the text written, less any whitespace at its ends
    (regions are joined by the separator) and with each run of ASCII whitespace inside (spaces,
    tabs, line breaks: the layout of a file) made one space. Every other character is kept,
    no-break, ideographic and other Unicode spaces included: they are text a model reads."""
    if not _CHANGED_BY_REGION_TEXT.search(text):
        return text
    return _ASCII_WHITESPACE.sub(" ", text).strip()


def join_regions(contents: Iterable[str], separator: str = DEFAULT_SEPARATOR) -> str:
    """A sentence from its regions' contents: the non-empty ones joined by ``separator``
    (a single space unless the suite says otherwise); what every client is sent."""
    return separator.join([content for content in contents if content])


@dataclass(frozen=True)
class Region:
    """One numbered stretch of a sentence; ``content`` may be empty (the region is absent)."""

    region_number: int
    content: str


@dataclass(frozen=True)
class Condition:
    """One sentence of an item: the item's text under one manipulation.

    ``separator`` is how its regions join: the suite's ``meta.region_separator``."""

    condition_name: str
    regions: tuple[Region, ...]
    separator: str = DEFAULT_SEPARATOR

    @property
    def sentence(self) -> str:
        """The text a model reads: the non-empty regions joined by the separator."""
        return join_regions([region.content for region in self.regions], self.separator)

    def region(self, number: int) -> Region | None:
        return next((region for region in self.regions if region.region_number == number), None)


@dataclass(frozen=True)
class Item:
    """One minimal-pair set: the same sentence frame under every condition of the suite."""

    item_number: int
    conditions: tuple[Condition, ...]

    def condition(self, name: str) -> Condition:
        for condition in self.conditions:
            if condition.condition_name == name:
                return condition
        raise KeyError(f"item {self.item_number} has no condition {name!r}")


@dataclass(frozen=True)
class Prediction:
    """One prediction of a suite: a formula that must hold for an item to pass."""

    index: int
    formula: Formula

    @property
    def source(self) -> str:
        return self.formula.source


@dataclass(frozen=True)
class SuiteMeta:
    """Descriptive fields of a suite; fields we do not know are kept in ``extra``."""

    name: str
    metrics: tuple[str, ...] = ("sum",)
    author: str = ""
    reference: str = ""
    description: str = ""
    comment: str = ""
    tags: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)
    #: How regions join into a sentence (one of :data:`SEPARATORS`); written to JSON only when
    #: it is not the default, so suites without it read and write as before.
    region_separator: str = DEFAULT_SEPARATOR

    @property
    def main_metric(self) -> str:
        """The metric predictions are scored with when one must be chosen: the first listed."""
        return self.metrics[0]


@dataclass(frozen=True)
class Suite:
    """A validated SyntaxGym test suite. Build one with :mod:`syntaxgym_helm.core.suite`'s
    ``load_suite`` or ``parse_suite``, or from JSON this package wrote by
    :meth:`from_trusted_json`."""

    meta: SuiteMeta
    region_meta: Mapping[int, str]
    predictions: tuple[Prediction, ...]
    items: tuple[Item, ...]
    #: Where the suite was read from, for messages; not part of its identity (equality).
    source: str = field(default="<suite>", compare=False)
    #: Per item number, what reading the suite changed in the item's text (for people; see
    #: :func:`region_text`); items whose text is as written are absent.
    notes: Mapping[int, tuple[str, ...]] = field(default_factory=dict, compare=False)

    @property
    def name(self) -> str:
        return self.meta.name

    @cached_property
    def condition_names(self) -> tuple[str, ...]:
        """Condition names in the order the first item lists them (all items have the same set)."""
        return tuple(condition.condition_name for condition in self.items[0].conditions)

    def __iter__(self) -> Iterator[Item]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def summary(self) -> str:
        """One line for people: name, sizes and metrics."""
        return (
            f"{self.name}: {len(self.items)} items, {len(self.condition_names)} conditions, "
            f"{len(self.region_meta)} regions, {len(self.predictions)} predictions, "
            f"metrics {', '.join(self.meta.metrics)}"
        )

    def to_json_dict(self) -> dict[str, Any]:
        """The suite in the syntaxgym-core format (formula objects, one metric or a list)."""
        return {
            **self.header_json_dict(),
            "items": [
                {
                    "item_number": item.item_number,
                    "conditions": [
                        {
                            "condition_name": condition.condition_name,
                            "regions": [
                                {"region_number": r.region_number, "content": r.content}
                                for r in condition.regions
                            ],
                        }
                        for condition in item.conditions
                    ],
                }
                for item in self.items
            ],
        }

    def header_json_dict(self) -> dict[str, Any]:
        """:meth:`to_json_dict` without ``items`` (for writers that write the items their own
        way)."""
        meta: dict[str, Any] = dict(self.meta.extra)
        meta.update(name=self.meta.name, metric=_metric_field(self.meta.metrics))
        for key in ("author", "reference", "description", "comment"):
            if getattr(self.meta, key):
                meta[key] = getattr(self.meta, key)
        if self.meta.tags:
            meta["tags"] = list(self.meta.tags)
        if self.meta.region_separator != DEFAULT_SEPARATOR:
            meta["region_separator"] = self.meta.region_separator
        return {
            "meta": meta,
            "region_meta": {str(number): name for number, name in self.region_meta.items()},
            "predictions": [{"type": "formula", "formula": p.source} for p in self.predictions],
        }

    @classmethod
    def from_trusted_json(cls, data: Mapping[str, Any], source: str = "<suite>") -> Suite:
        """The suite that :meth:`to_json_dict` wrote as ``data``, built without any check.

        For JSON this package wrote from a validated suite (a HELM instance's one-item suite),
        read again many times in one run: validating it again would only repeat what the
        validator found. Anything else must go through :func:`parse_suite`, since a mistake
        here gives a wrong suite or a KeyError, not a located error."""
        meta = dict(data["meta"])
        known = {key: meta.pop(key, "") for key in
                 ("name", "metric", "author", "reference", "description", "comment")}
        tags = tuple(meta.pop("tags", ()))
        separator = meta.pop("region_separator", DEFAULT_SEPARATOR)
        # One Region per distinct number and text: most of a minimal pair's words are in both
        # of its sentences (a Region is frozen, so sharing one changes nothing).
        regions: dict[tuple[int, str], Region] = {}

        def region(data: Mapping[str, Any]) -> Region:
            key = (data["region_number"], data["content"])
            found = regions.get(key)
            if found is None:
                found = regions[key] = Region(*key)
            return found

        return cls(
            meta=SuiteMeta(known["name"], _metrics(known["metric"]), known["author"],
                           known["reference"], known["description"], known["comment"], tags,
                           meta, separator),
            region_meta={int(number): name for number, name in data["region_meta"].items()},
            predictions=tuple(Prediction(index, _parse_trusted(p["formula"]))
                              for index, p in enumerate(data["predictions"])),
            items=tuple(
                Item(item["item_number"], tuple(
                    Condition(condition["condition_name"],
                              tuple(map(region, condition["regions"])), separator)
                    for condition in item["conditions"]))
                for item in data["items"]),
            source=source,
        )


#: Every one-item suite of a run has the same few formulas: parse each once (a Formula is frozen).
_parse_trusted = functools.lru_cache(maxsize=256)(parse_formula)


def _metrics(field: str | list[str]) -> tuple[str, ...]:
    """The inverse of :func:`_metric_field`."""
    if isinstance(field, list):
        return tuple(field)
    return METRICS if field == "all" else (field,)


def _metric_field(metrics: tuple[str, ...]) -> str | list[str]:
    if len(metrics) == 1:
        return metrics[0]
    return "all" if metrics == METRICS else list(metrics)
