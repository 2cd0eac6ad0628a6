"""Intervals, paired tests and the items-scored count on real ``helm-run`` output (the session's
runs of ``test_report.py``: number_prep and fgd_subject, 8 items each, SmolLM2-135M through two
backends and under two scoring conditions, Gemma-3-270M where installed), checked against HELM's
own per-item stats (``per_instance_stats.json``) and intervals computed here from those counts."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from scipy.stats import binomtest

from syntaxgym_helm.core.uncertainty import (
    bootstrap_interval,
    mean_of_means,
    paired_bootstrap,
    wilson_interval,
)
from syntaxgym_helm.report.paired_tests import HOW_TO_READ
from test_report import (
    GEMMA,
    MAX_ITEMS,
    RUN_SUITE,
    SMOLLM,
    SMOLLM_FAST,
    SUITES,
    Runs,
    _markdown_table,
    _run_dir,
    produce_runs,
)

pytestmark = pytest.mark.slow
SG_ROW = "**SG score** (mean over the suites run)"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    return produce_runs(tmp_path_factory)


def _outcomes(run_dir: Path) -> dict[int, float]:
    """Item number -> HELM's recorded syntaxgym_accuracy (scorable items only)."""
    outcomes = {}
    for entry in json.loads((run_dir / "per_instance_stats.json").read_text()):
        stats = {s["name"]["name"]: s["mean"] for s in entry["stats"]}
        if "syntaxgym_accuracy" in stats:
            outcomes[int(entry["instance_id"].removeprefix("item"))] = stats["syntaxgym_accuracy"]
    return outcomes


def test_summary_and_csv_intervals_are_those_of_helms_item_counts(runs: Runs,
                                                                    tmp_path: Path) -> None:
    from syntaxgym_helm.cli.main import main

    assert main(["report", str(runs.output), "--suite", RUN_SUITE, "-o", str(tmp_path)]) == 0
    text = (tmp_path / RUN_SUITE / "summary.md").read_text()
    columns, rows = _markdown_table(text, "")
    column = columns.index(SMOLLM)
    groups = []
    for suite in SUITES:
        outcomes = list(_outcomes(_run_dir(runs, SMOLLM, suite)).values())
        assert len(outcomes) == MAX_ITEMS
        groups.append(outcomes)
        wilson = wilson_interval(int(sum(outcomes)), len(outcomes))
        assert rows[suite][column] == f"{sum(outcomes) / len(outcomes):.3f} {wilson.text()}"
    sg = bootstrap_interval(groups)
    assert rows[SG_ROW][column] == f"{mean_of_means(groups):.3f} {sg.text()}"
    assert "Wilson score interval" in text and "bootstrap" in text
    with (tmp_path / RUN_SUITE / "accuracy.csv").open(newline="") as stream:
        table = [r for r in csv.DictReader(stream) if r["model"] == SMOLLM
                 and r["measure"] == "accuracy"]
    by_name = {r["suite"]: r for r in table}
    for suite, outcomes in zip(SUITES, groups, strict=False):
        assert int(by_name[suite]["passed"]) == sum(outcomes)
        assert float(by_name[suite]["low"]) == wilson_interval(int(sum(outcomes)), 8).low
    assert (float(by_name["SG score"]["low"]), float(by_name["SG score"]["high"])) == (
        sg.low, sg.high)


def _compare_json(capsys: pytest.CaptureFixture, out: Path, *args: str) -> tuple[str, dict]:
    from syntaxgym_helm.cli.main import main

    assert main(["compare", *args, "-o", str(out)]) == 0
    return capsys.readouterr().out, json.loads((out / "comparison.json").read_text())


@pytest.mark.parametrize("side_b", ["gemma", "first_token_exclude"])
def test_mcnemar_counts_are_the_items_one_model_alone_passed(
        runs: Runs, capsys: pytest.CaptureFixture, tmp_path: Path, side_b: str) -> None:
    """Two real runs that differ (another model; the same weights scored another way): the
    discordant counts, p-values and the paired difference follow from HELM's per-item stats."""
    if side_b == "gemma" and runs.gemma:
        pytest.skip(runs.gemma)
    a = _run_dir(runs, SMOLLM, "number_prep")
    b = (_run_dir(runs, GEMMA, "number_prep") if side_b == "gemma"
         else _run_dir(runs, SMOLLM, "number_prep", exclude=True))
    text, result = _compare_json(capsys, tmp_path, str(a), str(b))
    out_a, out_b = _outcomes(a), _outcomes(b)
    both = sorted(set(out_a) & set(out_b))
    only_a = sum(1 for n in both if out_a[n] and not out_b[n])
    only_b = sum(1 for n in both if out_b[n] and not out_a[n])
    (suite,) = result["suites"]
    assert (suite["mcnemar"]["only_a"], suite["mcnemar"]["only_b"]) == (only_a, only_b)
    expected_p = binomtest(only_a, only_a + only_b).pvalue if only_a + only_b else 1.0
    assert suite["mcnemar"]["p_value"] == pytest.approx(expected_p)
    assert suite["mcnemar"]["p_holm"] == suite["mcnemar"]["p_value"]  # one suite: no adjustment
    tests = result["paired_tests"]
    assert tests["items"] == len(both) and tests["mcnemar"]["discordant"] == only_a + only_b
    (mean,) = tests["mean_differences"]
    accuracy_a = sum(out_a[n] for n in both) / len(both)
    accuracy_b = sum(out_b[n] for n in both) / len(both)
    assert mean["accuracy_a"] == pytest.approx(accuracy_a) == suite["accuracy_a"]
    assert mean["difference"] == pytest.approx(accuracy_b - accuracy_a)
    # The interval and p are the seeded paired bootstrap of exactly these paired outcomes (the
    # items both sides scored, in item order): pairs kept, nothing left out or added.
    expected = paired_bootstrap([[float(out_a[n]) for n in both]],
                                [[float(out_b[n]) for n in both]])
    assert (mean["low"], mean["high"]) == (expected.interval.low, expected.interval.high)
    assert mean["p_value"] == expected.p_value and mean["method"] == "paired bootstrap"
    assert mean["low"] <= mean["difference"] <= mean["high"]
    assert mean["significant"] == (expected.interval.low > 0 or expected.interval.high < 0)
    assert f"| {only_a} | {only_b} |" in text and HOW_TO_READ in text


def test_two_backends_of_the_same_weights_have_no_discordant_item(
        runs: Runs, capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    _, result = _compare_json(capsys, tmp_path, str(runs.run_suite_dir),
                              str(runs.run_suite_dir), "--model-a", SMOLLM, "--model-b",
                              SMOLLM_FAST)
    tests = result["paired_tests"]
    assert tests["mcnemar"] == {"only_a": 0, "only_b": 0, "discordant": 0, "p_value": 1.0}
    assert tests["items"] == MAX_ITEMS * len(SUITES)
    (mean,) = tests["mean_differences"]
    assert mean["label"] == "SG score (2 of the paper's 31 suites)"
    assert (mean["difference"], mean["low"], mean["high"]) == (0.0, 0.0, 0.0)
    assert not mean["significant"]


def test_the_leaderboard_shows_the_items_scored_beside_the_accuracy(
        runs: Runs, capsys: pytest.CaptureFixture) -> None:
    """helm-summarize (run by produce_runs with the schema of ``leaderboard config``, warning of
    no missing stat) puts the count in each suite's table and an items table in the SG score's;
    ``leaderboard show`` prints it beside each accuracy."""
    from syntaxgym_helm.cli.main import main

    stats = json.loads((_run_dir(runs, SMOLLM, "number_prep") / "stats.json").read_text())
    count = next(s for s in stats if s["name"]["name"] == "syntaxgym_scored_items"
                 and "perturbation" not in s["name"])
    assert count["mean"] == len(_outcomes(_run_dir(runs, SMOLLM, "number_prep"))) == MAX_ITEMS
    groups = runs.run_suite_dir / "groups"
    (table,) = json.loads((groups / "syntaxgym_number_prep.json").read_text())
    header = [cell["value"] for cell in table["header"]]
    assert header[:3] == ["Model", "Accuracy", "Items scored"]
    shown = {row[0]["value"]: row[2]["value"] for row in table["rows"]}
    assert shown[runs.display_name(SMOLLM)] == MAX_ITEMS
    accuracy, items = json.loads((groups / "syntaxgym_sg_score.json").read_text())
    assert accuracy["title"] == "SyntaxGym accuracy" and items["title"] == "Items scored"
    assert [cell["value"] for cell in items["header"]] == [
        "Model", "fgd_subject - Items scored", "number_prep - Items scored"]  # no mean of counts
    assert main(["leaderboard", "show", str(runs.output), "--suite", RUN_SUITE]) == 0
    printed = capsys.readouterr().out
    line = next(line for line in printed.splitlines() if line.startswith("| number_prep |"))
    assert f"(n={MAX_ITEMS})" in line and "n: items scored" in printed
