"""BLiMP in the summary: our models' BLiMP accuracy beside the paper's, per paradigm, per
phenomenon and overall.

BLiMP's accuracy is the share of pairs whose good sentence is less surprising than the bad one,
our prediction 0 (``syntaxgym_first_prediction_accuracy``), never item accuracy (which also
requires the prefix-method prediction of 40 paradigms). Warstadt et al. (2020) give a phenomenon's
and the overall figure as the unweighted mean over paradigms; so do we, and the paper's columns are
averaged over the same paradigms as ours (over all 67 where every paradigm was run).

Intervals (95%): Wilson for a paradigm, a bootstrap of the mean of paradigm means for a phenomenon
and overall (items resampled within their paradigm; :mod:`syntaxgym_helm.core.uncertainty`). The
paper's figures are published numbers without an interval.

The Hu et al. (2020) summary (:mod:`.summary`) is unchanged; :func:`split_blimp` lets the report
give it only the other runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from syntaxgym_helm.core.blimp.paper import PAPER_COLUMNS, SHORT_CITATION, paper_paradigms
from syntaxgym_helm.core.blimp.sources import PARADIGMS, Paradigm
from syntaxgym_helm.core.uncertainty import (
    Interval,
    bootstrap_interval,
    mean_of_means,
    wilson_interval,
)
from syntaxgym_helm.harness.stats import FIRST_PREDICTION_ACCURACY, item_stat_values
from syntaxgym_helm.report.runs import RunRecord, UnreadableRun
from syntaxgym_helm.report.summary import Table, fewer_mark, fmt

OVERALL = "overall"
#: BLiMP's suites by name (``blimp_<UID>``).
BLIMP_SUITES: dict[str, Paradigm] = {p.suite_name: p for p in PARADIGMS.values()}


def blimp_paradigm(run: RunRecord) -> Paradigm | None:
    """The BLiMP paradigm a run scored, or None for any other suite."""
    return BLIMP_SUITES.get(run.suite_name)


def split_blimp(runs: Sequence[RunRecord]) -> tuple[list[RunRecord], list[RunRecord]]:
    """(BLiMP runs, the others), each in the given order."""
    blimp = [run for run in runs if blimp_paradigm(run)]
    return blimp, [run for run in runs if not blimp_paradigm(run)]


def first_prediction_outcomes(run: RunRecord) -> list[float]:
    """1.0 / 0.0 per scorable item: whether the good sentence was the less surprising (the
    metric's own per-item value of ``syntaxgym_first_prediction_accuracy``)."""
    values = (item_stat_values(score) for score in run.scores)
    return [item[FIRST_PREDICTION_ACCURACY] for item in values
            if FIRST_PREDICTION_ACCURACY in item]


@dataclass(frozen=True)
class BlimpResults:
    """Per model label, per paradigm UID: the first-prediction outcome of each scorable item, and
    how many items were run."""

    models: tuple[str, ...]
    outcomes: dict[str, dict[str, list[float]]]
    items_run: dict[str, dict[str, int]]

    @classmethod
    def of(cls, runs: Sequence[RunRecord]) -> BlimpResults:
        outcomes: dict[str, dict[str, list[float]]] = {}
        items_run: dict[str, dict[str, int]] = {}
        for run in runs:
            paradigm = blimp_paradigm(run)
            if paradigm is None:
                continue
            outcomes.setdefault(run.name, {})[paradigm.uid] = first_prediction_outcomes(run)
            items_run.setdefault(run.name, {})[paradigm.uid] = len(run.scores)
        return cls(tuple(outcomes), outcomes, items_run)

    @property
    def paradigms(self) -> list[str]:
        """The UIDs run by any model, in the order of :func:`paradigm_order`."""
        return paradigm_order({uid for by_uid in self.outcomes.values() for uid in by_uid})

    def accuracy(self, model: str, uid: str) -> float | None:
        """The share of scorable items passed; None: not run; NaN: nothing scorable."""
        values = self.outcomes[model].get(uid)
        if values is None:
            return None
        return math.fsum(values) / len(values) if values else math.nan

    def interval(self, model: str, uids: Sequence[str]) -> tuple[float, Interval, int]:
        """Mean of paradigm accuracies over ``uids`` (those this model ran and could score),
        its 95% interval (Wilson for one paradigm, else the bootstrap) and how many paradigms
        that is."""
        groups = [self.outcomes[model][uid] for uid in uids
                  if self.outcomes[model].get(uid)]
        if len(groups) == 1:
            passed = int(sum(groups[0]))
            return mean_of_means(groups), wilson_interval(passed, len(groups[0])), 1
        return mean_of_means(groups), bootstrap_interval(groups), len(groups)


def paradigm_order(uids: set[str]) -> list[str]:
    """By the paper's phenomenon (alphabetical, as the paper's table), then by UID."""
    return sorted(uids, key=lambda uid: (PARADIGMS[uid].phenomenon, uid))


def phenomena(uids: Sequence[str]) -> dict[str, list[str]]:
    """The phenomena of ``uids`` (in order) and their members among ``uids``."""
    groups: dict[str, list[str]] = {}
    for uid in paradigm_order(set(uids)):
        groups.setdefault(PARADIGMS[uid].phenomenon, []).append(uid)
    return groups


def paper_mean(column: str, uids: Sequence[str]) -> float:
    """The paper's column averaged over ``uids`` (unweighted, as the paper)."""
    rows = paper_paradigms()
    return math.fsum(rows[uid].accuracy[column] for uid in uids) / len(uids)


def _cell(value: float, interval: Interval, paradigms: int, of: int) -> str:
    text = f"{fmt(value)} {interval.text()}" if not math.isnan(value) else "–"
    # A model that ran fewer of the group's paradigms than the row names is marked, with how many.
    return text if paradigms == of else f"{text} ({paradigms}/{of})"


def lost_paradigms(runs: Sequence[RunRecord], unreadable: Sequence[UnreadableRun]
                   ) -> dict[str, set[str]]:
    """Per model label, the UIDs of its BLiMP runs (without context) that could not be read."""
    found: dict[str, set[str]] = {}
    for lost in unreadable:
        paradigm = BLIMP_SUITES.get(lost.suite_name or "")
        if paradigm is None or (lost.context is not None and lost.context.active):
            continue
        for label in {run.name for run in runs if lost.is_of(run.model)}:
            found.setdefault(label, set()).add(paradigm.uid)
    return found


def group_table(results: BlimpResults, lost: dict[str, set[str]] | None = None) -> Table:
    """Overall and each phenomenon (rows): our models, then the paper's columns; a model's
    value that lacks paradigms whose runs could not be read (``lost``) says how many."""
    uids = results.paradigms
    rows_in = {OVERALL: uids, **phenomena(uids)}
    total = {OVERALL: len(PARADIGMS), **{name: sum(
        1 for p in PARADIGMS.values() if p.phenomenon == name) for name in rows_in if
        name != OVERALL}}
    rows = []
    for name, members in rows_in.items():
        cells = []
        for model in results.models:
            value, interval, count = results.interval(model, members)
            missing = [uid for uid in (lost or {}).get(model, ()) if name == OVERALL
                       or PARADIGMS[uid].phenomenon == name]
            cells.append(_cell(value, interval, count, len(members))
                         + fewer_mark(count, len(missing), "paradigms"))
        cells += [fmt(paper_mean(column, members)) for column in PAPER_COLUMNS]
        label = f"**{name}**" if name == OVERALL else name
        rows.append((label, (f"{len(members)}/{total[name]}", *cells)))
    return Table("BLiMP", ("paradigms run", *results.models, *_paper_headers()), tuple(rows))


def paradigm_table(results: BlimpResults) -> Table:
    """One row per paradigm run, grouped by phenomenon: its items scored, our models' accuracy
    (Wilson interval) and the paper's figures."""
    rows = []
    paper = paper_paradigms()
    for uid in results.paradigms:
        scored = []
        cells = []
        for model in results.models:
            values = results.outcomes[model].get(uid)
            if values is None:  # this model did not run the paradigm
                scored.append("–")
                cells.append("–")
                continue
            scored.append(f"{len(values)}/{results.items_run[model][uid]}")
            accuracy = results.accuracy(model, uid)
            cells.append("–" if accuracy is None or math.isnan(accuracy) else
                         f"{fmt(accuracy)} {wilson_interval(int(sum(values)), len(values)).text()}")
        # One count when every model that ran it scored as many, else each model's in column order.
        counts = set(scored) - {"–"}
        rows.append((uid, (PARADIGMS[uid].phenomenon,
                           counts.pop() if len(counts) == 1 else " · ".join(scored), *cells,
                           *(fmt(paper[uid].accuracy[column]) for column in PAPER_COLUMNS))))
    return Table("paradigm", ("phenomenon", "items scored", *results.models, *_paper_headers()),
                 tuple(rows))


def _paper_headers() -> list[str]:
    return [f"{SHORT_CITATION} {name}" for name in PAPER_COLUMNS.values()]


def blimp_summary_markdown(runs: Sequence[RunRecord],
                           unreadable: Sequence[UnreadableRun] = ()) -> str:
    """The BLiMP part of summary.md ('' when no BLiMP run is among ``runs``)."""
    results = BlimpResults.of(runs)
    if not results.models:
        return ""
    notes = [
        "BLiMP accuracy: the share of scorable pairs whose good sentence has the lower total "
        "surprisal (prediction 0, `(*;%good%) < (*;%bad%)`: the sum of the sentence's token "
        "surprisals after the beginning-of-text token, no length normalisation; "
        "`syntaxgym_first_prediction_accuracy`), with its 95% interval: Wilson for a paradigm, "
        "a bootstrap over items within paradigms for a phenomenon and overall, which are "
        "unweighted means over paradigms as in the paper. `(k/n)` after a value: the model ran "
        "only k of the row's n paradigms.",
        f"{SHORT_CITATION} columns: the per-paradigm accuracies of the BLiMP repository's "
        "corrected results (models_summary.jsonl; TACL 2020, https://doi.org/10.1162/tacl_a_00321) "
        "and human agreement, averaged over the same paradigms as ours (compare them with our "
        "columns, not with item accuracy; docs/blimp.md says exactly what is compared).",
        f"Where in the sentence the pairs differ and which region the models' preference comes "
        f"from: {REGIONS_FILES}.",
    ]
    return "\n\n".join([
        f"# BLiMP ({len(results.paradigms)} of {len(PARADIGMS)} paradigms)",
        group_table(results, lost_paradigms(runs, unreadable)).markdown(),
        "## Per paradigm",
        paradigm_table(results).markdown(),
        *notes,
    ]) + "\n"


#: The region analysis' files (written by :mod:`.blimp_regions` beside summary.md).
REGIONS_FILES = "`blimp_regions.png` and `blimp_regions.csv` beside this file"
