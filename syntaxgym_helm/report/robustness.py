"""Robustness to context: each suite's accuracy under each context, and its change from none.

A run with a context (``context=`` of the run entry) is paired with the run of the same model,
suite, scoring settings and run suite without one; the change is measured on the items both
scored, with a paired bootstrap (:func:`syntaxgym_helm.core.uncertainty.paired_bootstrap`: the
same items resampled for both runs). The "mean over suites" row is the mean of suite accuracies
(as the SG score is), its interval from resampling items within each suite. The table's "none"
column is the run without context's accuracy over all the items it scored (the summary's number).

:func:`robustness_markdown` is the section ``syntaxgym-helm report`` adds to ``summary.md``;
:func:`robustness_rows` the rows of ``robustness.csv``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from syntaxgym_helm.core.context import ContextSpec
from syntaxgym_helm.core.uncertainty import PairedDifference, mean_of_means, paired_bootstrap
from syntaxgym_helm.report.runs import RunRecord, UnreadableRun
from syntaxgym_helm.report.summary import Table, fewer_mark, fmt, suite_order

ALL_SUITES = "**mean over suites**"


@dataclass(frozen=True)
class Pairing:
    """A context run and the run without context it is compared with, on their shared items."""

    baseline: RunRecord
    run: RunRecord
    items: tuple[int, ...]  # item numbers both scored
    baseline_passed: tuple[float, ...]  # 1.0 passed, 0.0 failed, per item of ``items``
    passed: tuple[float, ...]


@dataclass(frozen=True)
class RobustnessRow:
    """One row of ``robustness.csv``: a model's accuracy on a suite (or the mean over suites)
    without context and with one, and the change with its interval."""

    model: str
    suite: str
    context: str
    context_sentences: int
    context_seed: int
    items: int
    accuracy_none: float
    accuracy: float
    change: float
    change_low: float
    change_high: float
    p_value: float


def _key(run: RunRecord) -> tuple[str, str, str, str]:
    return (run.run_suite, run.model, run.settings, run.suite_name)


def _outcomes(run: RunRecord) -> dict[int, float]:
    return {score.item_number: float(bool(score.passed)) for score in run.scores if score.scorable}


def pairings(runs: Sequence[RunRecord]) -> list[Pairing]:
    """Every context run whose run without context is among ``runs``, with it."""
    baselines = {_key(run): run for run in runs if not run.context.active}
    found = []
    for run in runs:
        baseline = baselines.get(_key(run))
        if not run.context.active or baseline is None:
            continue
        mine, theirs = _outcomes(run), _outcomes(baseline)
        items = tuple(sorted(set(mine) & set(theirs)))
        found.append(Pairing(baseline, run, items, tuple(theirs[i] for i in items),
                             tuple(mine[i] for i in items)))
    return found


def _model_label(run: RunRecord) -> str:
    """The baseline's label: the model (plus settings and run suite where reports need them)."""
    return run.label or run.model


def _change(pairs: Sequence[Pairing]) -> PairedDifference:
    return paired_bootstrap([p.baseline_passed for p in pairs], [p.passed for p in pairs])


def _row(model: str, suite: str, context: ContextSpec, pairs: Sequence[Pairing]
         ) -> RobustnessRow:
    change = _change(pairs)
    return RobustnessRow(
        model=model, suite=suite, context=context.label, context_sentences=context.sentences,
        context_seed=context.seed, items=sum(len(p.items) for p in pairs),
        accuracy_none=mean_of_means([p.baseline_passed for p in pairs]),
        accuracy=mean_of_means([p.passed for p in pairs]), change=change.difference,
        change_low=change.interval.low, change_high=change.interval.high,
        p_value=change.p_value)


def robustness_rows(runs: Sequence[RunRecord]) -> list[RobustnessRow]:
    """Per model, context and suite, then the mean over the suites (with at least two)."""
    grouped: dict[tuple[str, ContextSpec], list[Pairing]] = {}
    for pair in pairings(runs):
        grouped.setdefault((_model_label(pair.baseline), pair.run.context), []).append(pair)
    rows = []
    for (model, context), pairs in grouped.items():
        by_suite = {pair.run.suite_name: pair for pair in pairs}
        ordered = suite_order(set(by_suite))
        rows += [_row(model, suite, context, [by_suite[suite]]) for suite in ordered]
        if len(ordered) > 1:
            rows.append(_row(model, ALL_SUITES, context, [by_suite[s] for s in ordered]))
    return rows


def _cell(row: RobustnessRow) -> str:
    if math.isnan(row.change):
        return f"{fmt(row.accuracy)} (no item)"
    interval = "[-]" if math.isnan(row.change_low) else \
        f"[{row.change_low:+.2f}, {row.change_high:+.2f}]"
    return f"{fmt(row.accuracy)} ({row.change:+.3f} {interval})"


def robustness_tables(runs: Sequence[RunRecord], unreadable: Sequence[UnreadableRun] = ()
                      ) -> list[tuple[str, Table]]:
    """One table per model: suites as rows, no context then each context as columns; a mean over
    suites that lacks runs of the model that could not be read says how many."""
    rows = robustness_rows(runs)
    baselines = _baseline_accuracies(runs)
    models = {_model_label(pair.baseline): pair.baseline.model for pair in pairings(runs)}
    tables = []
    for model in dict.fromkeys(row.model for row in rows):
        mine = [row for row in rows if row.model == model]
        contexts = list(dict.fromkeys((r.context, r.context_sentences, r.context_seed)
                                      for r in mine))
        suites = list(dict.fromkeys(row.suite for row in mine))
        cells = {(r.suite, (r.context, r.context_sentences, r.context_seed)): r for r in mine}
        columns = ["none"] + [f"{kind} ({count}, seed {seed})" for kind, count, seed in contexts]
        body = []
        for suite in suites:
            present = [cells.get((suite, context)) for context in contexts]
            marks = [_lost_mark(models.get(model), context, unreadable, len(suites) - 1)
                     if suite == ALL_SUITES else "" for context in contexts]
            body.append((suite, (fmt(baselines[model, suite]),
                                 *((_cell(r) if r else "–") + mark
                                   for r, mark in zip(present, marks, strict=True)))))
        tables.append((model, Table("suite", tuple(columns), tuple(body))))
    return tables


def _lost_mark(model: str | None, context: tuple[str, int, int],
               unreadable: Sequence[UnreadableRun], counted: int) -> str:
    """The mark of a mean over suites that lacks runs of ``model`` (with this context, or its
    runs without context) that could not be read."""
    lost = sum(1 for run in unreadable if model and run.is_of(model) and (
        run.context is None or not run.context.active
        or (run.context.label, run.context.sentences, run.context.seed) == context))
    return fewer_mark(counted, lost, "suites")


def _baseline_accuracies(runs: Sequence[RunRecord]) -> dict[tuple[str, str], float]:
    """Each run without context's accuracy over all its scorable items (the summary's number,
    which the pairs' own items may not all share), and per model the mean over its suites."""
    by_model: dict[str, dict[str, Sequence[float]]] = {}
    for pair in pairings(runs):
        outcomes = list(_outcomes(pair.baseline).values())
        by_model.setdefault(_model_label(pair.baseline), {})[pair.baseline.suite_name] = outcomes
    found = {}
    for model, suites in by_model.items():
        found.update({(model, suite): mean_of_means([values]) for suite, values in suites.items()})
        found[model, ALL_SUITES] = mean_of_means(list(suites.values()))
    return found


def _unpaired(runs: Sequence[RunRecord]) -> list[RunRecord]:
    paired = {id(pair.run) for pair in pairings(runs)}
    return [run for run in runs if run.context.active and id(run) not in paired]


def robustness_markdown(runs: Sequence[RunRecord], unreadable: Sequence[UnreadableRun] = ()
                        ) -> str:
    """The "Robustness to context" section of the summary (empty when no run has a context
    whose run without context is there)."""
    tables = robustness_tables(runs, unreadable)
    alone = _unpaired(runs)
    if not tables and not alone:
        return ""
    parts = ["## Robustness to context",
             "Accuracy without context (none) and with each context (kind, sentences, seed), "
             "then in brackets the change from none and its 95% paired-bootstrap interval (the "
             "same items resampled for both runs; the mean over suites resamples items within "
             "each suite). Context sentences come from the suite's other items in a condition "
             "its predictions call better (acceptable) or worse (unacceptable), or from an "
             "unrelated text; docs/context.md gives the rules."]
    for model, table in tables:
        parts += [f"### {model}", table.markdown()]
    if alone:
        parts.append("Runs with a context but no run of the same model, suite and settings "
                     "without one to compare with: " + "; ".join(
                         f"{run.suite_name}, {run.name}: {fmt(_accuracy(run))}"
                         for run in alone) + ".")
    return "\n\n".join(parts) + "\n"


def _accuracy(run: RunRecord) -> float:
    return mean_of_means([list(_outcomes(run).values())])
