"""``syntaxgym-helm evaluate SUITE --model MODEL``: a suite scored on a model from the shell, by the
Python API (:func:`syntaxgym_helm.api.evaluate`), with every run option as a flag
(:mod:`.run_options`). Prints the accuracy; ``--output`` writes the results as CSV (one row per
region, item or prediction), whole or not at all, its destination checked before the scoring
(:mod:`syntaxgym_helm.core.output_files`). For leaderboards, use ``helm-run``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from syntaxgym_helm.cli.output import say
from syntaxgym_helm.cli.run_options import add_run_option_arguments, run_options_from
from syntaxgym_helm.core.options import OptionError


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "evaluate", help="score a suite on a model (the Python API's evaluate) and print its "
                         "accuracy")
    parser.add_argument("suite", help="a registered suite name, a suite file or an http(s) URL")
    parser.add_argument("--model", required=True, help="a HELM model name, e.g. "
                        "syntaxgym/smollm2-135m-instruct-q4_1")
    parser.add_argument("--max-items", type=int, default=None, help="score the first N items")
    parser.add_argument("--cache-dir", type=Path, default=None,
                        help="HELM's request cache (SQLite files; default: none)")
    parser.add_argument("--local-path", type=Path, default=None,
                        help="HELM's credentials and model configs (default: ./prod_env)")
    parser.add_argument("--num-threads", type=int, default=4, help="HELM's --num-threads")
    parser.add_argument("--runner", default=None, metavar="NAME",
                        help="where the requests run: default (this process) or ray (a Ray "
                             "actor of the model: docs/scaling.md)")
    parser.add_argument("--output", type=Path, default=None, help="write the results as CSV")
    parser.add_argument("--level", choices=("regions", "items", "predictions"),
                        default="items", help="one CSV row per ... (default: items)")
    add_run_option_arguments(parser)
    parser.set_defaults(handler=_evaluate)


def _evaluate(args: argparse.Namespace) -> int:
    from syntaxgym_helm.clients import interruption
    from syntaxgym_helm.core.output_files import check_destination, write_whole

    if args.output:
        interruption.leaves(f"{args.output} was not written")
    from syntaxgym_helm.api import UnknownModelError, evaluate
    from syntaxgym_helm.runners.ray_cluster import RayClusterError

    try:
        if args.output:
            check_destination(args.output)  # before the scoring, not after
        options = run_options_from(args)
        result = evaluate(args.suite, args.model, options=options, max_items=args.max_items,
                          cache_dir=args.cache_dir, local_path=args.local_path,
                          num_threads=args.num_threads, runner=args.runner)
    except (OptionError, UnknownModelError, ValueError, OSError, RayClusterError) as error:
        say(f"syntaxgym-helm evaluate: {error}", sys.stderr)
        return 2
    unscorable = len(result.items) - result.scored_items
    if not result.scored_items:  # no accuracy to print: say why, and fail
        first = next((item for item in result.items if item.problems), None)
        say(f"syntaxgym-helm evaluate: {result.suite} on {result.model}: no item was scored ("
            + (f"{unscorable} unscorable, e.g. item {first.item_number}: "
               f"{'; '.join(first.problems)}" if first is not None
               else "the suite has no item to score, or --max-items is 0") + ")", sys.stderr)
        return 1
    say(f"{result.suite} on {result.model}: accuracy {result.accuracy:.3f} "
        f"({result.passed_items} of {result.scored_items} items scored pass"
        + (f"; {unscorable} unscorable)" if unscorable else ")"))
    if args.output:
        try:
            write_whole(args.output, result.to_dataframe(args.level).to_csv(index=False))
        except OSError as error:
            say(f"syntaxgym-helm evaluate: {error}", sys.stderr)
            return 2
        say(f"wrote {args.output}")
    return 0
