"""Reports read runs written before the layout change (fast; no model, no helm-run).

``tests/fixtures/old_layout_run`` is a real ``helm-run`` output written by the code before the
"core / clients / harness / cli" layout (commit 2816ca2): SmolLM2-135M on the plugin's client,
``number_prep``, 3 items, with every file the report reads (``scenario_state.json`` minified). Its
``run_spec.json`` names ``syntaxgym_helm.scenario.SyntaxGymScenario`` and
``syntaxgym_helm.metric.SyntaxGymMetric``, modules that no longer exist, and its references carry
no condition tags (``tags: []``), so the metric's fallback to reference order is what scores them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from syntaxgym_helm.harness.stats import ACCURACY, UNSCORABLE
from syntaxgym_helm.report.build import write_report
from syntaxgym_helm.report.runs import find_run_dirs, load_runs
from syntaxgym_helm.report.summary import RunAccuracy

OLD_OUTPUT = Path(__file__).resolve().parents[1] / "fixtures" / "old_layout_run"


def _per_instance(run_dir: Path, name: str) -> dict[str, float]:
    entries = json.loads((run_dir / "per_instance_stats.json").read_text())
    return {entry["instance_id"]: next(s["mean"] for s in entry["stats"]
                                       if s["name"]["name"] == name) for entry in entries}


def test_the_fixture_is_an_old_layout_run() -> None:
    (run_dir,) = find_run_dirs(OLD_OUTPUT)
    spec = json.loads((run_dir / "run_spec.json").read_text())
    assert spec["scenario_spec"]["class_name"] == "syntaxgym_helm.scenario.SyntaxGymScenario"
    assert spec["metric_specs"][0]["class_name"] == "syntaxgym_helm.metric.SyntaxGymMetric"
    assert '"tags":["condition:' not in (run_dir / "scenario_state.json").read_text()


def test_old_runs_are_scored_again_as_their_metric_scored_them(tmp_path: Path) -> None:
    (run,) = load_runs(find_run_dirs(OLD_OUTPUT, run_suite="old_layout"), progress=False)
    assert run.model == "syntaxgym/smollm2-135m-instruct-q4_1"
    assert run.suite_name == "number_prep" and run.run_suite == "old_layout"
    assert len(run.scores) == 3 and all(score.scorable for score in run.scores)
    recorded = _per_instance(run.run_dir, ACCURACY)
    assert {i: float(bool(s.passed)) for i, s in zip(run.instance_ids, run.scores)} == recorded
    assert set(_per_instance(run.run_dir, UNSCORABLE).values()) == {0.0}
    stats = json.loads((run.run_dir / "stats.json").read_text())
    mean = next(s["mean"] for s in stats if s["name"]["name"] == ACCURACY
                and s["name"].get("split") == "test" and "perturbation" not in s["name"])
    assert RunAccuracy.of(run).accuracy == pytest.approx(mean)

    files = write_report([run], tmp_path / "report")
    assert "number_prep" in files.summary_text and f"{mean:.3f}" in files.summary_text
    annotated = json.loads(files.annotated[0].read_text())
    assert len(annotated["items"]) == 3
