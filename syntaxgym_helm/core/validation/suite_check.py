"""Checking one whole suite, from a file or from decoded JSON, into a :class:`SuiteReport`.

The top level: the file is read safely (:mod:`syntaxgym_helm.core.files`) and decoded strictly
(:mod:`syntaxgym_helm.core.strict_json`), the four top-level fields are checked, then each part
by :mod:`.structure` and :mod:`.predictions`, and the suite is built when nothing was wrong.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from syntaxgym_helm.core.errors import SuiteError
from syntaxgym_helm.core.files import read_regular_file
from syntaxgym_helm.core.strict_json import decode_json
from syntaxgym_helm.core.suite_data import DEFAULT_SEPARATOR, Suite, SuiteMeta
from syntaxgym_helm.core.validation.checker import (
    MAX_ERRORS,
    Checker,
    SuiteReport,
    TooManyErrors,
    describe,
    type_name,
)
from syntaxgym_helm.core.validation.predictions import check_predictions, check_refs_present
from syntaxgym_helm.core.validation.structure import check_items, check_meta, check_region_meta

#: The top-level fields of a suite and their JSON types.
_TOP_LEVEL: dict[str, type] = {"meta": dict, "region_meta": dict, "predictions": list,
                               "items": list}
#: Where the first JSON release of the Hu et al. (2020) suites kept its formulas, with an empty
#: ``predictions`` list (github.com/cpllab/syntactic-generalization, commit 069e007).
_OLD_PREDICTIONS = "string_predictions"


def check_suite(data: Any, source: str = "<suite>",
                default_name: str | None = None) -> SuiteReport:
    """Check decoded suite JSON and build the suite if it is valid. ``source`` names the suite
    in messages; ``default_name`` is its name if ``meta.name`` is missing (default: the stem
    of ``source``)."""
    checker = Checker(source, default_name)
    try:
        _check(checker, data)
    except TooManyErrors:
        checker.report.warnings.append(f"{source}: stopped after {MAX_ERRORS} errors")
    return checker.report


def check_suite_file(path: str | Path, source: str | None = None,
                     default_name: str | None = None) -> SuiteReport:
    """Read a suite file and check it; a file that cannot be read (not a regular file, too
    large, not UTF-8) or is not JSON gives one located error. ``source`` names it in messages
    (default: the path)."""
    source = source or str(path)
    try:
        raw = read_regular_file(path, source)
        text = raw.decode("utf-8-sig")
        data = decode_json(text, source)
    except UnicodeDecodeError as exc:
        return SuiteReport(source, errors=[SuiteError(
            f"cannot read the file: {exc}", source, hint="suite files are UTF-8 JSON")])
    except SuiteError as exc:
        return SuiteReport(source, errors=[exc])
    return check_suite(data, source, default_name or Path(path).stem)


def _check(checker: Checker, data: Any) -> None:
    if not isinstance(data, dict):
        checker.error("", f"the suite must be a JSON object, got {describe(data)}",
                      hint="a suite has \"meta\", \"region_meta\", \"predictions\" and \"items\"")
        return
    parts: dict[str, Any] = {}
    old_format = _has_old_predictions(data)
    for key, kind in _TOP_LEVEL.items():
        if key not in data:
            if not (key == "predictions" and old_format):
                checker.error(key, f"the suite lacks the required field \"{key}\"",
                              hint=f"add \"{key}\"")
        elif not isinstance(data[key], kind):
            checker.error(key, f"expected {type_name(kind)}, got {describe(data[key])}")
        else:
            parts[key] = data[key]
    meta = check_meta(checker, parts["meta"]) if "meta" in parts else None
    region_meta = (check_region_meta(checker, parts["region_meta"])
                   if "region_meta" in parts else None)
    separator = meta.region_separator if meta is not None else DEFAULT_SEPARATOR
    items = (check_items(checker, parts["items"], region_meta, separator)
             if "items" in parts else [])
    condition_names = {c.condition_name for c in items[0][1].conditions} if items else set()
    predictions_path = "predictions"
    if old_format:
        predictions_path = f"meta.{_OLD_PREDICTIONS}"
        parts.pop("predictions", None)
        formulas = _old_predictions(checker, data["meta"])
        if formulas is not None:
            parts["predictions"] = formulas
        meta = _without_old_predictions(meta)
    predictions = (check_predictions(checker, parts["predictions"], region_meta,
                                     condition_names, predictions_path)
                   if "predictions" in parts else [])
    check_refs_present(checker, items, predictions)
    if checker.report.errors or meta is None or region_meta is None:
        return
    checker.report.suite = Suite(meta, region_meta, tuple(predictions),
                                 tuple(item for _, item in items), checker.report.source,
                                 notes=dict(checker.item_notes))


def _has_old_predictions(data: dict[str, Any]) -> bool:
    """Whether the suite is in the older format: formulas in ``meta.string_predictions`` and
    ``predictions`` empty or absent. With both filled, ``predictions`` counts (the other stays
    in ``meta`` as an unknown field)."""
    meta = data.get("meta")
    return (isinstance(meta, dict) and _OLD_PREDICTIONS in meta
            and data.get("predictions", []) == [])


def _old_predictions(checker: Checker, meta: dict[str, Any]) -> list[Any] | None:
    path = f"meta.{_OLD_PREDICTIONS}"
    formulas = meta[_OLD_PREDICTIONS]
    if not isinstance(formulas, list):
        checker.error(path, f"expected a JSON list of formulas, got {describe(formulas)}")
        return None
    checker.warn(path, f"predictions read from meta.{_OLD_PREDICTIONS} (an older suite format, "
                 "with an empty \"predictions\" list)")
    return formulas


def _without_old_predictions(meta: SuiteMeta | None) -> SuiteMeta | None:
    """The meta without the formulas it held: they are the suite's predictions now, and would
    otherwise be written out twice."""
    if meta is None:
        return None
    extra = {key: value for key, value in meta.extra.items() if key != _OLD_PREDICTIONS}
    return dataclasses.replace(meta, extra=extra)
