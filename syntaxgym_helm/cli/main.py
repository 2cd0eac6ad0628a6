"""The ``syntaxgym-helm`` command line: one module per subcommand.

Each module listed in ``COMMAND_MODULES`` defines ``register(subparsers)``, which adds its parser
and sets ``handler`` (a function of the parsed arguments returning the exit status).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

#: Modules that each add one subcommand (see the module docstring).
COMMAND_MODULES: tuple[str, ...] = (
    "syntaxgym_helm.cli.validate",
    "syntaxgym_helm.cli.generate",
    "syntaxgym_helm.cli.report",
    "syntaxgym_helm.cli.compare",
    "syntaxgym_helm.cli.leaderboard",
    "syntaxgym_helm.cli.pairs",
    "syntaxgym_helm.cli.evaluate",
    "syntaxgym_helm.cli.model",
    "syntaxgym_helm.cli.surprisal",
    "syntaxgym_helm.cli.sweep",
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="syntaxgym-helm", description="SyntaxGym suites and reports for HELM")
    commands = parser.add_subparsers(dest="command", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(commands)
    args = parser.parse_args(argv)
    return int(args.handler(args))


if __name__ == "__main__":
    sys.exit(main())
