"""Benchmark: the Ray runner (``syntaxgym_helm.runners.RayRunner``) beside HELM's default runner,
and the measured inputs of docs/scaling.md's cost model, checked against a real two-node cluster.

Parts (``--parts``, comma-separated):

- ``overhead``: the same run entries with HELM's default runner and with the Ray runner (a Ray
  started on this machine for the run, one actor), alternated back to back for ``--repeat``
  rounds, each a whole ``helm-run`` process under ``/usr/bin/time -v``, each in a fresh folder
  with empty request caches (the model's dequantised weights shared). Every pair's per-instance
  accuracies must be equal. The target: Ray / default at most 1.15x the wall time.
- ``cost``: the cost model's inputs, each measured in a process of its own with one torch thread
  (as on a one-CPU node): a default-runner run of the entries (model load, scoring seconds per
  sentence, per-run overhead, HELM's start-up, output bytes per sentence), the same run again
  (every answer from the request cache: seconds per cached sentence), and the Ray runner's fixed
  cost (a one-item run through Ray less the same through the default runner). Then a real
  two-node cluster on this machine (``ray start --head --num-cpus 1`` and ``ray start --address
  ... --num-cpus 1``, two actors of the model: ``replicas: 2``) runs the entries; the model's
  prediction for it is printed beside what it took, then the model's figures for BabyLM's 28
  checkpoints x 254 minimal-pair paradigms (200 pairs each) on N nodes.

Not a test. Run from the project root on a quiet machine (``uptime`` first; the load is printed)::

    python benchmarks/bench_ray_runner.py --parts overhead,cost --repeat 3 --output BENCHMARKS.md

By default the run entries are the 34 suites of Hu et al. (2020) from ``../shared/suites/hu2020``
(``--suites-dir``), else the 11 built-in suites, on the embedded SmolLM2 (``--model``).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_field_scale import waiting_for_the_engine
from bench_scoring import BIN, DEFAULT_SUITES_DIR, helm_phases, scoring_seconds, timed
from markdown_sections import commit, machine, write_section

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = "benchmarks/bench_ray_runner.py"
RAY_RUNNER = "syntaxgym_helm.runners.RayRunner"
#: BabyLM's sweep (issue 55): checkpoints per model, minimal-pair paradigms (BLiMP 67, CLAMS 50,
#: RuBLiMP 45, TurBLiMP 38, SLING 54), sentences per paradigm in the fast subsets (200 pairs).
BABYLM = {"checkpoints": 28, "runs": 254, "sentences_per_run": 400}


def suites_of(args: argparse.Namespace) -> tuple[list[str], dict[str, str]]:
    """The suites to run and the environment that finds them."""
    if args.suites_dir.is_dir():
        names = sorted(path.stem for path in args.suites_dir.glob("*.json"))
        return names, {"SYNTAXGYM_SUITES_DIR": str(args.suites_dir)}
    names = sorted(path.stem for path in (ROOT / "syntaxgym_helm" / "suites").glob("*.json"))
    return names, {}


def command(suites: list[str], model: str, items: int, runner: str | None) -> list[str]:
    entries = [f"syntaxgym:suite={suite},model={model}" for suite in suites]
    extra = ["--runner-class-name", runner] if runner else []
    return [str(BIN / "helm-run"), "--run-entries", *entries, "--suite", "bench",
            "--max-eval-instances", str(items), *extra]


def fresh_folder(work: Path, name: str, runner_config: str = "") -> tuple[Path, dict[str, str]]:
    """A new working folder and a plugin cache of its own whose request caches are empty (the
    user's dequantised weights, assembled GGUF files and their digests linked)."""
    from syntaxgym_helm.clients.cache_dirs import cache_root

    folder = work / name
    (folder / "prod_env").mkdir(parents=True)
    if runner_config:
        (folder / "prod_env" / "runner_config.yaml").write_text(runner_config)
    cache = folder / "plugin_cache"
    cache.mkdir()
    for part in ("weights", "gguf", "digests"):
        if (cache_root() / part).is_dir():
            (cache / part).symlink_to(cache_root() / part)
    return folder, {"SYNTAXGYM_HELM_CACHE": str(cache), "PYTHONPATH": str(ROOT),
                    "TQDM_DISABLE": "1"}


def accuracies(folder: Path) -> dict[str, float]:
    found = {}
    for run in (folder / "benchmark_output" / "runs" / "bench").glob("syntaxgym:*"):
        for entry in json.loads((run / "per_instance_stats.json").read_text()):
            for stat in entry["stats"]:
                if stat["name"]["name"] == "syntaxgym_accuracy":
                    found[f"{run.name}/{entry['instance_id']}"] = stat["mean"]
    return found


def one(work: Path, name: str, args: argparse.Namespace, runner: str | None,
        env: dict[str, str], runner_config: str = "", items: int | None = None,
        suites: list[str] | None = None, folder: Path | None = None) -> dict[str, Any]:
    """One whole helm-run (in ``folder``, else a fresh one); its times, log and folder."""
    if folder is None:
        folder, own = fresh_folder(work, name, runner_config)
        env = {**env, **own}
    result = timed(command(suites or args.suites, args.model, items or args.items, runner),
                   folder, {**os.environ, **env}, work / f"{name}.log")
    result["folder"] = folder
    return result


def part_overhead(work: Path, args: argparse.Namespace, env: dict[str, str]) -> str:
    rounds = []
    for index in range(args.repeat):
        pair = {}
        order = (("default", None), ("ray", RAY_RUNNER))
        for side, runner in order if index % 2 == 0 else order[::-1]:
            pair[side] = one(work, f"overhead-{side}-{index}", args, runner, env)
            print(f"round {index + 1} {side}: {pair[side]['wall_s']:.1f} s", flush=True)
        if accuracies(pair["default"]["folder"]) != accuracies(pair["ray"]["folder"]):
            raise SystemExit(f"round {index + 1}: the runners' per-instance accuracies differ")
        rounds.append(pair)
    lines = ["| round | first | default runner | Ray runner | Ray / default |",
             "|---:|---|---:|---:|---:|"]
    for index, pair in enumerate(rounds, 1):
        lines.append(f"| {index} | {'default' if index % 2 else 'ray'} | "
                     f"{pair['default']['wall_s']:.1f} s | {pair['ray']['wall_s']:.1f} s | "
                     f"{pair['ray']['wall_s'] / pair['default']['wall_s']:.3f}x |")
    default = statistics.median(p["default"]["wall_s"] for p in rounds)
    ray = statistics.median(p["ray"]["wall_s"] for p in rounds)
    return "\n".join([
        f"### Whole process, Ray runner beside HELM's default runner ({len(args.suites)} suites, "
        f"{args.model}, `--max-eval-instances {args.items}`)", "",
        "Each run a whole `helm-run` process, start to exit, in a fresh folder with empty "
        "request caches; the Ray runner starts a Ray on this machine and one actor of the model "
        "(all cores). Per-instance accuracies equal in every round.", "", *lines, "",
        f"Median: default {default:.1f} s, Ray {ray:.1f} s: **{ray / default:.3f}x** "
        "(target: at most 1.15x).", ""])


def _sentences(folder: Path) -> int:
    total = 0
    for path in (folder / "benchmark_output" / "runs" / "bench").glob("*/scenario_state.json"):
        total += len(json.loads(path.read_text())["request_states"])
    return total


def _output_bytes(folder: Path) -> int:
    runs = folder / "benchmark_output" / "runs" / "bench"
    return sum(p.stat().st_size for p in runs.rglob("*") if p.is_file())


def measure_inputs(work: Path, args: argparse.Namespace, env: dict[str, str]) -> dict[str, float]:
    """The cost model's inputs, one torch thread (a one-CPU node)."""
    env = {**env, "OMP_NUM_THREADS": "1"}
    cold = one(work, "cost-cold", args, None, env)
    phases = helm_phases(cold["log"], cold["started"], cold["ended"])
    scoring, _ = scoring_seconds(cold["log"])  # HELM's Executor.execute: the engine's passes
    loading = waiting_for_the_engine(cold["log"])  # the model's load and the engine's set-up
    sentences = _sentences(cold["folder"])
    warm = one(work, "cost-warm", args, None, env, folder=cold["folder"])
    warm_phases = helm_phases(warm["log"], warm["started"], warm["ended"])
    tiny = {runner or "default": one(work, f"cost-tiny-{runner or 'default'}", args, runner,
                                     env, "ray:\n  num_cpus: 1\n", items=1,
                                     suites=args.suites[:1])["wall_s"]
            for runner in (None, RAY_RUNNER)}
    overhead = phases["scenario"] + phases["adaptation"] + phases["metrics"] + phases["writing"]
    return {
        "sentences": sentences, "runs": len(args.suites), "whole_s": cold["wall_s"],
        "start_s": phases["start-up"] + phases["exit"], "load_s": loading,
        "sentence_s": scoring / sentences, "helm_sentence_s": overhead / sentences,
        "cached_sentence_s": warm_phases["execution"] / sentences,
        "cached_whole_s": warm["wall_s"], "ray_fixed_s": tiny[RAY_RUNNER] - tiny["default"],
        "output_bytes_per_sentence": _output_bytes(cold["folder"]) / sentences,
    }


def predict(inputs: dict[str, float], checkpoints: int, nodes: int, replicas: int,
            sentences: float, cached: bool = False) -> float:
    """The cost model (docs/scaling.md): helm-run's start-up once; then waves of checkpoints,
    ``nodes // replicas`` at a time, each paying Ray's fixed cost (an actor's start), the model's
    load, and per sentence its scoring and HELM's own work (scenario, adaptation, metrics,
    writing), shared by the checkpoint's ``replicas`` actors. ``cached``: a rerun answered from
    the request caches (no model is loaded)."""
    at_once = max(1, nodes // replicas)
    waves = -(-checkpoints // at_once)
    per_sentence = inputs["helm_sentence_s"] + (inputs["cached_sentence_s"] if cached
                                                else inputs["sentence_s"])
    load = 0.0 if cached else inputs["load_s"]
    wave = inputs["ray_fixed_s"] + load + sentences * per_sentence / replicas
    return inputs["start_s"] + waves * wave


def two_node_cluster(work: Path, args: argparse.Namespace, env: dict[str, str]) -> dict[str, Any]:
    """The entries on a real two-node Ray cluster on this machine (one CPU each, two actors)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    ray = [str(BIN / "ray"), "start", "--num-cpus", "1"]
    # ray start --head turns Ray 2.60's token authentication on (the token in ~/.ray): the node
    # that joins and the driver must use it too.
    env = {**env, "RAY_AUTH_MODE": "token"}
    cluster_env = {**os.environ, **env, "OMP_NUM_THREADS": "1"}
    subprocess.run([*ray, "--head", "--port", str(port), "--include-dashboard=false"],
                   env=cluster_env, check=True,
                   timeout=300, capture_output=True)
    try:
        subprocess.run([*ray, "--address", f"127.0.0.1:{port}"], env=cluster_env, check=True,
                       timeout=300, capture_output=True)
        result = one(work, "cost-cluster", args, RAY_RUNNER,
                     {**env, "RAY_ADDRESS": f"127.0.0.1:{port}"},
                     "ray:\n  replicas: 2\n  num_cpus: 1\n")
    finally:
        subprocess.run([str(BIN / "ray"), "stop", "--force"], timeout=300, capture_output=True)
    runs = result["folder"] / "benchmark_output" / "runs" / "bench"
    records = [json.loads(p.read_text()) for p in runs.glob("*/syntaxgym_runner.json")]
    result["nodes"] = len({record["node_id"] for record in records})
    return result


def part_cost(work: Path, args: argparse.Namespace, env: dict[str, str]) -> str:
    inputs = measure_inputs(work, args, env)
    print(json.dumps(inputs, indent=1), flush=True)
    cluster = two_node_cluster(work, args, env)
    expected = predict(inputs, 1, 2, 2, inputs["sentences"])
    rows = [("model load (engine set up on the dequantised copy)", f"{inputs['load_s']:.1f} s"),
            ("scoring, per sentence (1 thread)", f"{inputs['sentence_s'] * 1e3:.2f} ms"),
            ("answered from the request cache, per sentence",
             f"{inputs['cached_sentence_s'] * 1e3:.3f} ms"),
            ("HELM's own work, per sentence (scenario, adaptation, metrics, writing)",
             f"{inputs['helm_sentence_s'] * 1e3:.2f} ms"),
            ("helm-run start-up and exit (imports, HELM's YAML, run specs)",
             f"{inputs['start_s']:.1f} s"),
            ("Ray's fixed cost (start or join, an actor's process and set-up)",
             f"{inputs['ray_fixed_s']:.1f} s"),
            ("output written per sentence (run folders)",
             f"{inputs['output_bytes_per_sentence'] / 1024:.1f} KiB")]
    table = ["| input | measured |", "|---|---:|", *[f"| {a} | {b} |" for a, b in rows]]
    babylm = ["| CPU nodes (one actor each) | from nothing | again, from the caches |",
              "|---:|---:|---:|"]
    sentences = BABYLM["runs"] * BABYLM["sentences_per_run"]
    for nodes in (1, 2, 4, 7, 14, 28):
        cold = predict(inputs, BABYLM["checkpoints"], nodes, 1, sentences)
        warm = predict(inputs, BABYLM["checkpoints"], nodes, 1, sentences, cached=True)
        babylm.append(f"| {nodes} | {cold / 3600:.2f} h | {warm / 60:.1f} min |")
    return "\n".join([
        f"### The cost model's inputs and a two-node cluster ({inputs['runs']} suites, "
        f"{int(inputs['sentences'])} sentences, {args.model})", "",
        "Inputs, each measured in a process of its own with one torch thread:", "", *table, "",
        f"Two-node cluster on this machine (`ray start`, one CPU each, two actors of the model): "
        f"**{cluster['wall_s']:.1f} s** whole process, runs on {cluster['nodes']} nodes; the "
        f"model predicted **{expected:.1f} s** ({(expected / cluster['wall_s'] - 1) * 100:+.0f}%)."
        " One default-runner process of the same entries on one thread: "
        f"{inputs['whole_s']:.1f} s.", "",
        f"BabyLM's {BABYLM['checkpoints']} checkpoints x {BABYLM['runs']} paradigms "
        f"({BABYLM['sentences_per_run']} sentences each), by the model with these inputs:", "",
        *babylm, ""])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", default="overhead,cost")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--suites-dir", type=Path, default=DEFAULT_SUITES_DIR)
    parser.add_argument("--model", default="syntaxgym/smollm2-135m-instruct-q4_1")
    parser.add_argument("--items", type=int, default=100000, help="--max-eval-instances")
    parser.add_argument("--first-suites", type=int, default=0, help="the first N suites only")
    parser.add_argument("--output", type=Path, help="write the section into this Markdown file")
    args = parser.parse_args()
    args.suites, env = suites_of(args)
    if args.first_suites:
        args.suites = args.suites[:args.first_suites]
    parts = args.parts.split(",")
    load_before = os.getloadavg()
    print(f"load before: {load_before}", flush=True)
    sections = []
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        if "overhead" in parts:
            sections.append(part_overhead(work, args, env))
        if "cost" in parts:
            sections.append(part_cost(work, args, env))
    load_after = os.getloadavg()
    text = "\n".join([
        "## The Ray runner: overhead beside HELM's default runner, and the cost model's inputs",
        "", f"{time.strftime('%Y-%m-%d %H:%M')}, commit {commit()}, {machine()}; load average "
        f"{load_before[0]:.2f} before, {load_after[0]:.2f} after. `python {SCRIPT} --parts "
        f"{args.parts} --repeat {args.repeat}`.", "", *sections])
    print(text)
    if args.output:
        write_section(args.output, text, SCRIPT)


if __name__ == "__main__":
    main()
