"""Importing the package, the Python API or any module of the run changes nothing in HELM or the
process; the plugin's hooks are installed where a run starts
(:mod:`syntaxgym_helm.clients.registration`).

Each check runs in a fresh interpreter: HELM is imported first and what the plugin could change is
noted (HELM's ``Executor.execute``, the SIGINT and SIGTERM handlers, the loggers' filters and
handlers, HELM's run-expander, run-spec-function and model-deployment registries), then the
package's modules are imported and the same is noted again.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SNAPSHOT = r'''
import json, logging, signal, sys

# Python's own handlers, as in a terminal: a test run started in the background (nohup, &)
# inherits SIGINT ignored, which the plugin rightly leaves alone, and the control below would fail.
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.signal(signal.SIGTERM, signal.SIG_DFL)

def snapshot():
    from helm.benchmark.executor import Executor
    from helm.benchmark.model_deployment_registry import ALL_MODEL_DEPLOYMENTS
    from helm.benchmark.run_expander import RUN_EXPANDERS
    from helm.benchmark import run_spec
    loggers = {name: ([repr(f) for f in logging.getLogger(name).filters],
                      [repr(h) for h in logging.getLogger(name).handlers])
               for name in ("", "helm")}
    return {
        "execute": repr(Executor.execute),
        "sigint": repr(signal.getsignal(signal.SIGINT)),
        "sigterm": repr(signal.getsignal(signal.SIGTERM)),
        "loggers": loggers,
        "model_expander": repr(RUN_EXPANDERS.get("model")),
        "run_spec_functions": sorted(run_spec._REGISTERED_RUN_SPEC_FUNCTIONS),
        "deployments": sorted(d.name for d in ALL_MODEL_DEPLOYMENTS),
    }

before = snapshot()
for name in sys.argv[1:]:
    __import__(name)
import syntaxgym_helm
syntaxgym_helm.evaluate  # the API, as `from syntaxgym_helm import evaluate` reaches it
print(json.dumps({"before": before, "after": snapshot()}))
'''

MODULES = [
    "syntaxgym_helm", "syntaxgym_helm.api", "syntaxgym_helm.api.helm_engine",
    "syntaxgym_helm.harness.scenario", "syntaxgym_helm.harness.metric",
    "syntaxgym_helm.harness.run_spec", "syntaxgym_helm.harness.leaderboard",
    "syntaxgym_helm.clients.local.client", "syntaxgym_helm.clients.registration",
    "syntaxgym_helm.clients.interruption", "syntaxgym_helm.report.runs",
    "syntaxgym_helm.cli.main",
]


def _snapshots(*args: str) -> dict:
    done = subprocess.run([sys.executable, "-c", SNAPSHOT, *args], cwd=ROOT, text=True,
                          capture_output=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_importing_the_package_and_the_api_changes_nothing_in_helm_or_the_process() -> None:
    found = _snapshots(*MODULES)
    assert found["after"] == found["before"]


def test_the_plugin_installs_the_hooks_when_helm_loads_it() -> None:
    # The control: the snapshot sees what the plugin (helm-run's entry point) installs.
    found = _snapshots("syntaxgym_helm.plugin")
    before, after = found["before"], found["after"]
    assert after["execute"] != before["execute"]
    assert after["sigint"] != before["sigint"] and after["sigterm"] != before["sigterm"]
    assert after["loggers"]["helm"] != before["loggers"]["helm"]
    assert "syntaxgym" in after["run_spec_functions"]
    assert "syntaxgym" not in before["run_spec_functions"]
    assert after["model_expander"] != before["model_expander"]
