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
    <run suite>/variants.csv                    runs of a model and its scoring variants (M~bow):
                                                per suite and overall, both accuracies and the
                                                items whose verdict changes (also in the summary)
    <run suite>/left_out_pairs.csv              minimal-pair runs whose conversion left pairs out:
                                                each such pair's suite, line, id and reason
    <run suite>/robustness.csv                  accuracy per model, suite and context, the change
                                                from no context and its interval (context runs)
    <run suite>/predictions.csv                 every model, suite, item and prediction
    <run suite>/regions.csv                     every model, suite, item, condition and region
    <run suite>/<suite>/surprisal_profile.png   mean region surprisal, one panel per model
    <run suite>/<suite>/<model>.json            the suite annotated as syntaxgym-core writes it
    <run suite>/<suite>/<model>.predictions.csv the same tables for one model and suite
    <run suite>/<suite>/<model>.regions.csv
    <run suite>/.syntaxgym-report-files         the files above that this report wrote

A report into a folder that holds an earlier one first removes the files the earlier one wrote
(its ``.syntaxgym-report-files``), so that the folder never mixes two reports (a table, or a
model's annotated suite, that this report does not write again would stay beside its files:
``report`` then ``report --sentence-score char`` left both the sum's and the char score's files).
Nothing else in the folder is touched.
"""

from __future__ import annotations

import multiprocessing
import os
import re
import shutil
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from syntaxgym_helm.report.accuracy_csv import AccuracyRow, accuracy_rows
from syntaxgym_helm.report.annotate import write_annotated
from syntaxgym_helm.report.heap import collection_paused, existing_objects_frozen
from syntaxgym_helm.report.mandarin import mandarin_markdown
from syntaxgym_helm.report.pairs_plots import plot_pair_regions
from syntaxgym_helm.report.pairs_regions import RegionAnalysisRow, analyse_run, in_order
from syntaxgym_helm.report.pairs_summary import (
    LEFT_OUT_NAME,
    LeftOutRow,
    left_out_rows,
    pairs_summary_markdown,
    split_pairs,
)
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
from syntaxgym_helm.report.variants import VariantRow, variant_rows, variants_markdown

REPORT_DIR_NAME = "syntaxgym_report"
PLOT_NAME = "surprisal_profile.png"
#: ``<data set>_regions.png`` and ``.csv``: the region analysis of one data set's runs.
REGIONS_NAME = "{dataset}_regions"
VARIANTS_NAME = "variants.csv"
#: The list of the files a report wrote, relative to its folder (see the module doc).
FILES_LIST_NAME = ".syntaxgym-report-files"


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
                 unreadable: Sequence[UnreadableRun] = (), note: str = "") -> ReportFiles:
    """Write the report of ``runs`` (normally one run suite, labelled) into ``folder``; the
    summary names the ``unreadable`` runs and marks what lacks them, and begins with ``note``
    (how the runs were read, e.g. under another sentence score) when there is one."""
    folder.mkdir(parents=True, exist_ok=True)
    _remove_earlier_report(folder)
    # Each suite's files, several suites at once, while this process writes the summary; the
    # region analysis of each run is made with its suite's files, where its region values are
    # at hand. The tables of all runs are the runs' own tables put together in run order.
    analysed = _is_without_context(runs)
    by_suite: dict[str, list[int]] = {}
    for index, run in enumerate(runs):
        by_suite.setdefault(run.suite_name, []).append(index)
    jobs = [_SuiteJob(suite, indices, _unique_slugs([runs[i].name for i in indices]),
                      [analysed[i] for i in indices])
            for suite, indices in sorted(by_suite.items())]
    with _in_processes(_write_suite, jobs, runs, folder) as suites_written:
        text = summary_text(runs, unreadable)
        if note:
            text = f"{note}\n\n{text}"
        files = ReportFiles(folder=folder, summary=folder / "summary.md", summary_text=text)
        files.summary.write_text(text, encoding="utf-8")
        files.tables.append(write_csv(accuracy_rows(_without_context(runs)),
                                      folder / "accuracy.csv", AccuracyRow))
        variants = variant_rows(_without_context(runs))
        if variants:
            files.tables.append(write_csv(variants, folder / VARIANTS_NAME, VariantRow))
        lost = left_out_rows(runs)
        if lost:
            files.tables.append(write_csv(lost, folder / LEFT_OUT_NAME, LeftOutRow))
        if any(run.context.active for run in runs):
            files.tables.append(write_csv(robustness_rows(runs), folder / "robustness.csv",
                                          RobustnessRow))
        written = suites_written()
    per_run: dict[int, tuple[Path, Path]] = {}
    analysis: dict[int, RegionAnalysisRow | None] = {}
    suite_plots: list[Path] = []
    for job, suite_files in zip(jobs, written, strict=True):
        per_run.update(zip(job.indices, suite_files.tables, strict=False))
        analysis.update(zip(job.indices, suite_files.analysis, strict=False))
        files.annotated += suite_files.annotated
        suite_plots.append(suite_files.plot)
    _write_region_analyses(in_order([analysis[i] for i in range(len(runs)) if analysed[i]],
                                    _without_context(runs)), files)
    files.plots += suite_plots
    for column, name, row_type in ((0, "predictions.csv", PredictionRow),
                                   (1, "regions.csv", RegionRow)):
        files.tables.append(_concatenate([per_run[i][column] for i in range(len(runs))],
                                         folder / name, row_type))
    files.tables += [table for i in range(len(runs)) for table in per_run[i]]
    written = [files.summary, *files.tables, *files.annotated, *files.plots]
    (folder / FILES_LIST_NAME).write_text(
        "".join(f"{path.relative_to(folder)}\n" for path in written), encoding="utf-8")
    return files


def _remove_earlier_report(folder: Path) -> None:
    """Remove the files the last report into ``folder`` wrote, as its list names them (only
    paths inside the folder), and the suite folders that leaves empty."""
    try:
        names = (folder / FILES_LIST_NAME).read_text(encoding="utf-8").splitlines()
    except OSError:
        return
    inside = [Path(name) for name in names
              if name and not Path(name).is_absolute() and ".." not in Path(name).parts]
    for name in inside:
        (folder / name).unlink(missing_ok=True)
    for parent in sorted({(folder / name).parent for name in inside} - {folder}, reverse=True):
        try:
            parent.rmdir()
        except OSError:  # not empty: something else is in it, and stays
            pass
    (folder / FILES_LIST_NAME).unlink(missing_ok=True)


def _write_region_analyses(rows: Sequence[RegionAnalysisRow], files: ReportFiles) -> None:
    """Each data set's ``<data set>_regions.csv`` and ``.png`` from its runs' ``rows``."""
    for dataset in dict.fromkeys(row.dataset for row in rows):
        chosen = [row for row in rows if row.dataset == dataset]
        name = REGIONS_NAME.format(dataset=dataset)
        files.tables.append(write_csv(chosen, files.folder / f"{name}.csv", RegionAnalysisRow))
        files.plots.append(plot_pair_regions(chosen, files.folder / f"{name}.png"))


#: What the suite writers share with the parent (forked processes inherit it as it is).
_SHARED: dict[str, Any] = {}


@dataclass(frozen=True)
class _SuiteJob:
    """One suite's runs (their indices), their file names, and whether each is analysed."""

    suite: str
    indices: list[int]
    names: list[str]
    analysed: list[bool]


@dataclass(frozen=True)
class _SuiteFiles:
    """What one suite's job wrote and found: each run's annotated suite, its two tables and its
    region analysis (None: not analysed, or not a minimal-pair run); the suite's plot."""

    annotated: list[Path]
    tables: list[tuple[Path, Path]]
    analysis: list[RegionAnalysisRow | None]
    plot: Path


def _write_suite(job: _SuiteJob) -> _SuiteFiles:
    runs: Sequence[RunRecord] = _SHARED["runs"]
    suite_dir = _SHARED["folder"] / job.suite
    annotated, tables, analysis = [], [], []
    for index, name, analysed in zip(job.indices, job.names, job.analysed, strict=True):
        run = runs[index]
        # What these make holds no cycles: a collection would only rescan it (and the region
        # values worked out for it) over and over, most of the time these files take to write.
        # A plot has cycles: it is drawn with the collector on.
        with collection_paused():
            annotated.append(write_annotated(run, suite_dir / f"{name}.json"))
            tables.append((write_csv(prediction_rows(run),
                                     suite_dir / f"{name}.predictions.csv", PredictionRow),
                           write_csv(region_rows(run), suite_dir / f"{name}.regions.csv",
                                     RegionRow)))
            analysis.append(analyse_run(run) if analysed else None)
    return _SuiteFiles(annotated, tables, analysis,
                       plot_suite([runs[i] for i in job.indices], suite_dir / PLOT_NAME))


@contextmanager
def _in_processes(function: Callable[[Any], Any], jobs: Sequence[Any],
                  runs: Sequence[RunRecord], folder: Path) -> Iterator[Callable[[], list[Any]]]:
    """Start ``function`` over ``jobs`` in as many forked processes as there are CPU cores, and
    give a function that waits for their results (in job order, with a progress bar): what this
    process does in between runs beside them. Without fork, or with one core, the jobs run here
    when their results are asked for. The runs and the folder reach the processes through
    :data:`_SHARED`."""
    from tqdm import tqdm

    processes = min(len(jobs), len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                    else os.cpu_count() or 1)
    progress: dict[str, Any] = dict(total=len(jobs), desc="writing reports", unit="suite",
                    disable=len(jobs) < 3)
    _SHARED.update(runs=runs, folder=folder)
    try:
        if processes > 1 and "fork" in multiprocessing.get_all_start_methods():
            # Frozen: the processes' collections leave the runs alone (syntaxgym_helm.report.heap).
            with existing_objects_frozen(), \
                    multiprocessing.get_context("fork").Pool(processes) as pool:
                results = pool.imap(function, jobs)
                yield lambda: list(tqdm(results, **progress))
        else:
            yield lambda: [function(job) for job in tqdm(jobs, **progress)]
    finally:
        _SHARED.clear()


def _concatenate(parts: Sequence[Path], path: Path, row_type: type) -> Path:
    """One CSV of ``row_type`` rows from CSV files of them, each with its header line."""
    write_csv([], path, row_type)  # the header
    # Bytes as written (UTF-8, \r\n): nothing to decode and encode again.
    with path.open("ab") as stream:
        for part in parts:
            with part.open("rb") as source:
                source.readline()
                shutil.copyfileobj(source, stream)
    return path


def _without_context(runs: Sequence[RunRecord]) -> list[RunRecord]:
    """The runs without a context (all runs if every one has a context): the accuracy tables
    hold these; context runs are compared with them in the robustness section."""
    return [run for run, chosen in zip(runs, _is_without_context(runs), strict=True) if chosen]


def _is_without_context(runs: Sequence[RunRecord]) -> list[bool]:
    """For each run, whether :func:`_without_context` keeps it."""
    chosen = [not run.context.active for run in runs]
    return chosen if any(chosen) else [True] * len(runs)


def summary_text(runs: Sequence[RunRecord], unreadable: Sequence[UnreadableRun] = ()) -> str:
    """summary.md: the SyntaxGym summary of the runs without context that are not minimal-pair
    data sets', then (where such runs are present) each data set's summary, whose accuracy and
    published figures differ, then (where context runs are present) robustness to context. Runs
    that could not be read are listed first (by the SyntaxGym summary, or alone before the data
    sets'), then the Mandarin suites of Wang et al. (2021) beside the paper's models, then (where
    a model and its scoring variants were run) the variants beside it."""
    pairs, others = split_pairs(_without_context(runs))
    parts = [summary_markdown(others, unreadable)] if others else []
    if not others and unreadable:
        parts.append(unreadable_markdown(unreadable) + "\n")
    if pairs:
        parts.append(pairs_summary_markdown(pairs, unreadable))
    mandarin = mandarin_markdown(others)
    if mandarin:
        parts.append(mandarin)
    variants = variants_markdown(_without_context(runs))
    if variants:
        parts.append(variants)
    robustness = robustness_markdown(runs, unreadable)
    if robustness:
        parts.append(robustness)
    changed = text_changes_markdown(runs)
    if changed:
        parts.append(changed)
    return "\n".join(parts)


#: The notes of each run :func:`text_changes_markdown` quotes (the scored items keep them all).
NOTES_SHOWN = 3


def text_changes_markdown(runs: Sequence[RunRecord]) -> str:
    """A section naming, per run, the items whose text reading the suite changed and how (the
    first :data:`NOTES_SHOWN`); "" when no run's text was changed."""
    lines = []
    for run in runs:
        changed = [(item.item_number, notes)
                   for item, notes in zip(run.suite.items, run.notes, strict=False) if notes]
        if not changed:
            continue
        shown = "; ".join(f"item {number}: {' / '.join(notes)}"
                          for number, notes in changed[:NOTES_SHOWN])
        more = f"; and {len(changed) - NOTES_SHOWN} more" if len(changed) > NOTES_SHOWN else ""
        lines.append(f"- {run.suite_name}, {run.name}: {len(changed)} item(s): {shown}{more}")
    if not lines:
        return ""
    return ("## Text changed when the suites were read\n\n"
            "Whitespace at a region's ends is removed and runs of ASCII whitespace become one "
            "space (`syntaxgym-helm validate` lists every change):\n\n" + "\n".join(lines) + "\n")


def _unique_slugs(labels: Sequence[str]) -> list[str]:
    seen: dict[str, int] = {}
    names = []
    for label in labels:
        name = slug(label)
        seen[name] = seen.get(name, 0) + 1
        names.append(name if seen[name] == 1 else f"{name}-{seen[name]}")
    return names
