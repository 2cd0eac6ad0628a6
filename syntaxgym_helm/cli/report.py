"""``syntaxgym-helm report``: annotated suites, tables, plots and a summary from finished runs.

Reads ``benchmark_output`` (never runs a model); runs are found by
:mod:`syntaxgym_helm.report.runs`.

``report BENCHMARK_OUTPUT [--suite RUN_SUITE] [-o DIR] [--sentence-score SCORE]`` writes, per HELM
run suite, the files listed in :mod:`syntaxgym_helm.report.build` and prints the summary table;
``--sentence-score`` decides whole-sentence predictions under another score
(:mod:`syntaxgym_helm.report.sentence_scores`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from syntaxgym_helm.cli.sentence_score import SCORE_CHOICES, sentence_score_argument


def register(commands: argparse._SubParsersAction) -> None:
    report = commands.add_parser(
        "report", help="annotated suite JSON, tidy CSV tables, surprisal plots and a summary "
                       "table from helm-run output",
        description="Reads benchmark_output (no model is run) and writes, per run suite: "
                    "summary.md, predictions.csv, regions.csv and per suite the annotated suite "
                    "JSON of each model and a surprisal-profile PNG; for the minimal-pair data "
                    "sets' runs (BLiMP, CLAMS, RuBLiMP, TurBLiMP, SLING), their tables beside the "
                    "papers' and <data set>_regions.png/.csv (where the pairs differ and which "
                    "region the preference comes from); for a model run beside its scoring "
                    "variants (MODEL~bow), variants.csv and a table of both side by side.")
    report.add_argument("benchmark_output", type=Path, metavar="BENCHMARK_OUTPUT",
                        help="helm-run's output folder (or one run suite folder in it)")
    report.add_argument("--suite", metavar="RUN_SUITE",
                        help="HELM's run suite (helm-run --suite); default: every one under runs/")
    report.add_argument("-o", "--output", type=Path, metavar="DIR",
                        help="where to write (default: BENCHMARK_OUTPUT/syntaxgym_report)")
    report.add_argument("--rescore", action="store_true",
                        help="score every item again from the runs' scenario_state.json instead of "
                             "reading what the metric kept (runs without it are always scored "
                             "again)")
    report.add_argument("--sentence-score", type=sentence_score_argument, metavar="SCORE",
                        help="decide whole-sentence predictions (minimal pairs: BLiMP-style) by "
                             f"this score: {SCORE_CHOICES} (default: the runs as scored, the "
                             "sum); region predictions are unchanged")
    report.set_defaults(handler=_report)


def _report(args: argparse.Namespace) -> int:
    from syntaxgym_helm.clients import interruption
    from syntaxgym_helm.report.build import REPORT_DIR_NAME, write_report
    from syntaxgym_helm.report.runs import RunsError, find_run_dirs, read_runs

    try:
        run_dirs = find_run_dirs(args.benchmark_output, args.suite)
    except RunsError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    by_run_suite: dict[str, list[Path]] = {}
    for run_dir in run_dirs:
        by_run_suite.setdefault(run_dir.parent.name, []).append(run_dir)
    root = args.output or _benchmark_output_root(args.benchmark_output) / REPORT_DIR_NAME
    unread = 0
    for run_suite, dirs in sorted(by_run_suite.items()):
        try:
            runs, unreadable = read_runs(dirs, rescore=args.rescore)
        except RunsError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        note = ""
        if args.sentence_score is not None:
            from syntaxgym_helm.report.sentence_scores import (
                sentence_score_note,
                with_sentence_score,
            )

            runs = with_sentence_score(runs, args.sentence_score)
            note = sentence_score_note(runs, args.sentence_score)
        interruption.leaves(f"the report in {root / run_suite} is incomplete: run the command "
                            "again")
        files = write_report(runs, root / run_suite, unreadable, note=note)
        interruption.leaves(f"the report in {root / run_suite} is whole")
        unread += len(unreadable)
        print(files.summary_text)
        print(f"wrote {files.folder}: summary.md, {len(files.tables)} tables, "
              f"{len(files.annotated)} annotated suites, {len(files.plots)} plots")
    if unread:
        print(f"warning: {unread} run(s) could not be read; summary.md names them and marks "
              "every mean that lacks them", file=sys.stderr)
    return 0


def _benchmark_output_root(path: Path) -> Path:
    """benchmark_output for a path inside it (a run suite or run folder), else the path itself."""
    for candidate in (path, *path.resolve().parents):
        if (candidate / "runs").is_dir():
            return candidate
    return path
