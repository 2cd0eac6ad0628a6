"""Reports over damaged output: a run whose ``scenario_state.json`` was cut off or deleted is
named in ``summary.md`` with the reason, and every mean over fewer suites than were run says so.

Before, ``report`` left such runs out of every table in silence (a warning among the progress
output at most), and the SG score covered fewer suites without a word (0.719 became 0.721,
0.764 or 0.789 depending on the run lost).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from fault_helpers import BIN, ROOT, private_env, syntaxgym_helm
from script_processes import run_script
from syntaxgym_helm.harness.scored_items import FILE_NAME as SCORED_ITEMS

BLIMP_OUTPUT = ROOT / "tests" / "fixtures" / "blimp_run"
NUMBER_PREP_OUTPUT = ROOT / "tests" / "fixtures" / "number_prep_run"
SMOLLM_RUN = "syntaxgym:suite={suite},model=syntaxgym_smollm2-135m-instruct-q4_1"

pytestmark = pytest.mark.limit(300)  # each test runs `syntaxgym-helm report` (seconds)


def _report(output: Path) -> tuple[subprocess.CompletedProcess, str]:
    done = syntaxgym_helm("report", str(output))
    summaries = list((output / "syntaxgym_report").glob("*/summary.md"))
    return done, summaries[0].read_text() if summaries else ""


def _row(summary: str, label: str) -> str:
    return next(line for line in summary.splitlines() if line.startswith(f"| {label}"))


def test_blimp_runs_cut_off_or_deleted_are_named_and_the_means_marked(tmp_path: Path) -> None:
    output = Path(shutil.copytree(BLIMP_OUTPUT, tmp_path / "benchmark_output"))
    runs = output / "runs" / "blimp_fixture"
    # The metric could not keep its items, and a disk filled up while HELM wrote its requests.
    cut = runs / SMOLLM_RUN.format(suite="blimp_adjunct_island") / "scenario_state.json"
    (cut.parent / SCORED_ITEMS).unlink()
    os.truncate(cut, cut.stat().st_size // 2)
    # Interrupted before HELM wrote its last file.
    (runs / SMOLLM_RUN.format(suite="blimp_only_npi_scope") / "per_instance_stats.json").unlink()
    done, summary = _report(output)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "**2 runs could not be read** and are left out of every table" in summary
    assert "blimp_adjunct_island): scenario_state.json is cut off or not JSON" in summary
    assert "blimp_only_npi_scope): per_instance_stats.json is missing" in summary
    overall = _row(summary, "**overall**")
    assert "(3 of 5 paradigms; 2 runs unreadable)" in overall, overall
    assert "2 run(s) could not be read" in done.stderr


def test_nothing_readable_is_an_error_naming_each_run_and_why(tmp_path: Path) -> None:
    output = Path(shutil.copytree(NUMBER_PREP_OUTPUT, tmp_path / "benchmark_output"))
    (stats,) = output.glob("runs/*/*/per_instance_stats.json")
    stats.write_text(stats.read_text()[:1000])  # a disk filled up: helm-run failed
    done, summary = _report(output)
    assert done.returncode == 2 and not summary
    assert "none of the 1 run(s) could be read" in done.stderr
    assert "number_prep): per_instance_stats.json is cut off or not JSON" in done.stderr
    assert "so the run did not finish" in done.stderr


def test_a_run_interrupted_before_writing_anything_is_named(tmp_path: Path) -> None:
    output = Path(shutil.copytree(NUMBER_PREP_OUTPUT, tmp_path / "benchmark_output"))
    (run,) = output.glob("runs/*/syntaxgym:*")
    (run.parent / SMOLLM_RUN.format(suite="mvrr")).mkdir()  # HELM made it, then was stopped
    done, summary = _report(output)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "mvrr): its folder is empty: the run did not finish" in summary
    assert "| mvrr | unreadable |" in summary
    assert "(1 of 2 suites; 1 run unreadable)" in _row(summary, "**SG score**")


@pytest.mark.slow
@pytest.mark.limit(1500)
def test_an_sg_score_over_fewer_suites_than_were_run_says_so(tmp_path: Path,
                                                            smollm2_weights: Path) -> None:
    """Real runs of three SG suites; one cut off, one deleted, one without its requests."""
    from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M

    suites = ("number_prep", "mvrr", "fgd_subject")
    entries = [f"syntaxgym:suite={suite},model={SMOLLM2_135M.syntaxgym_name}" for suite in suites]
    done = run_script([BIN / "helm-run", "--run-entries", *entries, "--suite", "damaged",
                       "--max-eval-instances", "3"], cwd=tmp_path,
                      env=private_env(tmp_path / "cache", smollm2_weights), timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    output = tmp_path / "benchmark_output"
    runs = output / "runs" / "damaged"
    # A report reads the items as the metric scored them (syntaxgym_scored_items.json) and falls
    # back on scenario_state.json: a run is lost only when both are.
    for name in (SCORED_ITEMS, "scenario_state.json"):
        os.truncate(runs / SMOLLM_RUN.format(suite="mvrr") / name, 4096)
        (runs / SMOLLM_RUN.format(suite="fgd_subject") / name).unlink()
    # number_prep loses only its requests' results: its scored items still hold every item.
    (runs / SMOLLM_RUN.format(suite="number_prep") / "scenario_state.json").unlink()
    done, summary = _report(output)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "(1 of 3 suites; 2 runs unreadable)" in _row(summary, "**SG score**")
    assert "| mvrr | unreadable |" in summary and "| fgd_subject | unreadable |" in summary
    assert "(0 of 1 suites; 1 run unreadable)" in _row(summary, "circuit: Garden-Path Effects")
    assert "number_prep | 3/3 |" in summary


def test_compare_says_which_runs_it_could_not_read(tmp_path: Path) -> None:
    damaged = Path(shutil.copytree(BLIMP_OUTPUT, tmp_path / "a"))
    runs = damaged / "runs" / "blimp_fixture"
    (runs / SMOLLM_RUN.format(suite="blimp_adjunct_island") / "per_instance_stats.json").unlink()
    done = syntaxgym_helm("compare", str(runs), str(BLIMP_OUTPUT / "runs" / "blimp_fixture"),
                          "--same-weights", "--model-a", "syntaxgym/smollm2-135m-instruct-q4_1",
                          "--model-b", "syntaxgym/smollm2-135m-instruct-q4_1")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("**1 run(s) could not be read and are not compared:**")
    assert "blimp_adjunct_island): per_instance_stats.json is missing" in done.stdout


@pytest.mark.slow
@pytest.mark.limit(1500)
def test_runs_that_would_share_a_cell_are_told_apart_in_every_table(
        tmp_path: Path, smollm2_weights: Path) -> None:
    """One model's runs of two files of one suite (items 1-3 in one, 4-6 in the other: equal
    headers, no item in common), and of one of them again with ties=pass, in one run suite.
    Before: summary.md and accuracy.csv showed one run (3 items), while predictions.csv held 9
    and the ties line said "0 of 9 scored items"."""
    import csv
    import json

    from fixtures import HU2020_DIR
    from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M

    suite = json.loads((HU2020_DIR / "number_prep.json").read_text())
    files = []
    for folder, numbers in (("first", range(1, 4)), ("second", range(4, 7))):
        (tmp_path / folder).mkdir()
        part = {**suite, "items": [i for i in suite["items"] if i["item_number"] in numbers]}
        files.append(tmp_path / folder / "agreement.json")
        files[-1].write_text(json.dumps(part))
    model = SMOLLM2_135M.syntaxgym_name
    entries = [f"syntaxgym:suite={files[0]},model={model}",
               f"syntaxgym:suite={files[1]},model={model}",
               f"syntaxgym:suite={files[1]},ties=pass,model={model}"]
    done = run_script([BIN / "helm-run", "--run-entries", *entries, "--suite", "cells",
                       "--max-eval-instances", "3"], cwd=tmp_path,
                      env=private_env(tmp_path / "cache", smollm2_weights), timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    output = tmp_path / "benchmark_output"
    done, summary = _report(output)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "warning: 3 runs would share a cell of the tables" in done.stderr
    report = output / "syntaxgym_report" / "cells"
    with (report / "accuracy.csv").open() as stream:
        accuracy = [row for row in csv.DictReader(stream) if row["measure"] == "accuracy"]
    with (report / "predictions.csv").open() as stream:
        predictions = list(csv.DictReader(stream))
    cells = {(row["model"], row["suite"]): int(row["items"]) for row in accuracy}
    assert cells == {(f"{model} [ties=fail]", f"agreement [{files[0]}]"): 3,
                     (f"{model} [ties=fail]", f"agreement [{files[1]}]"): 3,
                     (f"{model} [ties=pass]", f"agreement [{files[1]}]"): 3}
    assert len({(p["model"], p["suite"], p["item"]) for p in predictions}) == 9
    assert f"{model} [ties=fail]: 0 of 6 scored items" in summary
    assert f"{model} [ties=pass]: 0 of 3 scored items" in summary
    assert f"| agreement [{files[0]}] | 3/3 | – |" in summary


def test_a_report_into_the_folder_of_an_earlier_one_leaves_none_of_its_files(
        tmp_path: Path) -> None:
    """``report --sentence-score char``, then ``report``: before, each suite's folder held both
    reports' annotated suites and tables (the char score's beside the sum's that summary.md
    describes). A file the reports did not write stays."""
    output = Path(shutil.copytree(BLIMP_OUTPUT, tmp_path / "benchmark_output"))
    report = output / "syntaxgym_report" / "blimp_fixture"
    done = syntaxgym_helm("report", str(output), "--sentence-score", "char")
    assert done.returncode == 0, done.stderr[-2000:]
    suite = report / "blimp_anaphor_number_agreement"
    assert any("sentence_score_char" in path.name for path in suite.iterdir())
    (suite / "my_notes.txt").write_text("mine")
    done, summary = _report(output)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "sentence score=char" not in summary
    left = sorted(path.relative_to(report).as_posix() for path in report.rglob("*")
                  if path.is_file())
    assert not [name for name in left if "sentence_score" in name], left
    listed = (report / ".syntaxgym-report-files").read_text().splitlines()
    assert sorted([*listed, ".syntaxgym-report-files",
                   "blimp_anaphor_number_agreement/my_notes.txt"]) == left
