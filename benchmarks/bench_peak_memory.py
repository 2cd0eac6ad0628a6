"""Peak memory of one ``helm-run`` of one suite, each model alone, against its bound.

Every run is ``/usr/bin/time -v helm-run --run-entries syntaxgym:suite=SUITE,model=MODEL --suite x
--max-eval-instances 20`` in an empty folder (no request cache): its maximum resident set size.
The embedded models run cold (``SYNTAXGYM_HELM_CACHE`` a fresh folder: the GGUF file is
dequantised and its copy written) and then warm (the same cache: the copy is read). The masked LM
is a RoBERTa-base-sized ``RobertaForMaskedLM`` (hidden 768, 12 layers, vocabulary 50,265) with
seeded random weights and a byte-level BPE tokenizer trained on the package's suites
(``tests/clients/tiny_checkpoints.py``), so that, like RoBERTa's own, it makes about one token of
each word of the suite's sentences; saved once to ``WORKDIR/roberta-base-sized`` and added with
``syntaxgym-helm model add``. The encoder-decoder LM (``seq2seq``) is a
``T5ForConditionalGeneration`` at t5-base's size (d_model 768, 12 + 12 layers, vocabulary
32,128), made and added the same way with a Unigram tokenizer trained on the suites. The floor
is a process that imports torch, transformers, HELM's ``helm-run`` module and the plugin, and
loads no model; a model's bound is the floor plus twice its float32 weights (:data:`BOUND`),
what the stock allocators give (no allocator setting is changed by the package). Each model's line
says its bound and whether the peak is within it; ``--floor-kb`` takes a floor measured before.

``--phases`` runs each ``helm-run`` in a child that records, at each of HELM's log lines, the
process's resident memory and its peak so far (``/proc/self/status``: ``VmRSS``, ``VmHWM``), and
prints the lines at which the peak rose: where the memory goes.

    python benchmarks/bench_peak_memory.py --workdir /tmp/peak \\
        [--parts floor,smollm2,gemma,masked,seq2seq] [--states cold,warm] [--phases] \\
        [--code BEFORE] [--floor-kb KB]
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
EMBEDDED = {"smollm2": "syntaxgym/smollm2-135m-instruct-q4_1",
            "gemma": "syntaxgym/gemma-3-270m-q4_k_m"}
MASKED = "local/roberta-base-sized"
SEQ2SEQ = "local/t5-base-sized"
FLOOR = "import torch, transformers, helm.benchmark.run, syntaxgym_helm.plugin"
#: A model's peak is at most the floor plus this many times its float32 weights.
BOUND = 2.0


def peak_kb(command: list[str], cwd: Path, env: dict[str, str]) -> int:
    """The maximum resident set size of ``command`` (kB), from ``/usr/bin/time -v``."""
    done = subprocess.run(["/usr/bin/time", "-v", *command], cwd=cwd, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    for line in done.stdout.splitlines():
        if line.startswith("[phases]"):
            print(line, flush=True)
    found = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stdout)
    if done.returncode or found is None:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout[-4000:]}")
    return int(found.group(1))


def helm_run(model: str, suite: str, phases: bool) -> list[str]:
    args = ["--run-entries", f"syntaxgym:suite={suite},model={model}", "--suite", "x",
            "--max-eval-instances", "20"]
    if phases:
        return [sys.executable, __file__, "--child", *args]
    return [str(BIN / "helm-run"), *args]


def run_folder(workdir: Path, name: str) -> Path:
    folder = workdir / "runs" / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


def suite_sentences() -> tuple[str, ...]:
    """Every condition's sentence of the package's suites (what the masked LM's tokenizer
    learns from)."""
    import json

    return tuple(" ".join(region["content"] for region in condition["regions"]
                          if region["content"])
                 for path in sorted((ROOT / "syntaxgym_helm" / "suites").glob("*.json"))
                 for item in json.loads(path.read_text())["items"]
                 for condition in item["conditions"])


def masked_model(folder: Path) -> Path:
    """The RoBERTa-base-sized masked LM with seeded random weights, saved once."""
    if (folder / "config.json").is_file():
        return folder
    import torch
    import transformers as tf

    sys.path.insert(0, str(ROOT / "tests" / "clients"))
    import tiny_checkpoints as tiny

    torch.manual_seed(0)
    tokenizer = tiny._tokenizer("roberta", suite_sentences(), vocab_size=50265)
    model = tf.RobertaForMaskedLM(tf.RobertaConfig(
        vocab_size=50265, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
        intermediate_size=3072, max_position_embeddings=514,
        pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id))
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def seq2seq_model(folder: Path) -> Path:
    """The t5-base-sized encoder-decoder LM with seeded random weights, saved once."""
    if (folder / "config.json").is_file():
        return folder
    import torch
    import transformers as tf

    sys.path.insert(0, str(ROOT / "tests" / "clients"))
    import tiny_checkpoints as tiny

    torch.manual_seed(0)
    tokenizer = tiny._tokenizer("t5", suite_sentences(), vocab_size=8000)
    model = tf.T5ForConditionalGeneration(tf.T5Config(
        vocab_size=32128, d_model=768, d_kv=64, d_ff=3072, num_layers=12, num_decoder_layers=12,
        num_heads=12, pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.pad_token_id))
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def weights_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.glob("*.safetensors")) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--parts", default="floor,smollm2,gemma,masked,seq2seq")
    parser.add_argument("--suite", default="sgh_agreement_pp")
    parser.add_argument("--phases", action="store_true")
    parser.add_argument("--code", type=Path, default=ROOT,
                        help="the checkout whose package runs (default: this one)")
    parser.add_argument("--states", default="cold,warm",
                        help="the embedded models' runs (warm alone: the cache of an earlier run)")
    parser.add_argument("--floor-kb", type=int, help="the floor, measured before (else the "
                        "floor part measures it)")
    args = parser.parse_args()
    work = args.workdir.resolve()
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(args.code.resolve())}
    floor = args.floor_kb

    def against_bound(kb: int, weights: float) -> str:
        if floor is None:
            return "no floor measured: run the floor part first, or give --floor-kb"
        bound = floor + BOUND * weights * 1e6 / 1024
        return (f"bound {bound:,.0f} kB (floor + {BOUND:g}x fp32 weights): "
                + ("within it" if kb <= bound else f"OVER it by {(kb - bound) / 1024:,.0f} MiB"))

    for part in args.parts.split(","):
        if part == "floor":
            floor = kb = peak_kb([sys.executable, "-c", FLOOR], work, env)
            print(f"floor: {kb:,} kB ({FLOOR})", flush=True)
        elif part in EMBEDDED:
            cache = work / f"cache-{part}"
            states = args.states.split(",")
            if "cold" in states:
                shutil.rmtree(cache, ignore_errors=True)
            for state in states:
                kb = peak_kb(helm_run(EMBEDDED[part], args.suite, args.phases),
                             run_folder(work, f"{part}-{state}"),
                             {**env, "SYNTAXGYM_HELM_CACHE": str(cache)})
                copy = next((cache / "weights").iterdir())
                print(f"{EMBEDDED[part]} {state}: {kb:,} kB (fp32 weights "
                      f"{weights_mb(copy):,.0f} MB; {against_bound(kb, weights_mb(copy))})",
                      flush=True)
        elif part in ("masked", "seq2seq"):
            name, make = (MASKED, masked_model) if part == "masked" else (SEQ2SEQ, seq2seq_model)
            folder = make(work / name.split("/")[1])
            here = run_folder(work, part)
            subprocess.run([str(BIN / "syntaxgym-helm"), "model", "add", str(folder), "--name",
                            name], cwd=here, env=env, check=True, stdout=subprocess.DEVNULL)
            kb = peak_kb(helm_run(name, args.suite, args.phases), here,
                         {**env, "SYNTAXGYM_HELM_CACHE": str(work / f"cache-{part}")})
            print(f"{name}: {kb:,} kB (fp32 weights {weights_mb(folder):,.0f} MB; "
                  f"{against_bound(kb, weights_mb(folder))})", flush=True)
        else:
            raise SystemExit(f"unknown part {part!r}")


#: The engine's set-up steps, each reported with the memory before and after it (``--phases``).
TRACED = ("syntaxgym_helm.clients.local.model_loading:_load",
          "syntaxgym_helm.clients.local.model_loading:_save_streamed",
          "syntaxgym_helm.clients.local.model_loading:load_model_and_tokenizer",
          "transformers:AutoTokenizer.from_pretrained",
          "transformers:AutoModelForCausalLM.from_pretrained",
          "syntaxgym_helm.clients.local.forward_passes:PlainPasses.one_pass",
          "syntaxgym_helm.clients.local.forward_passes:SharedPasses.run",
          "syntaxgym_helm.clients.local.logprob_engine:LogprobEngine.__init__",
          "syntaxgym_helm.clients.masked.client:MaskedLMClient._load",
          "syntaxgym_helm.clients.masked.client:MaskedLMClient._score",
          "syntaxgym_helm.clients.masked.pll:encode_sentences",
          "syntaxgym_helm.clients.masked.pll:TargetLogits.__call__",
          "syntaxgym_helm.clients.masked.pll:chosen_logprobs")


def traced(name: str, function, status):
    """``function``, printing the memory before and after each call (the first 12 calls)."""
    calls = [0]

    def wrapper(*args, **kwargs):
        calls[0] += 1
        if calls[0] > 12:
            return function(*args, **kwargs)
        rss, hwm = status()
        print(f"[phases]   {name.rpartition(':')[2]} starts: now {rss} kB, peak {hwm:,} kB",
              file=sys.stderr, flush=True)
        try:
            return function(*args, **kwargs)
        finally:
            rss, hwm = status()
            print(f"[phases]   {name.rpartition(':')[2]} ends: now {rss} kB, peak {hwm:,} kB",
                  file=sys.stderr, flush=True)

    return wrapper


def child(argv: list[str]) -> None:
    """``helm-run argv`` in this process, printing each log line at which the peak rose."""
    import logging

    def status() -> tuple[str, int]:
        """The resident memory now (kB, anonymous and file pages apart), and its peak so far."""
        fields = {key: int(value.split()[0]) for key, value in (
            line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines()
            if line.startswith(("VmRSS", "VmHWM", "RssAnon", "RssFile")))}
        return (f"{fields['VmRSS']:,} (anonymous {fields['RssAnon']:,}, file "
                f"{fields['RssFile']:,})", fields["VmHWM"])

    class Phases(logging.Handler):
        peak = 0

        def emit(self, record: logging.LogRecord) -> None:
            rss, hwm = status()
            if hwm > self.peak:
                print(f"[phases] peak {hwm:>9,} kB  now {rss} kB  before: "
                      f"{record.getMessage()[:110]}", file=sys.stderr, flush=True)
                self.peak = hwm

    logging.getLogger("helm").addHandler(Phases())
    for target in TRACED:
        module_name, _, attribute = target.rpartition(":")
        owner: object = importlib.import_module(module_name)
        *path, name = attribute.split(".")
        for part in path:
            owner = getattr(owner, part)
        setattr(owner, name, traced(target, getattr(owner, name), status))
    from helm.benchmark.run import main as helm_main

    sys.argv = ["helm-run", *argv]
    helm_main()
    rss, hwm = status()
    print(f"[phases] peak {hwm:>9,} kB  now {rss} kB  at the end", file=sys.stderr)
    for size, name in largest_mappings():
        print(f"[phases]   resident at the end: {size:>9,} kB {name}", file=sys.stderr)


def largest_mappings(count: int = 8) -> list[tuple[int, str]]:
    """The resident kB of this process's largest mappings (``/proc/self/smaps``), anonymous
    memory as one."""
    sizes: dict[str, int] = {}
    name = "[anonymous]"
    for line in Path("/proc/self/smaps").read_text().splitlines():
        parts = line.split()
        if "-" in parts[0] and len(parts) >= 5 and not parts[0].endswith(":"):
            name = parts[5] if len(parts) > 5 and parts[5].startswith("/") else "[anonymous]"
        elif parts[0] == "Rss:":
            sizes[name] = sizes.get(name, 0) + int(parts[1])
    return sorted(((kb, where) for where, kb in sizes.items()), reverse=True)[:count]


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2:])
    else:
        main()
