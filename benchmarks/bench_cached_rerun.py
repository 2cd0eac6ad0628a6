"""Benchmark: a ``helm-run`` whose every request is already in the request cache (a user running
the same run entries again: another metric, a new leaderboard, a run that was interrupted after
scoring), this checkout's code against an older checkout's, alternated in fresh processes.

One cold run with this checkout fills the request cache of a work folder; then each round runs
the same command in that folder with the older checkout, then with this one (``PYTHONPATH``
names the checkout, which wins over the installed package). Each run is a whole process, start to
exit, under ``/usr/bin/time -v``: wall time, CPU time and peak resident memory. Every run must
report "0 computes" (all answers from the cache), or the benchmark stops.

Not a test. Run from the project root on a quiet machine (``uptime`` first; the load is printed)::

    git worktree add /tmp/before <older commit>
    python benchmarks/bench_cached_rerun.py --before /tmp/before --repeat 5 --output BENCHMARKS.md

By default the run entries are the 34 suites of Hu et al. (2020) from ``../shared/suites/hu2020``
on the embedded SmolLM2 (``--suites-dir``, ``--model``).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scoring import BIN, DEFAULT_SUITES_DIR, timed
from markdown_sections import (
    before_after_tables,
    commit,
    commit_of,
    machine,
    write_section,
)

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = "benchmarks/bench_cached_rerun.py"


def command(suites: list[str], model: str) -> list[str]:
    entries = [f"syntaxgym:suite={suite},model={model}" for suite in suites]
    return [str(BIN / "helm-run"), "--run-entries", *entries, "--suite", "rerun",
            "--max-eval-instances", "100000"]


def one_run(tree: Path, folder: Path, args: argparse.Namespace, log: Path) -> dict[str, Any]:
    """One helm-run in ``folder`` with the plugin's code from ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree), "SYNTAXGYM_SUITES_DIR": str(args.suites_dir),
           "TQDM_DISABLE": "1"}
    result = timed(command(args.suites, args.model), folder, env, log)
    # HELM prints the cache's counts after each run, summed over the runs so far: the last is all.
    computes = [int(n) for n in re.findall(r"syntaxgym\.sqlite: \d+ queries, (\d+) computes",
                                           result.pop("log"))]
    result["computes"] = max(computes, default=0)
    return result


def render(rounds: list[dict[str, dict[str, Any]]], args: argparse.Namespace, cold: dict[str, Any],
           load_before: tuple[float, ...], load_after: tuple[float, ...]) -> str:
    lines = [f"## Cached reruns: `helm-run` with every answer in the request cache "
             f"({len(args.suites)} suites)", "",
             f"{time.strftime('%Y-%m-%d %H:%M')}. Commit {commit()}. Machine: {machine()}. "
             "Load average (1 / 5 / 15 min) before "
             f"{' / '.join(f'{x:.2f}' for x in load_before)}, after "
             f"{' / '.join(f'{x:.2f}' for x in load_after)}.", "",
             f"`python {SCRIPT} --before {args.before} --repeat {args.repeat}` (before: the "
             f"checkout at `{args.before_commit}`): `helm-run` of {len(args.suites)} run entries "
             f"(`{args.suites_dir}`, `model={args.model}`) in a folder whose request cache one "
             f"cold run filled ({cold['wall_s']:.1f} s); then rounds of before, after, each a "
             "whole process, start to exit, answering every request from the cache (0 computes).",
             "", *before_after_tables(rounds)]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="an older checkout")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--suites-dir", type=Path, default=DEFAULT_SUITES_DIR)
    parser.add_argument("--model", default="syntaxgym/smollm2-135m-instruct-q4_1")
    parser.add_argument("--output", type=Path, help="write the section into this Markdown file")
    args = parser.parse_args()
    args.suites = sorted(path.stem for path in args.suites_dir.glob("*.json"))
    if not args.suites:
        raise SystemExit(f"no suite files (*.json) in {args.suites_dir}")
    args.before_commit = commit_of(args.before)
    load_before = os.getloadavg()
    print(f"load before: {load_before}", flush=True)
    rounds = []
    with tempfile.TemporaryDirectory() as work:
        folder = Path(work) / "run"
        folder.mkdir()
        cold = one_run(ROOT, folder, args, Path(work) / "cold.log")
        print(f"cold: {cold['wall_s']:.1f} s, {cold['computes']} computes", flush=True)
        for index in range(args.repeat):
            result = {}
            for side, tree in (("before", args.before.resolve()), ("after", ROOT)):
                log = Path(work) / f"{side}-{index}.log"
                result[side] = one_run(tree, folder, args, log)
                if result[side]["computes"]:
                    raise SystemExit(f"{side} computed {result[side]['computes']} answers: the "
                                     f"request cache did not hold them all (see {log})")
                print(f"{side}: {result[side]['wall_s']:.1f} s, "
                      f"{result[side]['peak_rss_mb']:.0f} MiB", flush=True)
            rounds.append(result)
    text = render(rounds, args, cold, load_before, os.getloadavg())
    print(text)
    if args.output:
        write_section(args.output, text, SCRIPT)


if __name__ == "__main__":
    main()
