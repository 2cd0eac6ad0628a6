"""``accuracy.csv``: every accuracy of the summary with its interval, one row per model, level
(suite, circuit, SG score), name and measure, for pandas, R or a spreadsheet.

- ``level`` ``suite``: ``items`` run, ``scorable``, ``passed``, ``accuracy`` = passed / scorable
  and the Wilson interval ``low``, ``high``;
- ``level`` ``circuit`` or ``sg_score``: the mean of the member suites' accuracies (those with a
  scorable item) and its bootstrap interval (Wilson for a single suite, as in the summary);
  ``items`` and ``scorable`` are summed over the suites, ``passed`` is empty (a mean of suite
  accuracies is not passed / scorable);
- ``measure``: ``accuracy`` (all of a suite's predictions hold) or ``first_prediction`` (the first
  prediction alone, as Hu et al. 2020 scored);
- ``checkpoint``: the identity of the checkpoint the model's runs scored (what its files held, or
  a Hub commit; empty where the runs do not say, as for a served model). A model whose runs scored
  several checkpoints has a label per checkpoint (:func:`~.runs.assign_labels`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from syntaxgym_helm.core.registry import CIRCUITS
from syntaxgym_helm.report.intervals import Estimate, mean_estimate, suite_estimate
from syntaxgym_helm.report.runs import RunRecord
from syntaxgym_helm.report.summary import RunAccuracy, suite_circuit, suite_order

MEASURES = ("accuracy", "first_prediction")
SG_SCORE_NAME = "SG score"


@dataclass(frozen=True)
class AccuracyRow:
    """One accuracy and its interval (NaN and empty bounds where no item was scored)."""

    model: str  # the run's label, as the summary's column
    checkpoint: str  # the identity of the checkpoint scored ("+"-joined if several; "": unknown)
    level: str  # suite, circuit or sg_score
    suite: str  # the suite, the circuit, or "SG score"
    measure: str  # accuracy or first_prediction
    suites: int  # suites averaged (1 for a suite)
    items: int
    scorable: int
    passed: int | None  # None for a mean over suites
    accuracy: float
    low: float
    high: float
    method: str  # wilson or bootstrap (see syntaxgym_helm.report.intervals)
    confidence: float


def accuracy_rows(runs: Sequence[RunRecord]) -> list[AccuracyRow]:
    """The rows for ``runs``: per model, the SG score, the circuits and the suites, as in the
    summary, each for both measures."""
    by_label: dict[str, dict[str, RunAccuracy]] = {}
    checkpoints: dict[str, dict[str, None]] = {}
    for run in runs:
        by_label.setdefault(run.name, {})[run.suite_name] = RunAccuracy.of(run)
        checkpoints.setdefault(run.name, {})[run.checkpoint] = None
    rows: list[AccuracyRow] = []
    for label, accuracies in by_label.items():
        checkpoint = "+".join(filter(None, checkpoints[label]))
        suites = suite_order(set(accuracies))
        groups = [("sg_score", SG_SCORE_NAME, [s for s in suites if suite_circuit(s)])]
        groups += [("circuit", circuit, [s for s in suites if suite_circuit(s) == circuit])
                   for circuit in CIRCUITS]
        for measure in MEASURES:
            for level, name, members in groups:
                if members:
                    rows.append(_mean_row(label, checkpoint, level, name, measure,
                                          [accuracies[s] for s in members]))
            for suite in suites:
                accuracy = accuracies[suite]
                outcomes = accuracy.item_outcomes(measure)
                rows.append(_row(label, checkpoint, "suite", suite, measure, 1, accuracy.items,
                                 len(outcomes), int(sum(outcomes)), suite_estimate(outcomes)))
    return rows


def _mean_row(label: str, checkpoint: str, level: str, name: str, measure: str,
              members: Sequence[RunAccuracy]) -> AccuracyRow:
    estimate = mean_estimate([member.item_outcomes(measure) for member in members])
    return _row(label, checkpoint, level, name, measure, len(members),
                sum(m.items for m in members),
                sum(len(m.item_outcomes(measure)) for m in members), None, estimate)


def _row(label: str, checkpoint: str, level: str, name: str, measure: str, suites: int,
         items: int, scorable: int, passed: int | None, estimate: Estimate) -> AccuracyRow:
    interval = estimate.interval
    return AccuracyRow(model=label, checkpoint=checkpoint, level=level, suite=name,
                       measure=measure, suites=suites, items=items, scorable=scorable,
                       passed=passed, accuracy=estimate.value,
                       low=interval.low, high=interval.high, method=interval.method,
                       confidence=interval.confidence)
