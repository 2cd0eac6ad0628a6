"""Reading a suite config: what a JSONNET config evaluates to, checked into typed dataclasses.

A config is one JSON object (see docs/suite_authoring.md)::

    version      1
    meta         name, metric, description, reference, author, comment, tags
    lexicon      category name -> entries (a list), or {features: {name: type}, entries: [...]}
    slots        slot name -> category name, or {from: category, where: {feature: value(s)}}
    region_meta  region names in order (a list), or {"1": name, "2": name, ...}
    conditions   [{name, regions: [template, ...] or {region name: template}, manipulates?}]
    predictions  formula strings (or {type: "formula", formula: ...})
    sampling     {items, seed, constraints: [{distinct|agree|contrast|no_reuse: ...}]}

Every problem raises :class:`SuiteError` with the config file and the JSON path of the wrong key
(``lexicon.nouns[3].pl``, ``conditions[1].regions[5]``). Checks that need the lexicon's
candidate sets (features present, constraints satisfiable) live in :mod:`.candidates`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from syntaxgym_helm.core.errors import SuiteError
from syntaxgym_helm.core.formula import FormulaError, parse_formula
from syntaxgym_helm.core.region_stats import METRICS
from syntaxgym_helm.generate.model import (
    Category,
    ConditionSpec,
    Constraint,
    Entry,
    FeatureRef,
    FeatureType,
    FeatureValue,
    Sampling,
    Scalar,
    Slot,
    SuiteConfig,
)
from syntaxgym_helm.generate.reader import Reader, describe, suggest
from syntaxgym_helm.generate.template import Template, parse_template

#: Config format versions this generator reads.
SUPPORTED_VERSIONS = (1,)
#: More items than this is surely a mistake (and would take long to check by reading).
MAX_ITEMS = 10_000

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CONDITION_RE = re.compile(r"[A-Za-z0-9_-]+")  # what formulas can name
_TOP_KEYS = ("version", "meta", "lexicon", "slots", "region_meta", "conditions", "predictions",
             "sampling")
_META_KEYS = ("name", "metric", "description", "reference", "author", "comment", "tags")
_SCALAR_TYPES = ("string", "strings", "number", "boolean")
CONSTRAINT_KINDS = ("distinct", "agree", "contrast", "no_reuse")


def parse_config(data: Any, source: str) -> SuiteConfig:
    """Read an evaluated config; raise :class:`SuiteError` at the first problem."""
    r = Reader(source)
    top = r.object(data, "", _TOP_KEYS, required=_TOP_KEYS)
    version = r.integer(top["version"], "version", 0)
    if version not in SUPPORTED_VERSIONS:
        raise r.error("version", f"unsupported config version {version}",
                      hint="this generator reads version "
                           + ", ".join(map(str, SUPPORTED_VERSIONS)))
    meta = _meta(r, top["meta"])
    lexicon = _lexicon(r, top["lexicon"])
    slots = _slots(r, top["slots"], lexicon)
    regions = _region_names(r, top["region_meta"])
    conditions = _conditions(r, top["conditions"], regions, slots)
    predictions = _predictions(r, top["predictions"], conditions, len(regions))
    sampling = _sampling(r, top["sampling"], slots)
    return SuiteConfig(source, version, meta, lexicon, slots, regions, conditions, predictions,
                       sampling)


def _meta(r: Reader, value: Any) -> dict[str, Any]:
    meta = r.object(value, "meta", _META_KEYS, required=["name"])
    r.string(meta["name"], "meta.name", _CONDITION_RE)
    metric = meta.get("metric", "sum")
    metrics = [metric] if isinstance(metric, str) else metric
    if metric != "all":
        for index, name in enumerate(r.list(metrics, "meta.metric")):
            path = "meta.metric" if isinstance(metric, str) else f"meta.metric[{index}]"
            if name not in METRICS:
                raise r.error(path, f"unknown metric {name!r}",
                              hint=f"use one of {', '.join(METRICS)}, a list of them, or \"all\"")
    for key in ("description", "reference", "author", "comment"):
        if key in meta:
            r.string(meta[key], f"meta.{key}")
    for index, tag in enumerate(r.list(meta.get("tags", []), "meta.tags", nonempty=False)):
        r.string(tag, f"meta.tags[{index}]")
    return {**meta, "metric": metric}


def _lexicon(r: Reader, value: Any) -> dict[str, Category]:
    categories: dict[str, Category] = {}
    for name, raw in r.object(value, "lexicon").items():
        path = f"lexicon.{name}"
        r.string(name, path, _NAME_RE)
        schema: dict[str, FeatureType] | None = None
        if isinstance(raw, dict):
            typed = r.object(raw, path, ("features", "entries"), required=("features", "entries"))
            schema = {feature: _feature_type(r, spec, f"{path}.features.{feature}")
                      for feature, spec in r.object(typed["features"], f"{path}.features").items()}
            raw_entries, entries_path = typed["entries"], f"{path}.entries"
        else:
            raw_entries, entries_path = raw, path
        entries = tuple(_entry(r, name, index, item, f"{entries_path}[{index}]", schema)
                        for index, item in enumerate(r.list(raw_entries, entries_path)))
        seen: dict[tuple, int] = {}
        for entry in entries:
            key = tuple(sorted(entry.features.items()))
            if key in seen:
                raise r.error(f"{entries_path}[{entry.index}]", f"duplicates "
                              f"{entries_path}[{seen[key]}]", hint="list each entry once (a "
                              "duplicate would be drawn twice as often)")
            seen[key] = entry.index
        categories[name] = Category(name, entries, schema)
    if not categories:
        raise r.error("lexicon", "the lexicon is empty")
    return categories


def _feature_type(r: Reader, spec: Any, path: str) -> FeatureType:
    if isinstance(spec, list):
        values = [r.string(v, f"{path}[{i}]") for i, v in enumerate(r.list(spec, path))]
        return FeatureType("enum", values=tuple(values))
    text = r.string(spec, path, what="a type name")
    kind, optional = text.removesuffix("?"), text.endswith("?")
    if kind not in _SCALAR_TYPES:
        raise r.error(path, f"unknown feature type {text!r}",
                      hint=f"use {', '.join(_SCALAR_TYPES)} (add '?' if optional), or a list of "
                      "allowed strings")
    return FeatureType(kind, optional)


def _entry(r: Reader, category: str, index: int, raw: Any, path: str,
           schema: Mapping[str, FeatureType] | None) -> Entry:
    features = {"form": raw} if isinstance(raw, str) else r.object(raw, path)
    if not features:
        raise r.error(path, "the entry has no features")
    values = {name: _feature_value(r, value, f"{path}.{name}") for name, value in features.items()}
    if schema is not None:
        for name, value in values.items():
            if name not in schema:
                raise r.error(f"{path}.{name}", f"feature {name!r} is not declared in "
                              f"lexicon.{category}.features",
                              hint=suggest(name, list(schema), "declared features"))
            _check_type(r, value, schema[name], f"{path}.{name}")
        for name, declared in schema.items():
            if name not in values and not declared.optional:
                raise r.error(f"{path}.{name}", f"the entry lacks the feature {name!r}",
                              hint=f"lexicon.{category}.features declares it "
                              f"({declared.describe()}); add '?' to its type if it is optional")
    return Entry(category, index, values, path)


def _feature_value(r: Reader, value: Any, path: str) -> FeatureValue:
    if isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    raise r.error(path, f"a feature value must be a string, number, boolean or list of strings, "
                  f"got {describe(value)}")


def _check_type(r: Reader, value: FeatureValue, declared: FeatureType, path: str) -> None:
    if declared.kind == "enum":
        items = value if isinstance(value, tuple) else (value,)
        for item in items:
            if item not in declared.values:
                allowed = ", ".join(map(repr, declared.values))
                raise r.error(path, f"{item!r} is not one of {allowed}")
        return
    expected: dict[str, type | tuple[type, ...]] = {"string": str, "strings": tuple,
                                                    "boolean": bool, "number": (int, float)}
    if not isinstance(value, expected[declared.kind]) or (
            declared.kind == "number" and isinstance(value, bool)):
        raise r.error(path, f"expected {declared.kind}, got {describe(value)}")


def _slots(r: Reader, value: Any, lexicon: Mapping[str, Category]) -> dict[str, Slot]:
    slots: dict[str, Slot] = {}
    for name, raw in r.object(value, "slots").items():
        path = f"slots.{name}"
        r.string(name, path, _NAME_RE)
        spec = {"from": raw} if isinstance(raw, str) else r.object(raw, path, ("from", "where"),
                                                                    required=["from"])
        from_path = path if isinstance(raw, str) else f"{path}.from"
        category = r.string(spec["from"], from_path)
        if category not in lexicon:
            raise r.error(from_path, f"unknown lexicon category {category!r}",
                          hint=suggest(category, list(lexicon), "categories"))
        where: dict[str, frozenset[Scalar]] = {}
        for feature, allowed in r.object(spec.get("where", {}), f"{path}.where").items():
            where_path = f"{path}.where.{feature}"
            options = allowed if isinstance(allowed, list) else [allowed]
            for option in r.list(options, where_path):
                if not isinstance(option, (str, int, float, bool)):
                    raise r.error(where_path, f"expected a value or a list of values, got "
                                  f"{describe(option)}")
            schema = lexicon[category].schema
            if schema is not None and feature not in schema:
                raise r.error(where_path, f"lexicon.{category} has no feature {feature!r}",
                              hint=suggest(feature, list(schema), "its features"))
            where[feature] = frozenset(options)
        slots[name] = Slot(name, category, where)
    if not slots:
        raise r.error("slots", "no slots are declared",
                      hint="a generated suite needs at least one slot to vary between items")
    return slots


def _region_names(r: Reader, value: Any) -> tuple[str, ...]:
    if isinstance(value, list):
        names = [r.string(name, f"region_meta[{i}]") for i, name in enumerate(r.list(value,
                                                                                     "region_meta"))]
    else:
        raw = r.object(value, "region_meta")
        expected = [str(n) for n in range(1, len(raw) + 1)]
        if sorted(raw, key=lambda k: (len(k), k)) != expected:
            raise r.error("region_meta", f"region keys must be \"1\"..\"{len(raw)}\", got "
                          f"{', '.join(map(repr, raw))}", hint="or give the names as a list")
        names = [r.string(raw[key], f"region_meta.{key}") for key in expected]
    if not names:
        raise r.error("region_meta", "no regions are declared")
    for index, name in enumerate(names):
        if names.index(name) != index:
            raise r.error(f"region_meta[{index}]", f"region name {name!r} is used twice",
                          hint="conditions may name regions, so names must be unique")
    return tuple(names)


def _conditions(r: Reader, value: Any, regions: tuple[str, ...],
                slots: Mapping[str, Slot]) -> tuple[ConditionSpec, ...]:
    raws = r.list(value, "conditions")
    if len(raws) < 2:
        raise r.error("conditions", "a suite needs at least two conditions to compare")
    declared_any = any(isinstance(raw, dict) and "manipulates" in raw for raw in raws)
    conditions: list[ConditionSpec] = []
    for index, raw in enumerate(raws):
        path = f"conditions[{index}]"
        spec = r.object(raw, path, ("name", "regions", "manipulates"), required=("name", "regions"))
        name = r.string(spec["name"], f"{path}.name", _CONDITION_RE)
        if any(c.name == name for c in conditions):
            raise r.error(f"{path}.name", f"condition {name!r} is declared twice")
        sources, paths = _region_templates(r, spec["regions"], f"{path}.regions", regions)
        templates = []
        for text, template_path in zip(sources, paths, strict=True):
            template = _template(r, text, template_path)
            for ref in template.refs:
                if ref.slot not in slots:
                    raise r.error(template_path, f"unknown slot {ref.slot!r} in {text!r}",
                                  hint=suggest(ref.slot, list(slots), "slots"))
            templates.append(template)
        manipulates = None
        if declared_any:
            manipulates = frozenset(_region_number(r, item, f"{path}.manipulates[{i}]", regions)
                                    for i, item in enumerate(r.list(spec.get("manipulates", []),
                                                                    f"{path}.manipulates",
                                                                    nonempty=False)))
        conditions.append(ConditionSpec(name, index, tuple(templates), tuple(paths), manipulates))
    return tuple(conditions)


def _region_templates(r: Reader, value: Any, path: str, regions: tuple[str, ...]
                      ) -> tuple[list[Any], list[str]]:
    """The templates of one condition in region order, with their paths."""
    if isinstance(value, dict):
        r.object(value, path, regions, required=regions)
        return [value[name] for name in regions], [f"{path}.{name}" for name in regions]
    items = r.list(value, path)
    if len(items) != len(regions):
        raise r.error(path, f"{len(items)} region templates, but region_meta declares "
                      f"{len(regions)} regions ({', '.join(regions)})")
    return items, [f"{path}[{i}]" for i in range(len(items))]


def _template(r: Reader, text: Any, path: str) -> Template:
    r.string(text, path, what="a template string")
    try:
        return parse_template(text)
    except SuiteError as exc:
        raise exc.located(file=r.source, path=path) from None


def _region_number(r: Reader, value: Any, path: str, regions: tuple[str, ...]) -> int:
    if isinstance(value, str) and value in regions:
        return regions.index(value) + 1
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= len(regions):
        return value
    raise r.error(path, f"{value!r} is not a region (names: {', '.join(regions)}; or numbers "
                  f"1..{len(regions)})")


def _predictions(r: Reader, value: Any, conditions: tuple[ConditionSpec, ...],
                 region_count: int) -> tuple[str, ...]:
    names = [c.name for c in conditions]
    formulas = []
    for index, raw in enumerate(r.list(value, "predictions")):
        path = f"predictions[{index}]"
        if isinstance(raw, dict):
            spec = r.object(raw, path, ("type", "formula"), required=["formula"])
            if spec.get("type", "formula") != "formula":
                raise r.error(f"{path}.type", f"unknown prediction type {spec['type']!r}",
                              hint="the only prediction type is \"formula\"")
            text, text_path = spec["formula"], f"{path}.formula"
        else:
            text, text_path = raw, path
        r.string(text, text_path, what="a formula string")
        try:
            formula = parse_formula(text)
            formula.check_references(names, {name: range(1, region_count + 1) for name in names})
        except FormulaError as exc:
            raise exc.located(file=r.source, path=text_path) from None
        formulas.append(text)
    return tuple(formulas)


def _sampling(r: Reader, value: Any, slots: Mapping[str, Slot]) -> Sampling:
    spec = r.object(value, "sampling", ("items", "seed", "constraints"), required=("items", "seed"))
    items = r.integer(spec["items"], "sampling.items", 1, MAX_ITEMS)
    seed = r.integer(spec["seed"], "sampling.seed", 0)
    constraints = tuple(_constraint(r, raw, index, slots) for index, raw in
                        enumerate(r.list(spec.get("constraints", []), "sampling.constraints",
                                         nonempty=False)))
    return Sampling(items, seed, constraints)


def _constraint(r: Reader, raw: Any, index: int, slots: Mapping[str, Slot]) -> Constraint:
    path = f"sampling.constraints[{index}]"
    spec = r.object(raw, path, CONSTRAINT_KINDS)
    if len(spec) != 1:
        raise r.error(path, f"a constraint has exactly one of {', '.join(CONSTRAINT_KINDS)}, "
                      f"got {', '.join(spec) or 'none'}", hint="write one constraint per object")
    kind, args = next(iter(spec.items()))
    arg_path = f"{path}.{kind}"
    if kind == "no_reuse" and isinstance(args, str):
        args = [args]
    items = r.list(args, arg_path)
    if kind in ("agree", "contrast"):
        if len(items) != 2:
            raise r.error(arg_path, f"{kind} compares two features, got {len(items)}",
                          hint=f"write {{{kind}: ['slot1.feature', 'slot2.feature']}}")
        refs = tuple(_feature_ref(r, item, f"{arg_path}[{i}]", slots) for i, item in
                     enumerate(items))
        return Constraint(kind, index, refs=refs)
    names = tuple(_slot_name(r, item, f"{arg_path}[{i}]", slots) for i, item in enumerate(items))
    if kind == "distinct" and len(names) < 2:
        raise r.error(arg_path, "distinct needs at least two slots")
    if len(set(names)) != len(names):
        raise r.error(arg_path, "a slot is listed twice")
    return Constraint(kind, index, slots=names)


def _slot_name(r: Reader, value: Any, path: str, slots: Mapping[str, Slot]) -> str:
    name = r.string(value, path, what="a slot name")
    if name not in slots:
        raise r.error(path, f"unknown slot {name!r}", hint=suggest(name, list(slots), "slots"))
    return name


def _feature_ref(r: Reader, value: Any, path: str, slots: Mapping[str, Slot]) -> FeatureRef:
    text = r.string(value, path, what="'slot.feature'")
    slot, dot, feature = text.partition(".")
    if not dot or not _NAME_RE.fullmatch(feature):
        raise r.error(path, f"{text!r} is not 'slot.feature'")
    _slot_name(r, slot, path, slots)
    return FeatureRef(slot, feature)
