"""``syntaxgym-helm validate PATH...``: check suite files, one line per suite or every error.

Exit status 1 if any suite is invalid. Each error names the file, the JSON path and a hint.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from syntaxgym_helm.cli.output import say as _say
from syntaxgym_helm.core.validation import SuiteReport, check_suite_file


def register(commands: argparse._SubParsersAction) -> None:
    validate = commands.add_parser(
        "validate", help="check suite JSON files; exit status 1 if any is invalid")
    validate.add_argument("paths", nargs="+", type=Path,
                          help="suite files, or folders whose *.json files are suites")
    validate.add_argument("-q", "--quiet", action="store_true", help="do not print warnings")
    validate.set_defaults(handler=lambda args: _validate(args.paths, quiet=args.quiet))


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
