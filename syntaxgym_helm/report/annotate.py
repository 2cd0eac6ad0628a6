"""The suite JSON annotated with a run's results, as syntaxgym-core writes it.

syntaxgym-core's output (e.g. ``test_out_grnn.json`` of its test fixtures) is the input suite with
``meta.model`` set and, in every region of every condition, ``metric_value``: the region's
surprisal (bits) aggregated with each metric (``sum mean median range max min``). This module
writes exactly that structure, and keeps everything it adds under one key, ``syntaxgym_helm``, at
three levels, so a reader of syntaxgym-core output finds what it expects and can ignore the rest:

- top level: the run (model, HELM run and run suite, scoring settings, its context or null), the
  suite's predictions, the metric they were evaluated with, and the run's accuracies
  (``accuracy_interval``: its 95% Wilson interval, ``low``/``high`` null when no item was scored);
- each item: its HELM instance id, whether it was scorable (and why not), whether it passed, and
  each prediction's outcome (``holds`` true, false, or null when it could not be evaluated);
- each condition: its tokens as the model returned them, the region each counts for (null: not
  part of the sentence, e.g. the prefix) and their surprisals in bits.

Undefined values (every metric but ``sum`` of an empty region, a token left out) are NaN in
Python and written as JSON ``null``: NaN is not valid JSON.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from syntaxgym_helm.core.item_evaluation import ConditionValues, ItemEvaluation
from syntaxgym_helm.core.region_stats import METRICS
from syntaxgym_helm.core.suite import Condition, Item, dumps_suite_json, suite_json_pieces
from syntaxgym_helm.core.uncertainty import Interval
from syntaxgym_helm.report.intervals import suite_estimate
from syntaxgym_helm.report.runs import RunRecord
from syntaxgym_helm.report.summary import RunAccuracy

#: The key under which everything beyond syntaxgym-core's structure is kept, at every level.
EXTRA_KEY = "syntaxgym_helm"
SURPRISAL_UNIT = "bits"


def finite_or_none(value: float | None) -> float | None:
    """A number JSON can hold: NaN (undefined) becomes None (null). Infinities are kept out too:
    they are not valid JSON either, and only arise from a zero probability."""
    return value if value is not None and math.isfinite(value) else None


def annotated_suite(run: RunRecord) -> dict[str, Any]:
    """The run's suite with every region's ``metric_value`` and our additions (see module doc)."""
    return _annotated(run, list(annotated_items(run)))


def annotated_items(run: RunRecord) -> Iterator[dict[str, Any]]:
    """The items of :func:`annotated_suite`, one at a time."""
    notes = run.notes or ((),) * len(run.scores)
    for item, score, instance_id, item_notes in zip(run.suite.items, run.scores,
                                                    run.instance_ids, notes, strict=False):
        yield _item(item, score, instance_id, item_notes)


def _annotated(run: RunRecord, items: list[dict[str, Any]]) -> dict[str, Any]:
    """:func:`annotated_suite` with ``items`` as its items."""
    suite_json = run.suite.header_json_dict()  # the items are annotated apart
    meta = {"name": run.suite.meta.name, "author": run.suite.meta.author,
            "reference": run.suite.meta.reference,
            **{k: v for k, v in suite_json["meta"].items() if k not in ("name", "author",
                                                                         "reference")},
            "model": run.model}
    accuracy = RunAccuracy.of(run)
    return {
        "meta": meta,
        "region_meta": suite_json["region_meta"],
        "items": items,
        EXTRA_KEY: {
            "model": run.model,
            "label": run.name,
            "run": run.run_name,
            "run_suite": run.run_suite,
            "suite": run.suite_name,
            "prefix": run.prefix,
            "first_token": run.first_token,
            "context": {"kind": run.context.label, "sentences": run.context.sentences,
                        "seed": run.context.seed, "file": run.context.path or None}
            if run.context.active else None,
            "surprisal_unit": SURPRISAL_UNIT,
            "prediction_metric": run.suite.meta.main_metric,
            "predictions": suite_json["predictions"],
            "items": accuracy.items,
            "scorable_items": accuracy.scorable,
            "accuracy": finite_or_none(accuracy.accuracy),
            "accuracy_interval": _interval(suite_estimate(accuracy.outcomes).interval),
            "first_prediction_accuracy": finite_or_none(accuracy.first_prediction),
        },
    }


def _interval(interval: Interval) -> dict[str, Any]:
    return {"low": finite_or_none(interval.low), "high": finite_or_none(interval.high),
            "method": interval.method, "confidence": interval.confidence}


def _item(item: Item, score: ItemEvaluation, instance_id: str,
          notes: tuple[str, ...] = ()) -> dict[str, Any]:
    values = {condition.condition_name: condition for condition in score.conditions}
    return {
        "item_number": item.item_number,
        "conditions": [_condition(condition, values.get(condition.condition_name))
                       for condition in item.conditions],
        EXTRA_KEY: {
            "instance_id": instance_id,
            "scorable": score.scorable,
            "passed": score.passed,
            "problems": list(score.problems),
            "notes": list(notes),
            "predictions": [
                {"index": outcome.index, "formula": outcome.formula, "holds": outcome.holds,
                 "error": outcome.error}
                for outcome in score.predictions
            ],
        },
    }


#: The statistics of a region whose condition's request failed.
_UNSCORED: dict[str, float | None] = dict.fromkeys(METRICS)


def _condition(condition: Condition, values: ConditionValues | None) -> dict[str, Any]:
    """One condition; a condition whose request failed has every metric value null."""
    regions = []
    for region in condition.regions:
        # statistics (every metric, in METRICS order): NaN (null) for a region that cannot be
        # measured; a failed request has no statistics, all null too.
        stats = values.statistics(region.region_number) if values is not None else _UNSCORED
        metric_value = {metric: finite_or_none(value) for metric, value in stats.items()}
        regions.append({"region_number": region.region_number, "content": region.content,
                        "metric_value": metric_value})
    tokens = [] if values is None else [
        {"text": text, "region": region, "surprisal": finite_or_none(surprisal)}
        for text, region, surprisal in zip(values.tokens, values.regions, values.surprisals,
                                           strict=True)
    ]
    return {"condition_name": condition.condition_name, "regions": regions,
            EXTRA_KEY: {"scored": values is not None, "tokens": tokens}}


def dumps_annotated(data: dict[str, Any]) -> str:
    """The text :func:`write_annotated` writes for ``data``: indented JSON, one item a line
    (:func:`~syntaxgym_helm.core.suite.suite_json_pieces`); a stray NaN outside the items is an
    error instead of invalid JSON."""
    items = data.get("items")
    if not isinstance(items, list):
        return dumps_suite_json(data)
    return "".join(suite_json_pieces(data, items, _encode_item))


def write_annotated(run: RunRecord, path: Path) -> Path:
    """:func:`dumps_annotated` of :func:`annotated_suite` into ``path``, one item at a time, so
    that a large suite's annotated items are never all held as Python objects at once."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as stream:
        stream.writelines(suite_json_pieces(_annotated(run, []), annotated_items(run),
                                            _encode_item))
    return path


def _encode_item(item: dict[str, Any]) -> str:
    """One annotated item as compact JSON, by orjson (faster than json at this). It writes a NaN
    as null rather than refusing it: every number of an item has been through
    :func:`finite_or_none` already."""
    return orjson.dumps(item).decode()
