"""The report written in forked processes is the report written in one, and leaves Python's
garbage collector as it found it (:mod:`syntaxgym_helm.report.heap`).

Fast: no model runs; ``tests/fixtures/blimp_run`` is a real ``helm-run`` (see the fixtures
README): 5 BLiMP paradigms, 7 runs, two models on two of the paradigms.
"""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from syntaxgym_helm.report import build
from syntaxgym_helm.report.heap import collection_paused, existing_objects_frozen
from syntaxgym_helm.report.runs import RunRecord, find_run_dirs, load_runs

BLIMP_OUTPUT = Path(__file__).resolve().parents[1] / "fixtures" / "blimp_run"


@pytest.fixture(scope="module")
def runs() -> list[RunRecord]:
    return load_runs(find_run_dirs(BLIMP_OUTPUT), progress=False)


def _files(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes()
            for path in sorted(folder.rglob("*")) if path.is_file()}


@pytest.mark.skipif(not hasattr(build.os, "sched_getaffinity"), reason="no CPU affinity here")
def test_two_processes_write_the_same_files_as_one(runs: list[RunRecord], tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build.os, "sched_getaffinity", lambda pid: {0})
    alone = build.write_report(runs, tmp_path / "one")
    monkeypatch.setattr(build.os, "sched_getaffinity", lambda pid: {0, 1})
    beside = build.write_report(runs, tmp_path / "two")
    one, two = _files(tmp_path / "one"), _files(tmp_path / "two")
    # summary.md, 4 tables (accuracy, blimp_regions, predictions, regions), blimp_regions.png,
    # a plot per paradigm, an annotated suite and 2 tables per run, and the list of them all
    assert len(one) == 1 + 4 + 1 + 5 + 3 * 7 + 1
    assert one == two
    for listed in ("tables", "annotated", "plots"):  # the same files, in the same order
        assert ([path.relative_to(tmp_path / "one") for path in getattr(alone, listed)]
                == [path.relative_to(tmp_path / "two") for path in getattr(beside, listed)])


def test_a_report_leaves_the_collector_as_it_found_it(runs: list[RunRecord],
                                                      tmp_path: Path) -> None:
    assert gc.isenabled() and gc.get_freeze_count() == 0
    build.write_report(runs, tmp_path / "report")
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_collection_paused_restores_what_it_found() -> None:
    with collection_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with collection_paused():
            pass
        assert not gc.isenabled()  # it was off: left off
    finally:
        gc.enable()


def test_existing_objects_are_frozen_inside_only() -> None:
    kept = [[] for _ in range(100)]  # noqa: F841 - objects to freeze
    with existing_objects_frozen():
        assert gc.get_freeze_count() >= 100
    assert gc.get_freeze_count() == 0
