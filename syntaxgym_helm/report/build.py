"""A whole report for one HELM run suite: what ``syntaxgym-helm report`` writes.

Layout under the output folder (default ``benchmark_output/syntaxgym_report``, which
``helm-server`` also serves under ``/benchmark_output/syntaxgym_report/``)::

    <run suite>/summary.md                      accuracy per suite, circuit and SG score by model
                                                (runs without context), then robustness to context;
                                                per minimal-pair data set run (BLiMP, CLAMS, ...),
                                                per paradigm, language, group and overall beside
                                                the paper's figures, with the ties
    <run suite>/<data set>_regions.png, .csv    minimal-pair runs only, e.g. blimp_regions.png:
                                                where the pairs differ and which region each
                                                model's preference comes from
    <run suite>/accuracy.csv                    every accuracy of the summary with its 95% interval
    <run suite>/robustness.csv                  accuracy per model, suite and context, the change
                                                from no context and its interval (context runs)
    <run suite>/predictions.csv                 every model, suite, item and prediction
    <run suite>/regions.csv                     every model, suite, item, condition and region
    <run suite>/<suite>/surprisal_profile.png   mean region surprisal, one panel per model
    <run suite>/<suite>/<model>.json            the suite annotated as syntaxgym-core writes it
    <run suite>/<suite>/<model>.predictions.csv the same tables for one model and suite
    <run suite>/<suite>/<model>.regions.csv
"""

from __future__ import annotations

import multiprocessing
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from syntaxgym_helm.report.accuracy_csv import AccuracyRow, accuracy_rows
from syntaxgym_helm.report.annotate import write_annotated
from syntaxgym_helm.report.pairs_plots import plot_pair_regions
from syntaxgym_helm.report.pairs_regions import RegionAnalysisRow, analyse
from syntaxgym_helm.report.pairs_summary import pairs_summary_markdown, split_pairs
from syntaxgym_helm.report.plots import plot_suite
from syntaxgym_helm.report.robustness import RobustnessRow, robustness_markdown, robustness_rows
from syntaxgym_helm.report.runs import RunRecord, UnreadableRun
from syntaxgym_helm.report.summary import summary_markdown, unreadable_markdown
from syntaxgym_helm.report.tables import (
    PredictionRow,
    RegionRow,
    prediction_rows,
    region_rows,
    write_csv,
)

REPORT_DIR_NAME = "syntaxgym_report"
PLOT_NAME = "surprisal_profile.png"
#: ``<data set>_regions.png`` and ``.csv``: the region analysis of one data set's runs.
REGIONS_NAME = "{dataset}_regions"


@dataclass
class ReportFiles:
    """What one run suite's report wrote."""

    folder: Path
    summary: Path
    summary_text: str
    tables: list[Path] = field(default_factory=list)
    annotated: list[Path] = field(default_factory=list)
    plots: list[Path] = field(default_factory=list)


def slug(label: str) -> str:
    """A file name for a model label: ``helmhf/x [prefix=none]`` -> ``helmhf_x_prefix_none``."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", label).strip("_") or "model"


def write_report(runs: Sequence[RunRecord], folder: Path,
                 unreadable: Sequence[UnreadableRun] = ()) -> ReportFiles:
    """Write the report of ``runs`` (normally one run suite, labelled) into ``folder``; the
    summary names the ``unreadable`` runs and marks what lacks them."""
    folder.mkdir(parents=True, exist_ok=True)
    text = summary_text(runs, unreadable)
    files = ReportFiles(folder=folder, summary=folder / "summary.md", summary_text=text)
    files.summary.write_text(text, encoding="utf-8")
    files.tables.append(write_csv(accuracy_rows(_without_context(runs)), folder / "accuracy.csv",
                                  AccuracyRow))
    if any(run.context.active for run in runs):
        files.tables.append(write_csv(robustness_rows(runs), folder / "robustness.csv",
                                      RobustnessRow))
    pair_rows = analyse(_without_context(runs))
    for dataset in dict.fromkeys(row.dataset for row in pair_rows):
        rows = [row for row in pair_rows if row.dataset == dataset]
        name = REGIONS_NAME.format(dataset=dataset)
        files.tables.append(write_csv(rows, folder / f"{name}.csv", RegionAnalysisRow))
        files.plots.append(plot_pair_regions(rows, folder / f"{name}.png"))
    # Each suite's files, several suites at once; the tables of all runs are then the runs' own
    # tables put together in run order.
    by_suite: dict[str, list[int]] = {}
    for index, run in enumerate(runs):
        by_suite.setdefault(run.suite_name, []).append(index)
    jobs = [(suite, indices, _unique_slugs([runs[i].name for i in indices]))
            for suite, indices in sorted(by_suite.items())]
    written = _in_processes(_write_suite, jobs, runs, folder)
    per_run: dict[int, tuple[Path, Path]] = {}
    for (_, indices, _), (annotated, tables, plot) in zip(jobs, written):
        per_run.update(zip(indices, tables))
        files.annotated += annotated
        files.plots.append(plot)
    for column, name, row_type in ((0, "predictions.csv", PredictionRow),
                                   (1, "regions.csv", RegionRow)):
        files.tables.append(_concatenate([per_run[i][column] for i in range(len(runs))],
                                         folder / name, row_type))
    files.tables += [table for i in range(len(runs)) for table in per_run[i]]
    return files


#: What the suite writers share with the parent (forked processes inherit it as it is).
_SHARED: dict[str, Any] = {}


#: One suite's files: each run's annotated suite, each run's two tables, the suite's plot.
SuiteFiles = tuple[list[Path], list[tuple[Path, Path]], Path]


def _write_suite(job: tuple[str, list[int], list[str]]) -> SuiteFiles:
    """One suite's files (``job``: the suite, its runs' indices and their file names)."""
    suite, indices, names = job
    runs: Sequence[RunRecord] = _SHARED["runs"]
    suite_dir = _SHARED["folder"] / suite
    annotated, tables = [], []
    for index, name in zip(indices, names):
        run = runs[index]
        annotated.append(write_annotated(run, suite_dir / f"{name}.json"))
        tables.append((write_csv(prediction_rows(run), suite_dir / f"{name}.predictions.csv",
                                 PredictionRow),
                       write_csv(region_rows(run), suite_dir / f"{name}.regions.csv", RegionRow)))
    return annotated, tables, plot_suite([runs[i] for i in indices], suite_dir / PLOT_NAME)


def _in_processes(function: Callable[[Any], Any], jobs: Sequence[Any],
                  runs: Sequence[RunRecord], folder: Path) -> list[Any]:
    """``function`` over ``jobs``, in as many forked processes as there are CPU cores (one
    process where fork is unavailable), with a progress bar; the runs and the folder reach the
    processes through :data:`_SHARED`."""
    from tqdm import tqdm

    processes = min(len(jobs), len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                    else os.cpu_count() or 1)
    _SHARED.update(runs=runs, folder=folder)
    try:
        progress = dict(total=len(jobs), desc="writing reports", unit="suite",
                        disable=len(jobs) < 3)
        if processes > 1 and "fork" in multiprocessing.get_all_start_methods():
            with multiprocessing.get_context("fork").Pool(processes) as pool:
                return list(tqdm(pool.imap(function, jobs), **progress))
        return [function(job) for job in tqdm(jobs, **progress)]
    finally:
        _SHARED.clear()


def _concatenate(parts: Sequence[Path], path: Path, row_type: type) -> Path:
    """One CSV of ``row_type`` rows from CSV files of them, each with its header line."""
    write_csv([], path, row_type)  # the header
    with path.open("a", newline="", encoding="utf-8") as stream:
        for part in parts:
            with part.open(newline="", encoding="utf-8") as source:  # the rows' \r\n as written
                source.readline()
                stream.write(source.read())
    return path


def _without_context(runs: Sequence[RunRecord]) -> list[RunRecord]:
    """The runs without a context (all runs if every one has a context): the accuracy tables
    hold these; context runs are compared with them in the robustness section."""
    return [run for run in runs if not run.context.active] or list(runs)


def summary_text(runs: Sequence[RunRecord], unreadable: Sequence[UnreadableRun] = ()) -> str:
    """summary.md: the SyntaxGym summary of the runs without context that are not minimal-pair
    data sets', then (where such runs are present) each data set's summary, whose accuracy and
    published figures differ, then (where context runs are present) robustness to context. Runs
    that could not be read are listed first (by the SyntaxGym summary, or alone before the data
    sets')."""
    pairs, others = split_pairs(_without_context(runs))
    parts = [summary_markdown(others, unreadable)] if others else []
    if not others and unreadable:
        parts.append(unreadable_markdown(unreadable) + "\n")
    if pairs:
        parts.append(pairs_summary_markdown(pairs, unreadable))
    robustness = robustness_markdown(runs, unreadable)
    if robustness:
        parts.append(robustness)
    return "\n".join(parts)


def _unique_slugs(labels: Sequence[str]) -> list[str]:
    seen: dict[str, int] = {}
    names = []
    for label in labels:
        name = slug(label)
        seen[name] = seen.get(name, 0) + 1
        names.append(name if seen[name] == 1 else f"{name}-{seen[name]}")
    return names
