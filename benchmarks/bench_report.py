"""Benchmark: ``syntaxgym-helm report`` on a big run suite (all of BLiMP), this checkout's code
against an older checkout's, alternated in fresh processes.

Each report is a whole process (start to exit) under ``/usr/bin/time -v``: wall time, CPU time
(user + system, both cores) and peak resident memory, into a fresh output folder. The runs are
read from ``--runs`` (a ``benchmark_output`` folder, e.g. the one ``bench_field_scale.py --parts
ours`` wrote) and are the same for both checkouts; ``--repeat`` rounds of before, after. This
machine's speed drifts by a tenth from one minute to the next, so compare the rounds' medians.

Not a test. Run from the project root on a quiet machine (``uptime`` first; the load is printed)::

    git worktree add /tmp/before <older commit>
    python benchmarks/bench_report.py --runs /tmp/fsallq/ours/benchmark_output \
        --suite fieldscale --before /tmp/before --repeat 3 --output BENCHMARKS.md
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scoring import timed
from markdown_sections import (
    before_after_tables,
    commit,
    commit_of,
    machine,
    write_section,
)

ROOT = Path(__file__).resolve().parents[1]


def one_report(tree: Path, runs: Path, suite: str, work: Path) -> dict[str, float]:
    """One report with the plugin's code from ``tree``, into a fresh folder under ``work``."""
    target = work / "report"
    shutil.rmtree(target, ignore_errors=True)
    # Run from the checkout, with it first on the path: an editable install of this checkout
    # would otherwise win over PYTHONPATH for the older one.
    command = [sys.executable, "-m", "syntaxgym_helm.cli.main", "report", str(runs), "--suite",
               suite, "-o", str(target)]
    env = {**os.environ, "PYTHONPATH": str(tree), "TQDM_DISABLE": "1"}
    result = timed(command, tree, env, work / "report.log")
    result.pop("log")
    result["output_bytes"] = sum(p.stat().st_size for p in target.rglob("*") if p.is_file())
    return result


def render(rounds: list[dict[str, dict[str, float]]], args: argparse.Namespace,
           load_before: tuple[float, ...], load_after: tuple[float, ...]) -> str:
    def median(side: str, key: str) -> float:
        return statistics.median(r[side][key] for r in rounds)

    lines = [f"## Reports: `syntaxgym-helm report` on {args.runs_label}", "",
             f"{time.strftime('%Y-%m-%d %H:%M')}. Commit {commit()}. Machine: {machine()}. "
             f"Load average (1 / 5 / 15 min) before "
             f"{' / '.join(f'{x:.2f}' for x in load_before)}, after "
             f"{' / '.join(f'{x:.2f}' for x in load_after)}.", "",
             f"`python benchmarks/bench_report.py --runs {args.runs} --suite {args.suite} "
             f"--before {args.before} --repeat {args.repeat}` (before: the checkout at "
             f"`{args.before_commit}`); each report a whole process, start to exit, in rounds of "
             "before then after.", "",
             *before_after_tables(rounds)]
    lines += ["", f"Output: {median('after', 'output_bytes') / 2**20:.0f} MiB.", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=Path, required=True, help="a benchmark_output folder")
    parser.add_argument("--suite", required=True, help="the run suite to report")
    parser.add_argument("--before", type=Path, required=True, help="an older checkout")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--output", type=Path, help="write the section into this Markdown file")
    args = parser.parse_args()
    runs = list((args.runs / "runs" / args.suite).glob("*:*"))
    args.runs_label = f"{len(runs)} runs"
    args.before_commit = commit_of(args.before)
    load_before = os.getloadavg()
    print(f"load before: {load_before}", flush=True)
    rounds = []
    with tempfile.TemporaryDirectory() as work:
        for _ in range(args.repeat):
            result = {}
            for side, tree in (("before", args.before.resolve()), ("after", ROOT)):
                result[side] = one_report(tree, args.runs.resolve(), args.suite, Path(work))
                print(f"{side}: {result[side]['wall_s']:.1f} s", flush=True)
            rounds.append(result)
    text = render(rounds, args, load_before, os.getloadavg())
    print(text)
    if args.output:
        write_section(args.output, text, "benchmarks/bench_report.py")


if __name__ == "__main__":
    main()
