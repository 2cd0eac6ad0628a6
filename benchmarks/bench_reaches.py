"""What each reach into another library's internals gains on a whole process, A/B, interleaved.

The register of reaches is ``syntaxgym_helm/clients/reaches.py``; ``SYNTAXGYM_STOCK`` turns them
all off (``1``) or the ones it names. For each workload, every process is one ``helm-run`` in a
fresh folder (an empty request cache), and the arms are: ``fast`` (every reach on), one arm per
reach with that reach alone off (``-NAME``), and ``stock`` (all off); a round runs every arm once,
each round in another order, so that a change in the machine's load falls on all arms alike.

Each process is measured by ``os.wait4``'s resource usage: CPU seconds (user + system), page
faults (minor + major) and the peak resident set size. Wall time is printed but not compared: on
a shared machine it measures the other jobs. A reach's gain is what turning it off costs: the
median of its ``-NAME`` arm against the median of ``fast``. With ``--paired`` (for a machine
others share, whose load moves CPU seconds by a fifth and more: the cores' other threads, their
caches), each arm runs at the same time as a ``fast`` run, so that both see the same load, and
the gain is the median over the rounds of each pair's ratio. Each process runs ``--threads``
torch threads (default 1, through ``OMP_NUM_THREADS``): with two, a thread that waits at a
barrier for the other spins, and on a loaded machine that spinning, not the work, fills the CPU
seconds (a masked LM computing its head over the whole vocabulary at every position took as many
CPU seconds as one computing it at one position a copy).

Workloads (``--workloads``):

- ``causal``: ``syntaxgym/smollm2-135m-instruct-q4_1`` on BLiMP's ``--paradigm`` (default
  anaphor_number_agreement), ``--causal-pairs`` pairs (default 1,000), the dequantised copy of the
  weights made before the first round (warm);
- ``causal-cold``: the same model on one built-in suite (``sgh_agreement_pp``, 20 items), each
  process with an empty ``SYNTAXGYM_HELM_CACHE`` (the GGUF file dequantised, its copy written);
- ``gemma``: ``syntaxgym/gemma-3-270m-q4_k_m``, warm, on the same suite;
- ``masked``: a RoBERTa-base-sized masked LM (``bench_peak_memory.masked_model``, added with
  ``syntaxgym-helm model add``) on the BLiMP paradigm, ``--masked-pairs`` pairs (default 100).
- ``sweep``: ``syntaxgym-helm sweep`` over the checkpoints ``--sweep-checkpoints`` names (a glob:
  ``bench_sweep.py --parts build`` writes SmolLM2-135M's, e.g. ``DIR/checkpoints/checkpoint-[246]``
  for the first three) on the first ``--sweep-paradigms`` BLiMP paradigms (default 10),
  ``--sweep-pairs`` pairs each (default 20), ``--in-process`` (by default a sweep forks a
  process per checkpoint, which releases no model): a process that releases each checkpoint's
  model before it loads the next.

``--extra-arm 'LABEL:VAR=VALUE,VAR=VALUE'`` adds an arm with those environment variables (e.g.
torch's oneDNN cache bounds, set by the user). From the repository root::

    python benchmarks/bench_reaches.py --workdir $TMPDIR/reaches --blimp-dir ../shared/blimp \\
        [--workloads causal,causal-cold,gemma,masked] [--rounds 2] [--paired] \\
        [--output BENCHMARKS.md]
"""

from __future__ import annotations

import argparse
import datetime as dt
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

SCRIPT = "benchmarks/bench_reaches.py"
SMOLLM2 = "syntaxgym/smollm2-135m-instruct-q4_1"
GEMMA = "syntaxgym/gemma-3-270m-q4_k_m"
MASKED = "local/roberta-base-sized"
SUITE = "sgh_agreement_pp"


@dataclass(frozen=True)
class Workload:
    name: str
    model: str
    suite: str  # a built-in suite, or blimp_<paradigm>
    items: int
    cold: bool
    reaches: tuple[str, ...]


def workloads(args: argparse.Namespace) -> dict[str, Workload]:
    blimp = f"blimp_{args.paradigm}"
    return {w.name: w for w in (
        Workload("causal", SMOLLM2, blimp, args.causal_pairs, False,
                 ("tokenizer_build_inputs",)),
        Workload("causal-cold", SMOLLM2, SUITE, 20, True,
                 ("gguf_parse_once", "gguf_streamed_copy")),
        Workload("gemma", GEMMA, SUITE, 20, False,
                 ("tokenizer_build_inputs",)),
        Workload("masked", MASKED, blimp, args.masked_pairs, False,
                 ("masked_head_at_targets",)),
        Workload("sweep", args.sweep_checkpoints, " ".join(
            f"blimp_{uid}" for uid in _paradigms(args.blimp_dir)[:args.sweep_paradigms]),
            args.sweep_pairs, False, ("malloc_trim",)),
    )}


def _paradigms(blimp_dir: Path) -> list[str]:
    return sorted(path.stem for path in (blimp_dir / "data").glob("*.jsonl")) or sorted(
        path.stem for path in blimp_dir.glob("*.jsonl"))


def measured(command: list[str], cwd: Path, env: dict[str, str],
             log: Path) -> Callable[[], dict[str, Any]]:
    """Start ``command``; returns what waits for it and gives its CPU seconds, page faults and
    peak resident set size (``wait4``)."""
    started = time.monotonic()
    load = os.getloadavg()[0]
    with open(log, "w") as out:
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=out,
                                   stderr=subprocess.STDOUT)

    def wait() -> dict[str, Any]:
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode:
            raise SystemExit(f"{' '.join(command[:4])}... failed ({process.returncode}); see "
                             f"{log}")
        return {"cpu_s": usage.ru_utime + usage.ru_stime, "user_s": usage.ru_utime,
                "system_s": usage.ru_stime, "faults": usage.ru_minflt + usage.ru_majflt,
                "major_faults": usage.ru_majflt, "peak_kb": usage.ru_maxrss,
                "wall_s": time.monotonic() - started, "load": load}

    return wait


def arms(workload: Workload, extra: list[str]) -> dict[str, dict[str, str]]:
    """Arm label -> the environment it adds."""
    found: dict[str, dict[str, str]] = {"fast": {"SYNTAXGYM_STOCK": "0"}}
    for reach in workload.reaches:
        found[f"-{reach}"] = {"SYNTAXGYM_STOCK": reach}
    found["stock"] = {"SYNTAXGYM_STOCK": "1"}
    for text in extra:
        label, _, assignments = text.partition(":")
        found[label] = {"SYNTAXGYM_STOCK": "0", **dict(
            part.split("=", 1) for part in assignments.split(",") if part)}
    return found


def masked_prod_env(work: Path, env: dict[str, str]) -> Path:
    """A ``prod_env`` folder with the masked LM's entries (copied into each run's folder)."""
    from bench_peak_memory import masked_model

    template = work / "prod_env-masked"
    if not (template / "prod_env").is_dir():
        folder = masked_model(work / "roberta-base-sized")
        template.mkdir(parents=True, exist_ok=True)
        subprocess.run([str(BIN / "syntaxgym-helm"), "model", "add", str(folder), "--name",
                        MASKED], cwd=template, env=env, check=True, stdout=subprocess.DEVNULL)
    return template / "prod_env"


def one_run(workload: Workload, arm: str, added: dict[str, str], work: Path,
            env: dict[str, str], index: int) -> dict[str, Any]:
    return started_run(workload, arm, added, work, env, index)()


def started_run(workload: Workload, arm: str, added: dict[str, str], work: Path,
                env: dict[str, str], index: int) -> Callable[[], dict[str, Any]]:
    """Start one ``helm-run`` of ``workload`` under ``arm``; returns what waits for it and
    gives its measurement."""
    folder = work / "runs" / f"{workload.name}-{index:03d}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    run_env = {**env, **added}
    if workload.model == MASKED:
        shutil.copytree(masked_prod_env(work, env), folder / "prod_env")
    if workload.cold:
        run_env["SYNTAXGYM_HELM_CACHE"] = str(folder / "cache")
    else:
        run_env["SYNTAXGYM_HELM_CACHE"] = str(work / "cache")
    command = [str(BIN / "helm-run"), "--run-entries",
               f"syntaxgym:suite={workload.suite},model={workload.model}", "--suite", "x",
               "--max-eval-instances", str(workload.items)]
    if workload.name == "sweep":
        command = [str(BIN / "syntaxgym-helm"), "sweep", workload.model, "--suites",
                   *workload.suite.split(), "--pairs-per-paradigm", str(workload.items),
                   "--suite", "x", "--name", "sweep", "--local-path", "prod_env",
                   "--output-path", "benchmark_output", "--no-plots", "--in-process"]
    wait = measured(command, folder, run_env, work / "runs" / f"{workload.name}-{index:03d}.log")

    def result() -> dict[str, Any]:
        found = wait()
        found.update(workload=workload.name, arm=arm, index=index)
        print(f"{workload.name} {arm}: CPU {found['cpu_s']:.1f} s, {found['faults']:,} faults, "
              f"peak {found['peak_kb']:,} kB (wall {found['wall_s']:.0f} s, load "
              f"{found['load']:.1f})", flush=True)
        shutil.rmtree(folder / "benchmark_output", ignore_errors=True)
        shutil.rmtree(folder / "cache", ignore_errors=True)
        return found

    return result


def paired_table(workload: Workload, results: list[dict[str, Any]]) -> list[str]:
    """Per arm: each pair's ratio to the fast run beside it, for CPU seconds, page faults and
    peak memory, and their medians."""
    runs = [r for r in results if r["workload"] == workload.name]
    ratios: dict[str, list[tuple[float, float, float]]] = {}
    for arm_run, fast_run in zip(runs[::2], runs[1::2], strict=True):
        ratios.setdefault(arm_run["arm"], []).append(tuple(
            arm_run[key] / fast_run[key] - 1 for key in ("cpu_s", "faults", "peak_kb")))
    lines = ["| arm (off) | CPU vs fast, each pair | CPU | page faults | peak memory |",
             "|---|---|---:|---:|---:|"]
    for arm, values in ratios.items():
        medians = [statistics.median(v[k] for v in values) for k in range(3)]
        lines.append(f"| {arm} | {', '.join(f'{v[0]:+.1%}' for v in values)} | "
                     + " | ".join(f"{m:+.1%}" for m in medians) + " |")
    fast = [r for r in runs if r["arm"] == "fast"]
    if fast:
        lines += ["", f"fast runs: CPU {statistics.median(r['cpu_s'] for r in fast):.1f} s, "
                  f"{statistics.median(r['faults'] for r in fast):,.0f} page faults, peak "
                  f"{statistics.median(r['peak_kb'] for r in fast):,.0f} kB (medians)"]
    return lines


def table(workload: Workload, results: list[dict[str, Any]]) -> list[str]:
    """Per arm: each round's CPU seconds, then the medians of CPU, faults and peak, and the
    change against ``fast``."""
    by_arm: dict[str, list[dict[str, Any]]] = {}
    for result in results:
        if result["workload"] == workload.name:
            by_arm.setdefault(result["arm"], []).append(result)
    if "fast" not in by_arm:
        return []

    def median(arm: str, key: str) -> float:
        return statistics.median(r[key] for r in by_arm[arm])

    lines = ["| arm | CPU s (each round) | CPU s | vs fast | page faults | vs fast | peak kB | "
             "vs fast |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    for arm, runs in by_arm.items():
        cells = [arm, ", ".join(f"{r['cpu_s']:.1f}" for r in runs)]
        for key, form in (("cpu_s", "{:.1f}"), ("faults", "{:,.0f}"), ("peak_kb", "{:,.0f}")):
            value, base = median(arm, key), median("fast", key)
            cells += [form.format(value), "" if arm == "fast" else f"{value / base - 1:+.1%}"]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--blimp-dir", type=Path, default=ROOT.parent / "shared" / "blimp")
    parser.add_argument("--workloads", default="causal,causal-cold,gemma,masked")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--paradigm", default="anaphor_number_agreement")
    parser.add_argument("--causal-pairs", type=int, default=1000)
    parser.add_argument("--masked-pairs", type=int, default=100)
    parser.add_argument("--sweep-checkpoints", default="",
                        help="the sweep workload's checkpoints (a glob)")
    parser.add_argument("--sweep-paradigms", type=int, default=10)
    parser.add_argument("--sweep-pairs", type=int, default=20)
    parser.add_argument("--extra-arm", action="append", default=[])
    parser.add_argument("--arms", default="", help="only these arms (comma-separated labels)")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads of each measured process (OMP_NUM_THREADS)")
    parser.add_argument("--paired", action="store_true",
                        help="run each arm at the same time as a fast run (see the docstring)")
    parser.add_argument("--output", type=Path)
    parser.add_argument("--from-results", type=Path, action="append", default=[],
                        help="report the runs of these results.json files (of workloads run "
                        "apart) instead of running anything")
    args = parser.parse_args()
    work = args.workdir.resolve()
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": str(args.threads),
           "SYNTAXGYM_BLIMP_DIR": str(args.blimp_dir.resolve())}
    chosen = [workloads(args)[name] for name in args.workloads.split(",")]
    results: list[dict[str, Any]] = [
        run for path in args.from_results for run in json.loads(path.read_text())]
    started = dt.datetime.now()
    index = 0
    for workload in chosen if not args.from_results else []:
        labelled = arms(workload, args.extra_arm)
        if args.arms:
            labelled = {arm: labelled[arm] for arm in args.arms.split(",") if arm in labelled}
        if not workload.cold:  # the weights' copy made before the first measured run
            warm_up = Workload(workload.name, workload.model, workload.suite, 1, False, ())
            one_run(warm_up, "warm-up", {"SYNTAXGYM_STOCK": "0"}, work, env, index)
            index += 1
        for round_number in range(args.rounds):
            order = list(labelled)
            shift = round_number % len(order)
            for arm in order[shift:] + order[:shift]:
                if args.paired and arm == "fast":
                    continue
                if args.paired:  # the arm and fast at once: the same load on both
                    pair = [started_run(workload, name, labelled[name], work, env, index + k)
                            for k, name in enumerate((arm, "fast"))]
                    measured_pair = [wait() for wait in pair]
                    measured_pair[1]["pair_of"] = arm
                    results += measured_pair
                    index += 2
                else:
                    results.append(one_run(workload, arm, labelled[arm], work, env, index))
                    index += 1
                (work / "results.json").write_text(json.dumps(results, indent=1))
    when = (f"{started:%Y-%m-%d %H:%M} to {dt.datetime.now():%H:%M}, commit {_commit()}"
            if not args.from_results else "runs read from their results.json files")
    lines = ["## Reaches into other libraries' internals: what each gains", "",
             f"{when}, {_machine()}. `python {SCRIPT} --workloads {args.workloads} "
             f"--rounds {args.rounds} --threads {args.threads}"
             f"{' --paired' if args.paired else ''}` (its docstring "
             "describes the workloads and arms). CPU "
             "seconds (user + system), page faults and peak resident memory of each whole "
             "process (`wait4`), medians over the rounds; wall time is not compared. A reach's "
             "gain is what its `-NAME` arm costs against `fast`."]
    for workload in chosen:
        rows = (paired_table if args.paired else table)(workload, results)
        if rows:
            what = (f"`{workload.model}` on `{workload.suite}`" if workload.name != "sweep" else
                    f"{len(glob.glob(workload.model))} checkpoints of SmolLM2-135M on "
                    f"{len(workload.suite.split())} BLiMP "
                    "paradigms")
            lines += ["", f"`{workload.name}`: {what}, "
                      f"{workload.items} items" + (", cold" if workload.cold else ", warm"), "",
                      *rows]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.output:
        from markdown_sections import write_section

        write_section(args.output, text, SCRIPT)


def _commit() -> str:
    from markdown_sections import commit

    return commit()


def _machine() -> str:
    from markdown_sections import machine

    return machine()


if __name__ == "__main__":
    main()
