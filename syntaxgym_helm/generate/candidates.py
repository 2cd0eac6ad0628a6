"""Candidate sets: which lexicon entries can fill each slot, computed before any sampling.

Each slot starts with the entries of its category that pass its ``where`` filter; then every
feature the templates and constraints read is checked against those entries, and the pairwise
constraints (distinct, agree, contrast) are made arc consistent: an entry stays a candidate only
if every constraint on its slot can be met by some candidate of the other slot. A slot left
without candidates, or a ``no_reuse`` slot with fewer candidates than items, is reported here,
naming the constraint that emptied it, instead of being discovered by a search that never ends.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from syntaxgym_helm.core.errors import SuiteError
from syntaxgym_helm.generate.model import Constraint, Entry, SuiteConfig
from syntaxgym_helm.generate.reader import suggest

#: Candidates per slot, in lexicon order.
Domains = dict[str, tuple[Entry, ...]]


@dataclass(frozen=True)
class PairCheck:
    """A constraint between two slots, as a test on their two entries."""

    constraint: Constraint
    left: str
    right: str
    left_feature: str | None = None
    right_feature: str | None = None

    def holds(self, left: Entry, right: Entry) -> bool:
        kind = self.constraint.kind
        if kind == "distinct":  # the same entry, or equal entries of two categories
            return left.features != right.features
        assert self.left_feature is not None and self.right_feature is not None
        overlap = bool(left.values(self.left_feature) & right.values(self.right_feature))
        return overlap if kind == "agree" else not overlap

    def reversed(self) -> PairCheck:
        return PairCheck(self.constraint, self.right, self.left, self.right_feature,
                         self.left_feature)


def pair_checks(config: SuiteConfig) -> list[PairCheck]:
    """Every pairwise constraint, once in each direction."""
    checks: list[PairCheck] = []
    for constraint in config.sampling.constraints:
        if constraint.kind == "distinct":
            for i, left in enumerate(constraint.slots):
                for right in constraint.slots[i + 1:]:
                    checks.append(PairCheck(constraint, left, right))
        elif constraint.kind in ("agree", "contrast"):
            a, b = constraint.refs
            checks.append(PairCheck(constraint, a.slot, b.slot, a.feature, b.feature))
    return checks + [check.reversed() for check in checks]


def candidate_sets(config: SuiteConfig) -> Domains:
    """The candidates of every slot; raise :class:`SuiteError` when a constraint cannot be met."""
    domains: Domains = {}
    for name, slot in config.slots.items():
        category = config.lexicon[slot.category]
        domains[name] = tuple(entry for entry in category.entries
                              if all(entry.values(feature) & allowed
                                     for feature, allowed in slot.where.items()))
        if not domains[name]:
            raise SuiteError(f"no entry of lexicon.{slot.category} passes the filter of slot "
                             f"{name!r}", config.source, f"{slot.path}.where",
                             hint=_values_hint(config, slot.category, list(slot.where)))
    _check_features(config, domains)
    _arc_consistency(config, domains)
    _check_no_reuse(config, domains)
    return domains


def _feature_uses(config: SuiteConfig) -> Iterator[tuple[str, str, str, bool]]:
    """(slot, feature, where it is used, rendered?) for each feature templates and constraints
    read."""
    for condition in config.conditions:
        for template, path in zip(condition.templates, condition.template_paths, strict=True):
            for slot_ref in template.refs:
                yield slot_ref.slot, slot_ref.feature, path, True
    for constraint in config.sampling.constraints:
        for index, ref in enumerate(constraint.refs):
            yield ref.slot, ref.feature, f"{constraint.path}.{constraint.kind}[{index}]", False


def _check_features(config: SuiteConfig, domains: Mapping[str, tuple[Entry, ...]]) -> None:
    for slot_name, feature, use_path, rendered in _feature_uses(config):
        category = config.lexicon[config.slots[slot_name].category]
        if category.schema is not None:
            if feature not in category.schema:
                known = ", ".join(category.schema)
                raise SuiteError(f"slot {slot_name!r} (lexicon.{category.name}) has no feature "
                                 f"{feature!r}", config.source, use_path,
                                 hint=f"lexicon.{category.name} declares {known}")
            declared = category.schema[feature]
            if rendered and declared.kind in ("strings",):
                raise SuiteError(f"feature {feature!r} of lexicon.{category.name} is a list "
                                 "and cannot be written into a sentence", config.source,
                                 use_path, hint="use it in constraints, not templates")
            continue
        candidates = domains[slot_name]
        if not any(feature in entry.features for entry in candidates):  # a typo, most likely
            names = sorted({name for entry in candidates for name in entry.features})
            raise SuiteError(f"no entry that can fill slot {slot_name!r} has the feature "
                             f"{feature!r}", config.source, use_path,
                             hint=suggest(feature, names, f"features of lexicon.{category.name}"))
        for entry in candidates:
            value = entry.features.get(feature)
            if value is None:
                raise SuiteError(f"the entry lacks the feature {feature!r}, which {use_path} "
                                 f"reads (slot {slot_name!r})", config.source,
                                 f"{entry.path}.{feature}",
                                 hint="add it, or exclude the entry with the slot's where filter")
            if rendered and isinstance(value, tuple):
                raise SuiteError(f"the feature {feature!r} is a list and cannot be written into "
                                 f"a sentence ({use_path} reads it)", config.source,
                                 f"{entry.path}.{feature}")


def _arc_consistency(config: SuiteConfig, domains: Domains) -> None:
    """AC-3: drop candidates no candidate of a constrained slot is compatible with."""
    checks = pair_checks(config)
    queue = list(checks)
    while queue:
        check = queue.pop(0)
        before = domains[check.left]
        kept = tuple(left for left in before
                     if any(check.holds(left, right) for right in domains[check.right]))
        if len(kept) == len(before):
            continue
        if not kept:
            raise _unsatisfiable(config, check, before, domains[check.right])
        domains[check.left] = kept
        queue.extend(other for other in checks
                     if other.right == check.left and other not in queue)


def _unsatisfiable(config: SuiteConfig, check: PairCheck, left: tuple[Entry, ...],
                   right: tuple[Entry, ...]) -> SuiteError:
    constraint = check.constraint
    if constraint.kind == "distinct":
        detail = (f"slots {check.left!r} and {check.right!r} can only be filled by the same "
                  f"entry, {right[0].label()}, so they cannot differ")
    else:
        assert check.left_feature is not None and check.right_feature is not None
        left_feature, right_feature = check.left_feature, check.right_feature
        values_left = sorted(map(str, set().union(*(e.values(left_feature) for e in left))))
        values_right = sorted(map(str, set().union(*(e.values(right_feature) for e in right))))
        relation = "shares a value with" if constraint.kind == "agree" else "differs from"
        detail = (f"no candidate of slot {check.left!r} has a {check.left_feature!r} that "
                  f"{relation} the {check.right_feature!r} of a candidate of slot "
                  f"{check.right!r} ({check.left}.{check.left_feature}: "
                  f"{', '.join(values_left) or 'none'}; {check.right}.{check.right_feature}: "
                  f"{', '.join(values_right) or 'none'})")
    return SuiteError(f"unsatisfiable constraint ({constraint.describe()}): {detail}",
                      config.source, constraint.path,
                      hint="change the constraint, the slots' where filters or the lexicon")


def _check_no_reuse(config: SuiteConfig, domains: Mapping[str, tuple[Entry, ...]]) -> None:
    items = config.sampling.items
    for constraint in config.sampling.constraints:
        if constraint.kind != "no_reuse":
            continue
        for slot in constraint.slots:
            if len(domains[slot]) < items:
                raise SuiteError(
                    f"unsatisfiable constraint (no_reuse {slot}): it needs a different entry in "
                    f"each of the {items} items (sampling.items), but only {len(domains[slot])} "
                    f"entries of lexicon.{config.slots[slot].category} can fill slot {slot!r}",
                    config.source, constraint.path,
                    hint="add entries, lower sampling.items or drop no_reuse")


def _values_hint(config: SuiteConfig, category: str, features: list[str]) -> str:
    entries = config.lexicon[category].entries
    parts = []
    for feature in features:
        values = sorted(map(str, set().union(*(entry.values(feature) for entry in entries))))
        parts.append(f"{feature}: {', '.join(values) or 'no entry has it'}")
    return "values in the lexicon: " + "; ".join(parts)

