"""Benchmark: converting and loading a whole minimal-pair data set, and building the HELM
instances of its largest suite, as whole processes.

Each part runs in a fresh ``python`` process under ``/usr/bin/time -v`` (wall time, user and
system CPU time, peak resident memory), the way a run meets it:

- ``load``: every suite of the data set (default CLAMS English: 22 files, 157,346 pairs) by
  name through the registry (``load_named_suite``): read from the offline folder and checked
  against its SHA-256, converted, written to the cache as JSON and built as a suite; the process
  also reports the time inside it;
- ``instances``: the largest suite's HELM instances (``SyntaxGymScenario.get_instances``, what
  ``helm-run`` does before any request), from a fresh process, so its conversion counts too.

Not a test. From the project root, e.g.::

    python benchmarks/bench_pairs_scale.py --data ../shared/multilingual --output BENCHMARKS.md

``--dataset`` and ``--language`` pick another data set (``--language ''``: all its languages).
The machine's load (``uptime``) is printed beside the figures: take them on a quiet machine.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from markdown_sections import commit, machine, write_section

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from syntaxgym_helm.core.minimal_pairs.catalogue import DATASETS  # noqa: E402

SCRIPT = "benchmarks/bench_pairs_scale.py"


def _suites(dataset: str, language: str) -> list[str]:
    return [f.suite for f in DATASETS[dataset].files() if not language or f.language == language]


def child(part: str, dataset: str, language: str, data: Path, cache: Path) -> None:
    """The measured work (run in its own process); prints what it did as JSON."""
    started = time.perf_counter()
    suites = _suites(dataset, language)
    folder = str(data / dataset)
    if part == "load":
        from syntaxgym_helm.core.registry import load_named_suite

        items = sum(len(load_named_suite(name, cache, folder).items) for name in suites)
        print(json.dumps({"suites": len(suites), "items": items,
                          "inner_s": time.perf_counter() - started}))
        return
    from syntaxgym_helm.harness.scenario import SyntaxGymScenario

    files = DATASETS[dataset].by_suite()
    largest = max(suites, key=lambda name: files[name].pairs or 0)
    instances = SyntaxGymScenario(suite=largest, suites_dir=folder).get_instances(str(cache))
    print(json.dumps({"suite": largest, "instances": len(instances),
                      "inner_s": time.perf_counter() - started}))


def measure(part: str, dataset: str, language: str, data: Path) -> dict:
    """Run ``part`` in a fresh process under ``/usr/bin/time -v``; its figures."""
    with tempfile.TemporaryDirectory() as work:
        timing = Path(work) / "time.txt"
        done = subprocess.run(
            ["/usr/bin/time", "-v", "-o", str(timing), sys.executable, __file__, "--child", part,
             "--dataset", dataset, "--language", language, "--data", str(data),
             "--cache", str(Path(work) / "cache")],
            capture_output=True, text=True, check=True, cwd=ROOT)
        text = timing.read_text()
    result = json.loads(done.stdout.strip().splitlines()[-1])
    clock = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", text)
    hours, minutes, seconds = (float(part or 0) for part in clock.groups())  # type: ignore[union-attr]
    cpu = sum(float(re.search(rf"{kind} time \(seconds\): ([\d.]+)", text).group(1))  # type: ignore[union-attr]
              for kind in ("User", "System"))
    peak = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1))  # type: ignore[union-attr]
    return {**result, "wall_s": hours * 3600 + minutes * 60 + seconds, "cpu_s": cpu,
            "peak_mb": peak / 1024}


def section(dataset: str, language: str, data: Path, repeats: int) -> str:
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    runs = {part: [measure(part, dataset, language, data) for _ in range(repeats)]
            for part in ("load", "instances")}
    best = {part: min(found, key=lambda r: r["wall_s"]) for part, found in runs.items()}
    pairs = sum(f.pairs or 0 for f in DATASETS[dataset].files()
                if not language or f.language == language)
    what = f"{DATASETS[dataset].title}{' ' + language if language else ''}"
    command = (f"python {SCRIPT} --dataset {dataset} --language '{language}' --data {data} "
               f"--repeats {repeats}")
    lines = [
        f"## Minimal pairs at scale: {what} ({best['load']['suites']} files, {pairs:,} pairs)", "",
        f"Run {dt.datetime.now():%Y-%m-%d %H:%M} with `{command}`; the best of {repeats} fresh "
        "processes per part, each under "
        "`/usr/bin/time -v`.", "",
        f"Commit {commit()}. Machine: {machine()}. Load before: `{load}`.", "",
        "| part | what | whole process (wall) | CPU (user+sys) | peak memory | inside the "
        "process |", "|---|---|---:|---:|---:|---:|",
        f"| load | every suite by name (`load_named_suite`): read, SHA-256 checked, converted, "
        f"written to the cache, built; {best['load']['items']:,} items | "
        f"{best['load']['wall_s']:.1f} s | {best['load']['cpu_s']:.1f} s | "
        f"{best['load']['peak_mb']:.0f} MB | {best['load']['inner_s']:.1f} s |",
        f"| instances | the HELM instances of the largest suite, `{best['instances']['suite']}` "
        f"({best['instances']['instances']:,} items), from a fresh process | "
        f"{best['instances']['wall_s']:.1f} s | {best['instances']['cpu_s']:.1f} s | "
        f"{best['instances']['peak_mb']:.0f} MB | {best['instances']['inner_s']:.1f} s |", "",
        "The whole-process figures include starting Python and importing the package (and, for "
        "`instances`, HELM); every run: " + "; ".join(
            f"{part} " + ", ".join(f"{r['wall_s']:.1f} s" for r in found)
            for part, found in runs.items()) + ".",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default="clams", choices=list(DATASETS))
    parser.add_argument("--language", default="en", help="one language of it ('': all)")
    parser.add_argument(
        "--data",
        type=Path,
        default=ROOT.parent / "shared" / "multilingual",
        help="a folder of <data set>/ offline folders (default ../shared/multilingual)",
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output", type=Path, help="write the section into this Markdown file")
    parser.add_argument("--child", choices=("load", "instances"), help=argparse.SUPPRESS)
    parser.add_argument("--cache", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.dataset, args.language, args.data.resolve(), args.cache)
        return
    text = section(args.dataset, args.language, args.data.resolve(), args.repeats)
    if args.output:
        write_section(args.output, text, SCRIPT)
    print(text)


if __name__ == "__main__":
    main()
