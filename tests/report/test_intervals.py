"""Intervals and paired tests in the reports, fast: known counts, and the real saved run of
``tests/fixtures/number_prep_run`` (``number_prep``, 3 items, SmolLM2-135M; 2 of 3 pass). The same
outputs on fresh real runs of several models: ``test_stats_on_real_runs.py``."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from syntaxgym_helm.core.uncertainty import (
    bootstrap_interval,
    holm_adjust,
    mcnemar_exact,
    paired_bootstrap,
    wilson_interval,
)
from syntaxgym_helm.report.build import write_report
from syntaxgym_helm.report.intervals import INTERVALS_NOTE, mean_estimate, suite_estimate
from syntaxgym_helm.report.paired_tests import HOW_TO_READ, PairedOutcomes, paired_tests
from syntaxgym_helm.report.plots import panel_title
from syntaxgym_helm.report.runs import find_run_dirs, load_runs

NUMBER_PREP_OUTPUT = Path(__file__).resolve().parents[1] / "fixtures" / "number_prep_run"


def test_a_suite_estimate_is_the_wilson_interval_of_its_counts() -> None:
    outcomes = [1.0] * 19 + [0.0] * 11
    estimate = suite_estimate(outcomes)
    assert estimate.value == 19 / 30
    assert estimate.interval == wilson_interval(19, 30)
    assert estimate.text() == "0.633 [0.46, 0.78]"
    assert suite_estimate([1.0] * 32).text() == "1.000 [0.89, 1.00]"  # honest at n/n
    assert suite_estimate([]).text() == "–"
    with pytest.raises(ValueError, match="must be 0 or 1"):
        suite_estimate([0.5])


def test_a_mean_over_suites_is_bootstrapped_within_suites() -> None:
    suites = [[1.0] * 20 + [0.0] * 10, [1.0] * 5 + [0.0] * 15, []]  # an unscored suite: left out
    estimate = mean_estimate(suites)
    assert estimate.value == pytest.approx((20 / 30 + 5 / 20) / 2)
    assert estimate.interval == bootstrap_interval(suites[:2])  # seeded: the same every time
    assert estimate.interval.low < estimate.value < estimate.interval.high
    # Two suites' worth of items: narrower than either suite's own interval.
    width = estimate.interval.high - estimate.interval.low
    assert width < wilson_interval(20, 30).high - wilson_interval(20, 30).low
    assert mean_estimate([[], []]).text() == "–"
    # A mean over one suite is that suite's accuracy: the same interval as the suite's row.
    assert mean_estimate([[1.0] * 5 + [0.0] * 3, []]) == suite_estimate([1.0] * 5 + [0.0] * 3)
    assert bootstrap_interval([[1.0] * 5 + [0.0] * 3]).text() == "[0.25, 0.88]"  # coarser


def _pairs(suite: str, a: str, b: str) -> PairedOutcomes:
    """Outcomes written as strings of 1 and 0, item i of A with item i of B."""
    return PairedOutcomes(suite, tuple(range(1, len(a) + 1)), tuple(c == "1" for c in a),
                          tuple(c == "1" for c in b))


def test_paired_tests_count_discordant_items_and_adjust_over_suites() -> None:
    suites = [_pairs("number_prep", "1111111111", "1000000001"),  # only A 8
              _pairs("fgd_subject", "1100", "1010"),  # only A 1, only B 1
              _pairs("sgh_mvrr", "11", "11")]  # no discordant item: no test
    tests = paired_tests(suites)
    first, second, third = tests.suites
    assert (first.mcnemar.only_a, first.mcnemar.only_b) == (8, 0)
    assert first.mcnemar == mcnemar_exact(suites[0].passed_a, suites[0].passed_b)
    assert first.mcnemar.p_value == pytest.approx(2 * 0.5 ** 8)
    assert (second.mcnemar.only_a, second.mcnemar.only_b) == (1, 1)
    assert [first.p_holm, second.p_holm] == holm_adjust([first.mcnemar.p_value, 1.0])
    assert third.mcnemar.discordant == 0 and third.p_holm == 1.0
    assert (tests.overall.only_a, tests.overall.only_b, tests.items) == (9, 1, 16)
    # Two of the paper's suites and a built-in one: the mean over all three, and the SG score.
    every, sg = tests.means
    assert every.label == "mean over the 3 suites compared"
    assert sg.label == "SG score (2 of the paper's 31 suites)"
    assert sg.suites == ("number_prep", "fgd_subject")
    groups_a = [[float(x) for x in s.passed_a] for s in suites]
    groups_b = [[float(x) for x in s.passed_b] for s in suites]
    assert every.paired == paired_bootstrap(groups_a, groups_b)
    assert every.paired.difference == pytest.approx(
        ((0.2 - 1.0) + (0.5 - 0.5) + 0.0) / 3)
    assert every.accuracy_a == pytest.approx((1.0 + 0.5 + 1.0) / 3)
    result = tests.to_json()
    assert result["mcnemar"] == {"only_a": 9, "only_b": 1, "discordant": 10,
                                 "p_value": pytest.approx(mcnemar_exact(
                                     [True] * 9 + [False], [False] * 9 + [True]).p_value)}
    assert [m["label"] for m in result["mean_differences"]] == [every.label, sg.label]
    assert result["how_to_read"] == HOW_TO_READ
    text = "\n".join(tests.markdown_lines())
    assert "only A 9, only B 1" in text and HOW_TO_READ in text


def test_a_clear_difference_is_called_real_and_none_is_not() -> None:
    clear = paired_tests([_pairs("number_prep", "1" * 30, "0" * 30)])
    (mean,) = clear.means
    assert mean.significant and mean.paired.interval.high < 0
    assert "a real difference" in "\n".join(clear.markdown_lines())
    assert "p < 0.0002" in "\n".join(clear.markdown_lines())  # no resample crossed 0
    same = paired_tests([_pairs("number_prep", "1100", "1100")])
    (mean,) = same.means
    assert not mean.significant and mean.paired.difference == 0
    assert same.overall.p_value == 1.0
    assert "not distinguishable from 0" in "\n".join(same.markdown_lines())
    with pytest.raises(ValueError, match="3 items, 2 and 3 outcomes"):
        PairedOutcomes("x", (1, 2, 3), (True, False), (True, False, True))


def test_report_of_a_saved_run_gives_each_accuracy_its_interval(tmp_path: Path) -> None:
    (run,) = load_runs(find_run_dirs(NUMBER_PREP_OUTPUT, run_suite="number_prep_fixture"),
                       progress=False)
    per_instance = json.loads((run.run_dir / "per_instance_stats.json").read_text())
    outcomes = [next(s["mean"] for s in entry["stats"] if s["name"]["name"] == "syntaxgym_accuracy")
                for entry in per_instance]
    passed, items = int(sum(outcomes)), len(outcomes)
    assert (passed, items) == (2, 3)
    wilson = wilson_interval(passed, items)
    files = write_report([run], tmp_path)
    row = next(line for line in files.summary_text.splitlines()
               if line.startswith("| number_prep |"))
    assert row == f"| number_prep | {passed / items:.3f} {wilson.text()} |"
    assert INTERVALS_NOTE in files.summary_text
    sg_row = next(line for line in files.summary_text.splitlines() if "SG score" in line)
    # One suite: the SG score is its accuracy, with the same interval.
    assert sg_row.endswith(f" | {passed / items:.3f} {wilson.text()} |")
    with (tmp_path / "accuracy.csv").open(newline="") as stream:
        rows = list(csv.DictReader(stream))
    suite_rows = {r["measure"]: r for r in rows if r["level"] == "suite"}
    row = suite_rows["accuracy"]
    assert (row["model"], row["suite"]) == (run.name, "number_prep")
    assert (int(row["items"]), int(row["scorable"]), int(row["passed"])) == (3, 3, 2)
    assert float(row["accuracy"]) == pytest.approx(2 / 3)
    assert (float(row["low"]), float(row["high"])) == (wilson.low, wilson.high)
    assert (row["method"], float(row["confidence"])) == ("wilson", 0.95)
    assert {r["level"] for r in rows} == {"suite", "circuit", "sg_score"}
    sg = next(r for r in rows if r["level"] == "sg_score" and r["measure"] == "accuracy")
    assert sg["method"] == "wilson" and sg["passed"] == "" and sg["suites"] == "1"
    assert (sg["low"], sg["high"]) == (row["low"], row["high"])
    assert files.folder / "accuracy.csv" in files.tables
    assert panel_title(run) == f"{run.name}\naccuracy {passed / items:.3f} {wilson.text()}, n=3"
    annotated = json.loads(files.annotated[0].read_text())["syntaxgym_helm"]
    assert annotated["accuracy_interval"] == {"low": wilson.low, "high": wilson.high,
                                              "method": "wilson", "confidence": 0.95}
    assert not math.isnan(annotated["accuracy"])
