"""What the metric found for every item of a run, kept in the run folder for the reports.

HELM keeps a run's stats (``per_instance_stats.json``: accuracies) and its requests and results
(``scenario_state.json``: every token of every condition, each instance with its one-item suite),
but not the region values the metric computed in between, which the reports need. Without them a
report would read all of ``scenario_state.json`` and score every item again. So the metric writes
what it found, once, as ``syntaxgym_scored_items.json`` beside HELM's files
(:func:`write_scored_items`): the run format (:mod:`syntaxgym_helm.harness.run_format`) and who
wrote it, the run's identity (its name, a digest of its adapter spec, its count of instances), its
first-token policy, the run's suite (the one-item suites merged), and per item the instance id, its
:class:`~syntaxgym_helm.core.item_evaluation.ItemEvaluation` (tokens, the region each counts for,
surprisals in bits, prediction outcomes, problems), the changes made to its text (``notes``) and
``extras``: a dict per item and one per condition (the 6th element of a condition's list) where a
feature adds values of its own under its name. :func:`read_scored_items` gives them back exactly;
reports check them against HELM's files of the same run (:mod:`syntaxgym_helm.report.runs`).

The run folder is HELM's ``<eval_cache_path>/../<run name>`` (``Runner.run_one`` creates it
before the metric runs); the run's name comes from ``helm.benchmark.runner``'s
``_get_current_run_spec_name``, which HELM's own clients use too.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Reads these files faster than json (a report reads every run's; BENCHMARKS.md, Reports).
import orjson

from syntaxgym_helm.clients import interruption
from syntaxgym_helm.core.item_evaluation import (
    ConditionValues,
    ItemEvaluation,
    PredictionOutcome,
)
from syntaxgym_helm.core.suite import Suite
from syntaxgym_helm.harness.run_format import RUN_FORMAT_VERSION, WRITTEN_BY

FILE_NAME = "syntaxgym_scored_items.json"
FORMAT = "syntaxgym-scored-items"


@dataclass(frozen=True)
class ScoredItems:
    """What :func:`write_scored_items` wrote: the run's identity, its first-token policy and
    suite, and per item (in item order) its instance id, evaluation, notes and extras."""

    format_version: Any  # RUN_FORMAT_VERSION when this version wrote it
    written_by: str | None
    run: Mapping[str, Any]  # name (run_spec.json's), adapter_spec_sha256, instances (count)
    first_token: str
    suite: Suite | None  # None for another run format
    instance_ids: tuple[str, ...]
    evaluations: tuple[ItemEvaluation, ...]
    notes: tuple[tuple[str, ...], ...]  # per item: what changed in its text (for people)
    extras: tuple[Mapping[str, Any], ...]  # per item: fields other features add, by name


def merge_one_item_suites(one_item_suites: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The run's suite as JSON: the shared fields of its one-item suites and all of their items,
    in item-number order."""
    merged = {key: value for key, value in one_item_suites[0].items() if key != "items"}
    merged["items"] = sorted((item for one in one_item_suites for item in one["items"]),
                             key=lambda item: item["item_number"])
    return merged


def current_run_dir(eval_cache_path: str) -> Path | None:
    """The folder of the run HELM is computing metrics for, or None when HELM does not say."""
    name = current_run_name()
    if not name or not eval_cache_path:
        return None
    folder = Path(eval_cache_path).parent / name
    return folder if folder.is_dir() else None


def current_run_name() -> str | None:
    """The name of the run HELM's runner is running (its ``run_spec.json`` ``name``)."""
    try:
        from helm.benchmark.runner import _get_current_run_spec_name
    except ImportError:
        return None
    return _get_current_run_spec_name()


#: HELM's files that ``Runner.run_one`` writes last, after the metrics: a folder holding the
#: previous run's copies beside the new run's other files would pass for a complete run.
HELM_STATS_FILES = ("stats.json", "per_instance_stats.json")


def begin_output(folder: Path) -> None:
    """Before HELM writes a run's files into ``folder``: remove the previous run's stats and
    scored items, so that until HELM has written them all the folder is incomplete (``report``
    names it, ``helm-run --skip-completed-runs`` runs it again), never a mix of two runs; and
    tell :mod:`~syntaxgym_helm.clients.interruption` that HELM's output phase has begun."""
    for name in (*HELM_STATS_FILES, FILE_NAME):
        (folder / name).unlink(missing_ok=True)
    interruption.output_phase(folder / HELM_STATS_FILES[-1])


def write_scored_items(folder: Path, first_token: str, suite_json: Mapping[str, Any],
                       scored: Sequence[tuple[str, ItemEvaluation]], *,
                       run: Mapping[str, Any] | None = None,
                       notes: Sequence[Sequence[str]] | None = None,
                       extras: Sequence[Mapping[str, Any]] | None = None) -> Path:
    """Write the run's suite and ``scored`` ((instance id, evaluation) per item, in item order)
    to ``folder``; returns the file's path. ``run``: the run's identity (name, adapter digest);
    ``notes``, ``extras``: per item, as :class:`ScoredItems` has them.

    The file it replaces is removed first, and a write that fails removes what it wrote: a
    folder never keeps another run's items, nor a partial file."""
    notes = notes or [()] * len(scored)
    extras = extras or [{}] * len(scored)
    data = {"format": FORMAT, "format_version": RUN_FORMAT_VERSION, "written_by": WRITTEN_BY,
            "run": {**(run or {}), "instances": len(scored)},
            "first_token": first_token, "suite": suite_json,
            "items": [_evaluation_json(instance_id, evaluation, list(note), dict(extra))
                      for (instance_id, evaluation), note, extra in zip(scored, notes, extras,
                                                                         strict=True)]}
    path = folder / FILE_NAME
    temporary = path.with_suffix(".json.partial")
    path.unlink(missing_ok=True)
    try:
        # json, not orjson: an infinite surprisal (a token given probability 0) must come back
        # as one, and orjson would write it as null.
        temporary.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")),
                             encoding="utf-8")
        temporary.replace(path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return path


def read_scored_items(path: Path) -> ScoredItems:
    """What :func:`write_scored_items` wrote (items in item order); ValueError for a file of
    another kind. The run format is given back, not checked (:mod:`.run_format` does)."""
    data = loads_json(path.read_bytes())
    if not isinstance(data, dict) or not str(data.get("format", "")).startswith(FORMAT):
        raise ValueError(f"{path} is not a {FORMAT} file (format "
                         f"{data.get('format') if isinstance(data, dict) else None!r})")
    version = data.get("format_version")
    if version != RUN_FORMAT_VERSION:  # another layout: only what names its writer is read
        return ScoredItems(version, data.get("written_by"), {}, "", None, (), (), (),
                           ())
    suite = Suite.from_trusted_json(data["suite"], source=str(path))  # the metric wrote it
    items = data["items"]
    return ScoredItems(
        format_version=version, written_by=data.get("written_by"), run=data.get("run", {}),
        first_token=data["first_token"], suite=suite,
        instance_ids=tuple(item["instance_id"] for item in items),
        evaluations=tuple(_evaluation(item) for item in items),
        notes=tuple(tuple(item.get("notes", ())) for item in items),
        extras=tuple(item.get("extras", {}) for item in items))


def loads_json(raw: bytes) -> Any:
    """JSON as orjson reads it, or json where the text holds what only json reads (``Infinity``,
    which json writes for a token given probability 0); ValueError for text that is not JSON."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return json.loads(raw)


def _evaluation_json(instance_id: str, evaluation: ItemEvaluation, notes: list[str],
                     extras: dict[str, Any]) -> dict[str, Any]:
    return {
        "instance_id": instance_id,
        "item_number": evaluation.item_number,
        "metric": evaluation.metric,
        # A token outside every region has no surprisal (NaN, which JSON lacks): null.
        "conditions": [[values.condition_name, values.tokens, values.regions,
                        [None if math.isnan(s) else s for s in values.surprisals],
                        {str(region): why for region, why in values.unmeasured.items()}, {}]
                       for values in evaluation.conditions],
        "predictions": [[p.index, p.formula, p.holds, p.error, p.tie]
                        for p in evaluation.predictions],
        "problems": evaluation.problems,
        "notes": notes,
        "extras": extras,
    }


def _evaluation(item: Mapping[str, Any]) -> ItemEvaluation:
    return ItemEvaluation(
        item_number=item["item_number"],
        metric=item["metric"],
        conditions=tuple(
            ConditionValues(name, tuple(tokens), tuple(regions),
                            tuple(math.nan if s is None else s for s in surprisals),
                            {int(region): why for region, why in unmeasured.items()})
            for name, tokens, regions, surprisals, unmeasured, *_extras in item["conditions"]),
        predictions=tuple(PredictionOutcome(index, formula, holds, error, tie)
                          for index, formula, holds, error, tie in item["predictions"]),
        problems=tuple(item["problems"]),
    )
