"""Reports read runs of this version's run format, and refuse others with one clear message
(fast; no model, no helm-run).

``tests/fixtures/number_prep_run`` is a real ``helm-run`` output of run format 3 (SmolLM2-135M,
``number_prep``, 3 items). A run of an older format is made from a copy of it the way older
versions wrote theirs: no run format in the instances, scored items of the older format
(``syntaxgym-scored-items-v2``, no ``format_version``) or none at all.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from syntaxgym_helm.harness.run_format import FORMAT_KEY, RUN_FORMAT_VERSION
from syntaxgym_helm.harness.scored_items import FILE_NAME as SCORED_ITEMS
from syntaxgym_helm.harness.stats import ACCURACY, UNSCORABLE
from syntaxgym_helm.report.build import write_report
from syntaxgym_helm.report.runs import find_run_dirs, load_runs, read_runs
from syntaxgym_helm.report.summary import RunAccuracy

NUMBER_PREP_OUTPUT = Path(__file__).resolve().parents[1] / "fixtures" / "number_prep_run"
RERUN = ("helm-run --run-entries 'syntaxgym:suite=number_prep,model=syntaxgym/"
         "smollm2-135m-instruct-q4_1' --suite number_prep_fixture --max-eval-instances 3")


def _per_instance(run_dir: Path, name: str) -> dict[str, float]:
    entries = json.loads((run_dir / "per_instance_stats.json").read_text())
    return {entry["instance_id"]: next(s["mean"] for s in entry["stats"]
                                       if s["name"]["name"] == name) for entry in entries}


def _copy(tmp_path: Path) -> Path:
    output = Path(shutil.copytree(NUMBER_PREP_OUTPUT, tmp_path / "benchmark_output"))
    (run_dir,) = find_run_dirs(output)
    return run_dir


def _as_older_version_wrote_it(run_dir: Path, keep_scored_items: bool) -> None:
    state_path = run_dir / "scenario_state.json"
    state = json.loads(state_path.read_text())
    for request_state in state["request_states"]:
        del request_state["instance"]["extra_data"][FORMAT_KEY]
    state_path.write_text(json.dumps(state))
    scored = run_dir / SCORED_ITEMS
    if not keep_scored_items:
        scored.unlink()
        return
    data = json.loads(scored.read_text())
    for key in ("format_version", "written_by", "run"):
        del data[key]
    data["format"] = "syntaxgym-scored-items-v2"
    scored.write_text(json.dumps(data))


def test_a_run_of_this_format_is_read_as_its_metric_scored_it(tmp_path: Path) -> None:
    (run,) = load_runs(find_run_dirs(NUMBER_PREP_OUTPUT), progress=False)
    assert run.model == "syntaxgym/smollm2-135m-instruct-q4_1"
    assert run.suite_name == "number_prep" and run.run_suite == "number_prep_fixture"
    assert len(run.scores) == 3 and all(score.scorable for score in run.scores)
    recorded = _per_instance(run.run_dir, ACCURACY)
    assert {
        i: float(bool(s.passed)) for i, s in zip(run.instance_ids, run.scores, strict=False)
    } == recorded
    assert set(_per_instance(run.run_dir, UNSCORABLE).values()) == {0.0}
    scored = json.loads((run.run_dir / SCORED_ITEMS).read_text())
    assert scored["format_version"] == RUN_FORMAT_VERSION and scored["run"]["instances"] == 3
    stats = json.loads((run.run_dir / "stats.json").read_text())
    mean = next(s["mean"] for s in stats if s["name"]["name"] == ACCURACY
                and s["name"].get("split") == "test" and "perturbation" not in s["name"])
    assert RunAccuracy.of(run).accuracy == pytest.approx(mean)
    (rescored,) = load_runs([run.run_dir], progress=False, rescore=True)
    assert repr(rescored.scores) == repr(run.scores)

    files = write_report([run], tmp_path / "report")
    assert "number_prep" in files.summary_text and f"{mean:.3f}" in files.summary_text


@pytest.mark.parametrize("keep_scored_items", [True, False], ids=["scored_items_v2", "none"])
def test_a_run_of_an_older_version_is_refused_saying_who_wrote_it_and_how_to_rerun(
        tmp_path: Path, keep_scored_items: bool, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = _copy(tmp_path)
    _as_older_version_wrote_it(run_dir, keep_scored_items)
    for rescore in (False, True):
        with pytest.raises(ValueError, match="none of the 1 run"):
            read_runs([run_dir], progress=False, rescore=rescore)
        err = capsys.readouterr().err
        assert "written by a syntaxgym-helm from before run formats were versioned" in err
        assert f"reads run format {RUN_FORMAT_VERSION} only" in err and RERUN in err
        assert "Traceback" not in err


def test_a_run_of_another_numbered_version_is_refused_naming_it(tmp_path: Path) -> None:
    run_dir = _copy(tmp_path)
    scored = run_dir / SCORED_ITEMS
    data = json.loads(scored.read_text())
    data.update(format_version=RUN_FORMAT_VERSION + 1, written_by="syntaxgym-helm 9.9.0")
    scored.write_text(json.dumps(data))
    good = find_run_dirs(NUMBER_PREP_OUTPUT)
    runs, unreadable = read_runs([*good, run_dir], progress=False)
    assert len(runs) == 1
    (refused,) = unreadable
    assert refused.reason.startswith(
        f"written by syntaxgym-helm 9.9.0 (run format {RUN_FORMAT_VERSION + 1}); ")
    assert RERUN in refused.reason
