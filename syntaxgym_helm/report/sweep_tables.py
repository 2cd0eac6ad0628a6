"""A sweep's numbers: what each run of each checkpoint scored, as the tidy table of learning
curves, BabyLM's ``fast_eval_results``, and ages of acquisition.

Each finished run is read once, from what the metric kept in its folder
(:mod:`syntaxgym_helm.harness.scored_items`), into a :class:`SuiteCount` (items, scorable,
passed, ties, unscorable), which the sweep keeps in its state file so that a resumed sweep reads
no finished run again.

- :func:`curve_rows`: one row per model, checkpoint and suite: ``model, revision, x, unit,
  dataset, suite, phenomenon, measure, items, scorable, passed, ties, unscorable, accuracy, low,
  high`` (accuracy = passed / scorable, with its Wilson interval; ``measure`` says which
  predictions count, :class:`SuiteCount`), plus the checkpoint's identity and status; a
  checkpoint that failed has one row with its status and no suite.
- :func:`fast_eval_results`: BabyLM's ``fast_eval_results`` (the part of its ``collate_preds.py``
  output that holds them): one key per task (``blimp`` for BLiMP's paradigms, by their UID; the
  other data sets by their names, ``syntaxgym`` for SyntaxGym suites), each a list of
  ``{suite: accuracy}`` (0 to 1) by position: where every checkpoint is one of BabyLM's
  (``chck_1M`` ...), a place for each of its 19 strict-small or 28 revisions, in its order,
  ``null`` for one not swept; else one per checkpoint in training order. A failed checkpoint is
  ``null`` as a whole (a run that failed: its accuracy ``null``).
- :func:`acquisition_rows`: each suite's age of acquisition
  (:mod:`syntaxgym_helm.core.acquisition`).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from syntaxgym_helm.core.acquisition import chance_of, suite_acquisition
from syntaxgym_helm.core.minimal_pairs.catalogue import source_file
from syntaxgym_helm.core.registry import circuit_of
from syntaxgym_helm.core.uncertainty import wilson_interval
from syntaxgym_helm.core.word_contexts import SUITE_NAME as WORD_SUITE, WORD_REGION
from syntaxgym_helm.harness.scored_items import FILE_NAME, read_scored_items

SYNTAXGYM_TASK = "syntaxgym"


@dataclass(frozen=True)
class SuiteCount:
    """What one run scored: its suite, data set and phenomenon (BLiMP's phenomenon, a
    data set's group, a Hu et al. circuit; empty when none), item counts, and the number of
    predictions its accuracy needs (for chance). The accuracy is the leaderboard's main figure:
    a minimal-pair suite's whole-sentence comparison (its first prediction: ``measure``
    ``first_prediction``), every prediction of any other suite's items (``accuracy``); ``ties``
    counts the scored items where that measure compared two equal values."""

    suite: str
    dataset: str
    phenomenon: str
    items: int
    scorable: int
    passed: int
    ties: int
    unscorable: int
    predictions: int
    measure: str = "accuracy"

    @property
    def accuracy(self) -> float:
        return self.passed / self.scorable if self.scorable else math.nan


def _grouping(suite: str) -> tuple[str, str]:
    found = source_file(suite)
    if found is not None:
        return found[0].name, found[1].group
    return SYNTAXGYM_TASK, circuit_of(suite) or ""


def suite_count(run_dir: Path) -> SuiteCount | None:
    """The counts of the run in ``run_dir``; None when it holds no SyntaxGym items (another
    benchmark's run, or the words-in-contexts run)."""
    path = run_dir / FILE_NAME
    if not path.is_file():
        return None
    kept = read_scored_items(path)
    if kept.suite is None or kept.suite.name == WORD_SUITE:
        return None
    scorable = [e for e in kept.evaluations if e.scorable]
    dataset, phenomenon = _grouping(kept.suite.name)
    pairs = dataset != SYNTAXGYM_TASK
    counted = [e.predictions[:1] if pairs else e.predictions for e in scorable]
    return SuiteCount(
        suite=kept.suite.name, dataset=dataset, phenomenon=phenomenon,
        items=len(kept.evaluations), scorable=len(scorable),
        passed=sum(1 for outcomes in counted if all(p.holds for p in outcomes)),
        ties=sum(1 for outcomes in counted if any(p.tie for p in outcomes)),
        unscorable=len(kept.evaluations) - len(scorable),
        predictions=1 if pairs else len(kept.suite.predictions),
        measure="first_prediction" if pairs else "accuracy")


def word_surprisals(run_dir: Path) -> list[float] | None:
    """Per row of a words-in-contexts file (item ``n`` is row ``n``), the word's surprisal in
    bits (NaN where it could not be scored, or was not run); None when ``run_dir`` is not such a
    run."""
    path = run_dir / FILE_NAME
    if not path.is_file():
        return None
    kept = read_scored_items(path)
    if kept.suite is None or kept.suite.name != WORD_SUITE:
        return None
    rows = max((item.item_number for item in kept.suite.items), default=0)
    values = [math.nan] * rows
    for evaluation in kept.evaluations:  # by item number: HELM's order is not the file's
        try:
            values[evaluation.item_number - 1] = (
                evaluation.conditions[0].value("sum", WORD_REGION)
                if evaluation.scorable and evaluation.conditions else math.nan)
        except (ValueError, IndexError):
            continue
    return values


def count_of(data: Mapping[str, Any]) -> SuiteCount:
    """A :class:`SuiteCount` from its ``asdict`` (the sweep's state file)."""
    return SuiteCount(**{f.name: data[f.name] for f in fields(SuiteCount) if f.name in data})


@dataclass(frozen=True)
class Point:
    """One checkpoint of a sweep as the tables need it."""

    model: str
    revision: str
    x: float
    unit: str
    identity: str
    status: str  # "done", or "failed: why"
    counts: tuple[SuiteCount, ...]


CURVE_COLUMNS = ("model", "revision", "x", "unit", "dataset", "suite", "phenomenon", "measure",
                 "items", "scorable", "passed", "ties", "unscorable", "accuracy", "low", "high",
                 "identity", "status")


def curve_rows(points: Sequence[Point]) -> list[dict[str, Any]]:
    """The tidy table (see the module doc), in checkpoint order."""
    rows = []
    for point in points:
        base = {"model": point.model, "revision": point.revision, "x": point.x,
                "unit": point.unit, "identity": point.identity, "status": point.status}
        if not point.counts:
            rows.append({**dict.fromkeys(CURVE_COLUMNS, ""), **base})
        for count in point.counts:
            interval = wilson_interval(count.passed, count.scorable)
            rows.append({**base, "dataset": count.dataset, "suite": count.suite,
                         "phenomenon": count.phenomenon, "measure": count.measure,
                         "items": count.items,
                         "scorable": count.scorable, "passed": count.passed,
                         "ties": count.ties, "unscorable": count.unscorable,
                         "accuracy": count.accuracy, "low": interval.low,
                         "high": interval.high})
    return rows


def write_csv(path: Path, rows: Iterable[Mapping[str, Any]], columns: Sequence[str]) -> Path:
    """``rows`` as CSV with ``columns`` (floats to 6 significant digits, NaN empty)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as stream:
        writer = csv.DictWriter(stream, columns, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({key: _cell(row.get(key, "")) for key in columns})
    return path


def _cell(value: Any) -> Any:
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.6g}"
    return value


def task_of(count: SuiteCount) -> tuple[str, str]:
    """BabyLM's task key and subtask name of a suite: ``("blimp", "adjunct_island")``."""
    if count.dataset == SYNTAXGYM_TASK:
        return SYNTAXGYM_TASK, count.suite
    return count.dataset, count.suite.removeprefix(f"{count.dataset}_")


#: BabyLM's fast-evaluation revisions, in its ``collate_preds.py``'s order: the other tracks' 28;
#: strict-small's 19 are the first 19 (to ``chck_100M``).
BABYLM_REVISIONS = tuple(f"chck_{n}M" for n in (*range(1, 10), *range(10, 100, 10),
                                                 *range(100, 1001, 100)))
STRICT_SMALL_REVISIONS = BABYLM_REVISIONS[:19]


def fast_eval_results(points: Sequence[Point]) -> dict[str, dict[str, list[dict[str, Any] | None]]]:
    """``{"fast_eval_results": {task: [{subtask: accuracy}, ...]}}`` (see the module doc)."""
    subtasks: dict[str, list[str]] = {}
    for point in points:
        for count in point.counts:
            task, name = task_of(count)
            if name not in subtasks.setdefault(task, []):
                subtasks[task].append(name)
    results: dict[str, list[dict[str, Any] | None]] = {task: [] for task in subtasks}
    by_name = {point.revision: point for point in points}
    grid = babylm_grid(list(by_name))
    placed: list[Point | None] = [by_name.get(name) for name in grid] if grid else list(points)
    for place in placed:
        found = {task_of(count): count.accuracy for count in place.counts} if place else {}
        for task, names in subtasks.items():
            results[task].append({name: _json_number(found.get((task, name), math.nan))
                                  for name in names} if found else None)
    return {"fast_eval_results": results}


def babylm_grid(names: Sequence[str]) -> tuple[str, ...]:
    """BabyLM's revisions that ``names`` are among (strict-small's 19, else the other tracks'
    28), whose positions BabyLM's files keep; empty when some name is not BabyLM's."""
    for grid in (STRICT_SMALL_REVISIONS, BABYLM_REVISIONS):
        if names and set(names) <= set(grid):
            return grid
    return ()


def _json_number(value: float) -> float | None:
    return None if math.isnan(value) else value


ACQUISITION_COLUMNS = ("model", "unit", "dataset", "suite", "phenomenon", "chance",
                       "final_accuracy", "threshold", "acquired_at", "acquired_x", "crossing_x",
                       "reason", "a", "b", "c", "d")


def acquisition_rows(points: Sequence[Point]) -> list[dict[str, Any]]:
    """Per model and suite, its age of acquisition over the model's finished checkpoints."""
    rows = []
    by_model: dict[str, list[Point]] = {}
    for point in points:
        if point.counts:
            by_model.setdefault(point.model, []).append(point)
    for model, done in by_model.items():
        done.sort(key=lambda p: p.x)
        suites = {count.suite: count for point in done for count in point.counts}
        for suite, example in suites.items():
            accuracy = {p.x: next((c.accuracy for c in p.counts if c.suite == suite), math.nan)
                        for p in done}
            chance = chance_of(example.predictions)
            found = suite_acquisition(list(accuracy), list(accuracy.values()), chance)
            revision = next((p.revision for p in done if p.x == found.checkpoint_x), "")
            values = [v for v in accuracy.values() if not math.isnan(v)]
            rows.append({"model": model, "unit": done[0].unit, "dataset": example.dataset,
                         "suite": suite, "phenomenon": example.phenomenon, "chance": chance,
                         "final_accuracy": values[-1] if values else math.nan,
                         "threshold": found.threshold, "acquired_at": revision,
                         "acquired_x": found.checkpoint_x, "crossing_x": found.x,
                         "reason": found.reason,
                         **dict(zip("abcd", found.parameters, strict=False))})
    return rows


def counts_json(counts: Iterable[SuiteCount]) -> list[dict[str, Any]]:
    return [asdict(count) for count in counts]
