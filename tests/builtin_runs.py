"""One real ``helm-run`` of built-in suites with every installed embedded model (``syntaxgym/``
names), as ``make run`` runs them: no ``prod_env`` YAML, the user's caches. The session fixture
``builtin_runs`` (``tests/conftest.py``) makes it once with HELM's default runner for the tests
that read such runs; ``tests/harness/test_parallel_runners.py`` also makes one with another
runner to compare. ``tests/`` is on ``sys.path``: import this as ``builtin_runs``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from script_processes import run_script

BIN = Path(sys.executable).parent
SUITES = ("sgh_agreement_pp", "sgh_fgd_subject", "sgh_npi_any", "sgh_reflexive_rc")
#: Items per suite: what the tests check is how runs are made and scored, not how many items;
#: a few of each suite are enough, and 4 suites x 2 models keep two parallel workers busy.
ITEMS = 4
RUN_SUITE = "builtin"
#: Each helm-run's wall-clock limit (both models load in each; about a minute on 2 CPU cores).
RUN_TIMEOUT_S = 900


def installed_models() -> list[str]:
    from syntaxgym_helm.clients.embedded.catalogue import installed_syntaxgym_names

    return installed_syntaxgym_names()


def helm_run_builtin(workdir: Path, models: list[str], runner: str | None = None) -> Path:
    """Run :data:`SUITES` x ``models`` in a fresh ``workdir`` (``runner``: HELM's
    ``--runner-class-name``, with two workers; None: the default runner); returns the run
    suite's folder. Fails when helm-run fails, runs too long, or needed YAML."""
    entries = [f"syntaxgym:suite={suite},model={model}" for suite in SUITES for model in models]
    command = [str(BIN / "helm-run"), "--run-entries", *entries, "--suite", RUN_SUITE,
               "--max-eval-instances", str(ITEMS)]
    env = dict(os.environ)
    if runner:
        command += ["--runner-class-name", runner]
        env["HELM_MAX_CONCURRENT_WORKERS"] = "2"
    workdir.mkdir()
    try:
        if runner:  # its workers are started by the runner: the real executable
            done = subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True,
                                  timeout=RUN_TIMEOUT_S)
        else:
            done = run_script(command, cwd=workdir, env=env, timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"helm-run ({runner or 'default runner'}) ran past {RUN_TIMEOUT_S} s")
    assert done.returncode == 0, f"helm-run ({runner}) failed:\n{done.stderr[-4000:]}"
    assert not (workdir / "prod_env").exists() or not any(
        (workdir / "prod_env").glob("*.yaml")), "the run must need no YAML"
    return workdir / "benchmark_output" / "runs" / RUN_SUITE
