"""HELM's own parallel runner runs the plugin's models with no YAML: ``MultiGPURunner`` on CPU.

``MultiGPURunner`` runs each run spec in a forkserver worker that loads no plugins; the worker
imports the scenario class the run spec names, and that import registers the embedded models and
the prefetch hook (:mod:`syntaxgym_helm.clients.registration`). The test runs four built-in suites
with both embedded models twice, in fresh folders with no ``prod_env`` YAML: once with HELM's
default runner, once with ``MultiGPURunner`` and two workers; every run's per-instance stats must
be the same.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from syntaxgym_helm.harness.stats import RUN_DEPENDENT_STATS

pytestmark = pytest.mark.slow

BIN = Path(sys.executable).parent
SUITES = ("sgh_agreement_pp", "sgh_fgd_subject", "sgh_npi_any", "sgh_reflexive_rc")
#: Stats that measure the run, not the model: they differ between any two runs.
TIMING_STATS = ("inference_runtime", "training_co2_cost", "training_energy_cost",
                *RUN_DEPENDENT_STATS)
#: Each helm-run's wall-clock limit (both models load in each; about a minute on 2 CPU cores).
RUN_TIMEOUT_S = 900


def _models() -> list[str]:
    from syntaxgym_helm.clients.embedded.catalogue import installed_syntaxgym_names

    names = installed_syntaxgym_names()
    if len(names) < 2:
        pytest.skip(f"both embedded model packages must be installed (found {names})")
    return names


def _helm_run(workdir: Path, models: list[str], runner: str | None) -> Path:
    entries = [f"syntaxgym:suite={suite},model={model}" for suite in SUITES for model in models]
    command = [str(BIN / "helm-run"), "--run-entries", *entries, "--suite", "parallel",
               "--max-eval-instances", "1000"]
    env = dict(os.environ)
    if runner:
        command += ["--runner-class-name", runner]
        env["HELM_MAX_CONCURRENT_WORKERS"] = "2"
    workdir.mkdir()
    try:
        done = subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True,
                              timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"helm-run ({runner or 'default runner'}) ran past {RUN_TIMEOUT_S} s")
    assert done.returncode == 0, f"helm-run ({runner}) failed:\n{done.stderr[-4000:]}"
    assert not (workdir / "prod_env").exists() or not any(
        (workdir / "prod_env").glob("*.yaml")), "the run must need no YAML"
    return workdir / "benchmark_output" / "runs" / "parallel"


def _stats(runs: Path) -> dict[str, dict[str, Any]]:
    """run name -> {instance id / stat name / perturbation: mean} over per_instance_stats.json."""
    found: dict[str, dict[str, Any]] = {}
    for run in sorted(runs.glob("syntaxgym:*")):
        values: dict[str, Any] = {}
        for instance in json.loads((run / "per_instance_stats.json").read_text()):
            for stat in instance["stats"]:
                name = stat["name"]
                if name["name"] in TIMING_STATS:
                    continue
                key = f"{instance['instance_id']}/{name['name']}/{name.get('perturbation')}"
                values[key] = stat["mean"]
        found[run.name] = values
    return found


def test_multi_gpu_runner_on_cpu_matches_the_default_runner(tmp_path: Path) -> None:
    models = _models()
    default = _stats(_helm_run(tmp_path / "default", models, None))
    parallel = _stats(_helm_run(tmp_path / "multi", models,
                                "helm.benchmark.multi_gpu_runner.MultiGPURunner"))
    assert len(default) == len(SUITES) * len(models), sorted(default)
    assert sorted(parallel) == sorted(default)
    for run, values in default.items():
        assert any(key.endswith("/syntaxgym_accuracy/None") for key in values), run
        differing = {k: (v, parallel[run].get(k)) for k, v in values.items()
                     if parallel[run].get(k) != pytest.approx(v, abs=1e-9)}
        assert not differing, f"{run}: {dict(list(differing.items())[:5])}"
        assert set(parallel[run]) == set(values), run
