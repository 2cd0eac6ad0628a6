"""Regenerate the committed leaderboard files: ``configs/schema_syntaxgym.yaml`` (every registered
and built-in suite), ``run_specs/syntaxgym_{hu2020,sg_score,builtin}.conf``, one
``run_specs/syntaxgym_<data set>.conf`` per minimal-pair data set (``blimp``, ``clams``, ...), and
``run_specs/syntaxgym_context{,_hu2020}.conf`` (the built-in or Hu et al. suites under every kind
of context).

Run it after changing the registry, the built-in suites or the metric's stats; ``--check`` writes
nothing and fails when a committed file differs (``tests/harness/test_leaderboard.py`` checks the
same). The files come from :func:`syntaxgym_helm.harness.leaderboard.generated_files`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from syntaxgym_helm.harness.leaderboard import generated_files

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="project root (default: this one)")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 when a committed file is stale")
    args = parser.parse_args(argv)
    stale = []
    for relative, text in generated_files().items():
        path = args.root / relative
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(str(relative))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")
    if stale:
        print("stale (run python scripts/generate_leaderboard_files.py): " + ", ".join(stale),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
