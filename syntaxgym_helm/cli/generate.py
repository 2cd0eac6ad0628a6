"""``syntaxgym-helm generate``: expand JSONNET suite configs into suite JSON files.

    syntaxgym-helm generate CONFIG.jsonnet [-o suite.json] [--seed N] [--items N]
    syntaxgym-helm generate configs/suites/*.jsonnet --out-dir syntaxgym_helm/suites [--check]

With one config and no ``-o``/``--out-dir`` the suite goes to standard output. ``--out-dir``
writes ``<meta.name>.json``; ``--check`` writes nothing and fails if a file differs from what
would be written (for CI). ``--preview N`` prints the first N items' sentences to standard
error, for reading. Exit status 1 on any error; every error names the config file and key.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from syntaxgym_helm.core.errors import SuiteError


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "generate", help="generate suites from JSONNET configs (lexicon + templates)",
        description="Expand JSONNET suite configs (lexicon, templates, constraints) into "
                    "validated SyntaxGym suite files, reproducibly.")
    parser.add_argument("configs", nargs="+", type=Path, help="JSONNET config files")
    target = parser.add_mutually_exclusive_group()
    target.add_argument("-o", "--output", type=Path,
                        help="the suite file to write (one config only; default: stdout)")
    target.add_argument("--out-dir", type=Path, help="write each suite to DIR/<name>.json")
    parser.add_argument("--seed", type=int, help="override sampling.seed")
    parser.add_argument("--items", type=int, help="override sampling.items")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if an output file is missing or differs")
    parser.add_argument("--preview", type=int, default=0, metavar="N",
                        help="print the first N items' sentences to stderr")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from syntaxgym_helm.generate import generate_suite, sentences

    if args.output and len(args.configs) > 1:
        print("error: -o takes one config; use --out-dir for several", file=sys.stderr)
        return 2
    if args.check and not (args.output or args.out_dir):
        print("error: --check needs -o or --out-dir", file=sys.stderr)
        return 2
    failures = 0
    for config in args.configs:
        try:
            generated = generate_suite(config, seed=args.seed, items=args.items)
        except SuiteError as exc:
            print(f"error: {exc}", file=sys.stderr)
            failures += 1
            continue
        for line in sentences(generated, args.preview) if args.preview else ():
            print(line, file=sys.stderr)
        output = args.output or (args.out_dir / f"{generated.suite.name}.json"
                                 if args.out_dir else None)
        if output is None:
            sys.stdout.write(generated.text)
        elif args.check:
            current = output.read_text(encoding="utf-8") if output.is_file() else None
            if current != generated.text:
                state = "is missing" if current is None else "is stale"
                print(f"error: {output} {state}: regenerate it from {config}", file=sys.stderr)
                failures += 1
            else:
                print(f"ok    {output}: {generated.suite.summary()}", file=sys.stderr)
        else:
            output.parent.mkdir(parents=True, exist_ok=True)
            output.write_text(generated.text, encoding="utf-8")
            print(f"wrote {output}: {generated.suite.summary()}", file=sys.stderr)
    return 1 if failures else 0
