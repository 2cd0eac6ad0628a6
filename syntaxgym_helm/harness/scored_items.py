"""What the metric found for every item of a run, kept in the run folder for the reports.

HELM keeps a run's stats (``per_instance_stats.json``: accuracies) and its requests and results
(``scenario_state.json``: every token of every condition, each instance with its one-item suite),
but not the region values the metric computed in between, which the reports need. Without them a
report would read all of ``scenario_state.json`` (9 MB for a BLiMP paradigm) and score every item
again. So the metric writes what it found, once, as ``syntaxgym_scored_items.json`` beside HELM's
files (:func:`write_scored_items`): the run's suite (the one-item suites merged), its first-token
policy, and per item the instance id and its :class:`~syntaxgym_helm.core.item_evaluation.
ItemEvaluation` (tokens, the region each counts for, surprisals in bits, prediction outcomes,
problems). :func:`read_scored_items` gives them back exactly; a report scores a run again only
when asked or when a run has no such file (written before it existed, or by a HELM whose runner
does not name its current run).

The run folder is HELM's ``<eval_cache_path>/../<run name>`` (``Runner.run_one`` creates it
before the metric runs); the run's name comes from ``helm.benchmark.runner``'s
``_get_current_run_spec_name``, which HELM's own clients use too.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Mapping, Sequence

# Reads these files twice as fast as json (the 67 BLiMP runs' 82 MB: 3.2 s -> 1.7 s).
import orjson

from syntaxgym_helm.core.item_evaluation import (
    ConditionValues,
    ItemEvaluation,
    PredictionOutcome,
)
from syntaxgym_helm.core.suite import Suite

FILE_NAME = "syntaxgym_scored_items.json"
FORMAT = "syntaxgym-scored-items-v2"


def merge_one_item_suites(one_item_suites: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The run's suite as JSON: the shared fields of its one-item suites and all of their items,
    in item-number order."""
    merged = {key: value for key, value in one_item_suites[0].items() if key != "items"}
    merged["items"] = sorted((item for one in one_item_suites for item in one["items"]),
                             key=lambda item: item["item_number"])
    return merged


def current_run_dir(eval_cache_path: str) -> Path | None:
    """The folder of the run HELM is computing metrics for, or None when HELM does not say."""
    try:
        from helm.benchmark.runner import _get_current_run_spec_name
    except ImportError:
        return None
    name = _get_current_run_spec_name()
    if not name or not eval_cache_path:
        return None
    folder = Path(eval_cache_path).parent / name
    return folder if folder.is_dir() else None


def write_scored_items(folder: Path, first_token: str, suite_json: Mapping[str, Any],
                       scored: Sequence[tuple[str, ItemEvaluation]]) -> Path:
    """Write the run's suite and ``scored`` ((instance id, evaluation) per item, in item order)
    to ``folder``; returns the file's path."""
    data = {"format": FORMAT, "first_token": first_token, "suite": suite_json,
            "items": [_evaluation_json(instance_id, evaluation)
                      for instance_id, evaluation in scored]}
    path = folder / FILE_NAME
    temporary = path.with_suffix(".json.partial")
    # json, not orjson: an infinite surprisal (a token given probability 0) must come back as
    # one, and orjson would write it as null.
    temporary.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")),
                         encoding="utf-8")
    temporary.replace(path)
    return path


def read_scored_items(path: Path) -> tuple[str, Suite, tuple[str, ...], tuple[ItemEvaluation, ...]]:
    """The first-token policy, the suite, the instance ids and the evaluations that
    :func:`write_scored_items` wrote (items in item order); ValueError for another format."""
    data = loads_json(path.read_bytes())
    if data.get("format") != FORMAT:
        raise ValueError(f"{path} is not a {FORMAT} file (format {data.get('format')!r})")
    suite = Suite.from_trusted_json(data["suite"], source=str(path))  # the metric wrote it
    ids = tuple(item["instance_id"] for item in data["items"])
    evaluations = tuple(_evaluation(item) for item in data["items"])
    return data["first_token"], suite, ids, evaluations


def loads_json(raw: bytes) -> Any:
    """JSON as orjson reads it, or json where the text holds what only json reads (``Infinity``,
    which json writes for a token given probability 0); ValueError for text that is not JSON."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return json.loads(raw)


def _evaluation_json(instance_id: str, evaluation: ItemEvaluation) -> dict[str, Any]:
    return {
        "instance_id": instance_id,
        "item_number": evaluation.item_number,
        "metric": evaluation.metric,
        # A token outside every region has no surprisal (NaN, which JSON lacks): null.
        "conditions": [[values.condition_name, values.tokens, values.regions,
                        [None if math.isnan(s) else s for s in values.surprisals],
                        {str(region): why for region, why in values.unmeasured.items()}]
                       for values in evaluation.conditions],
        "predictions": [[p.index, p.formula, p.holds, p.error, p.tie]
                        for p in evaluation.predictions],
        "problems": evaluation.problems,
    }


def _evaluation(item: Mapping[str, Any]) -> ItemEvaluation:
    return ItemEvaluation(
        item_number=item["item_number"],
        metric=item["metric"],
        conditions=tuple(
            ConditionValues(name, tuple(tokens), tuple(regions),
                            tuple(math.nan if s is None else s for s in surprisals),
                            {int(region): why for region, why in unmeasured.items()})
            for name, tokens, regions, surprisals, unmeasured in item["conditions"]),
        predictions=tuple(PredictionOutcome(index, formula, holds, error, tie)
                          for index, formula, holds, error, tie in item["predictions"]),
        problems=tuple(item["problems"]),
    )
