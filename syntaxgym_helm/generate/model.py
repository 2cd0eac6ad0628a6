"""The data model of a suite config: lexicon entries, slots, conditions, constraints.

:func:`~syntaxgym_helm.generate.config.parse_config` builds these from an evaluated config, with
every value checked; the rest of the generator reads only these.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from syntaxgym_helm.generate.template import Template

Scalar = str | int | float | bool
FeatureValue = Scalar | tuple[str, ...]


@dataclass(frozen=True)
class FeatureType:
    """The declared type of a lexicon feature: a JSON type or a set of allowed strings."""

    kind: str  # "string", "strings", "number", "boolean" or "enum"
    optional: bool = False
    values: tuple[str, ...] = ()  # the allowed strings of an enum

    def describe(self) -> str:
        base = "one of " + ", ".join(map(repr, self.values)) if self.kind == "enum" else self.kind
        return base + (" (optional)" if self.optional else "")


@dataclass(frozen=True)
class Entry:
    """One lexicon entry: named feature values (a plain string entry has just ``form``)."""

    category: str
    index: int
    features: Mapping[str, FeatureValue]
    path: str  # e.g. lexicon.nouns[3], or lexicon.nouns.entries[3] in a typed category

    @property
    def key(self) -> tuple[str, int]:
        """Identifies the entry (its features, a dict, cannot be hashed)."""
        return self.category, self.index

    def values(self, feature: str) -> frozenset[Scalar]:
        """The feature's value(s) as a set, for agreement; empty when the entry lacks it."""
        value = self.features.get(feature)
        if value is None:
            return frozenset()
        return frozenset(value) if isinstance(value, tuple) else frozenset([value])

    def label(self) -> str:
        """A short name for messages: the entry's first string feature."""
        for value in self.features.values():
            if isinstance(value, str):
                return f"{self.path} ({value!r})"
        return self.path


@dataclass(frozen=True)
class Category:
    """A typed group of lexicon entries (nouns, verbs, ...), optionally with a feature schema."""

    name: str
    entries: tuple[Entry, ...]
    schema: Mapping[str, FeatureType] | None  # None: untyped, features checked where used

    @property
    def path(self) -> str:
        return f"lexicon.{self.name}"


@dataclass(frozen=True)
class Slot:
    """A place in the templates filled by one lexicon entry per item."""

    name: str
    category: str
    where: Mapping[str, frozenset[Scalar]]  # feature -> allowed values (any one suffices)

    @property
    def path(self) -> str:
        return f"slots.{self.name}"


@dataclass(frozen=True)
class ConditionSpec:
    """One condition: a template per region, and the regions it declares it manipulates."""

    name: str
    index: int
    templates: tuple[Template, ...]  # region 1 first
    template_paths: tuple[str, ...]
    #: Region numbers this condition manipulates; None when the config declares none anywhere.
    manipulates: frozenset[int] | None

    @property
    def path(self) -> str:
        return f"conditions[{self.index}]"


@dataclass(frozen=True)
class FeatureRef:
    """``slot.feature`` in a constraint."""

    slot: str
    feature: str

    def __str__(self) -> str:
        return f"{self.slot}.{self.feature}"


@dataclass(frozen=True)
class Constraint:
    """One sampling constraint; ``slots`` for distinct/no_reuse, ``refs`` for agree/contrast."""

    kind: str
    index: int
    slots: tuple[str, ...] = ()
    refs: tuple[FeatureRef, ...] = ()

    @property
    def path(self) -> str:
        return f"sampling.constraints[{self.index}]"

    def describe(self) -> str:
        args = self.refs or self.slots
        return f"{self.kind} {', '.join(map(str, args))}"


@dataclass(frozen=True)
class Sampling:
    """How many items, from which seed, under which constraints."""

    items: int
    seed: int
    constraints: tuple[Constraint, ...]


@dataclass(frozen=True)
class SuiteConfig:
    """A whole config, checked for structure and names."""

    source: str
    version: int
    meta: Mapping[str, Any]
    lexicon: Mapping[str, Category]
    slots: Mapping[str, Slot]
    region_names: tuple[str, ...]
    conditions: tuple[ConditionSpec, ...]
    predictions: tuple[str, ...]
    sampling: Sampling
