"""``syntaxgym-helm leaderboard``: what ``helm-summarize`` needs for one run suite, and its tables.

``leaderboard config BENCHMARK_OUTPUT --suite RUN_SUITE [--out DIR] [--local-path prod_env]``
writes a schema of exactly the suites run and a ``model_metadata.yaml`` (display names of the
embedded models, merged with ``prod_env/model_metadata.yaml``) and prints the ``helm-summarize``
command that uses them (:func:`syntaxgym_helm.harness.leaderboard.write_config`).

``leaderboard show BENCHMARK_OUTPUT --suite RUN_SUITE`` prints the SG score, circuit and built-in
tables ``helm-summarize`` wrote, as markdown.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path


def register(commands: argparse._SubParsersAction) -> None:
    leaderboard = commands.add_parser(
        "leaderboard", help="the helm-summarize schema and model names for a run suite; its "
                            "tables as markdown",
        description="config: write the schema of the suites run and the embedded models' "
                    "metadata for helm-summarize; show: print the tables helm-summarize wrote.")
    actions = leaderboard.add_subparsers(dest="action", required=True)
    config = actions.add_parser("config", help="write the schema and model_metadata.yaml for "
                                               "helm-summarize --schema-path/--local-path")
    show = actions.add_parser("show", help="print the SG score, circuit and built-in tables")
    for parser in (config, show):
        parser.add_argument("benchmark_output", type=Path, metavar="BENCHMARK_OUTPUT",
                            help="helm-run's output folder")
        parser.add_argument("--suite", required=True, metavar="RUN_SUITE",
                            help="HELM's run suite (helm-run --suite)")
    config.add_argument("--out", type=Path, metavar="DIR",
                        help="where to write (default: "
                             "BENCHMARK_OUTPUT/syntaxgym_leaderboard/RUN_SUITE)")
    config.add_argument("--local-path", type=Path, default=Path("prod_env"), metavar="DIR",
                        help="the folder of your own model_metadata.yaml, merged in (default: "
                             "prod_env, as helm-summarize)")
    config.set_defaults(handler=_config)
    show.set_defaults(handler=_show)


def _config(args: argparse.Namespace) -> int:
    from syntaxgym_helm.harness.leaderboard import write_config

    try:
        written = write_config(args.benchmark_output, args.suite, args.out, args.local_path)
    except (FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for warning in written.warnings():
        print(f"warning: {warning}", file=sys.stderr)
    print(f"wrote {written.schema} ({len(written.suites)} suites) and "
          f"{written.folder / 'model_metadata.yaml'}; now run:")
    print(shlex.join(written.summarize_command(args.suite, args.benchmark_output)))
    return 0


def _show(args: argparse.Namespace) -> int:
    from syntaxgym_helm.harness.leaderboard import show_tables

    try:
        print(show_tables(args.benchmark_output / "runs" / args.suite))
    except FileNotFoundError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0
