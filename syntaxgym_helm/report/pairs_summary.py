"""Minimal-pair data sets in the summary: per registered data set, our models' accuracy per
paradigm, per language and group and overall, beside the paper's.

A data set's accuracy is the share of pairs whose good sentence is less surprising than the bad
one, our prediction 0 (``syntaxgym_first_prediction_accuracy``), never item accuracy (which also
requires BLiMP's prefix-method prediction in 40 paradigms). As in Warstadt et al. (2020), a group's
and the overall figure are unweighted means over paradigms, and the paper's columns are averaged
over the same paradigms as ours (those that have a figure).

Intervals (95%): Wilson for a paradigm, a bootstrap of the mean of paradigm means for a group and
overall (items resampled within their paradigm; :mod:`syntaxgym_helm.core.uncertainty`). The
papers' figures are published numbers without an interval. Ties (two equally surprising
sentences, :mod:`syntaxgym_helm.core.ties`) are counted per paradigm and model.

The Hu et al. (2020) summary (:mod:`.summary`) is unchanged; :func:`split_pairs` lets the report
give it only the other runs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from syntaxgym_helm.core.minimal_pairs.catalogue import DATASETS, LANGUAGE_NAMES, source_file
from syntaxgym_helm.core.minimal_pairs.convert import LeftOut, left_out
from syntaxgym_helm.core.minimal_pairs.dataset import DataSet, SourceFile
from syntaxgym_helm.core.minimal_pairs.papers import PaperFigures, paper_figures
from syntaxgym_helm.core.sentence_scores import parse_sentence_score
from syntaxgym_helm.core.uncertainty import (
    Interval,
    bootstrap_interval,
    mean_of_means,
    wilson_interval,
)
from syntaxgym_helm.harness.stats import FIRST_PREDICTION_ACCURACY, item_stat_values
from syntaxgym_helm.report.runs import RunRecord, UnreadableRun
from syntaxgym_helm.report.sentence_scores import with_sentence_score
from syntaxgym_helm.report.summary import (
    Table,
    checkpoints_markdown,
    fewer_mark,
    fmt,
    tie_count,
    ties_line,
)

OVERALL = "overall"
#: The report's list of the pairs left out at conversion (:func:`left_out_rows`).
LEFT_OUT_NAME = "left_out_pairs.csv"


def pair_file(run: RunRecord) -> tuple[DataSet, SourceFile] | None:
    """The data set and file a run scored, or None for any other suite."""
    return source_file(run.suite_name)


def split_pairs(runs: Sequence[RunRecord]) -> tuple[list[RunRecord], list[RunRecord]]:
    """(minimal-pair runs, the others), each in the given order."""
    pairs = [run for run in runs if pair_file(run)]
    return pairs, [run for run in runs if not pair_file(run)]


def first_prediction_outcomes(run: RunRecord) -> list[float]:
    """1.0 / 0.0 per scorable item: whether the good sentence was the less surprising (the
    metric's own per-item value of ``syntaxgym_first_prediction_accuracy``)."""
    values = (item_stat_values(score) for score in run.scores)
    return [item[FIRST_PREDICTION_ACCURACY] for item in values
            if FIRST_PREDICTION_ACCURACY in item]


def _key(dataset: DataSet, suite: str) -> str:
    """A paradigm's key: its suite name without the data set's prefix (BLiMP: the UID)."""
    return suite.removeprefix(dataset.prefix)


@dataclass(frozen=True)
class PairResults:
    """One data set's runs: per model label, per paradigm key, the first-prediction outcome of
    each scorable item, how many items were run and how many were ties."""

    dataset: DataSet
    models: tuple[str, ...]
    outcomes: dict[str, dict[str, list[float]]]
    items_run: dict[str, dict[str, int]]
    ties: dict[str, dict[str, int]] = field(default_factory=dict)
    #: Per paradigm key, the pairs its conversion left out (the suite's meta, as the run holds it).
    left_out: dict[str, LeftOut] = field(default_factory=dict)
    #: Per paradigm key, the figure the data set's companion file gave its suite's meta at
    #: conversion (ZhoBLiMP's human agreement), as the run holds it.
    companion: dict[str, float] = field(default_factory=dict)

    @classmethod
    def of(cls, runs: Sequence[RunRecord], dataset: DataSet) -> PairResults:
        outcomes: dict[str, dict[str, list[float]]] = {}
        items_run: dict[str, dict[str, int]] = {}
        ties: dict[str, dict[str, int]] = {}
        left: dict[str, LeftOut] = {}
        companion: dict[str, float] = {}
        for run in runs:
            found = pair_file(run)
            if found is None or found[0] is not dataset:
                continue
            key = _key(dataset, run.suite_name)
            outcomes.setdefault(run.name, {})[key] = first_prediction_outcomes(run)
            items_run.setdefault(run.name, {})[key] = len(run.scores)
            ties.setdefault(run.name, {})[key] = tie_count(run)
            lost = left_out(run.suite.meta.extra)
            if lost is not None:
                left[key] = lost
            figures = (run.suite.meta.extra.get(dataset.companion.key)
                       if dataset.companion else None)
            if isinstance(figures, dict) and isinstance(figures.get("accuracy"), (int, float)):
                companion[key] = float(figures["accuracy"])
        return cls(dataset, tuple(outcomes), outcomes, items_run, ties, left, companion)

    @property
    def files(self) -> dict[str, SourceFile]:
        return {_key(self.dataset, f.suite): f for f in self.dataset.files()}

    @property
    def paradigms(self) -> list[str]:
        """The keys run by any model, by group, then key."""
        files = self.files
        keys = {key for by_key in self.outcomes.values() for key in by_key}
        return sorted(keys, key=lambda key: (files[key].group, key))

    def accuracy(self, model: str, key: str) -> float | None:
        """The share of scorable items passed; None: not run; NaN: nothing scorable."""
        values = self.outcomes[model].get(key)
        if values is None:
            return None
        return math.fsum(values) / len(values) if values else math.nan

    def interval(self, model: str, keys: Sequence[str]) -> tuple[float, Interval, int]:
        """Mean of paradigm accuracies over ``keys`` (those this model ran and could score),
        its 95% interval (Wilson for one paradigm, else the bootstrap) and how many paradigms
        that is."""
        groups = [self.outcomes[model][key] for key in keys if self.outcomes[model].get(key)]
        if len(groups) == 1:
            return mean_of_means(groups), wilson_interval(int(sum(groups[0])), len(groups[0])), 1
        return mean_of_means(groups), bootstrap_interval(groups), len(groups)

    def groups(self, keys: Sequence[str]) -> dict[str, list[str]]:
        """The rows below overall: the languages of ``keys`` (where the data set has several),
        then their groups (BLiMP's phenomena, CLAMS's constructions, ...), with their members."""
        files = self.files
        rows: dict[str, list[str]] = {}
        if len(self.dataset.languages) > 1:
            for language in self.dataset.languages:
                members = [key for key in keys if files[key].language == language]
                if members:
                    rows[LANGUAGE_NAMES[language]] = members
        for key in keys:
            if files[key].group:  # (MultiBLiMP's languages have no groups below them)
                rows.setdefault(files[key].group, []).append(key)
        return rows


def shown_figures(results: PairResults) -> PaperFigures | None:
    """The figures shown beside ours: the paper's (shipped), and the companion file's that the
    runs' suites carry (ZhoBLiMP's human agreement, read with the data at conversion)."""
    paper = paper_figures(results.dataset)
    companion = results.dataset.companion
    if companion is None or not results.companion:
        return paper
    by_paradigm = {key: dict(values)
                   for key, values in (paper.by_paradigm if paper else {}).items()}
    for key, value in results.companion.items():
        by_paradigm.setdefault(key, {})[companion.label] = value
    return PaperFigures(citation=paper.citation if paper else results.dataset.cited,
                        columns={**(paper.columns if paper else {}),
                                 companion.label: companion.label},
                        by_paradigm=by_paradigm)


def _cell(value: float, interval: Interval, paradigms: int, of: int) -> str:
    text = f"{fmt(value)} {interval.text()}" if not math.isnan(value) else "–"
    # A model that ran fewer of the group's paradigms than the row names is marked, with how many.
    return text if paradigms == of else f"{text} ({paradigms}/{of})"


def _paper_mean(paper: PaperFigures, column: str, keys: Sequence[str]) -> str:
    """The paper's column averaged over ``keys`` (unweighted, as the papers), over those with a
    figure; ``(k/n)`` when only k of them have one."""
    values = [paper.by_paradigm[key][column] for key in keys
              if column in paper.by_paradigm.get(key, {})]
    if not values:
        return "–"
    text = fmt(math.fsum(values) / len(values))
    return text if len(values) == len(keys) else f"{text} ({len(values)}/{len(keys)})"


def lost_paradigms(runs: Sequence[RunRecord], unreadable: Sequence[UnreadableRun],
                   dataset: DataSet) -> dict[str, set[str]]:
    """Per model label, the keys of its runs of ``dataset`` (without context) that could not be
    read."""
    found: dict[str, set[str]] = {}
    for lost in unreadable:
        source = source_file(lost.suite_name or "")
        if source is None or source[0] is not dataset or (lost.context and lost.context.active):
            continue
        for label in {run.name for run in runs if lost.is_of(run.model)}:
            found.setdefault(label, set()).add(_key(dataset, lost.suite_name or ""))
    return found


def group_table(results: PairResults, lost: dict[str, set[str]] | None = None) -> Table:
    """Overall, each language and each group (rows): our models, then the paper's columns; a
    model's value that lacks paradigms whose runs could not be read (``lost``) says how many."""
    keys = results.paradigms
    rows_in = {OVERALL: keys, **results.groups(keys)}
    everything = results.groups(list(results.files))
    paper = shown_figures(results)
    rows = []
    for name, members in rows_in.items():
        cells = []
        for model in results.models:
            value, interval, count = results.interval(model, members)
            missing = [key for key in (lost or {}).get(model, ()) if key in results.files and (
                name == OVERALL or name in (results.files[key].group,
                                            LANGUAGE_NAMES.get(results.files[key].language)))]
            cells.append(_cell(value, interval, count, len(members))
                         + fewer_mark(count, len(missing), "paradigms"))
        if paper:
            cells += [_paper_mean(paper, column, members) for column in paper.columns]
        total = len(results.files) if name == OVERALL else len(everything[name])
        label = f"**{name}**" if name == OVERALL else name
        rows.append((label, (f"{len(members)}/{total}", *cells)))
    return Table(results.dataset.title, (f"{results.dataset.files_label} run", *results.models,
                                         *_paper_headers(paper)),
                 tuple(rows))


def paradigm_table(results: PairResults) -> Table:
    """One row per paradigm run, grouped: its items scored, our models' accuracy (Wilson
    interval) and the paper's figures."""
    rows = []
    paper = shown_figures(results)
    files = results.files
    for key in results.paradigms:
        scored = []
        cells = []
        for model in results.models:
            values = results.outcomes[model].get(key)
            if values is None:  # this model did not run the paradigm
                scored.append("–")
                cells.append("–")
                continue
            scored.append(f"{len(values)}/{results.items_run[model][key]}")
            accuracy = results.accuracy(model, key)
            cells.append("–" if accuracy is None or math.isnan(accuracy) else
                         f"{fmt(accuracy)} {wilson_interval(int(sum(values)), len(values)).text()}")
        # One count when every model that ran it scored as many, else each model's in column order.
        counts = set(scored) - {"–"}
        figures = paper.by_paradigm.get(key, {}) if paper else {}
        lost = results.left_out.get(key)
        dropped = f" ({len(lost.skipped)} left out)" if lost and lost.skipped else ""
        rows.append((key, (files[key].group,
                           (counts.pop() if len(counts) == 1 else " · ".join(scored)) + dropped,
                           *cells,
                           *(fmt(figures[c]) if c in figures else "–"
                             for c in (paper.columns if paper else ())))))
    return Table("paradigm", (results.dataset.group_label,
                              "items scored", *results.models, *_paper_headers(paper)),
                 tuple(rows))


def _paper_headers(paper: PaperFigures | None) -> list[str]:
    return [f"{paper.citation} {name}" for name in paper.columns.values()] if paper else []


def ties_text(results: PairResults) -> str:
    """Per model, how many scored pairs were ties, and the paradigms that had any."""
    scored = {model: sum(len(values) for values in results.outcomes[model].values())
              for model in results.models}
    return ties_line({model: results.ties.get(model, {}) for model in results.models}, scored,
                     "pairs", "the two sentences exactly as surprising: scored as failures "
                     "unless the run says `ties=pass`; lm-evaluation-harness counts them right")


def left_out_text(results: PairResults) -> str:
    """How many pairs of each paradigm run its conversion left out (``(k left out)`` in the
    items column), and where their ids are."""
    lost = {key: found for key, found in sorted(results.left_out.items()) if found.skipped}
    total = sum(found.pairs for found in results.left_out.values())
    if not lost:
        return (f"Pairs left out at conversion: none (of the {total:,} pairs of the paradigms "
                "run).")
    where = ", ".join(f"{key} {len(found.skipped)} of {found.pairs:,}"
                      for key, found in lost.items())
    return (f"Pairs left out at conversion (identical sentences, an id used twice, a line that "
            f"cannot be read; never scored): {sum(len(f.skipped) for f in lost.values())} of "
            f"{total:,} pairs: {where}. Each one's line, id and reason: `{LEFT_OUT_NAME}` beside "
            "this file.")


@dataclass(frozen=True)
class LeftOutRow:
    """One pair a run's suite left out at conversion: ``left_out_pairs.csv``."""

    dataset: str
    suite: str
    line: int
    pair_id: str
    reason: str


def left_out_rows(runs: Sequence[RunRecord]) -> list[LeftOutRow]:
    """The left-out pairs of every minimal-pair suite run (once per suite), by suite and line."""
    rows: dict[str, list[LeftOutRow]] = {}
    for run in runs:
        found = left_out(run.suite.meta.extra) if pair_file(run) else None
        if found is None or run.suite_name in rows:
            continue
        rows[run.suite_name] = [
            LeftOutRow(found.dataset, run.suite_name, int(pair["line"]), pair_id,
                       str(pair["reason"]))
            for pair, pair_id in zip(found.skipped, found.ids(), strict=True)]
    return [row for suite in sorted(rows) for row in rows[suite]]


def pairs_summary_markdown(runs: Sequence[RunRecord],
                           unreadable: Sequence[UnreadableRun] = ()) -> str:
    """The minimal-pair part of summary.md, a section per data set run ('' when none is)."""
    return "\n".join(filter(None, (dataset_summary_markdown(runs, dataset, unreadable)
                                   for dataset in DATASETS.values())))


def dataset_summary_markdown(runs: Sequence[RunRecord], dataset: DataSet,
                             unreadable: Sequence[UnreadableRun] = ()) -> str:
    """One data set's section of summary.md ('' when none of ``runs`` is of it); means that
    lack runs that could not be read say so."""
    results = PairResults.of(with_paper_score(runs, dataset), dataset)
    if not results.models:
        return ""
    paper = shown_figures(results)
    notes = [
        f"{dataset.title} accuracy: the share of scorable pairs whose good sentence has the lower "
        "total surprisal (prediction 0, `(*;%good%) < (*;%bad%)`: the sum of the sentence's "
        "token surprisals after the beginning-of-text token, no length normalisation; "
        "`syntaxgym_first_prediction_accuracy`), with its 95% interval: Wilson for a paradigm, "
        "a bootstrap over items within paradigms for a language, a group and overall, which are "
        "unweighted means over paradigms. `(k/n)` after a value: only k of the row's n "
        "paradigms count in it (those this model ran, or those the paper has a figure for).",
        ties_text(results),
        checkpoints_markdown([run for run in runs if (found := pair_file(run)) is not None
                              and found[0] is dataset]),
        left_out_text(results),
        _paper_note(dataset, paper),
        f"Where in the sentence the pairs differ and which region the models' preference comes "
        f"from: `{dataset.name}_regions.png` and `{dataset.name}_regions.csv` beside this file.",
    ]
    return "\n\n".join([
        f"# {dataset.title} ({len(results.paradigms)} of {len(dataset.files())} "
        f"{dataset.files_label})",
        group_table(results, lost_paradigms(runs, unreadable, dataset)).markdown(),
        "## Per paradigm",
        paradigm_table(results).markdown(),
        *notes,
    ]) + "\n"


def with_paper_score(runs: Sequence[RunRecord], dataset: DataSet) -> list[RunRecord]:
    """``runs``, and where the data set's paper scores sentences otherwise than by their sum
    (ZhoBLiMP's SLLN-LP, MultiBLiMP's per-token mean), the data set's runs again under that score
    (labelled ``[sentence score=...]``), unless a score was chosen for the report already."""
    if dataset.paper_score is None:
        return list(runs)
    mine = [run for run in runs if (found := pair_file(run)) is not None and found[0] is dataset
            and "[sentence score=" not in run.name]
    if not mine or len(mine) < sum(1 for run in runs if (found := pair_file(run)) is not None
                                   and found[0] is dataset):
        return list(runs)
    return [*runs, *with_sentence_score(mine, parse_sentence_score(dataset.paper_score))]


def _paper_note(dataset: DataSet, paper: PaperFigures | None) -> str:
    score = (f" Columns `[sentence score={parse_sentence_score(dataset.paper_score)}]`: the same "
             f"runs under the score {dataset.cited} use (docs/blimp.md, sentence scores)."
             if dataset.paper_score else "")
    if paper is not None and dataset.paper_note:
        return dataset.paper_note + score
    return (f"The paper's figures are not held here: see {dataset.cited}, {dataset.paper_url} "
            "(docs/multilingual.md)." + score)
