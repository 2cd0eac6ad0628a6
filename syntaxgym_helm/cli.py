"""The ``syntaxgym-helm`` command line.

Each subcommand lives in its own module, listed in ``COMMAND_MODULES``; a module defines
``register(subparsers)``, which adds its parser and sets ``handler`` (a function of the parsed
arguments returning the exit status). ``validate`` is defined here.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence, TextIO

import importlib

from syntaxgym_helm.validation import SuiteReport, check_suite_file

#: Modules that each add one subcommand (see the module docstring).
COMMAND_MODULES: tuple[str, ...] = ("syntaxgym_helm.cli", "syntaxgym_helm.cli_generate",
                                   "syntaxgym_helm.cli_report")


def register(commands: argparse._SubParsersAction) -> None:
    validate = commands.add_parser(
        "validate", help="check suite JSON files; exit status 1 if any is invalid")
    validate.add_argument("paths", nargs="+", type=Path,
                          help="suite files, or folders whose *.json files are suites")
    validate.add_argument("-q", "--quiet", action="store_true", help="do not print warnings")
    validate.set_defaults(handler=lambda args: _validate(args.paths, quiet=args.quiet))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="syntaxgym-helm", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(commands)
    args = parser.parse_args(argv)
    return int(args.handler(args))


def _suite_files(paths: Sequence[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        files.extend(sorted(path.glob("*.json")) if path.is_dir() else [path])
    return files


def _validate(paths: Sequence[Path], *, quiet: bool) -> int:
    files = _suite_files(paths)
    if not files:
        _say("no suite files found in " + ", ".join(map(str, paths)), sys.stderr)
        return 1
    reports = [check_suite_file(path) for path in files]
    for report in reports:
        _print_report(report, quiet=quiet)
    invalid = sum(not report.ok for report in reports)
    _say(f"{len(reports) - invalid} valid, {invalid} invalid")
    return 1 if invalid else 0


def _print_report(report: SuiteReport, *, quiet: bool) -> None:
    if report.suite is not None:
        _say(f"ok    {report.source}: {report.suite.summary()}")
    else:
        _say(f"error {report.source}: {len(report.errors)} problem(s)")
        for error in report.errors:
            _say(f"  {error}")
    if not quiet:
        for warning in report.warnings:
            _say(f"  warning: {warning}")


def _say(line: str, stream: TextIO | None = None) -> None:
    """Print ``line``, escaping what the stream's encoding cannot show (a suite's text may hold
    anything, e.g. a lone surrogate from a JSON escape, or non-ASCII under an ASCII locale)."""
    stream = stream or sys.stdout
    encoding = getattr(stream, "encoding", None) or "utf-8"
    print(line.encode(encoding, "backslashreplace").decode(encoding), file=stream)


if __name__ == "__main__":
    sys.exit(main())
