"""Benchmark: all 67 BLiMP paradigms (67,000 minimal pairs) through ``helm-run``, beside the paper.

Runs ``helm-run --conf-paths run_specs/syntaxgym_blimp.conf`` for one model under
``/usr/bin/time -v`` (whole process: wall time and peak memory), then writes a section into
``--output`` (docs/blimp.md): the whole-process time, HELM's execution time, peak memory, and every
paradigm's accuracy beside the figures of Warstadt et al. (2020) (GPT-2, Transformer-XL, LSTM,
5-gram, human), with the paper's phenomenon means and the overall mean.

The accuracy compared is BLiMP's own: the first prediction, ``(*;%good%) < (*;%bad%)``, the
summed surprisal of each whole sentence (``syntaxgym_first_prediction_accuracy``, read from
HELM's ``stats.json``). Not a test. From the project root, e.g. (about an hour on 2 CPU cores)::

    python benchmarks/bench_blimp.py --blimp-dir ../shared/blimp --workdir /tmp/blimp \\
        --output docs/blimp.md

``--reuse`` writes the section from a finished run in ``--workdir`` (its ``time.txt``, ``log``
and ``command``) without running it again.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from statistics import fmean

from markdown_sections import commit, machine, write_section

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from syntaxgym_helm.core.minimal_pairs.blimp_paper import PAPER_COLUMNS, paper_paradigms  # noqa: E402

SCRIPT = "benchmarks/bench_blimp.py"
BIN = Path(sys.executable).parent
DEFAULT_MODEL = "syntaxgym/smollm2-135m-instruct-q4_1"
RUN_SUITE = "blimp"
STAT = "syntaxgym_first_prediction_accuracy"


def run(workdir: Path, model: str, blimp_dir: Path) -> None:
    """The helm-run, timed as a whole process; its command, log and ``time -v`` in ``workdir``."""
    workdir.mkdir(parents=True, exist_ok=True)
    command = ["/usr/bin/time", "-v", "-o", str(workdir / "time.txt"), str(BIN / "helm-run"),
               "--conf-paths", str(ROOT / "run_specs" / "syntaxgym_blimp.conf"),
               "--models-to-run", model, "--suite", RUN_SUITE, "--max-eval-instances", "100000"]
    (workdir / "command").write_text(f"SYNTAXGYM_BLIMP_DIR={blimp_dir} " + " ".join(command[4:]))
    (workdir / "started").write_text(dt.datetime.now().isoformat(timespec="seconds"))
    with open(workdir / "log", "w") as log:
        subprocess.run(command, cwd=workdir, stdout=log, stderr=subprocess.STDOUT, check=True,
                       env={**os.environ, "SYNTAXGYM_BLIMP_DIR": str(blimp_dir)})


def whole_process(workdir: Path) -> tuple[float, float]:
    """Wall seconds and peak resident memory (GB) from ``time -v``."""
    text = (workdir / "time.txt").read_text()
    clock = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", text)
    if clock is None:
        raise ValueError(f"{workdir / 'time.txt'} has no wall-clock time")
    hours, minutes, seconds = (float(part or 0) for part in clock.groups())
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    return hours * 3600 + minutes * 60 + seconds, int(peak.group(1)) / 1e6 if peak else float("nan")


def execution_seconds(workdir: Path) -> float:
    """The sum of HELM's ``Executor.execute`` blocks (scoring, model loading included)."""
    lines = (workdir / "log").read_text().splitlines()
    total, inside = 0.0, False
    for line in lines:
        if "Executor.execute {" in line:
            inside = True
        elif inside and re.search(r"^\S+ \S+ INFO\s{9}\} \[([\d.]+)s\]", line):
            total += float(re.search(r"\[([\d.]+)s\]", line).group(1))
            inside = False
    return total


def accuracies(workdir: Path) -> dict[str, tuple[float, int]]:
    """Each paradigm's first-prediction accuracy and item count, from HELM's stats.json."""
    found: dict[str, tuple[float, int]] = {}
    for stats_path in (workdir / "benchmark_output" / "runs" / RUN_SUITE).glob("*/stats.json"):
        spec = json.loads((stats_path.parent / "run_spec.json").read_text())
        uid = spec["scenario_spec"]["args"]["suite"].removeprefix("blimp_")
        values = {(s["name"]["name"]): s for s in json.loads(stats_path.read_text())
                  if s["name"].get("split") == "test" and not s["name"].get("perturbation")}
        per_instance = json.loads((stats_path.parent / "per_instance_stats.json").read_text())
        items = sum(1 for entry in per_instance
                    if any(stat["name"]["name"] == STAT for stat in entry["stats"]))
        if STAT in values:
            found[uid] = (values[STAT]["mean"], items)
    return found


def section(workdir: Path, model: str) -> str:
    wall, peak = whole_process(workdir)
    ours = accuracies(workdir)
    paper = paper_paradigms()
    missing = sorted(set(paper) - set(ours))
    items = sum(count for _, count in ours.values())
    columns = list(PAPER_COLUMNS)
    started = (workdir / "started").read_text().strip() if (workdir / "started").exists() else "?"
    lines = [
        f"## BLiMP: all 67 paradigms on {model}, beside Warstadt et al. (2020)",
        "",
        f"Run {started} with `python {SCRIPT} --workdir {workdir} --output docs/blimp.md` "
        f"(the helm-run: `{(workdir / 'command').read_text().strip()}`).",
        "",
        f"Commit {commit()}. Machine: {machine()}. Load average (1 / 5 / 15 min) at the end "
        f"{' / '.join(f'{x:.2f}' for x in os.getloadavg())}: above 1.5, other work shared the "
        "cores and the time is an upper bound.",
        "",
        "| whole process | HELM execution (scoring, model load) | peak memory | paradigms | "
        "items scored |",
        "|---:|---:|---:|---:|---:|",
        f"| {wall / 60:.1f} min ({wall:.0f} s) | {execution_seconds(workdir):.0f} s | "
        f"{peak:.2f} GB | {len(ours)}/67 | {items:,} |",
        "",
        "Accuracy: the share of pairs whose acceptable sentence has the lower total surprisal "
        "(BLiMP's own method; our first prediction `(*;%good%) < (*;%bad%)`: token log "
        "probabilities summed after the beginning-of-text token, no length normalisation). "
        "The paper's columns are the per-paradigm figures of BLiMP's repository "
        "(`models_summary.jsonl`, corrected after publication: the repository's errata of 16 "
        "August "
        "2021; the TACL tables differ in places) and its human agreement.",
        "",
    ]
    if missing:
        lines += [f"Not in this run: {', '.join(missing)}.", ""]
    header = ["paradigm", "phenomenon", "ours", *(PAPER_COLUMNS[c] for c in columns)]
    lines += ["| " + " | ".join(header) + " |",
              "|---|---|" + "---:|" * (len(header) - 2)]
    by_phenomenon: dict[str, list[str]] = {}
    for uid, row in sorted(paper.items(), key=lambda kv: (kv[1].phenomenon, kv[0])):
        by_phenomenon.setdefault(row.phenomenon, []).append(uid)
        value = f"{ours[uid][0]:.3f}" if uid in ours else "-"
        lines.append(f"| {uid} | {row.phenomenon} | {value} | "
                     + " | ".join(f"{row.accuracy[c]:.3f}" for c in columns) + " |")
    lines += ["", "Means over paradigms (unweighted, as the paper's):", "",
              "| phenomenon | paradigms | ours | " + " | ".join(PAPER_COLUMNS[c] for c in columns)
              + " |", "|---|---:|---:|" + "---:|" * len(columns)]
    groups = [*sorted(by_phenomenon.items()), ("**overall**", sorted(paper))]
    for name, uids in groups:
        run_uids = [uid for uid in uids if uid in ours]
        mine = f"{fmean(ours[u][0] for u in run_uids):.3f}" if run_uids else "-"
        lines.append(f"| {name} | {len(uids)} | {mine} | "
                     + " | ".join(f"{fmean(paper[u].accuracy[c] for u in uids):.3f}"
                                  for c in columns) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument(
        "--blimp-dir",
        type=Path,
        default=ROOT.parent / "shared" / "blimp",
        help="an offline folder of BLiMP's <UID>.jsonl files (default ../shared/blimp)",
    )
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--reuse", action="store_true",
                        help="write the section from the finished run in --workdir")
    parser.add_argument("--output", type=Path, help="write the section into this Markdown file")
    args = parser.parse_args()
    if not args.reuse:
        run(args.workdir, args.model, args.blimp_dir.resolve())
    text = section(args.workdir, args.model)
    if args.output:
        write_section(args.output, text, SCRIPT)
    print(text)


if __name__ == "__main__":
    main()
