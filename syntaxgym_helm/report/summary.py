"""The summary: accuracy per suite, per circuit and the SG score, one column per model.

Computed from the runs themselves (the same numbers HELM's ``stats.json`` holds), so it needs no
``helm-summarize``. It follows the leaderboard's definitions
(:func:`syntaxgym_helm.harness.leaderboard.show_tables` prints the same rows from
``helm-summarize``'s tables): a suite's accuracy is the mean item accuracy over its scorable items;
a circuit's, the mean of its suites' accuracies; the SG score, the mean over the suites of the
paper's SG score that were run (Hu et al. 2020 average all 31).

Where a model is one of the paper's, two columns follow it: our first-prediction accuracy and the
paper's figure (which scored the first prediction only), averaged over the same suites.

Runs that could not be read (:class:`~syntaxgym_helm.report.runs.UnreadableRun`: a truncated or
deleted ``scenario_state.json``) are listed first, with the reason; their suites read
``unreadable``, and every mean over a group of suites that lacks one says so, e.g. ``0.721
[0.69, 0.75] (30 of 31 suites; 1 run unreadable)``.

Each of our accuracies carries its 95% interval (:mod:`syntaxgym_helm.report.intervals`): Wilson
over a suite's items, a bootstrap over items within suites for a circuit and the SG score. The
paper's figures are printed as published, without one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial

from syntaxgym_helm.core.registry import CIRCUITS, HU2020_SUITES
from syntaxgym_helm.harness.stats import (
    ACCURACY,
    FIRST_PREDICTION_ACCURACY,
    TIE,
    UNSCORABLE,
    item_stat_values,
)
from syntaxgym_helm.report.intervals import INTERVALS_NOTE, mean_estimate, suite_estimate
from syntaxgym_helm.report.paper import (
    SHORT_CITATION,
    paper_accuracy,
    paper_model,
    paper_sg_score,
)
from syntaxgym_helm.report.runs import RunRecord, UnreadableRun

SG_SCORE_ROW = "**SG score** (mean over the suites run)"


@dataclass(frozen=True)
class RunAccuracy:
    """A run's item counts and accuracies (NaN when no item could be scored), with the item
    outcomes (1.0 pass, 0.0 fail, scorable items only) the intervals are computed from."""

    items: int
    scorable: int
    accuracy: float
    first_prediction: float
    outcomes: tuple[float, ...] = ()
    first_outcomes: tuple[float, ...] = ()

    @classmethod
    def of(cls, run: RunRecord) -> RunAccuracy:
        """The means of the metric's own per-item stat values, over the items that have them
        (exactly what HELM puts in ``stats.json``)."""
        values = [item_stat_values(score) for score in run.scores]
        outcomes = tuple(item[ACCURACY] for item in values if ACCURACY in item)
        first = tuple(item[FIRST_PREDICTION_ACCURACY] for item in values
                      if FIRST_PREDICTION_ACCURACY in item)
        return cls(
            items=len(values),
            scorable=sum(1 for item in values if not item[UNSCORABLE]),
            accuracy=_mean(outcomes),
            first_prediction=_mean(first),
            outcomes=outcomes,
            first_outcomes=first,
        )

    def item_outcomes(self, measure: str) -> tuple[float, ...]:
        """``outcomes`` (measure ``accuracy``) or ``first_outcomes`` (``first_prediction``)."""
        return {"accuracy": self.outcomes, "first_prediction": self.first_outcomes}[measure]


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values) if values else math.nan


def suite_circuit(suite: str) -> str | None:
    entry = HU2020_SUITES.get(suite)
    return entry.circuit if entry else None


def suite_order(suites: set[str]) -> list[str]:
    """Suites by circuit (in the paper's order), then the others, alphabetically within each."""
    rank = {circuit: index for index, circuit in enumerate(CIRCUITS)}
    return sorted(suites, key=lambda s: (rank.get(suite_circuit(s) or "", len(rank)), s))


@dataclass(frozen=True)
class Table:
    """A markdown table: a header for the row labels, column headers, rows of cells."""

    corner: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, tuple[str, ...]], ...]

    def markdown(self) -> str:
        lines = [_row(self.corner, self.columns), "|---|" + "---:|" * len(self.columns)]
        lines += [_row(label, cells) for label, cells in self.rows]
        return "\n".join(lines)


def _row(label: str, cells: Sequence[str]) -> str:
    # A "|" inside a cell (e.g. a prefix such as <|endoftext|> in a label) must be escaped.
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in (label, *cells)) + " |"


def fmt(value: float | None) -> str:
    return "–" if value is None or math.isnan(value) else f"{value:.3f}"


@dataclass(frozen=True)
class _Column:
    """A column of numbers: ours (item outcomes, so intervals) or the paper's (figures only)."""

    header: str
    outcomes: Callable[[str], Sequence[float] | None] | None = None  # ours; None: not run
    paper: Callable[[str], float | None] | None = None  # the paper's accuracy; None: not run
    unreadable: frozenset[str] = frozenset()  # suites whose run of this model could not be read

    def suite_cell(self, suite: str) -> str:
        if suite in self.unreadable:
            return UNREADABLE
        if self.outcomes is None:
            return fmt(self.paper(suite) if self.paper else None)
        outcomes = self.outcomes(suite)
        return "–" if outcomes is None else suite_estimate(outcomes).text()

    def mean_cell(self, suites: Sequence[str]) -> str:
        """Mean over the suites this column has a number for (as HELM's "Mean score" does),
        marked when runs of the group's suites could not be read."""
        if self.outcomes is None:
            text = fmt(_paper_mean(self, suites))
            counted = [s for s in suites if self.paper and self.paper(s) is not None]
        else:
            found = {s: o for s in suites if (o := self.outcomes(s)) is not None}
            counted = list(found)
            text = mean_estimate(list(found.values())).text()
        return text + fewer_mark(len(counted), sum(1 for s in suites if s in self.unreadable),
                                 "suites")


def accuracy_table(runs: Sequence[RunRecord], unreadable: Sequence[UnreadableRun] = ()) -> Table:
    """SG score, circuits and suites (rows) by model (columns), with the paper's figures beside
    models of the paper; the suites of unreadable runs are marked (see the module doc)."""
    by_label: dict[str, dict[str, RunAccuracy]] = {}
    for run in runs:
        by_label.setdefault(run.name, {})[run.suite_name] = RunAccuracy.of(run)
    missing = missing_suites(runs, unreadable)
    columns: list[_Column] = []
    for label, accuracies in by_label.items():
        model = next(run.model for run in runs if run.name == label)
        lost = missing.get(model, frozenset()) - set(accuracies)
        columns.append(_Column(label, outcomes=partial(_outcomes, accuracies, measure="accuracy"),
                               unreadable=lost))
        paper = paper_model(model)
        if paper:
            columns.append(_Column(
                f"{label} (first pred.)",
                outcomes=partial(_outcomes, accuracies, measure="first_prediction"),
                unreadable=lost))
            columns.append(_Column(f"{SHORT_CITATION} {paper}",
                                   paper=partial(_paper_where_run, accuracies, paper),
                                   unreadable=lost))
    suites = suite_order({run.suite_name for run in runs}
                         | {s for column in columns for s in column.unreadable})
    sg_suites = [s for s in suites if suite_circuit(s)]
    rows: list[tuple[str, tuple[str, ...]]] = []
    if sg_suites:  # no row at all when no suite of the paper's SG score was run
        rows.append((SG_SCORE_ROW, tuple(column.mean_cell(sg_suites) for column in columns)))
    for circuit in CIRCUITS:
        members = [s for s in suites if suite_circuit(s) == circuit]
        if members:
            rows.append((f"circuit: {circuit}",
                         tuple(column.mean_cell(members) for column in columns)))
    rows += [(suite, tuple(column.suite_cell(suite) for column in columns))
             for suite in suites]
    return Table("", tuple(column.header for column in columns), tuple(rows))


UNREADABLE = "unreadable"


def fewer_mark(counted: int, unreadable: int, what: str) -> str:
    """`` (30 of 31 suites; 1 run unreadable)`` after a mean that lacks unreadable runs."""
    if not unreadable:
        return ""
    runs = "run" if unreadable == 1 else "runs"
    return f" ({counted} of {counted + unreadable} {what}; {unreadable} {runs} {UNREADABLE})"


def missing_suites(runs: Sequence[RunRecord], unreadable: Sequence[UnreadableRun]
                   ) -> dict[str, frozenset[str]]:
    """Per model of ``runs``, the suites of its runs without context that could not be read."""
    return {model: frozenset(lost.suite_name for lost in unreadable
                             if lost.is_of(model) and lost.suite_name
                             and not (lost.context and lost.context.active))
            for model in {run.model for run in runs}}


def _paper_where_run(accuracies: dict[str, RunAccuracy], paper: str, suite: str) -> float | None:
    """The paper's accuracy of model ``paper`` on ``suite``, where our model ran it."""
    return paper_accuracy(paper, suite) if suite in accuracies else None


def _outcomes(accuracies: dict[str, RunAccuracy], suite: str, measure: str
              ) -> tuple[float, ...] | None:
    accuracy = accuracies.get(suite)
    return None if accuracy is None else accuracy.item_outcomes(measure)


def _paper_mean(column: _Column, suites: Sequence[str]) -> float | None:
    """Mean of the paper's figures over the suites this column has one for."""
    if column.paper is None:
        return None
    values = [v for v in map(column.paper, suites) if v is not None
              and not math.isnan(v)]
    return _mean(values) if values else None


def coverage_table(runs: Sequence[RunRecord], unreadable: Sequence[UnreadableRun] = ()
                   ) -> Table:
    """Items scored out of items run, per suite and model (unscorable items count in no
    accuracy; a gap here explains a surprising accuracy)."""
    labels = list(dict.fromkeys(run.name for run in runs))
    cells: dict[tuple[str, str], str] = {}
    missing = missing_suites(runs, unreadable)
    for run in runs:
        accuracy = RunAccuracy.of(run)
        cells[run.suite_name, run.name] = f"{accuracy.scorable}/{accuracy.items}"
    for run in runs:
        for suite in missing.get(run.model, ()):
            cells.setdefault((suite, run.name), UNREADABLE)
    suites = suite_order({suite for suite, _ in cells})
    return Table("items scored", tuple(labels),
                 tuple((s, tuple(cells.get((s, label), "–") for label in labels))
                       for s in suites))


def tie_count(run: RunRecord) -> int:
    """How many of a run's items met a tie (the metric's ``syntaxgym_tie`` stat)."""
    return sum(item_stat_values(score).get(TIE, 0.0) == 1.0 for score in run.scores)


def ties_line(ties: Mapping[str, Mapping[str, int]], scored: Mapping[str, int], what: str,
              why: str) -> str:
    """``Ties (why): model: n of m scored <what> (suite k, ...); ...``: per model (``ties``: its
    tie count per suite; ``scored``: its scored items), how many ties and where."""
    parts = []
    for model, by_suite in ties.items():
        where = ", ".join(f"{key} {count}" for key, count in sorted(by_suite.items()) if count)
        parts.append(f"{model}: {sum(by_suite.values())} of {scored[model]} scored {what}"
                     + (f" ({where})" if where else ""))
    return f"Ties ({why}): " + "; ".join(parts) + "."


def ties_markdown(runs: Sequence[RunRecord]) -> str:
    """The suites' tie counts per model, as the minimal-pair sections give theirs."""
    ties: dict[str, dict[str, int]] = {}
    scored: dict[str, int] = {}
    for run in runs:
        ties.setdefault(run.name, {})[run.suite_name] = tie_count(run)
        scored[run.name] = scored.get(run.name, 0) + RunAccuracy.of(run).scorable
    return ties_line(ties, scored, "items", (
        "a prediction compared two exactly equal values: scored as a failure unless the run "
        "says `ties=pass`; the HELM stat `syntaxgym_tie`"))


def checkpoints_markdown(runs: Sequence[RunRecord]) -> str:
    """Per column, the identity of the checkpoint its runs scored and where it was ('' when no
    run says: served models, runs whose kept items are gone)."""
    found: dict[str, dict[str, str]] = {}
    for run in runs:
        if run.checkpoint:
            found.setdefault(run.name, {})[run.checkpoint] = run.checkpoint_source
    if not found:
        return ""
    return ("Checkpoints (what each column's files held, docs/models.md \"What names a "
            "checkpoint\"; the `checkpoint` column of the CSV files): " + "; ".join(
                f"{_escape(label)}: " + ", ".join(f"`{digest}` ({_escape(source)})"
                                                  for digest, source in checkpoints.items())
                for label, checkpoints in found.items()) + ".")


def unreadable_markdown(unreadable: Sequence[UnreadableRun]) -> str:
    """The list of runs that could not be read, and why ('' when there is none)."""
    if not unreadable:
        return ""
    many = len(unreadable) > 1
    lines = [
        f"**{len(unreadable)} run{'s' if many else ''} could not be read** and "
        f"{'are' if many else 'is'} left out of every table; each mean over a group that lacks "
        "one says so "
        "(`k of n suites; m runs unreadable`):",
        "",
    ]
    lines += [f"- {_escape(run.describe)}" for run in unreadable]
    return "\n".join(lines)


def _escape(text: str) -> str:
    return text.replace("|", "\\|").replace("<", "&lt;")


def summary_markdown(runs: Sequence[RunRecord], unreadable: Sequence[UnreadableRun] = ()) -> str:
    """The summary as markdown: the runs that could not be read, accuracies, items scored, and
    notes on how to read them."""
    notes = [
        "Accuracy: the fraction of scorable items for which all of the suite's predictions hold. "
        "A circuit is the mean of its suites; the SG score the mean over the suites of the "
        "paper's SG score that were run.",
    ]
    papers = sorted({p for p in (paper_model(run.model) for run in runs) if p})
    if papers:
        notes.append(
            f"{SHORT_CITATION} columns: the published per-suite accuracies (ACL 2020, "
            "https://aclanthology.org/2020.acl-main.158/), which score only the first prediction "
            "of each suite: compare them with the (first pred.) column. Averaged over the same "
            "suites as ours; over all 31 suites the paper's SG score is "
            + ", ".join(f"{p} {paper_sg_score(p):.3f}" for p in papers) + ".")
    run_suites = sorted({run.run_suite for run in runs})
    return "\n\n".join(part for part in [
        f"# SyntaxGym results ({', '.join(run_suites)})",
        unreadable_markdown(unreadable),
        accuracy_table(runs, unreadable).markdown() + "\n\n" + INTERVALS_NOTE,
        coverage_table(runs, unreadable).markdown(),
        ties_markdown(runs) if runs else "",
        checkpoints_markdown(runs),
        *notes,
    ] if part) + "\n"
