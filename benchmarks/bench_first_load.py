"""Benchmark: what a machine's first use of an embedded model costs, and what each later run's
start-up costs, with this checkout's code and with an older checkout's, back to back.

Each step runs in a process of its own, with one torch thread (as each of ``make test``'s two
workers has) and the plugin's code from this checkout (``after``) or from ``--before`` (an older
checkout on PYTHONPATH), after a warm-up load in the same process so that only the step is timed:

- ``dequantise``: ``load_model_and_tokenizer`` on the GGUF file with an empty weights cache:
  transformers builds the config, the tokenizer and the weights, and the plugin saves the
  dequantised copy (first use on a machine);
- ``engine``: setting the local engine up on the loaded copy (oneDNN-packed layers, the
  originals' file pages handed back), which every run does.

Not a test. Run from the project root on a quiet machine (``uptime`` first; the load is printed)::

    git worktree add /tmp/before <older commit>
    python benchmarks/bench_first_load.py --before /tmp/before --output BENCHMARKS.md
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from markdown_sections import commit, machine, write_section

MODELS = ("smollm2", "gemma")

CHILD = r"""
import json, resource, sys, tempfile, time
from syntaxgym_helm.clients.embedded.catalogue import GEMMA3_270M, SMOLLM2_135M
from syntaxgym_helm.clients.local import model_loading
from syntaxgym_helm.clients.local.logprob_engine import LogprobEngine

model, part = sys.argv[1], sys.argv[2]
if model == "smollm2":
    folder, gguf, bos = str(SMOLLM2_135M.directory()), SMOLLM2_135M.gguf_file, "<|endoftext|>"
else:
    path = GEMMA3_270M.gguf_path()
    folder, gguf, bos = str(path.parent), path.name, "<bos>"
loaded = model_loading.load_model_and_tokenizer(folder, gguf_file=gguf, device="cpu")
before = resource.getrusage(resource.RUSAGE_SELF)
started = time.perf_counter()
if part == "dequantise":
    model_loading.load_model_and_tokenizer(folder, gguf_file=gguf, device="cpu",
                                           weights_cache_dir=tempfile.mkdtemp())
else:
    LogprobEngine(*loaded, bos_text=bos)
seconds = time.perf_counter() - started
after = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"seconds": seconds, "cpu": after.ru_utime + after.ru_stime
                  - before.ru_utime - before.ru_stime}))
"""


ROOT = Path(__file__).resolve().parents[1]


def run_part(model: str, part: str, tree: Path) -> dict[str, float]:
    """One step in a fresh process with the plugin's code from ``tree``."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TQDM_DISABLE": "1", "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-c", CHILD, model, part], env=env, cwd=tree,
                          capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise SystemExit(f"{model} {part} ({tree}) failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def report(results: dict[str, dict[str, dict[str, float]]], load_before: tuple[float, ...],
           load_after: tuple[float, ...], command: str, before: str) -> str:
    lines = ["## First use and start-up: dequantising the embedded models, setting the engine up",
             "",
             f"{time.strftime('%Y-%m-%d %H:%M')}. Commit {commit()}. Machine: {machine()}. "
             f"Load average (1 / 5 / 15 min) before {' / '.join(f'{x:.2f}' for x in load_before)}, "
             f"after {' / '.join(f'{x:.2f}' for x in load_after)}. One torch thread per process.",
             "", f"Command: `{command}`", "",
             f"Each step in a fresh process after a warm-up load (imports excluded), the code "
             f"before ({before}) and after back to back.", "",
             "| model | step | before | after | ratio |", "|---|---|---:|---:|---:|"]
    steps = {"dequantise": "dequantise the GGUF file and save the copy (first use)",
             "engine": "set the engine up on the copy (every run)"}
    for key, cells in results.items():
        model, part = key.split("/")
        old, new = cells["before"]["seconds"], cells["after"]["seconds"]
        lines.append(f"| {model} | {steps[part]} | {old:.1f} s | {new:.1f} s | "
                     f"{new / old:.2f}x |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--parts", default="dequantise,engine")
    parser.add_argument("--before", type=Path, default=Path("/tmp/before"),
                        help="an older checkout of this project")
    parser.add_argument("--output", type=Path, help="put the report in this file (a section)")
    args = parser.parse_args()
    load_before = os.getloadavg()
    results: dict[str, dict[str, dict[str, float]]] = {}
    for model in args.models.split(","):
        for part in args.parts.split(","):
            results[f"{model}/{part}"] = {variant: run_part(model, part, tree) for variant, tree
                                          in (("before", args.before), ("after", ROOT))}
            print(model, part, results[f"{model}/{part}"], flush=True)
    command = "python benchmarks/bench_first_load.py " + " ".join(sys.argv[1:])
    before = subprocess.run(["git", "-C", str(args.before), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True, timeout=30).stdout.strip()
    text = report(results, load_before, os.getloadavg(), command.strip(),
                  f"commit {before}" if before else str(args.before))
    print(text)
    if args.output:
        write_section(args.output, text, "benchmarks/bench_first_load.py")


if __name__ == "__main__":
    main()
