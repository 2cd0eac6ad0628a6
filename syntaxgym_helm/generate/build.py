"""Generating a suite from a config: sample each item's entries, render, check, validate.

Besides the constraints the config states, every item must

- differ from the items before it (no duplicate items);
- keep each manipulation visible: where two conditions' templates of a region differ, the two
  rendered regions differ (a noun whose ``sg`` and ``pl`` are both "sheep" would silently turn
  a minimal pair into two identical sentences, so such an assignment is not used);
- when conditions declare ``manipulates``, render identically every region that neither of two
  conditions declares (anything else is an error in the config, reported with its path).

The result goes through :func:`~syntaxgym_helm.core.suite.parse_suite`, the same validation as any
suite file, and is written with :func:`~syntaxgym_helm.core.suite.dumps_suite` (canonical format).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from syntaxgym_helm.core.errors import SuiteError
from syntaxgym_helm.core.suite import Suite, dumps_suite, parse_suite
from syntaxgym_helm.generate.candidates import candidate_sets, pair_checks
from syntaxgym_helm.generate.config import MAX_ITEMS, parse_config
from syntaxgym_helm.generate.loader import LoadedConfig, load_config
from syntaxgym_helm.generate.model import ConditionSpec, SuiteConfig
from syntaxgym_helm.generate.sampler import (
    MAX_STEPS,
    Assignment,
    Sampler,
    SearchFailure,
)
from syntaxgym_helm.generate.template import SlotRef

GENERATOR_NAME = "syntaxgym-helm generate"
#: Changes only when the same config and seed would give a different suite (not with every
#: package release), so that regenerating the shipped suites is a no-op unless something changed.
GENERATOR_VERSION = "1"
#: The key of ``meta`` that records how a suite was generated.
PROVENANCE_KEY = "generator"

Rendered = tuple[tuple[str, ...], ...]  # condition -> region texts


@dataclass(frozen=True)
class GeneratedSuite:
    """A generated suite, its canonical JSON text, and what it was generated from."""

    suite: Suite
    text: str
    config: SuiteConfig
    loaded: LoadedConfig
    seed: int


def generate_suite(path: str | Path, *, seed: int | None = None,
                   items: int | None = None) -> GeneratedSuite:
    """Generate the suite a JSONNET config describes; ``seed``/``items`` override the config's."""
    loaded = load_config(path)
    config = parse_config(loaded.data, str(path))
    if items is not None and not 1 <= items <= MAX_ITEMS:
        raise SuiteError(f"the number of items must be 1..{MAX_ITEMS}, got {items}", str(path))
    if seed is not None and seed < 0:
        raise SuiteError(f"the seed must not be negative, got {seed}", str(path))
    chosen_seed = config.sampling.seed if seed is None else seed
    count = config.sampling.items if items is None else items
    config = _with_sampling(config, count, chosen_seed)
    rendered = _generate_items(config)
    data = _suite_json(config, rendered, _provenance(loaded, chosen_seed, count))
    try:
        suite = parse_suite(data, str(path))
    except SuiteError as exc:  # the config made something the suite format forbids
        raise _invalid_suite(exc, str(path)) from None
    return GeneratedSuite(suite, dumps_suite(suite), config, loaded, chosen_seed)


def _invalid_suite(error: SuiteError, source: str) -> SuiteError:
    """A validation error of the generated suite, placed at the condition that caused it."""
    path, where = error.path, ""
    match = re.fullmatch(r"items\[(\d+)\]\.conditions\[(\d+)\](\.regions(\[\d+\])?)?.*",
                         path or "")
    if match:  # items[i].conditions[c].regions[r]... -> conditions[c].regions[r], item i + 1
        path = f"conditions[{match[2]}]{match[3] or ''}"
        where = f" (item {int(match[1]) + 1})"
    return SuiteError(f"the generated suite is invalid{where}: {error.message}", source, path,
                      hint=error.hint or "check the conditions' templates")


def _with_sampling(config: SuiteConfig, items: int, seed: int) -> SuiteConfig:
    return replace(config, sampling=replace(config.sampling, items=items, seed=seed))


def _provenance(loaded: LoadedConfig, seed: int, items: int) -> dict[str, Any]:
    return {"name": GENERATOR_NAME, "version": GENERATOR_VERSION, "config": loaded.path.name,
            "config_sha256": loaded.sha256, "seed": seed, "items": items}


class _ItemJudge:
    """Accepts or rejects a complete assignment of one item (see the module docstring)."""

    def __init__(self, config: SuiteConfig) -> None:
        self.config = config
        self.seen: set[Rendered] = set()
        conditions = config.conditions
        # Region indices whose templates differ, per pair of conditions.
        self.differing = {
            (a.index, b.index): [r for r in range(len(config.region_names))
                                 if a.templates[r].source != b.templates[r].source]
            for a, b in itertools.combinations(conditions, 2)}

    def render(self, assignment: Assignment) -> Rendered:
        def lookup(ref: SlotRef) -> str:
            value = assignment[ref.slot].features.get(ref.feature)
            if value is None:  # an optional feature the entry lacks
                return ""
            return str(value).lower() if isinstance(value, bool) else str(value)

        return tuple(tuple(template.render(lookup) for template in condition.templates)
                     for condition in self.config.conditions)

    def __call__(self, assignment: Assignment) -> str | None:
        rendered = self.render(assignment)
        if rendered in self.seen:
            return "it would duplicate an earlier item"
        for (a, b), regions in self.differing.items():
            for r in regions:
                if rendered[a][r] == rendered[b][r]:
                    return (f"region {self.config.region_names[r]!r} would read "
                            f"{rendered[a][r]!r} in both {self.config.conditions[a].name} and "
                            f"{self.config.conditions[b].name}, whose templates differ there")
        return None

    def accept(self, rendered: Rendered, item_number: int) -> None:
        self.seen.add(rendered)
        _check_unmanipulated(self.config, rendered, item_number)


def _check_unmanipulated(config: SuiteConfig, rendered: Rendered, item_number: int) -> None:
    """Regions neither of two conditions declares it manipulates must read the same."""
    if config.conditions[0].manipulates is None:
        return  # nothing declared: regions with identical templates read the same anyway
    for a, b in itertools.combinations(config.conditions, 2):
        assert a.manipulates is not None and b.manipulates is not None
        for r, name in enumerate(config.region_names):
            declared = a.manipulates | b.manipulates
            if r + 1 in declared or rendered[a.index][r] == rendered[b.index][r]:
                continue
            raise SuiteError(
                f"region {name!r} reads {rendered[b.index][r]!r} in condition {b.name} but "
                f"{rendered[a.index][r]!r} in {a.name} (item {item_number}), and neither "
                "declares that it manipulates this region", config.source,
                b.template_paths[r],
                hint=f"make the templates the same, or add {name!r} to the manipulates of "
                     f"{b.name} (or {a.name})")


def _generate_items(config: SuiteConfig) -> list[Rendered]:
    domains = candidate_sets(config)
    no_reuse = frozenset(slot for c in config.sampling.constraints if c.kind == "no_reuse"
                         for slot in c.slots)
    sampler = Sampler(domains, pair_checks(config), config.sampling.seed, no_reuse)
    judge = _ItemJudge(config)
    items: list[Rendered] = []
    for index in range(config.sampling.items):
        result = sampler.sample(index, judge)
        if isinstance(result, SearchFailure):
            raise _item_failure(config, index, result, sampler)
        rendered = judge.render(result)
        judge.accept(rendered, index + 1)
        items.append(rendered)
    return items


def _item_failure(config: SuiteConfig, index: int, failure: SearchFailure,
                  sampler: Sampler) -> SuiteError:
    where = f"cannot generate item {index + 1} of {config.sampling.items}"
    if not failure.exhausted:
        return SuiteError(f"{where}: the search gave up after {MAX_STEPS} partial assignments",
                          config.source, "sampling",
                          hint="the constraints are nearly unsatisfiable: relax them or add "
                               "lexicon entries")
    reasons = [f"{count} rejected because {reason}"
               for reason, count in failure.rejections.most_common(3)]
    used = [f"no_reuse {slot} has used {sum(1 for n in sampler.uses[slot].values() if n)} of its "
            f"{len(sampler.domains[slot])} candidates" for slot in sorted(sampler.no_reuse)]
    detail = "; ".join(reasons + used) or "no assignment meets the constraints"
    return SuiteError(f"{where}: no assignment of entries is left that meets every constraint "
                      f"({detail})", config.source, "sampling.items",
                      hint=f"{index} items could be generated: lower sampling.items, add lexicon "
                           "entries or relax the constraints")


def _suite_json(config: SuiteConfig, items: list[Rendered],
                provenance: dict[str, Any]) -> dict[str, Any]:
    meta = {PROVENANCE_KEY: provenance, **config.meta}
    return {
        "meta": meta,
        "region_meta": {str(n): name for n, name in enumerate(config.region_names, start=1)},
        "predictions": [{"type": "formula", "formula": text} for text in config.predictions],
        "items": [
            {"item_number": number,
             "conditions": [_condition_json(condition, texts)
                            for condition, texts in zip(config.conditions, rendered, strict=True)]}
            for number, rendered in enumerate(items, start=1)
        ],
    }


def _condition_json(condition: ConditionSpec, texts: tuple[str, ...]) -> dict[str, Any]:
    return {"condition_name": condition.name,
            "regions": [{"region_number": n, "content": text}
                        for n, text in enumerate(texts, start=1)]}


def sentences(generated: GeneratedSuite, limit: int | None = None) -> list[str]:
    """The first ``limit`` items as readable lines (``item 3 match_sing: The keys ...``)."""
    lines = []
    for item in generated.suite.items[:limit]:
        for condition in item.conditions:
            lines.append(f"{item.item_number:>3} {condition.condition_name:<18} "
                         f"{' | '.join(r.content for r in condition.regions)}")
    return lines


