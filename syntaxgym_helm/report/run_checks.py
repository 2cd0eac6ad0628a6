"""The checks that a run folder's items are the run HELM's files of it describe.

A report reads the items the metric kept (:mod:`syntaxgym_helm.harness.scored_items`) or scores
them again from ``scenario_state.json``; either way they are shown only when they agree with
HELM's files of the same run: the run format is this version's
(:mod:`syntaxgym_helm.harness.run_format`), the scored items name the run ``run_spec.json`` names
and its adapter spec, and the instances and each one's accuracy are those of HELM's
``per_instance_stats.json``, the file HELM writes last. A folder that holds files of two runs (a
write that failed, a run cut short) or none of the last is named, with why and the command that
runs it again, instead of being read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from syntaxgym_helm.harness.run_format import check_run_format, rerun_command
from syntaxgym_helm.harness.scored_items import loads_json
from syntaxgym_helm.harness.stats import ACCURACY, item_stat_values

PER_INSTANCE_STATS = "per_instance_stats.json"


class RunsError(ValueError):
    """A path holds no SyntaxGym run, or a selection of runs is ambiguous."""


def read_json(path: Path) -> Any:
    """A run file's JSON; a :class:`RunsError` that says whether it is missing or cut off."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise RunsError(f"{path.name} is missing (deleted, or the run was cut short while HELM "
                        "wrote its output)") from None
    try:
        return loads_json(raw)  # orjson: scenario_state.json is 9 MB a BLiMP paradigm
    except ValueError as exc:
        raise RunsError(f"{path.name} is cut off or not JSON ({exc}; {len(raw):,} bytes): "
                        "a disk filled up, or a copy was cut short") from None


def check_format(version: Any, written_by: str | None, spec: dict[str, Any],
                  run_dir: Path) -> None:
    adapter = spec.get("adapter_spec", {})
    check_run_format(version, written_by, str(spec.get("name", run_dir.name)),
                     adapter.get("model"), run_dir.parent.name, adapter.get("max_eval_instances"))


def run_again(run_dir: Path, spec: dict[str, Any]) -> str:
    return ("run it again (without --skip-completed-runs): "
            + rerun_command(str(spec.get("name", run_dir.name)),
                            spec.get("adapter_spec", {}).get("model"), run_dir.parent.name,
                            spec.get("adapter_spec", {}).get("max_eval_instances")))


def helm_items(run_dir: Path) -> dict[str, float | None]:
    """Each instance of HELM's ``per_instance_stats.json`` (the file HELM writes last) with its
    accuracy (None: unscorable)."""
    try:
        rows = read_json(run_dir / PER_INSTANCE_STATS)
    except RunsError as error:
        raise RunsError(f"{error}; HELM writes it last, so the run did not finish (interrupted, "
                        f"or failed: see its log); {run_again(run_dir, _spec_or_empty(run_dir))}"
                        ) from None
    items: dict[str, float | None] = {}
    for row in rows:
        stats = {stat["name"]["name"]: stat for stat in row.get("stats", ())
                 if not stat["name"].get("perturbation")}
        accuracy = stats.get(ACCURACY)
        items[row["instance_id"]] = (accuracy["sum"] / accuracy["count"]
                                     if accuracy and accuracy.get("count") else None)
    return items


def _spec_or_empty(run_dir: Path) -> dict[str, Any]:
    try:
        return dict(json.loads((run_dir / "run_spec.json").read_text()))
    except (OSError, ValueError, TypeError):
        return {}


def check_against_helm(record: Any, helm_items: dict[str, float | None],
                       spec: dict[str, Any]) -> None:
    """RunsError unless ``record``'s items are those of HELM's ``per_instance_stats.json``
    (``helm_items``): the same instances, and each item's accuracy the one HELM recorded."""
    ours = dict(zip(record.instance_ids, record.scores, strict=True))
    problem = ""
    if set(ours) != set(helm_items):
        only_ours = sorted(set(ours) - set(helm_items))
        only_helm = sorted(set(helm_items) - set(ours))
        problem = (f"{len(ours)} items against {len(helm_items)} in HELM's {PER_INSTANCE_STATS}"
                   + (f"; only in the items read: {', '.join(only_ours[:3])}" if only_ours else "")
                   + (f"; only in HELM's: {', '.join(only_helm[:3])}" if only_helm else ""))
    else:
        for instance_id, score in ours.items():
            accuracy = item_stat_values(score).get(ACCURACY)
            if accuracy != helm_items[instance_id]:
                problem = (f"{instance_id} has accuracy {accuracy} here and "
                           f"{helm_items[instance_id]} in HELM's {PER_INSTANCE_STATS}")
                break
    if problem:
        raise RunsError(f"the items read are not the run HELM's files describe ({problem}): the "
                        f"folder mixes files of two runs (a run cut short, or a failed write); "
                        f"{run_again(record.run_dir, spec)}")
