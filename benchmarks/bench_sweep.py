"""Benchmark: a sweep over a training run's checkpoints on BLiMP's fast subset, whole process,
beside lm-evaluation-harness run as BabyLM runs it (one ``lm_eval`` process per checkpoint),
every verdict compared under matched settings, and the sweep's peak memory beside one
checkpoint's own.

One command from the project root, with this checkout's environment (``make install``) and
lm-eval's (``--lmeval-venv``, default /work/venvs/lmeval: lm-eval 0.4.13, the same torch and
transformers); check ``uptime`` first: times mean something only on a quiet machine::

    # the benchmark: 6 checkpoints of SmolLM2-135M x 67 paradigms x 200 pairs
    .venv/bin/python benchmarks/bench_sweep.py --workdir /tmp/bsweep --output BENCHMARKS.md
    # end to end at a tiny size (minutes): 2 checkpoints x 3 paradigms x 10 pairs
    .venv/bin/python benchmarks/bench_sweep.py --checkpoints 2 --paradigms 3 --pairs 10 \
        --workdir /tmp/bsweep-tiny

Parts (``--parts``, in this order):

- ``build``: the checkpoints: SmolLM2-135M's weights, loaded from the embedded GGUF (the
  plugin's dequantised fp32 copy, loaded by transformers), trained here with AdamW (learning
  rate ``--lr``) on BLiMP's good sentences and saved with ``save_pretrained`` (model and
  tokenizer, whose beginning-of-text token is set to ``<|endoftext|>``, the token SmolLM2 was
  pre-trained after) every ``--steps-between`` steps into ``checkpoint-<step>`` folders: a
  causal model of 135M parameters as a Trainer leaves it.
- ``pairs``: the items of each paradigm the sweep scores (HELM's seeded sample of
  ``--pairs``, drawn by HELM's own ``downsample_eval_instances`` from the plugin's instances,
  as the sweep's runs draw them), written as JSONL files for lm-eval.
- ``ours``: one ``syntaxgym-helm sweep`` process over every checkpoint (``--suites blimp``
  or the paradigms, ``--pairs-per-paradigm``, ``--ties pass``: a tie counts right, as
  lm-eval's ``acc``), under ``/usr/bin/time -v``: wall and CPU seconds, peak memory.
- ``single``: the same on the first checkpoint alone: one checkpoint's own run, whose peak the
  sweep's must not exceed.
- ``lmeval``: for each checkpoint, one ``lm-eval run`` process (``--model hf``, fp32, batch 32,
  ``--log_samples``) on lm-eval's BLiMP template over the same pairs (the JSONL of ``pairs``),
  with settings matched to ours: the same beginning-of-text token before each sentence
  (``prefix_token_id``) and no space before it (``target_delimiter: ""``). One datasets cache
  for the whole loop (cold for the first checkpoint, as a user's loop), lm-eval's request cache
  off. Its time is the sum over the processes, its peak the largest.
- ``parity``: per checkpoint and pair, our verdict (the good sentence at least as likely) against
  lm-eval's ``acc``, and the largest difference of the sentences' log-probabilities.

``--reuse`` writes the report from ``results.json`` in ``--workdir``; ``--output FILE`` puts it
in FILE as a section of its own.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench_field_scale import all_paradigms, data_folder, gguf_model, lmeval_tasks
from bench_scoring import timed
from markdown_sections import commit, machine, write_section

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SCRIPT = "benchmarks/bench_sweep.py"
BIN = Path(sys.executable).parent
BOS = "<|endoftext|>"
RUN_SUITE = "benchsweep"
PARTS = ("build", "pairs", "ours", "single", "lmeval", "parity")


def build_part(args: argparse.Namespace) -> dict[str, Any]:
    """Train SmolLM2-135M here and save ``--checkpoints`` checkpoints (see the module doc)."""
    import time

    import torch

    from syntaxgym_helm.clients.local.model_loading import load_model_and_tokenizer

    started = time.time()
    folder, gguf = gguf_model()
    # The plugin's dequantised copy of the GGUF (fp32 safetensors, made once): a plain model,
    # which save_pretrained writes (a model transformers loads from GGUF itself is marked
    # quantised and is not).
    model, tokenizer = load_model_and_tokenizer(str(folder), gguf_file=gguf, device="cpu")
    tokenizer.bos_token = BOS
    sentences = [json.loads(line)["sentence_good"]
                 for uid in all_paradigms(args.blimp_dir)
                 for line in (data_folder(args.blimp_dir) / f"{uid}.jsonl")
                 .read_text(encoding="utf-8").splitlines()[-20:]]
    torch.manual_seed(0)
    optimiser = torch.optim.AdamW(model.parameters(), lr=args.lr)
    target = args.workdir / "checkpoints"
    shutil.rmtree(target, ignore_errors=True)
    saved, step = [], 0
    tokenizer.pad_token = BOS
    while len(saved) < args.checkpoints:
        step += 1
        batch = tokenizer([BOS + s for s in sentences[(step * 8) % len(sentences):][:8]],
                          return_tensors="pt", padding=True)
        labels = batch["input_ids"].masked_fill(batch["attention_mask"] == 0, -100)
        model.train()
        model(**batch, labels=labels).loss.backward()
        optimiser.step()
        optimiser.zero_grad()
        if step % args.steps_between == 0:
            model.eval()
            path = target / f"checkpoint-{step}"
            model.save_pretrained(path)
            tokenizer.save_pretrained(path)
            saved.append(str(path))
    parameters = sum(p.numel() for p in model.parameters())
    return {"checkpoints": saved, "parameters": parameters, "seconds": time.time() - started,
            "lr": args.lr, "steps_between": args.steps_between}


def pairs_part(args: argparse.Namespace) -> dict[str, Any]:
    """The sample HELM's runs of the sweep draw from each paradigm, as lm-eval's data files."""
    os.environ["SYNTAXGYM_BLIMP_DIR"] = str(args.blimp_dir)
    from helm.benchmark.runner import downsample_eval_instances

    from syntaxgym_helm.harness.scenario import SyntaxGymScenario

    target = args.workdir / "pairs"
    target.mkdir(parents=True, exist_ok=True)
    chosen = {}
    for uid in args.paradigms:
        instances = SyntaxGymScenario(suite=f"blimp_{uid}").get_instances(
            str(args.workdir / "suite-cache"))
        kept = downsample_eval_instances(instances, args.pairs, ["test"])
        numbers = sorted(int(i.id.removeprefix("item")) for i in kept)
        records = {int(json.loads(line)["pairID"]): line for line in
                   (data_folder(args.blimp_dir) / f"{uid}.jsonl").read_text(
                       encoding="utf-8").splitlines() if line.strip()}
        (target / f"{uid}.jsonl").write_text("".join(records[n] + "\n" for n in numbers),
                                             encoding="utf-8")
        chosen[uid] = numbers
    return {"folder": str(target), "pairs": chosen}


def ours_part(args: argparse.Namespace, checkpoints: Sequence[str], tag: str) -> dict[str, Any]:
    """One ``syntaxgym-helm sweep`` process over ``checkpoints`` in a fresh folder."""
    folder = args.workdir / tag
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    suites = (["blimp"] if list(args.paradigms) == all_paradigms(args.blimp_dir)
              else [f"blimp_{uid}" for uid in args.paradigms])
    command = [str(BIN / "syntaxgym-helm"), "sweep", *checkpoints, "--suites", *suites,
               "--pairs-per-paradigm", str(args.pairs), "--ties", "pass", "--name", "smollm2",
               "--suite", RUN_SUITE, "--local-path", str(folder / "prod_env"),
               "--output-path", str(folder / "benchmark_output")]
    env = {**os.environ, "SYNTAXGYM_BLIMP_DIR": str(args.blimp_dir), "PYTHONPATH": str(ROOT)}
    result = timed(command, folder, env, args.workdir / f"{tag}.log")
    result.pop("log")
    shown = ["syntaxgym-helm sweep", "'WORKDIR/checkpoints/checkpoint-*'",
             *command[2 + len(checkpoints):]]
    result.update(folder=str(folder), checkpoints=len(checkpoints),
                  command=" ".join(shown).replace(str(args.workdir), "WORKDIR"))
    return result


def lmeval_part(args: argparse.Namespace, checkpoints: Sequence[str],
                pairs_folder: Path) -> dict[str, Any]:
    """One lm-eval process per checkpoint (see the module doc)."""
    from transformers import AutoTokenizer

    folder = args.workdir / "lmeval"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    settings = argparse.Namespace(blimp_dir=pairs_folder)
    tasks = lmeval_tasks(settings, folder / "tasks", "matched", args.paradigms)
    bos_id = AutoTokenizer.from_pretrained(checkpoints[0]).convert_tokens_to_ids(BOS)
    cache = folder / "hf-cache"  # one for the loop: cold for the first checkpoint only
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(HF_HOME=str(cache), HF_DATASETS_CACHE=str(cache / "datasets"),
               HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    runs = []
    for index, checkpoint in enumerate(checkpoints):
        output = folder / f"output-{index}"
        command = [str(args.lmeval_venv / "bin" / "lm-eval"), "run", "--model", "hf",
                   "--model_args", f"pretrained={checkpoint},dtype=float32,"
                   f"prefix_token_id={bos_id}", "--tasks", ",".join(tasks), "--include_path",
                   str(folder / "tasks"), "--batch_size", str(args.lmeval_batch_size),
                   "--device", "cpu", "--output_path", str(output), "--log_samples"]
        run = timed(command, folder, env, args.workdir / f"lmeval-{index}.log")
        run.pop("log")
        run.update(checkpoint=checkpoint, output=str(output))
        runs.append(run)
    return {"runs": runs, "wall_s": sum(r["wall_s"] for r in runs),
            "cpu_s": sum(r["cpu_s"] for r in runs),
            "peak_rss_mb": max(r["peak_rss_mb"] or 0 for r in runs),
            "command": (f"lm-eval run --model hf --model_args pretrained=CHECKPOINT,"
                        f"dtype=float32,prefix_token_id={bos_id} --tasks TASKS --include_path "
                        f"TASK_FOLDER --batch_size {args.lmeval_batch_size} --device cpu "
                        "--output_path OUT --log_samples")}


def lmeval_samples(output: Path) -> dict[tuple[str, int], tuple[float, float, bool]]:
    """(paradigm, pairID) -> (good, bad log-likelihood, acc) from one lm-eval run's samples."""
    found = {}
    for path in output.rglob("samples_*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            sample = json.loads(line)
            good, bad = (float(resp[0]) for resp in sample["filtered_resps"])
            found[(sample["doc"]["UID"], int(sample["doc"]["pairID"]))] = (
                good, bad, bool(sample["acc"]))
    return found


def our_samples(ours: dict[str, Any], checkpoint: str
                ) -> dict[tuple[str, int], tuple[float, float, bool]]:
    """(paradigm, pairID) -> (good, bad log-probability in nats, good at least as likely) of one
    checkpoint's runs in our sweep."""
    from syntaxgym_helm.harness.scored_items import FILE_NAME, read_scored_items

    runs = Path(ours["folder"]) / "benchmark_output" / "runs" / RUN_SUITE
    found = {}
    name = Path(checkpoint).name
    for path in runs.glob(f"syntaxgym:*@{name}/{FILE_NAME}"):
        kept = read_scored_items(path)
        uid = kept.suite.name.removeprefix("blimp_") if kept.suite else ""
        for evaluation in kept.evaluations:
            if evaluation.scorable:
                sums = {c.condition_name: -math.fsum(c.region_surprisals(None)) * math.log(2)
                        for c in evaluation.conditions}
                found[(uid, evaluation.item_number)] = (sums["good"], sums["bad"],
                                                        sums["good"] >= sums["bad"])
    return found


def parity_part(results: dict[str, Any]) -> dict[str, Any]:
    compared = differ = only_ours = only_theirs = 0
    worst = 0.0
    for run in results["lmeval"]["runs"]:
        theirs = lmeval_samples(Path(run["output"]))
        mine = our_samples(results["ours"], run["checkpoint"])
        only_ours += len(set(mine) - set(theirs))
        only_theirs += len(set(theirs) - set(mine))
        for key in set(mine) & set(theirs):
            compared += 1
            differ += mine[key][2] != theirs[key][2]
            worst = max(worst, abs(mine[key][0] - theirs[key][0]),
                        abs(mine[key][1] - theirs[key][1]))
    return {"compared": compared, "verdicts_differ": differ, "only_ours": only_ours,
            "only_lmeval": only_theirs, "max_abs_logprob_difference": worst}


def render(results: dict[str, Any]) -> str:
    meta, build = results["meta"], results.get("build", {})
    lines = [f"## Sweep over {len(build.get('checkpoints', []))} checkpoints "
             f"({meta['paradigms']} paradigms x {meta['pairs']} pairs)", "",
             f"Machine: {meta['machine']}; commit {meta['commit']}; load before "
             f"{meta['load_before']}, after {meta['load_after']}.", "",
             f"Checkpoints: SmolLM2-135M ({build.get('parameters', 0):,} parameters) trained "
             f"here, saved every {build.get('steps_between')} steps.", "",
             "| | wall | CPU | peak memory |", "|---|---:|---:|---:|"]
    for key, label in (("ours", "our sweep (one command)"), ("single", "ours, one checkpoint"),
                       ("lmeval", "lm-eval (a process per checkpoint, summed)")):
        part = results.get(key)
        if part:
            lines.append(f"| {label} | {part['wall_s']:.1f} s | {part['cpu_s']:.0f} s | "
                         f"{(part['peak_rss_mb'] or 0) / 1024:.2f} GiB |")
    ours, lmeval, single = results.get("ours"), results.get("lmeval"), results.get("single")
    if ours and lmeval:
        lines += ["", f"Ours / lm-eval: **{ours['wall_s'] / lmeval['wall_s']:.2f}x** the wall "
                  f"time, {ours['cpu_s'] / lmeval['cpu_s']:.2f}x the CPU time."]
    if ours and single:
        lines.append(f"Peak memory of the sweep / one checkpoint's run: "
                     f"{ours['peak_rss_mb'] / single['peak_rss_mb']:.2f}.")
    parity = results.get("parity")
    if parity:
        lines += ["", f"Verdicts: {parity['compared']:,} pairs compared, "
                  f"{parity['verdicts_differ']} differ ({parity['only_ours']} scored by us "
                  f"only, {parity['only_lmeval']} by lm-eval only); largest sentence "
                  f"log-probability difference {parity['max_abs_logprob_difference']:.2g} nats."]
    lines += ["", "Commands: " + "; ".join(f"`{results[k]['command']}`"
                                           for k in ("ours", "lmeval") if k in results)]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", default=",".join(PARTS))
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--blimp-dir", type=Path, default=ROOT.parent / "shared" / "blimp")
    parser.add_argument("--checkpoints", type=int, default=6)
    parser.add_argument("--steps-between", type=int, default=2)
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument("--paradigms", default="all",
                        help="all, a number (the first N), or UIDs separated by commas")
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--lmeval-venv", type=Path, default=Path("/work/venvs/lmeval"))
    parser.add_argument("--lmeval-batch-size", type=int, default=32)
    parser.add_argument("--reuse", action="store_true")
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args()
    args.workdir = args.workdir.resolve()
    args.workdir.mkdir(parents=True, exist_ok=True)
    if not args.blimp_dir.is_dir():
        args.blimp_dir = Path("/work/shared/blimp")
    every = all_paradigms(args.blimp_dir)
    args.paradigms = (every if args.paradigms == "all" else every[:int(args.paradigms)]
                      if args.paradigms.isdigit() else args.paradigms.split(","))
    saved = args.workdir / "results.json"
    results: dict[str, Any] = json.loads(saved.read_text()) if saved.exists() else {}
    if not args.reuse:
        load = lambda: " ".join(Path("/proc/loadavg").read_text().split()[:3])  # noqa: E731
        results["meta"] = {"machine": machine(), "commit": commit(), "load_before": load(),
                           "paradigms": len(args.paradigms), "pairs": args.pairs}
        for part in args.parts.split(","):
            print(f"== {part}", flush=True)
            if part == "build":
                results["build"] = build_part(args)
            elif part == "pairs":
                results["pairs"] = pairs_part(args)
            elif part == "ours":
                results["ours"] = ours_part(args, results["build"]["checkpoints"], "ours")
            elif part == "single":
                results["single"] = ours_part(args, results["build"]["checkpoints"][:1],
                                              "single")
            elif part == "lmeval":
                results["lmeval"] = lmeval_part(args, results["build"]["checkpoints"],
                                                Path(results["pairs"]["folder"]))
            elif part == "parity":
                results["parity"] = parity_part(results)
            saved.write_text(json.dumps(results, indent=1))
        results["meta"]["load_after"] = load()
        saved.write_text(json.dumps(results, indent=1))
    report = render(results)
    print(report)
    if args.output:
        write_section(args.output, report, SCRIPT)


if __name__ == "__main__":
    main()
