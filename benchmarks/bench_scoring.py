"""Benchmark: scoring the 34 SyntaxGym suites of Hu et al. (2020) with SmolLM2-135M (fp32).

Three ways to get every sentence's token logprobs (after the beginning-of-text token), each in a
process of its own (timed, peak memory by ``/usr/bin/time -v``):

(a) ``raw``: the floor without HELM or the plugin, a plain script: load the GGUF
    with transformers (``from_pretrained(folder, gguf_file=...)``, dequantised to float32), then
    plain forward passes over the same sentences, 32 per batch, sorted by length, right padded;
(a-cached) as (a), but the weights come from the plugin's dequantised copy (what the plugin
    itself loads after its first use), so the load takes seconds instead of about 30;
(b) ``helm-run`` with the plugin's SyntaxGymClient (``model=syntaxgym/<key>``);
(c) ``helm-run`` with HELM's HuggingFaceClient (``model=helmhf/<key>``,
    ``prefix=<|endoftext|>``).

Part ``b-cold`` is (b) on its very first use: the dequantised copy of the weights does not
exist yet (``SYNTAXGYM_HELM_CACHE`` names an empty folder), so the GGUF is dequantised and saved.
Optional parts ``b-np4`` and ``b-np32`` run (b) with the plugin's prefetch turned off
(``SYNTAXGYM_HELM_PREFETCH=0``), so that batches hold only what 4 or 32 HELM threads send.

Scoring time is the forward-pass loop for (a) and HELM's ``Executor.execute`` blocks for the
helm-run parts (model loading excluded). Prediction outcomes are compared item by item: (b) must
equal (a); where (c) differs from (b) the items are listed.

Not a test. Run from the project root, e.g. (about 16 minutes on 2 CPU cores: (c) alone takes 11)::

    python benchmarks/bench_scoring.py --output BENCHMARKS.md

(the report becomes a section of BENCHMARKS.md; the file's other sections stay). Another torch
release: the python of a ``make test-compat`` environment runs the script (its ``helm-run``
too), with ``--section`` naming a section of its own::

    .compat/torch-2.15.0-transformers-5.24.0/bin/python benchmarks/bench_scoring.py \
        --parts a,b --repeat 2 --section "torch 2.15" --output BENCHMARKS.md

``--parts a,b,b-np4`` picks parts, ``--suites number_prep,mvrr`` suites; ``--repeat 2`` runs
every part twice, interleaved, and reports each part's fastest run (on a shared machine the
least disturbed one); ``--repeat-only a,b`` repeats only those parts. ``b-warm`` runs (b)
again in (b)'s folder (request cache full);
``run-before`` and ``run-after`` time ``make run``'s helm-run (built-in suites, both embedded
models, cold cache) with an older checkout (``--before``, default /tmp/before) and this one.

Every part's whole process is broken down by HELM phase from its log (:func:`helm_phases`).
Token logprobs of the helm-run parts are compared with (a)'s.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from markdown_sections import commit, machine, write_section

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SUITES_DIR = ROOT.parent / "shared" / "suites" / "hu2020"
BIN = Path(sys.executable).parent
BOS = "<|endoftext|>"
SCRIPT = "benchmarks/bench_scoring.py"

Outcomes = dict[str, dict[int, list[bool | None] | None]]  # suite -> item -> per prediction


# ------------------------------------------------------------------------------------------------
# (a) the raw floor, in a child process
# ------------------------------------------------------------------------------------------------

def raw_floor(suites_dir: Path, suites: list[str], batch_size: int, result_path: Path,
              weights: str) -> None:
    """Score every sentence with plain batched passes; ``weights``: ``gguf`` (load the GGUF file
    with transformers, as a plain script does) or ``cached`` (the plugin's dequantised copy)."""
    import torch

    from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M
    from syntaxgym_helm.core.item_evaluation import TokenScore, evaluate_item
    from syntaxgym_helm.core.suite import load_suite

    started = time.time()
    if weights == "gguf":
        from transformers import AutoModelForCausalLM, AutoTokenizer

        folder, gguf_file = str(SMOLLM2_135M.directory()), SMOLLM2_135M.gguf_file
        tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=gguf_file)
        model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=gguf_file,
                                                     dtype=torch.float32).eval()
    else:
        from syntaxgym_helm.clients.local.model_loading import load_model_and_tokenizer

        model, tokenizer = load_model_and_tokenizer(str(SMOLLM2_135M.directory()),
                                                    gguf_file=SMOLLM2_135M.gguf_file,
                                                    device="cpu")
    load_s = time.time() - started
    bos_id = tokenizer.convert_tokens_to_ids(BOS)
    loaded = {name: load_suite(suites_dir / f"{name}.json") for name in suites}
    sentences = sorted({c.sentence for s in loaded.values() for i in s.items for c in i.conditions})
    encodings = tokenizer(sentences, add_special_tokens=False, return_offsets_mapping=True)
    ids = {s: [bos_id] + list(e) for s, e in zip(sentences, encodings["input_ids"], strict=False)}
    texts: dict[str, list[str]] = {}
    for sentence, offsets in zip(sentences, encodings["offset_mapping"], strict=False):
        ends = [end for _, end in offsets]
        ends[-1] = len(sentence)
        texts[sentence] = [BOS] + [
            sentence[a:b] for a, b in zip([0] + ends[:-1], ends, strict=False)
        ]

    all_sentences = [c.sentence for s in loaded.values() for i in s.items for c in i.conditions]
    order = sorted(all_sentences, key=lambda s: len(ids[s]))  # duplicates too: a plain floor
    logprobs: dict[str, list[float]] = {}
    positions = 0
    started = time.time()
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            batch = order[start: start + batch_size]
            length = max(len(ids[s]) for s in batch)
            positions += length * len(batch)
            input_ids = torch.full((len(batch), length), bos_id)
            attention = torch.zeros(len(batch), length, dtype=torch.long)
            for row, sentence in enumerate(batch):
                input_ids[row, : len(ids[sentence])] = torch.tensor(ids[sentence])
                attention[row, : len(ids[sentence])] = 1
            logits = model(input_ids=input_ids, attention_mask=attention).logits
            chosen = torch.log_softmax(logits.float(), dim=-1)[:, :-1].gather(
                -1, input_ids[:, 1:, None])[..., 0]
            for row, sentence in enumerate(batch):
                logprobs[sentence] = [0.0] + chosen[row, : len(ids[sentence]) - 1].tolist()
    scoring_s = time.time() - started

    outcomes: Outcomes = {}
    for name, suite in loaded.items():
        outcomes[name] = {}
        for item in suite.items:
            results = {
                c.condition_name: [
                    TokenScore(t, lp)
                    for t, lp in zip(texts[c.sentence], logprobs[c.sentence], strict=False)
                ]
                for c in item.conditions
            }
            score = evaluate_item(suite, item, results)
            outcomes[name][item.item_number] = (
                [p.holds for p in score.predictions] if score.scorable else None)
    result_path.write_text(json.dumps({
        "load_s": load_s, "scoring_s": scoring_s, "scoring_from": started,
        "scoring_to": started + scoring_s, "sentences": len(all_sentences),
        "distinct_sentences": len(set(order)), "tokens": sum(len(ids[s]) for s in all_sentences),
        "positions": positions, "outcomes": outcomes, "logprobs": logprobs}))


# ------------------------------------------------------------------------------------------------
# helm-run parts and their logs
# ------------------------------------------------------------------------------------------------

_LOG_LINE = re.compile(r"^\S+ \S+ +[A-Z]+ (?P<indent> *)(?P<message>.*)$")
# HELM writes a block's time as 12.3s, 1m12.3s or 1h0m12.3s (hierarchical_logger.format_time).
_CLOSE = re.compile(r"^\} \[(?:(?P<hours>\d+)h)?(?:(?P<minutes>\d+)m)?(?P<seconds>[0-9.]+)s\]")


def _closing_seconds(closing: re.Match) -> float:
    return (int(closing["hours"] or 0) * 3600 + int(closing["minutes"] or 0) * 60
            + float(closing["seconds"]))


def blocks(log: str) -> list[tuple[str, float, tuple[str, ...]]]:
    """HELM's ``htrack`` blocks in a log: (name, seconds, names of the enclosing blocks), from the
    ``name {`` line and its ``} [12.3s]`` line at the same indentation."""
    found: list[tuple[str, float, tuple[str, ...]]] = []
    stack: list[tuple[int, str]] = []
    for line in log.splitlines():
        match = _LOG_LINE.match(line)
        if not match:
            continue
        indent, message = len(match["indent"]), match["message"].rstrip()
        closing = _CLOSE.match(message)
        if closing:
            while stack and stack[-1][0] > indent:
                stack.pop()
            if stack and stack[-1][0] == indent:
                _, name = stack.pop()
                found.append((name, _closing_seconds(closing), tuple(n for _, n in stack)))
        elif message.endswith("{"):
            stack.append((indent, message[:-1].strip()))
    return found


def scoring_seconds(log: str) -> tuple[float, float]:
    """Seconds in ``Executor.execute`` less model loading done inside it (HELM's
    HuggingFaceClient loads its model on the first request), and that loading time."""
    found = blocks(log)
    executing = sum(seconds for name, seconds, _ in found if name == "Executor.execute")
    loading = sum(seconds for name, seconds, outer in found
                  if name.startswith("Loading ") and "Executor.execute" in outer
                  and not any(o.startswith("Loading ") for o in outer))
    return executing - loading, loading


PHASES = ("start-up", "scenario", "adaptation", "execution", "metrics", "writing", "exit")
_STAMP = re.compile(r"^(\S+ \S+) ")
_INSIDE = {"scenario": ("scenario.get_instances", "DataPreprocessor.preprocess"),
           "adaptation": (".adapt",), "execution": ("Executor.execute",), "metrics": (" metrics",)}


def _timed_blocks(log: str) -> list[tuple[str, float, float, int]]:
    """HELM's ``htrack`` blocks with the epoch times of their opening and closing lines:
    (name, opened, closed, depth), in the order they close."""
    found: list[tuple[str, float, float, int]] = []
    stack: list[tuple[int, str, float]] = []
    for line in log.splitlines():
        match, stamp = _LOG_LINE.match(line), _STAMP.match(line)
        if not match or not stamp:
            continue
        try:
            at = dt.datetime.strptime(stamp.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()
        except ValueError:
            continue
        indent, message = len(match["indent"]), match["message"].rstrip()
        if _CLOSE.match(message):
            while stack and stack[-1][0] > indent:
                stack.pop()
            if stack and stack[-1][0] == indent:
                _, name, opened = stack.pop()
                found.append((name, opened, at, len(stack)))
        elif message.endswith("{"):
            stack.append((indent, message[:-1].strip(), at))
    return found


def helm_phases(log: str, started: float, ended: float) -> dict[str, float]:
    """The whole process of a helm-run by HELM phase, from its log's time stamps: start-up
    (process start to the first ``Running`` block: imports, plugin, run specs); inside each run
    block, scenario (instances, preprocessing), adaptation, execution (``Executor.execute`` and
    the time since the block before it: the local engine's prefetch, which loads the model, runs
    just before HELM's block), metrics, and writing (the rest: output files); exit (after the
    last run block: caches committed, interpreter exit)."""
    found = _timed_blocks(log)
    runs = [(o, c, d) for n, o, c, d in found if n.startswith("Running syntaxgym")]
    phases = dict.fromkeys(_INSIDE, 0.0)
    for opened, closed, depth in runs:
        inner = sorted((o, c, n) for n, o, c, d in found
                       if d == depth + 1 and opened <= o <= closed)
        previous = opened
        for o, c, name in inner:
            for phase, ends in _INSIDE.items():
                if any(name.endswith(end) for end in ends):
                    phases[phase] += c - (previous if phase == "execution" else o)
            previous = c
    phases["writing"] = sum(c - o for o, c, _ in runs) - sum(phases.values())
    first = min((o for o, _, _ in runs), default=started)
    last = max((c for _, c, _ in runs), default=ended)
    return {"start-up": first - started, **phases, "exit": ended - last}


def helm_outcomes(output: Path, suite_name: str, by_run: bool = False) -> Outcomes:
    outcomes: Outcomes = {}
    for run in sorted((output / "runs" / suite_name).glob("syntaxgym:*")):
        suite = run.name if by_run else re.search(r"suite=([^,]+)", run.name).group(1)
        outcomes[suite] = {}
        for instance in json.loads((run / "per_instance_stats.json").read_text()):
            item = int(instance["instance_id"].removeprefix("item"))
            stats = {s["name"]["name"]: s["mean"] for s in instance["stats"]
                     if not s["name"].get("perturbation")}
            if stats.get("syntaxgym_unscorable"):
                outcomes[suite][item] = None
                continue
            found = sorted((int(m.group(1)), bool(value)) for name, value in stats.items()
                           if (m := re.fullmatch(r"syntaxgym_prediction_(\d+)_accuracy", name)))
            outcomes[suite][item] = [holds for _, holds in found]
    return outcomes


def helm_logprobs(output: Path, suite_name: str, prefix: str | None) -> dict[str, list[float]]:
    """sentence -> its token logprobs (beginning-of-text token first), from the runs'
    ``scenario_state.json`` (a run-entry ``prefix`` is taken off the prompt)."""
    found: dict[str, list[float]] = {}
    for path in (output / "runs" / suite_name).glob("syntaxgym:*/scenario_state.json"):
        for state in json.loads(path.read_text())["request_states"]:
            result = state.get("result") or {}
            if not result.get("success") or not result.get("completions"):
                continue
            sentence = state["request"]["prompt"].removeprefix(prefix or "")
            found[sentence] = [t["logprob"] for t in result["completions"][0]["tokens"]]
    return found


def timed(command: list[str], cwd: Path, env: dict[str, str], log_path: Path) -> dict[str, Any]:
    """Run ``command`` under ``/usr/bin/time -v``: wall seconds, peak RSS, its output."""
    time_bin = shutil.which("time") or "/usr/bin/time"
    started = time.time()
    with open(log_path, "w") as log:
        done = subprocess.run([time_bin, "-v", *command], cwd=cwd, env=env, stdout=log,
                              stderr=subprocess.STDOUT, text=True)
    wall = time.time() - started
    text = log_path.read_text()
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command[:3])}... failed; see {log_path}")
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    user = re.search(r"User time \(seconds\): ([0-9.]+)", text)
    system = re.search(r"System time \(seconds\): ([0-9.]+)", text)
    cpu = float(user.group(1)) + float(system.group(1)) if user and system else float("nan")
    return {"wall_s": wall, "peak_rss_mb": int(peak.group(1)) / 1024 if peak else None,
            "cpu_s": cpu, "log": text, "started": started, "ended": started + wall}


def run_helm(kind: str, model: str, prefix: str | None, suites: list[str], threads: int,
             work: Path, env: dict[str, str], folder: Path | None = None) -> dict[str, Any]:
    """One helm-run of ``suites`` in the fresh folder ``work/kind`` (HELM's request cache starts
    empty), or in ``folder`` (an earlier part's: its request cache is full)."""
    suite_name = f"bench-{kind}-{dt.datetime.now():%Y%m%d-%H%M%S}"
    entries = [f"syntaxgym:suite={s}{',prefix=' + prefix if prefix else ''},model={model}"
               for s in suites]
    command = [str(BIN / "helm-run"), "--run-entries", *entries, "--suite", suite_name,
               "--max-eval-instances", "100000", "--num-threads", str(threads)]
    if folder is None:
        folder = work / kind
        folder.mkdir(parents=True)
    # This checkout's plugin, whatever checkout the environment has installed.
    result = timed(command, folder, {**env, "PYTHONPATH": str(ROOT)}, work / f"{kind}.log")
    result["phases"] = helm_phases(result["log"], result["started"], result["ended"])
    scoring, loading = scoring_seconds(result["log"])
    shown = [f"syntaxgym:suite={suites[0]}{',prefix=' + prefix if prefix else ''},model={model}"]
    if len(suites) > 1:
        shown.append(f"... ({len(suites)} run entries, one per suite)")
    result.update(
        command=" ".join(["helm-run", "--run-entries", *shown, *command[-6:]]),
        scoring_s=scoring,
        model_load_in_execute_s=loading,
        outcomes=helm_outcomes(folder / "benchmark_output", suite_name),
        logprobs=helm_logprobs(folder / "benchmark_output", suite_name, prefix),
        summaries=[line.split("INFO", 1)[-1].strip() for line in result["log"].splitlines()
                   if "this run scored" in line],
    )
    return result


# ------------------------------------------------------------------------------------------------
# Report
# ------------------------------------------------------------------------------------------------

def run_builtin(kind: str, tree: Path, work: Path, env: dict[str, str]) -> dict[str, Any]:
    """``make run``'s helm-run: the built-in conf, both embedded models, cold request cache,
    with the plugin's code from ``tree`` (this checkout, or an older one on PYTHONPATH)."""
    from syntaxgym_helm.clients.embedded.catalogue import installed_syntaxgym_names

    suite_name = f"bench-{kind}"
    conf = tree / "run_specs/syntaxgym_builtin.conf"
    command = [str(BIN / "helm-run"), "--conf-paths", str(conf),
               "--models-to-run", *installed_syntaxgym_names(), "--suite", suite_name,
               "--max-eval-instances", "100000"]
    folder = work / kind
    folder.mkdir(parents=True)
    result = timed(command, folder, {**env, "PYTHONPATH": str(tree)}, work / f"{kind}.log")
    result["phases"] = helm_phases(result["log"], result["started"], result["ended"])
    result.update(scoring_s=scoring_seconds(result["log"])[0], logprobs={},
                  outcomes=helm_outcomes(folder / "benchmark_output", suite_name, by_run=True),
                  command=f"PYTHONPATH={tree} " + " ".join(["helm-run", *command[1:]]))
    return result


def compare(x: Outcomes, y: Outcomes) -> list[str]:
    differences = []
    for suite in sorted(set(x) | set(y)):
        for item in sorted(set(x.get(suite, {})) | set(y.get(suite, {}))):
            a, b = x.get(suite, {}).get(item, "missing"), y.get(suite, {}).get(item, "missing")
            if a != b:
                differences.append(f"{suite} item {item}: {a} vs {b}")
    return differences


def logprob_differences(x: dict[str, list[float]], y: dict[str, list[float]]) -> dict[str, Any]:
    """Per-token |x - y| over the sentences both scored with the same number of tokens (the
    first, beginning-of-text token left out: 0.0 by convention in both)."""
    same = [s for s in x if s in y and len(x[s]) == len(y[s])]
    differences = [abs(a - b) for s in same for a, b in zip(x[s][1:], y[s][1:], strict=False)]
    worst = max(differences, default=float("nan"))
    return {"sentences": len(same), "other_length": sum(1 for s in x if s in y) - len(same),
            "tokens": len(differences), "max": worst,
            "mean": sum(differences) / len(differences) if differences else float("nan"),
            "over_1e-4": sum(d > 1e-4 for d in differences)}


def accuracy(outcomes: Outcomes) -> tuple[int, int, int]:
    items = [o for suite in outcomes.values() for o in suite.values()]
    scorable = [o for o in items if o is not None]
    return sum(all(o) for o in scorable), len(scorable), len(items)


PARTS = {
    # key: (label, model attribute, run-entry prefix, --num-threads, prefetch)
    "a": ("(a) raw floor: transformers loads the GGUF, batch 32, length-sorted, no HELM", None,
          None, None, None),
    "a-cached": ("(a-cached) as (a), weights read from the plugin's dequantised copy", None, None,
                 None, None),
    "b": ("(b) helm-run, SyntaxGymClient (`syntaxgym/...`)", "syntaxgym_name", None, 4, True),
    "c": ("(c) helm-run, HELM HuggingFaceClient (`helmhf/...`, prefix=<\\|endoftext\\|>)",
          "hf_name", BOS, 4, None),
    "b-cold": ("(b-cold) as (b), first use: no dequantised copy of the weights yet",
               "syntaxgym_name", None, 4, True),
    "b-np4": ("(b') as (b), prefetch off: batches of what 4 HELM threads send", "syntaxgym_name",
              None, 4, False),
    "b-np32": ("(b'') as (b), prefetch off, --num-threads 32", "syntaxgym_name", None, 32, False),
    "b-warm": ("(b-warm) as (b), again in (b)'s folder: request cache full", "syntaxgym_name",
               None, 4, True),
    "run-before": ("(run-before) `make run`'s helm-run, code before (--before)", None, None, None,
                   None),
    "run-after": ("(run-after) `make run`'s helm-run, this checkout", None, None, None, None),
}
HU2020_PARTS = ("a", "a-cached", "b", "b-cold", "c", "b-np4", "b-np32", "b-warm")
RAW_PARTS = {"a": "gguf", "a-cached": "cached"}  # part -> where the floor's weights come from


def phase_table(parts: dict[str, dict[str, Any]]) -> list[str]:
    """The whole process of each part, by phase (seconds), with its ratio to each floor run."""
    floors = [key for key in RAW_PARTS if key in parts]
    lines = ["| part | whole process | " + "".join(f"vs ({f}) | " for f in floors)
             + " | ".join(PHASES) + " |",
             "|---|---:|" + "---:|" * (len(floors) + len(PHASES))]
    for key, part in parts.items():
        ratios = [f"{part['wall_s'] / parts[f]['wall_s']:.2f}x" if key in HU2020_PARTS else "-"
                  for f in floors]
        phases = part.get("phases", {})
        cells = [f"{phases[p]:.1f}" if p in phases else "-" for p in PHASES]
        lines.append(f"| {PARTS[key][0]} | {part['wall_s']:.1f} s | "
                     + "".join(f"{r} | " for r in ratios) + " | ".join(cells) + " |")
    return lines


def report(suites: list[str], suites_dir: Path, parts: dict[str, dict[str, Any]],
           load: tuple, load_after: tuple, section: str | None = None) -> str:
    lines = ["## Scoring speed: SyntaxGymClient, HELM's HuggingFaceClient and the raw floor "
             f"(hu2020 suites, SmolLM2-135M{f', {section}' if section else ''})", "",
             f"Run {dt.datetime.now():%Y-%m-%d %H:%M} with "
             f"`python benchmarks/bench_scoring.py {' '.join(sys.argv[1:])}` "
             "(`benchmarks/bench_scoring.py` describes the parts).", "",
             f"Commit {commit()}. Machine: {machine()}. Load average (1 / 5 / 15 min) before "
             "the run "
             f"{load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}, after it {load_after[0]:.2f} / "
             f"{load_after[1]:.2f} / {load_after[2]:.2f}: other work may have shared the 2 cores, "
             "so times are indicative.", "",
             f"Parts (a) to (b-warm): {len(suites)} suites of "
             f"`{os.path.relpath(suites_dir, ROOT)}`; "
             "SmolLM2-135M-Instruct (Q4_1 GGUF dequantised to float32), CPU. "
             "Each part runs in a process of its own; peak memory "
             "is its maximum resident set size (`/usr/bin/time -v`). Scoring time: the forward "
             "passes for (a), HELM's `Executor.execute` for the helm-run parts (model loading "
             "excluded); whole process: the command's wall time, model loading, HELM's start, "
             "adaptation and metrics included. HELM's request cache started empty for each part.",
             "",
             "Where the weights come from: (a) loads the GGUF file with transformers, as "
             "a plain script does (about 30 s: it converts the tokenizer and "
             "dequantises every tensor); (a-cached) and the helm-run parts read the plugin's "
             "dequantised copy (`~/.cache/syntaxgym_helm/weights`), which any earlier use of the "
             "plugin (`make test`, `make run`) has made; (b-cold) starts without it, as the "
             "plugin's very first run does.", "",
             "Whole process (start-up to exit, wall seconds), by phase: start-up is process "
             "start to HELM's first `Running` block (imports, plugin, run specs); scenario, "
             "adaptation, execution (model loading included), metrics and writing are HELM's "
             "log blocks inside the run blocks; exit is after the last run block. For (a): "
             "start-up is imports, model load and tokenization, execution the forward passes, "
             "exit the rest (outcomes, result file). The `make run` parts (built-in suites, "
             "both embedded models) are not compared with (a).", "",
             *phase_table(parts), "",
             "| part | scoring time | vs (a) | whole process | CPU time | peak memory | "
             "items passed | scoring time of each repetition |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]
    floor = parts.get("a", {}).get("scoring_s")
    for key, part in parts.items():
        ratio = (f"{part['scoring_s'] / floor:.2f}x" if floor and key in HU2020_PARTS
                 else "-")
        passed, scorable, total = accuracy(part["outcomes"])
        lines.append(f"| {PARTS[key][0]} | {part['scoring_s']:.1f} s | {ratio} | "
                     f"{part['wall_s']:.1f} s | {part['cpu_s']:.0f} s | "
                     f"{part['peak_rss_mb'] / 1024:.2f} GB | "
                     f"{passed}/{scorable} ({total - scorable} unscorable) | "
                     + ", ".join(f"{t:.1f} s" for t in part["repetitions"]) + " |")
    lines.append("")
    for key in [k for k in RAW_PARTS if k in parts]:
        a = parts[key]
        lines.append(f"({key}) scored {a['sentences']} sentences ({a['distinct_sentences']} "
                     f"distinct, {a['tokens']} tokens with the beginning-of-text token) computing "
                     f"{a['positions']} padded positions; its model load took {a['load_s']:.1f} s.")
    for key, part in parts.items():
        if not part.get("summaries"):
            continue
        totals = dict.fromkeys(("prompts", "tokens", "positions", "passes", "reused"), 0)
        for line in part["summaries"]:
            m = re.search(r"scored (\d+) prompts \((\d+) tokens\) computing (\d+) positions in "
                          r"(\d+) forward passes \((\d+) outputs read from stored", line)
            if m:
                for name, value in zip(totals, m.groups(), strict=False):
                    totals[name] += int(value)
        lines.append(f"{PARTS[key][0].split(' ')[0]} scored {totals['prompts']} prompts "
                     f"({totals['tokens']} tokens; identical prompts of a run once) computing "
                     f"{totals['positions']} positions in {totals['passes']} forward passes; "
                     f"{totals['reused']} outputs came from prefixes stored by earlier passes.")
    lines.append("")
    for key in [k for k in parts if k in HU2020_PARTS and k != "a"]:
        if "a" not in parts:
            break
        differences = compare(parts["a"]["outcomes"], parts[key]["outcomes"])
        if key == "c":
            continue
        lines.append(f"Prediction outcomes {PARTS[key][0].split(' ')[0]} vs (a): "
                     + ("identical on every item." if not differences else
                        f"{len(differences)} items differ:"))
        lines += [f"- {d}" for d in differences]
    lines.append("")
    if "a" in parts:
        lines.append("Token logprobs against (a) (every token after the beginning-of-text token "
                     "of every sentence both scored; nats):")
        lines.append("")
        for key in [k for k in parts if k in HU2020_PARTS and k != "a"]:
            d = logprob_differences(parts["a"]["logprobs"], parts[key]["logprobs"])
            lines.append(f"- {PARTS[key][0].split(' ')[0]}: {d['tokens']} tokens of "
                         f"{d['sentences']} sentences; max |difference| {d['max']:.2e}, mean "
                         f"{d['mean']:.2e}; {d['over_1e-4']} tokens differ by more than 1e-4"
                         + (f"; {d['other_length']} sentences tokenized differently, left out"
                            if d["other_length"] else ""))
        lines.append("")
    if "run-before" in parts and "run-after" in parts:
        differences = compare(parts["run-before"]["outcomes"], parts["run-after"]["outcomes"])
        lines.append(f"`make run` parts: {len(parts['run-after']['outcomes'])} runs; prediction "
                     "outcomes before vs after: " + ("identical on every item." if not differences
                                                     else f"{len(differences)} items differ:"))
        lines += [f"- {d}" for d in differences]
        lines.append("")
    if "b" in parts and "c" in parts:
        differences = compare(parts["b"]["outcomes"], parts["c"]["outcomes"])
        lines.append("Items where (b) and (c) differ (per-prediction outcomes, (b) vs (c)): "
                     + ("none." if not differences else f"{len(differences)}:"))
        lines += [f"- {d}" for d in differences]
        lines.append("")
    for key, part in parts.items():
        if "command" in part:
            lines.append(f"- {PARTS[key][0].split(' ')[0]}: `{part['command']}`"
                         + ("" if PARTS[key][4] is not False else
                            " with `SYNTAXGYM_HELM_PREFETCH=0`"))
    lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suites-dir", type=Path, default=DEFAULT_SUITES_DIR)
    parser.add_argument("--suites", help="comma-separated suite names (default: all in the dir)")
    parser.add_argument("--parts", default="a,b,c",
                        help=f"comma-separated, of {', '.join(PARTS)} (default: a,b,c)")
    parser.add_argument("--batch-size", type=int, default=32, help="(a)'s batch size")
    parser.add_argument("--repeat", type=int, default=1,
                        help="run the parts this many times, interleaved (a, b, c, a, b, c...); "
                        "each part's fastest run is reported (the least disturbed by other work)")
    parser.add_argument("--repeat-only", help="comma-separated: with --repeat, only these parts "
                        "run again (the others once, in the first round)")
    parser.add_argument("--workdir", type=Path, help="default: a new temporary folder")
    parser.add_argument("--output", type=Path, help="put the Markdown report in this file (as a "
                        "section of its own: the rest of the file is kept)")
    parser.add_argument("--before", type=Path, default=Path("/tmp/before"),
                        help="an older checkout of this project, for part run-before")
    parser.add_argument("--section", help="a section of its own in --output, named so (e.g. "
                        "'torch 2.15', run with that environment's python), beside the default "
                        "one instead of replacing it")
    parser.add_argument("--raw-child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--raw-weights", default="gguf", help=argparse.SUPPRESS)
    args = parser.parse_args()
    suites = (args.suites.split(",") if args.suites
              else sorted(p.stem for p in args.suites_dir.glob("*.json")))
    if args.raw_child:
        raw_floor(args.suites_dir, suites, args.batch_size, args.raw_child, args.raw_weights)
        return

    load = os.getloadavg()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="syntaxgym-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M

    runs: dict[str, list[dict[str, Any]]] = {key: [] for key in args.parts.split(",")}
    for repetition in range(args.repeat):
        for key in runs:
            if repetition and args.repeat_only and key not in args.repeat_only.split(","):
                continue
            label, attribute, prefix, threads, prefetch = PARTS[key]
            env = {**os.environ, "SYNTAXGYM_SUITES_DIR": str(args.suites_dir)}
            if prefetch is False:
                env["SYNTAXGYM_HELM_PREFETCH"] = "0"
            tag = key if args.repeat == 1 else f"{key}-{repetition + 1}"
            if key in ("run-before", "run-after"):
                result = run_builtin(tag, args.before if key == "run-before" else ROOT, work,
                                     env)
            elif key in RAW_PARTS:
                child = work / f"raw-{tag}.json"
                result = timed([sys.executable, __file__, "--suites-dir", str(args.suites_dir),
                                "--suites", ",".join(suites), "--batch-size",
                                str(args.batch_size), "--raw-child", str(child),
                                "--raw-weights", RAW_PARTS[key]], work, env,
                               work / f"{tag}.log")
                result.update(json.loads(child.read_text()))
                result["outcomes"] = {suite: {int(item): holds for item, holds in items.items()}
                                      for suite, items in result["outcomes"].items()}
                result["phases"] = {"start-up": result["scoring_from"] - result["started"],
                                    "execution": result["scoring_s"],
                                    "exit": result["ended"] - result["scoring_to"]}
            elif key == "b-warm":
                b_tag = "b" if args.repeat == 1 else f"b-{repetition + 1}"
                if not (work / b_tag).is_dir():
                    raise SystemExit("part b-warm needs part b before it (--parts ...,b,b-warm)")
                result = run_helm(tag, getattr(SMOLLM2_135M, attribute), prefix, suites,
                                  threads, work, env, folder=work / b_tag)
            else:
                if key == "b-cold":  # an empty cache folder: no dequantised weights yet
                    env["SYNTAXGYM_HELM_CACHE"] = str(work / f"{tag}-empty-cache")
                result = run_helm(tag, getattr(SMOLLM2_135M, attribute), prefix, suites,
                                  threads, work, env)
            runs[key].append(result)
            print(f"{label} [{repetition + 1}/{args.repeat}]: {result['scoring_s']:.1f}s "
                  f"scoring, {result['wall_s']:.1f}s in all, {result['peak_rss_mb']:.0f} MB",
                  flush=True)
    parts: dict[str, dict[str, Any]] = {}
    for key, results in runs.items():
        parts[key] = min(results, key=lambda r: r["wall_s"])
        parts[key]["repetitions"] = [r["scoring_s"] for r in results]
    text = report(suites, args.suites_dir, parts, load, os.getloadavg(), args.section)
    print(text)
    if args.output:
        write_section(args.output, text, f"{SCRIPT} ({args.section})" if args.section else SCRIPT)
    print(f"work folder: {work}")


if __name__ == "__main__":
    main()
