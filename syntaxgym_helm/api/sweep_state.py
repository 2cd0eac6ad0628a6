"""A sweep's record of its checkpoints, on disk: the state file a resumed sweep starts from, and
what each checkpoint's finished runs scored (read once, kept there)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

from syntaxgym_helm.core.download import write_atomically
from syntaxgym_helm.report.sweep_tables import SuiteCount, suite_count, word_surprisals

#: The files of a finished HELM run (``Runner._is_run_completed``'s).
RUN_FILES = ("run_spec.json", "scenario.json", "scenario_state.json", "stats.json",
             "per_instance_stats.json")


class SweepStateError(ValueError):
    """A state file that cannot be read (the message says what to do)."""


def runs_complete(runs_folder: Path, runs: Sequence[str]) -> bool:
    """Whether every run of ``runs`` finished (all of HELM's files are there)."""
    return bool(runs) and all((runs_folder / run / name).is_file() for run in runs
                              for name in RUN_FILES)


def other_sample_runs(runs_folder: Path, specs: Sequence[Any]) -> list[str]:
    """The runs of ``specs`` whose folder holds a run of another number of items
    (``max_eval_instances`` in its ``run_spec.json``: another ``pairs_per_paradigm``), which
    HELM would skip as completed: one learning curve must not mix sample sizes."""
    stale = []
    for spec in specs:
        path = runs_folder / spec.name / "run_spec.json"
        try:
            recorded = json.loads(path.read_text())["adapter_spec"].get("max_eval_instances")
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue  # no run there yet, or not one HELM finished writing: run as any
        if recorded != spec.adapter_spec.max_eval_instances:
            stale.append(spec.name)
    return stale


def remove_runs(runs_folder: Path, runs: Sequence[str]) -> None:
    """Delete the folders of ``runs`` (a checkpoint's, whose files changed since)."""
    for run in runs:
        shutil.rmtree(runs_folder / run, ignore_errors=True)


def read_counts(runs_folder: Path, runs: Sequence[str]
                ) -> tuple[list[SuiteCount], list[float] | None]:
    """What ``runs`` scored: each suite's counts, and a words-in-contexts run's surprisals."""
    counts, surprisals = [], None
    for run in runs:
        folder = runs_folder / run
        found = suite_count(folder)
        if found is not None:
            counts.append(found)
        words = word_surprisals(folder)
        if words is not None:
            surprisals = words
    return counts, surprisals


def read_state(path: Path) -> list[dict[str, Any]]:
    """The checkpoints a sweep's state file records (none when it does not exist)."""
    if not path.is_file():
        return []
    try:
        return list(json.loads(path.read_text(encoding="utf-8"))["checkpoints"])
    except (ValueError, KeyError, TypeError) as error:
        raise SweepStateError(f"{path}: not a sweep state file ({error}); move it away to "
                              "start the sweep afresh") from None


def save_state(path: Path, label: str, unit: str, planned: Sequence[Any]) -> None:
    """Write the state file: the model, the x unit, each checkpoint (a dataclass) as a dict."""
    checkpoints = [asdict(c) for c in planned if is_dataclass(c) and not isinstance(c, type)]
    data = {"model": label, "unit": unit, "checkpoints": checkpoints}
    write_atomically(path, json.dumps(data, indent=1, allow_nan=True).encode())
