"""``syntaxgym-helm report`` and ``syntaxgym-helm compare``: reports on finished runs.

Both read ``benchmark_output`` (never run a model). This module adds both subcommands: they share
how runs are found and selected (:mod:`syntaxgym_helm.report.runs`).

``report BENCHMARK_OUTPUT [--suite RUN_SUITE] [-o DIR]`` writes, per HELM run suite, the files
listed in :mod:`syntaxgym_helm.report.build` and prints the summary table.

``compare A B`` compares two sets of runs suite by suite. A and B are each a run folder
(``benchmark_output/runs/S/<run>``), a run-suite folder (``benchmark_output/runs/S``) or a
``benchmark_output`` folder; ``--model-a/-b`` and ``--run-suite-a/-b`` narrow a side to one run per
SyntaxGym test suite, ``--test-suite`` (repeatable) to some test suites. (``--suite`` is HELM's run
suite, as in ``helm-run``.) Exit status 1 when a test suite is flagged as disagreeing beyond
rounding (see :mod:`syntaxgym_helm.report.compare`), 2 when runs cannot be found or paired.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from syntaxgym_helm.report.compare import (
    DEFAULT_MAX_ABS_DIFF_BITS,
    DEFAULT_MIN_PEARSON_R,
    Thresholds,
)


def register(commands: argparse._SubParsersAction) -> None:
    report = commands.add_parser(
        "report", help="annotated suite JSON, tidy CSV tables, surprisal plots and a summary "
                       "table from helm-run output",
        description="Reads benchmark_output (no model is run) and writes, per run suite: "
                    "summary.md, predictions.csv, regions.csv and per suite the annotated suite "
                    "JSON of each model and a surprisal-profile PNG.")
    report.add_argument("benchmark_output", type=Path, metavar="BENCHMARK_OUTPUT",
                        help="helm-run's output folder (or one run suite folder in it)")
    report.add_argument("--suite", metavar="RUN_SUITE",
                        help="HELM's run suite (helm-run --suite); default: every one under runs/")
    report.add_argument("-o", "--output", type=Path, metavar="DIR",
                        help="where to write (default: BENCHMARK_OUTPUT/syntaxgym_report)")
    report.set_defaults(handler=_report)

    compare = commands.add_parser(
        "compare", help="compare two sets of runs: accuracy, disagreeing items, surprisal "
                        "correlation, backend-bug check",
        description="A and B: a run folder, a run-suite folder (benchmark_output/runs/S) or "
                    "benchmark_output. Runs are paired by SyntaxGym suite; each side needs one "
                    "run per suite (narrow with --model-X / --run-suite-X). Exit status 1 when "
                    "two runs of the same weights disagree beyond rounding.")
    compare.add_argument("run_a", type=Path, metavar="A",
                         help="the reference side: a run, run-suite or benchmark_output folder")
    compare.add_argument("run_b", type=Path, metavar="B",
                         help="the side compared with A (differences are B - A)")
    for side in ("a", "b"):
        compare.add_argument(f"--model-{side}", metavar="MODEL",
                             help=f"only side {side.upper()}'s runs of this HELM model "
                                  "(full name, or the part after the organisation)")
        compare.add_argument(f"--run-suite-{side}", metavar="RUN_SUITE",
                             help=f"only this run suite when {side.upper()} is benchmark_output")
    compare.add_argument("--test-suite", action="append", metavar="NAME",
                         help="compare only this SyntaxGym test suite, e.g. number_prep "
                              "(repeatable)")
    weights = compare.add_mutually_exclusive_group()
    weights.add_argument("--same-weights", dest="same_weights", action="store_const", const=True,
                         help="treat the models as the same weights (apply the thresholds)")
    weights.add_argument("--different-weights", dest="same_weights", action="store_const",
                         const=False, help="treat the models as different (report r only)")
    compare.add_argument("--max-abs-diff", type=float, default=DEFAULT_MAX_ABS_DIFF_BITS,
                         metavar="BITS", help="same weights: largest region difference allowed "
                                              f"(default {DEFAULT_MAX_ABS_DIFF_BITS})")
    compare.add_argument("--min-r", type=float, default=DEFAULT_MIN_PEARSON_R,
                         help=f"same weights: smallest Pearson r allowed "
                              f"(default {DEFAULT_MIN_PEARSON_R})")
    compare.add_argument("-o", "--output", type=Path, metavar="DIR",
                         help="also write comparison.md and comparison.json there")
    compare.set_defaults(handler=_compare)


def _report(args: argparse.Namespace) -> int:
    from syntaxgym_helm.report.build import REPORT_DIR_NAME, write_report
    from syntaxgym_helm.report.runs import RunsError, find_run_dirs, load_runs

    try:
        run_dirs = find_run_dirs(args.benchmark_output, args.suite)
    except RunsError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    by_run_suite: dict[str, list[Path]] = {}
    for run_dir in run_dirs:
        by_run_suite.setdefault(run_dir.parent.name, []).append(run_dir)
    root = args.output or _benchmark_output_root(args.benchmark_output) / REPORT_DIR_NAME
    for run_suite, dirs in sorted(by_run_suite.items()):
        files = write_report(load_runs(dirs), root / run_suite)
        print(files.summary_text)
        print(f"wrote {files.folder}: summary.md, {len(files.tables)} tables, "
              f"{len(files.annotated)} annotated suites, {len(files.plots)} plots")
    return 0


def _benchmark_output_root(path: Path) -> Path:
    """benchmark_output for a path inside it (a run suite or run folder), else the path itself."""
    for candidate in (path, *path.resolve().parents):
        if (candidate / "runs").is_dir():
            return candidate
    return path


def _compare(args: argparse.Namespace) -> int:
    from syntaxgym_helm.report.compare import compare_runs
    from syntaxgym_helm.report.runs import RunsError, find_run_dirs, load_runs, select_runs

    try:
        sides = []
        for path, model, run_suite in ((args.run_a, args.model_a, args.run_suite_a),
                                       (args.run_b, args.model_b, args.run_suite_b)):
            runs = select_runs(load_runs(find_run_dirs(path, run_suite)), model)
            sides.append([run for run in runs
                          if not args.test_suite or run.suite_name in args.test_suite])
        comparison = compare_runs(sides[0], sides[1], Thresholds(args.max_abs_diff, args.min_r),
                                  same_weights=args.same_weights)
    except RunsError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if not comparison.suites:
        print("error: A and B share no suite", file=sys.stderr)
        return 2
    text = comparison.markdown()
    print(text)
    if args.output:
        args.output.mkdir(parents=True, exist_ok=True)
        (args.output / "comparison.md").write_text(text, encoding="utf-8")
        (args.output / "comparison.json").write_text(
            json.dumps(comparison.to_json(), indent=2, allow_nan=False) + "\n", encoding="utf-8")
    return 1 if comparison.flagged else 0
