"""A report never shows another run's numbers: what it reads is proven to be the run HELM's files
of the folder describe, or the run is named as not read, with why and what to do.

Before: an 8-item run, a full disk, then a 4-item run of the same entry into the same folder
left the 8 items scored beside HELM's 4 (and an empty ``.partial`` file), and ``report`` showed
the earlier run without a word; a SIGTERM while HELM wrote ``stats.json`` left a folder mixing
two runs that ``--skip-completed-runs`` skipped as complete; a ``helm-run`` that failed on a full
disk got a report with no sign of it.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from fault_helpers import BIN, ROOT, private_env, start_with_default_signals, wait_for_text
from script_processes import run_script
from syntaxgym_helm.harness.scored_items import FILE_NAME as SCORED_ITEMS
from syntaxgym_helm.report.runs import find_run_dirs, read_runs

NUMBER_PREP_OUTPUT = ROOT / "tests" / "fixtures" / "number_prep_run"
SMOLLM = "syntaxgym/smollm2-135m-instruct-q4_1"
ENTRY = f"syntaxgym:suite=number_prep,model={SMOLLM}"

FAILED_WRITE = """
import resource, signal, sys
from pathlib import Path
from syntaxgym_helm.harness.scored_items import read_scored_items, write_scored_items
kept = read_scored_items(Path(sys.argv[1]))
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write then fails with EFBIG, as on a full disk
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
try:
    write_scored_items(Path(sys.argv[2]), kept.first_token, kept.suite.to_json_dict(),
                       list(zip(kept.instance_ids, kept.evaluations)), run=kept.run)
except OSError as exc:
    print("OSError", exc.errno, flush=True)
"""


def _copy_run(tmp_path: Path) -> Path:
    output = Path(shutil.copytree(NUMBER_PREP_OUTPUT, tmp_path / "benchmark_output"))
    (run_dir,) = find_run_dirs(output)
    return run_dir


def test_a_failed_write_of_the_items_leaves_neither_the_old_file_nor_a_partial_one(
        tmp_path: Path) -> None:
    """A real OSError at the write: a file-size limit (what a full disk gives) in a subprocess."""
    run_dir = _copy_run(tmp_path)
    source = tmp_path / "items.json"
    shutil.copyfile(run_dir / SCORED_ITEMS, source)
    done = subprocess.run([sys.executable, "-c", FAILED_WRITE, str(source), str(run_dir)],
                          capture_output=True, text=True, timeout=120)
    assert "OSError 27" in done.stdout, done.stderr[-2000:]  # EFBIG: file too large
    assert not (run_dir / SCORED_ITEMS).exists()
    assert not list(run_dir.glob("*.partial"))
    # The report scores the run again from HELM's files, which agree with themselves.
    runs, unreadable = read_runs([run_dir], progress=False)
    assert not unreadable and len(runs[0].scores) == 3


@pytest.mark.parametrize("fault", ["missing", "cut_off", "other_items", "other_run"])
def test_items_that_helm_files_do_not_describe_are_never_shown(tmp_path: Path,
                                                               fault: str) -> None:
    run_dir = _copy_run(tmp_path)
    stats = run_dir / "per_instance_stats.json"
    if fault == "missing":  # interrupted or failed before HELM wrote its last file
        stats.unlink()
    elif fault == "cut_off":  # a full disk while HELM wrote it
        stats.write_bytes(stats.read_bytes()[: stats.stat().st_size // 2])
    elif fault == "other_items":  # HELM's files of a 2-item run beside the 3 items kept
        rows = json.loads(stats.read_text())
        stats.write_text(json.dumps(rows[:2]))
    else:  # the items kept name another run
        scored = run_dir / SCORED_ITEMS
        data = json.loads(scored.read_text())
        data["run"]["name"] = "syntaxgym:suite=number_prep,model=other"
        scored.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="none of the 1 run") as raised:
        read_runs([run_dir], progress=False)
    reason = str(raised.value)
    expected = {"missing": "per_instance_stats.json is missing",
                "cut_off": "per_instance_stats.json is cut off",
                "other_items": "3 items against 2 in HELM's per_instance_stats.json",
                "other_run": "mixes files of two runs"}[fault]
    assert expected in reason, reason
    assert f"helm-run --run-entries '{ENTRY}' --suite number_prep_fixture" in reason
    assert len(reason) < 1000


@pytest.mark.parametrize("rescore", [True, False])
def test_requests_of_another_model_are_never_shown_under_this_ones_name(
        tmp_path: Path, rescore: bool) -> None:
    """Gemma's scenario_state.json in SmolLM2's run folder of the same paradigm, where both
    models passed every item (so every item's accuracy agrees with HELM's per_instance_stats),
    read with --rescore or because the metric's items are missing. Before: SmolLM2's rows held
    Gemma's surprisals (52.10 bits for a region that is 44.01)."""
    output = Path(shutil.copytree(ROOT / "tests" / "fixtures" / "blimp_run", tmp_path / "out"))
    runs = output / "runs" / "blimp_fixture"
    entry = "syntaxgym:suite=blimp_anaphor_number_agreement,model=syntaxgym_{}"
    run_dir = runs / entry.format("smollm2-135m-instruct-q4_1")
    shutil.copyfile(runs / entry.format("gemma-3-270m-q4_k_m") / "scenario_state.json",
                    run_dir / "scenario_state.json")
    if not rescore:
        (run_dir / SCORED_ITEMS).unlink()
    with pytest.raises(ValueError, match="none of the 1 run") as raised:
        read_runs([run_dir], progress=False, rescore=rescore)
    assert ("its scenario_state.json is of another adapter spec (model "
            "syntaxgym/gemma-3-270m-q4_k_m, prefix or settings) than the run its run_spec.json "
            "names: the folder mixes files of two runs; run it again") in str(raised.value)


@pytest.mark.slow
@pytest.mark.limit(1200)
def test_a_rerun_whose_items_cannot_be_written_is_read_from_helms_own_files(
        tmp_path: Path, smollm2_weights: Path) -> None:
    """The issue's reproduction: a 3-item run, then a 2-item run of the same entry into the same
    folder whose metric cannot write its items (a real OSError: a folder where the file goes)."""
    env = private_env(tmp_path / "cache", smollm2_weights)
    command = [str(BIN / "helm-run"), "--run-entries", ENTRY, "--suite", "rerun"]
    first = run_script([*command, "--max-eval-instances", "3"], cwd=tmp_path, env=env,
                       timeout=900)
    assert first.returncode == 0, first.stderr[-3000:]
    (run_dir,) = find_run_dirs(tmp_path / "benchmark_output")
    earlier = tmp_path / "earlier_items.json"
    shutil.copyfile(run_dir / SCORED_ITEMS, earlier)
    (run_dir / (SCORED_ITEMS.removesuffix(".json") + ".json.partial")).mkdir()
    second = run_script([*command, "--max-eval-instances", "2"], cwd=tmp_path, env=env,
                        timeout=900)
    assert second.returncode == 0, second.stderr[-3000:]
    assert "could not keep the items scored" in second.stdout + second.stderr
    assert not (run_dir / SCORED_ITEMS).exists()  # the 3-item run's items are gone
    (run,), unreadable = read_runs([run_dir], progress=False)
    assert not unreadable and len(run.scores) == 2
    # The state the issue found: the earlier items beside HELM's files of the later run (whose
    # adapter spec differs in max_eval_instances).
    shutil.copyfile(earlier, run_dir / SCORED_ITEMS)
    with pytest.raises(ValueError, match="is of another adapter spec .* the folder mixes files "
                                         "of two runs; run it again"):
        read_runs([run_dir], progress=False)


@pytest.mark.slow
@pytest.mark.limit(1500)
@pytest.mark.parametrize("file", ["stats.json", "per_instance_stats.json"])
def test_a_signal_while_helm_writes_a_run_leaves_it_incomplete_and_it_is_run_again(
        tmp_path: Path, smollm2_weights: Path, file: str) -> None:
    env = private_env(tmp_path / "cache", smollm2_weights, SLOW_OUTPUT_FILE=file,
                      PYTHONPATH=f"{Path(__file__).parent}:{ROOT}")
    command = [str(BIN / "helm-run"), "--run-entries", ENTRY, "--suite", "signal",
               "--max-eval-instances", "3"]
    first = run_script([*command[:-1], "2"], cwd=tmp_path, env=env, timeout=900)
    assert first.returncode == 0, first.stderr[-3000:]  # a complete earlier run in the folder
    log = tmp_path / "log.txt"
    process = start_with_default_signals([*command, "--plugins", "slow_output_plugin"],
                                         cwd=tmp_path, env=env, log=log)
    try:
        assert wait_for_text(log, f"slow output: {file}", process, 900), log.read_text()[-3000:]
        process.send_signal(signal.SIGTERM)
        status = process.wait(timeout=60)
    finally:
        process.kill()
    text = log.read_text(errors="replace")
    assert status == 143, text[-3000:]
    assert "is incomplete (HELM was writing its files)" in text.strip().splitlines()[-1]
    (run_dir,) = find_run_dirs(tmp_path / "benchmark_output")
    assert not (run_dir / "per_instance_stats.json").exists()
    with pytest.raises(ValueError, match="per_instance_stats.json is missing"):
        read_runs([run_dir], progress=False)
    again = run_script([*command, "--skip-completed-runs"], cwd=tmp_path,
                       env={**env, "SLOW_OUTPUT_FILE": ""}, timeout=900)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "Skipping run" not in again.stdout + again.stderr
    (run,), unreadable = read_runs([run_dir], progress=False)
    assert not unreadable and len(run.scores) == 3


def test_suites_that_share_a_name_but_not_their_items_are_told_apart(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A suite edited between two runs: the runs are two rows; a run of fewer of the same items
    (``--max-eval-instances``) is of the same suite."""
    import dataclasses

    from syntaxgym_helm.core.suite import Region
    from syntaxgym_helm.report.suite_versions import distinguish_suites

    (run,) = read_runs(find_run_dirs(NUMBER_PREP_OUTPUT), progress=False)[0]
    item = run.suite.items[0]
    condition = item.conditions[0]
    edited_condition = dataclasses.replace(condition, regions=(
        Region(1, condition.regions[0].content + " indeed"), *condition.regions[1:]))
    edited_item = dataclasses.replace(item, conditions=(edited_condition, *item.conditions[1:]))
    edited = dataclasses.replace(
        run, suite=dataclasses.replace(run.suite, items=(edited_item, *run.suite.items[1:])),
        suite_source="edited/number_prep.json", model="other/model")
    fewer = dataclasses.replace(
        run, suite=dataclasses.replace(run.suite, items=run.suite.items[1:]), model="third/m")
    named = distinguish_suites([run, edited, fewer])
    assert [r.suite_name for r in named] == ["number_prep [number_prep]",
                                             "number_prep [edited/number_prep.json]",
                                             "number_prep [number_prep]"]
    assert "runs of 2 different suites named 'number_prep' are reported apart" in (
        capsys.readouterr().err)
    assert [r.suite_name for r in distinguish_suites([run, fewer])] == ["number_prep"] * 2


@pytest.mark.slow
@pytest.mark.limit(1200)
def test_two_suite_files_of_one_name_run_in_one_run_suite_are_two_rows(
        tmp_path: Path, smollm2_weights: Path) -> None:
    """The issue's reproduction: a suite edited between two runs (6 items and 8), run into one
    run suite; ``report`` showed one row and one of the two runs in neither table."""
    import csv

    from fixtures import HU2020_DIR

    data = json.loads((HU2020_DIR / "number_prep.json").read_text())
    paths = []
    for folder, count in (("first", 2), ("second", 3)):
        edited = {**data, "items": data["items"][:count]}
        if folder == "second":  # the edit: item 1's first region
            item = json.loads(json.dumps(edited["items"][0]))
            for condition in item["conditions"]:
                condition["regions"][0]["content"] = "Yesterday " + condition["regions"][0][
                    "content"].lower()
            edited["items"] = [item, *edited["items"][1:]]
        (tmp_path / folder).mkdir()
        paths.append(tmp_path / folder / "number_prep.json")
        paths[-1].write_text(json.dumps(edited))
    env = private_env(tmp_path / "cache", smollm2_weights)
    done = run_script([str(BIN / "helm-run"), "--run-entries",
                       *(f"syntaxgym:suite={path},model={SMOLLM}" for path in paths),
                       "--suite", "edited", "--max-eval-instances", "3"], cwd=tmp_path, env=env,
                      timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    report = run_script([str(BIN / "syntaxgym-helm"), "report", "benchmark_output"],
                        cwd=tmp_path, env=env, timeout=600)
    assert report.returncode == 0, report.stderr[-3000:]
    assert "reported apart" in report.stderr
    folder = tmp_path / "benchmark_output" / "syntaxgym_report" / "edited"
    summary = (folder / "summary.md").read_text()
    names = [f"number_prep [{path}]" for path in paths]
    assert all(f"| {name} |" in summary for name in names), summary
    with (folder / "accuracy.csv").open(newline="") as stream:
        suites = {row["suite"] for row in csv.DictReader(stream)}
    assert set(names) <= suites, suites
