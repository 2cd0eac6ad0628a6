"""Checking a suite's predictions: each formula parsed, and its references checked.

A prediction is a formula string, a ``{"type": "formula", "formula": ...}`` object, or a legacy
``{"region_number", "l_operand", "relation", "r_operand"}`` object (turned into a formula). Its
formula may name only declared regions and the items' conditions, and every region it reads
must be listed (possibly empty) in every item.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from syntaxgym_helm.core.errors import FormulaError
from syntaxgym_helm.core.formula import Formula, legacy_to_formula, parse_formula
from syntaxgym_helm.core.suite_data import Item, Prediction
from syntaxgym_helm.core.validation.checker import Checker, describe
from syntaxgym_helm.core.validation.raw import NAME_RE, RawFormulaPrediction, RawLegacyPrediction

_LEGACY_KEYS = ("region_number", "l_operand", "relation", "r_operand")


def check_predictions(checker: Checker, data: list[Any], region_meta: dict[int, str] | None,
                      condition_names: set[str], base: str = "predictions") -> list[Prediction]:
    """The valid predictions (parsed, and naming only declared regions and known conditions);
    ``base`` is where the list is (``meta.string_predictions`` in an older format)."""
    if not data:
        checker.error(base, "the suite has no predictions",
                      hint="add e.g. {\"type\": \"formula\", \"formula\": \"(2;%a%) > (2;%b%)\"}")
    predictions: list[Prediction] = []
    for index, raw in enumerate(data):
        path = f"{base}[{index}]"
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


def _formula_text(checker: Checker, raw: Any, path: str) -> str | None:
    """The formula of a prediction written as a string or a ``{"type": "formula"}`` object."""
    if isinstance(raw, str):
        return raw
    if not isinstance(raw, dict):
        checker.error(path, f"a prediction must be a formula string or object, got "
                      f"{describe(raw)}", hint="write {\"type\": \"formula\", \"formula\": ...}")
        return None
    prediction = checker.build(RawFormulaPrediction, raw, path, "a prediction")
    if prediction is None:
        return None
    if prediction.type != "formula":
        checker.error(f"{path}.type", f"unknown prediction type {prediction.type!r}",
                      hint="the only prediction type is \"formula\"")
        return None
    return prediction.formula


def _legacy_text(checker: Checker, raw: dict[str, Any], path: str) -> str | None:
    """The formula for a legacy ``{"region_number", "l_operand", "relation", "r_operand"}``."""
    legacy = checker.build(RawLegacyPrediction, raw, path, "a legacy prediction")
    if legacy is None:
        return None
    good = True
    if not checker.small_number(legacy.region_number, f"{path}.region_number", "region number"):
        good = False
    elif legacy.region_number < 1:
        checker.error(f"{path}.region_number", f"bad region number "
                      f"{describe(legacy.region_number)}", hint="regions are numbered from 1")
        good = False
    for key in ("l_operand", "r_operand"):
        operand = getattr(legacy, key)
        if not NAME_RE.fullmatch(operand):
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


def check_refs_present(checker: Checker, items: list[tuple[int, Item]],
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
