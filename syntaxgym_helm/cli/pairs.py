"""``syntaxgym-helm list [DATA_SET]`` and ``syntaxgym-helm convert DATA_SET FILE``: the
minimal-pair data sets' suites, and a data set's file (a modified copy) converted to a suite.

``list`` reads only the package's tables (no data needed): the data sets, or one data set's
suites with their language, group and pair count. ``convert`` writes the suite JSON and lists
every pair it could not convert with its file and line; exit status 1 when no pair converts.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from syntaxgym_helm.cli.output import say
from syntaxgym_helm.core.errors import SyntaxGymError
from syntaxgym_helm.core.minimal_pairs.catalogue import DATASETS, convert_file, get_dataset


def register(commands: argparse._SubParsersAction) -> None:
    listing = commands.add_parser(
        "list", help="the minimal-pair data sets, or one data set's suites with their pair counts")
    listing.add_argument("dataset", nargs="?", choices=list(DATASETS),
                         help="a data set (default: all of them, one line each)")
    listing.set_defaults(handler=lambda args: _list(args.dataset))
    convert = commands.add_parser(
        "convert", help="convert a data set's file (e.g. a modified copy) to a suite JSON file")
    convert.add_argument("dataset", choices=list(DATASETS))
    convert.add_argument("file", type=Path, help="laid out as the data set's own, e.g. "
                         "en_evalset/simple_agrmt.txt for CLAMS (a .gz file is unpacked)")
    convert.add_argument("-o", "--output", type=Path,
                         help="the suite file to write (default: <suite name>.json here)")
    convert.set_defaults(handler=lambda args: _convert(args.dataset, args.file, args.output))


def _list(name: str | None) -> int:
    if name is None:
        rows = [(d.name, d.title, ", ".join(d.languages) if len(d.languages) <= 6 else
                 f"{len(d.languages)} languages", str(len(d.files())),
                 f"{sum(f.pairs or 0 for f in d.files()):,}", d.env_var)
                for d in DATASETS.values()]
        _table(("data set", "title", "languages", "suites", "pairs", "offline folder"), rows)
        return 0
    files = get_dataset(name).files()
    _table(("suite", "language", "group", "pairs"),
           [(f.suite, f.language, f.group, f"{f.pairs:,}") for f in files])
    say(f"{len(files)} suites, {sum(f.pairs or 0 for f in files):,} pairs")
    return 0


def _table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> None:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        say("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())


def _convert(name: str, path: Path, output: Path | None) -> int:
    try:
        conversion = convert_file(get_dataset(name), path)
    except (SyntaxGymError, OSError) as exc:
        say(f"error: {exc}", sys.stderr)
        return 1
    target = output or Path(f"{conversion.name}.json")
    target.write_text(json.dumps(conversion.suite, indent=1, ensure_ascii=False) + "\n",
                      encoding="utf-8")
    record = conversion.suite["meta"][f"{name}_conversion"]
    say(f"{target}: {record['items']} of {record['pairs']} pairs converted")
    for problem in conversion.problems:
        say(f"  skipped: {problem}")
    return 0
