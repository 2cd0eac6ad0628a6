"""``syntaxgym-helm sweep CHECKPOINTS --suites ...``: every checkpoint of a model scored on the same
suites, as learning curves (the Python API's :func:`syntaxgym_helm.api.sweep.sweep`;
docs/sweeps.md). Prints each checkpoint as it goes, then the checkpoints' table (ties at each)
and where the outputs are; exits 1 when a checkpoint failed (its row says why; the others'
results are kept), 2 when the sweep could not start."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from syntaxgym_helm.cli.output import say
from syntaxgym_helm.cli.run_options import add_run_option_arguments, run_options_from


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "sweep", help="score every checkpoint of a model (folders or Hub revisions) on the "
                      "same suites: learning curves, ages of acquisition, BabyLM's "
                      "fast_eval_results")
    parser.add_argument("checkpoints", nargs="+",
                        help="checkpoint folders: a glob (quoted: 'out/checkpoint-*'), a folder "
                             "of checkpoint folders, folders; or, with --revisions, one Hub "
                             "repository")
    parser.add_argument("--revisions", default=None,
                        help="the Hub revisions: a list (step0,step1000), a pattern (chck_*M, "
                             "step*, step*-tokens*) or 'all' (every branch but main)")
    parser.add_argument("--suites", nargs="+", required=True,
                        help="suite names, data set names (blimp, clams, ...: all its suites), "
                             "suite files, or run-entry files (.conf)")
    parser.add_argument("--name", default=None, help="the model's name (default: the folder "
                        "holding the checkpoints, or the repository's name)")
    parser.add_argument("--x", dest="x_unit", choices=("words", "tokens", "steps"),
                        default=None, help="the x axis (default: read from the checkpoints' "
                        "names: chck_10M words, step1000-tokens4B tokens, step1000 and "
                        "checkpoint-500 steps)")
    parser.add_argument("--x-values", default=None,
                        help="checkpoints' x (the others' read from their names): NAME=X,"
                             "NAME=X or a CSV file of name,x; each a number, 0 or more")
    parser.add_argument("--pairs-per-paradigm", type=int, default=None, metavar="N",
                        help="at most N items per suite: a seeded sample, the same at every "
                             "checkpoint (BabyLM's fast BLiMP: 200)")
    parser.add_argument("--words", type=Path, default=None,
                        help="words in contexts (CSV/TSV: word, context[, child_aoa]) for each "
                             "word's age of acquisition")
    parser.add_argument("--runner", default=None,
                        help="the HELM Runner: 'helm' or 'default' (HELM's own, the default), "
                             "'ray', 'multi_gpu', 'slurm', or a Runner's class path")
    parser.add_argument("--suite", dest="run_suite", default="sweep",
                        help="HELM's run suite (default: sweep); models swept into one are "
                             "drawn together")
    parser.add_argument("--output-path", type=Path, default=Path("benchmark_output"))
    parser.add_argument("--local-path", type=Path, default=None,
                        help="HELM's credentials, model configs and request cache (default: "
                             "./prod_env)")
    parser.add_argument("--num-threads", type=int, default=4, help="HELM's --num-threads")
    parser.add_argument("--no-cache", action="store_true",
                        help="no HELM request cache (every request computed)")
    parser.add_argument("--no-plots", action="store_true", help="no learning-curve plots")
    parser.add_argument("--in-process", action="store_true",
                        help="run every checkpoint in this process (default, with HELM's own "
                             "runner on Linux: each in a child process, so the peak memory does "
                             "not grow by checkpoint and a crash ends that checkpoint alone)")
    add_run_option_arguments(parser)
    parser.set_defaults(handler=_sweep)


def _sweep(args: argparse.Namespace) -> int:
    from syntaxgym_helm.api.sweep import SweepError, sweep
    from syntaxgym_helm.clients.checkpoint_sources import CheckpointSearchError
    from syntaxgym_helm.core.options import OptionError
    from syntaxgym_helm.core.training_axis import TrainingAxisError, given_values
    from syntaxgym_helm.core.word_contexts import WordContextError

    try:
        x_values = given_values(args.x_values) if args.x_values else None
        result = sweep(args.checkpoints if args.revisions is None else args.checkpoints[0],
                       args.suites, revisions=args.revisions, name=args.name,
                       x_unit=args.x_unit, x_values=x_values,
                       pairs_per_paradigm=args.pairs_per_paradigm, words=args.words,
                       options=run_options_from(args), runner=args.runner,
                       output_path=args.output_path, run_suite=args.run_suite,
                       local_path=args.local_path, num_threads=args.num_threads,
                       cache=not args.no_cache, plots=not args.no_plots,
                       isolate=not args.in_process,
                       log=lambda line: say(f"sweep: {line}"))
    except (SweepError, CheckpointSearchError, TrainingAxisError, WordContextError,
            OptionError, ValueError, OSError) as error:
        say(f"syntaxgym-helm sweep: {error}", sys.stderr)
        return 2
    say(result.outputs.summary)
    for kind, path in result.outputs.files.items():
        say(f"{kind}: {path}")
    say(f"leaderboard: syntaxgym-helm leaderboard config {args.output_path} --suite "
        f"{args.run_suite} (then helm-summarize as it prints)")
    if result.failed:
        say(f"{len(result.failed)} checkpoint(s) failed: "
            + "; ".join(f"{c.name}: {c.error}" for c in result.failed), sys.stderr)
        return 1
    return 0
