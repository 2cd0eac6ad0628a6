"""``syntaxgym-helm compare``: two sets of runs, suite by suite.

``compare A B`` compares two sets of runs suite by suite. A and B are each a run folder
(``benchmark_output/runs/S/<run>``), a run-suite folder (``benchmark_output/runs/S``) or a
``benchmark_output`` folder; ``--model-a/-b`` and ``--run-suite-a/-b`` narrow a side to one run per
SyntaxGym test suite, ``--test-suite`` (repeatable) to some test suites. (``--suite`` is HELM's run
suite, as in ``helm-run``.) Whether an accuracy difference is real: McNemar per suite and overall
and a paired bootstrap (see :mod:`syntaxgym_helm.report.paired_tests`). Exit status 1 when a test
suite is flagged as disagreeing beyond rounding (see :mod:`syntaxgym_helm.report.compare`), 2 when
runs cannot be found or paired.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from syntaxgym_helm.cli.sentence_score import SCORE_CHOICES, sentence_score_argument
from syntaxgym_helm.report.compare import (
    DEFAULT_MAX_ABS_DIFF_BITS,
    DEFAULT_MIN_PEARSON_R,
    Thresholds,
)


def register(commands: argparse._SubParsersAction) -> None:
    compare = commands.add_parser(
        "compare", help="compare two sets of runs: accuracy, disagreeing items, paired tests "
                        "(McNemar, paired bootstrap), surprisal correlation, backend-bug check",
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
    compare.add_argument("--sentence-score", type=sentence_score_argument, metavar="SCORE",
                         help="decide whole-sentence predictions on both sides by this score: "
                              f"{SCORE_CHOICES} (default: the runs as scored, the sum)")
    compare.set_defaults(handler=_compare)


def _compare(args: argparse.Namespace) -> int:
    from syntaxgym_helm.report.compare import compare_runs
    from syntaxgym_helm.report.runs import RunsError, find_run_dirs, read_runs, select_runs

    unreadable = []
    try:
        sides = []
        for path, model, run_suite in ((args.run_a, args.model_a, args.run_suite_a),
                                       (args.run_b, args.model_b, args.run_suite_b)):
            runs, lost = read_runs(find_run_dirs(path, run_suite))
            unreadable += [run for run in lost if model is None or run.model is None
                           or run.is_of(model)]
            runs = select_runs(runs, model)
            if args.sentence_score is not None:
                from syntaxgym_helm.report.sentence_scores import with_sentence_score

                runs = with_sentence_score(runs, args.sentence_score)
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
    if unreadable:  # the comparison covers fewer suites than were run: say which are missing
        text = (f"**{len(unreadable)} run(s) could not be read and are not compared:**\n\n"
                + "\n".join(f"- {run.describe}" for run in unreadable) + "\n\n" + text)
    print(text)
    if args.output:
        from syntaxgym_helm.core.output_files import OutputFileError, write_whole

        try:
            args.output.mkdir(parents=True, exist_ok=True)
            write_whole(args.output / "comparison.md", text)
            write_whole(args.output / "comparison.json",
                        json.dumps(comparison.to_json(), indent=2, allow_nan=False) + "\n")
        except OutputFileError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        except OSError as error:  # the folder cannot be made
            print(f"error: {args.output}: cannot be made a folder ({error.strerror or error})",
                  file=sys.stderr)
            return 2
    return 1 if comparison.flagged else 0
