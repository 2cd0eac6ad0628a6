"""Sweeps of real checkpoints written by a real training loop (``training_runs.py``), scored by real
HELM runs: what every output holds, resuming, bad input, Hub revisions from a local Hugging Face
cache, and the published Pythia curve beside a checkpoint named as Pythia's."""

from __future__ import annotations

import csv
import gc
import json
import math
import multiprocessing
import os
import shutil
import signal
import threading
import time
import weakref
from pathlib import Path

import pytest

from fixtures import FULL_BLIMP_DIR
from syntaxgym_helm.api.sweep import SweepError, sweep
from syntaxgym_helm.clients.checkpoint_identity import checkpoint_identity
from syntaxgym_helm.clients.checkpoint_sources import CheckpointSearchError
from syntaxgym_helm.clients.local.server import ModelServerFactory
from syntaxgym_helm.core.registry import RegistryError
from syntaxgym_helm.core.training_axis import TrainingAxisError
from syntaxgym_helm.report.sweep_tables import CURVE_COLUMNS
from training_runs import PARADIGMS, blimp_sentences, hub_cache, train

pytestmark = pytest.mark.slow
SUITES = [f"blimp_{uid}" for uid in PARADIGMS]
PAIRS = 4
# More rows than PAIRS: the words are each scored, never sampled (they were, and then taken
# for the wrong rows).
WORDS = (("word", "context", "child_aoa"), ("herself", "The girl saw", "24"),
         ("herself", "Every woman praised", ""), ("books", "Those three", "20"),
         ("books", "She reads these", ""), ("herself", "The queen taught", ""),
         ("books", "He bought two", ""))


@pytest.fixture(autouse=True)
def blimp_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYNTAXGYM_BLIMP_DIR", str(FULL_BLIMP_DIR))


@pytest.fixture(scope="module")
def swept(training_run: Path, tmp_path_factory: pytest.TempPathFactory):
    """One sweep of the training run's four checkpoints, two BLiMP paradigms, words in
    contexts (each checkpoint in a child process, the default)."""
    work = tmp_path_factory.mktemp("sweep")
    words = work / "words.tsv"
    words.write_text("".join("\t".join(row) + "\n" for row in WORDS), encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SYNTAXGYM_BLIMP_DIR", str(FULL_BLIMP_DIR))
        loads = _watch_loads(patch)
        lines: list[str] = []
        result = sweep(str(training_run / "checkpoint-*"), SUITES, pairs_per_paradigm=PAIRS,
                       words=words, output_path=work / "out", local_path=work / "prod_env",
                       num_threads=2, log=lines.append)
    lines.append(f"loaded here {len(loads[0])}")
    return result, work, words, lines


def _watch_loads(patch: pytest.MonkeyPatch) -> tuple[list[list[weakref.ref]], list[int]]:
    """Every model loaded in this process, watched by its modules (a Llama's MLP blocks get
    methods of the engine's installed: reference cycles, which the model's own release does not
    free), and at each load how many of the models loaded before are alive."""
    loaded: list[list[weakref.ref]] = []
    before: list[int] = []
    load = ModelServerFactory.loaded_model.__func__  # type: ignore[attr-defined]

    def watched(cls, model_key, make):
        before.append(sum(any(ref() is not None for ref in refs) for refs in loaded))
        model, tokenizer = load(cls, model_key, make)
        loaded.append([weakref.ref(module) for module in model.modules()])
        return model, tokenizer

    patch.setattr(ModelServerFactory, "loaded_model", classmethod(watched))
    return loaded, before


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as stream:
        return list(csv.DictReader(stream))


def test_every_checkpoint_is_scored_once_on_the_same_items_and_named_by_its_files(
        swept, training_run: Path) -> None:
    result, work, _, _ = swept
    assert [c.name for c in result.checkpoints] == [f"checkpoint-{s}" for s in (2, 4, 6, 8)]
    assert result.unit == "steps" and [c.x for c in result.checkpoints] == [2, 4, 6, 8]
    assert all(c.status == "done" for c in result.checkpoints), result.failed
    for checkpoint in result.checkpoints:
        assert checkpoint.identity == checkpoint_identity(checkpoint.folder)
        assert checkpoint.model == f"local/llama-tiny@{checkpoint.name}"
    assert len({c.identity for c in result.checkpoints}) == 4
    runs = work / "out" / "runs" / "sweep"
    chosen = set()
    for checkpoint in result.checkpoints:
        for suite in SUITES:
            (run,) = runs.glob(f"syntaxgym:suite={suite},model=local_llama-tiny@{checkpoint.name}")
            state = json.loads((run / "scenario_state.json").read_text())
            ids = {s["instance"]["id"] for s in state["request_states"]}
            assert len(ids) == PAIRS
            chosen.add((suite, frozenset(ids)))
    assert len(chosen) == len(SUITES)  # each suite: the same items at every checkpoint


def test_the_tidy_table_holds_what_helm_recorded_with_intervals(swept) -> None:
    result, work, _, _ = swept
    rows = _rows(result.outputs.files["curves"])
    assert tuple(rows[0]) == CURVE_COLUMNS and len(rows) == 4 * len(SUITES)
    runs = work / "out" / "runs" / "sweep"
    for row in rows:
        assert row["dataset"] == "blimp" and row["measure"] == "first_prediction"
        assert row["phenomenon"] in ("anaphor_agreement", "determiner_noun_agreement")
        items, passed = int(row["items"]), int(row["passed"])
        assert items == PAIRS and int(row["scorable"]) + int(row["unscorable"]) == items
        (run,) = runs.glob(f"syntaxgym:suite={row['suite']},model=*@{row['revision']}")
        stats = {s["name"]["name"]: s for s in json.loads((run / "stats.json").read_text())
                 if s["name"].get("split") == "test" and not s["name"].get("perturbation")}
        helm = stats["syntaxgym_first_prediction_accuracy"]["mean"]
        assert float(row["accuracy"]) == pytest.approx(helm, abs=1e-6)
        assert passed == round(helm * int(row["scorable"]))
        assert float(row["low"]) <= float(row["accuracy"]) <= float(row["high"])


def test_babylm_fast_eval_results_hold_one_list_entry_per_checkpoint(swept) -> None:
    result, _, _, _ = swept
    data = json.loads(result.outputs.files["fast_eval_results"].read_text())
    assert list(data) == ["fast_eval_results"] and list(data["fast_eval_results"]) == ["blimp"]
    curve = data["fast_eval_results"]["blimp"]
    assert len(curve) == 4 and all(set(entry) == set(PARADIGMS) for entry in curve)
    rows = _rows(result.outputs.files["curves"])
    for entry, checkpoint in zip(curve, result.checkpoints, strict=True):
        for uid, accuracy in entry.items():
            (row,) = [r for r in rows if r["revision"] == checkpoint.name
                      and r["suite"] == f"blimp_{uid}"]
            assert accuracy == pytest.approx(float(row["accuracy"]), abs=1e-6)


def test_ages_ties_plots_and_summary_are_written(swept) -> None:
    result, work, _, _ = swept
    acquisition = _rows(result.outputs.files["acquisition"])
    assert {row["suite"] for row in acquisition} == set(SUITES)
    for row in acquisition:
        assert float(row["chance"]) == 0.5
        assert row["acquired_at"] or row["reason"]
    checkpoints = _rows(result.outputs.files["checkpoints"])
    assert [int(r["ties"]) >= 0 and int(r["items"]) == PAIRS * 2 for r in checkpoints] == [True] * 4
    summary = result.outputs.summary
    assert "| checkpoint | steps | mean accuracy | items scored | ties |" in summary
    for key in ("plot", "suite_plot"):
        assert result.outputs.files[key].read_bytes().startswith(b"\x89PNG")
    assert result.outputs.files["suite_plot"] == work / "out" / "sweeps" / "sweep" / \
        "learning_curves.png"


def test_a_word_s_surprisal_at_each_checkpoint_is_the_one_score_sentences_gives(swept) -> None:
    from syntaxgym_helm.api import score_sentences

    result, work, _, _ = swept
    last = result.checkpoints[-1]
    assert last.word_surprisals is not None and len(last.word_surprisals) == len(WORDS) - 1
    scored = score_sentences([[context, word] for word, context, _ in WORDS[1:]],
                             model=last.folder, local_path=work / "prod_env")
    # Equal up to float rounding (the sentences are batched differently).
    for expected, condition in zip(last.word_surprisals, scored, strict=True):
        assert expected == pytest.approx(sum(condition.regions[1].surprisals), abs=1e-4)
    rows = _rows(result.outputs.files["word_acquisition"])
    assert [r["word"] for r in rows] == ["herself", "books"]
    assert [r["contexts"] for r in rows] == ["3", "3"] and rows[0]["child_aoa"] == "24"
    assert all(r["acquired_x"] or r["reason"] for r in rows)


def test_each_checkpoint_runs_in_a_child_process_and_none_is_loaded_here(swept) -> None:
    result, _, _, lines = swept
    assert all(c.status == "done" and c.runs for c in result.checkpoints), result.failed
    assert lines[-1] == "loaded here 0"
    assert sum("runs as local/" in line for line in lines) == 4
    # Each child's own peak memory, recorded and said (the parent alone holds about 0.4 GB).
    assert all(c.peak_mb is not None and c.peak_mb > 300 for c in result.checkpoints)
    assert sum(", peak memory " in line for line in lines) == 4


def test_in_process_one_checkpoint_is_in_memory_at_a_time(
        training_run: Path, tmp_path: Path) -> None:
    with pytest.MonkeyPatch.context() as patch:
        loaded, before = _watch_loads(patch)
        result = sweep(str(training_run / "checkpoint-[246]"), SUITES[:1], pairs_per_paradigm=2,
                       output_path=tmp_path / "out", local_path=tmp_path / "prod_env",
                       num_threads=2, plots=False, isolate=False)
    assert all(c.status == "done" and c.peak_mb is None for c in result.checkpoints)
    gc.collect()
    # Each model freed when its checkpoint was done, before the next one was loaded.
    assert (len(loaded), before) == (3, [0, 0, 0])
    assert not any(ref() is not None for refs in loaded for ref in refs)


def test_a_checkpoint_whose_process_is_killed_fails_alone_and_a_rerun_completes_it(
        training_run: Path, tmp_path: Path) -> None:
    killed: list[int] = []
    stop = threading.Event()

    def kill_the_second_child() -> None:  # as the out-of-memory killer would
        seen: list[int] = []
        while not stop.is_set() and not killed:
            for child in multiprocessing.active_children():
                if child.pid not in seen:
                    seen.append(child.pid)
                if len(seen) == 2 and child.pid == seen[1] and child.is_alive():
                    os.kill(child.pid, signal.SIGKILL)
                    killed.append(child.pid)
            time.sleep(0.005)

    def run() -> tuple:
        lines: list[str] = []
        result = sweep(str(training_run / "checkpoint-[246]"), SUITES[:1], pairs_per_paradigm=2,
                       output_path=tmp_path / "out", local_path=tmp_path / "prod_env",
                       num_threads=2, plots=False, log=lines.append)
        return result, "\n".join(lines)

    watcher = threading.Thread(target=kill_the_second_child)
    watcher.start()
    try:
        first, _ = run()
    finally:
        stop.set()
        watcher.join()
    assert killed
    status = {c.name: (c.status, c.error) for c in first.checkpoints}
    assert status["checkpoint-2"] == ("done", "") and status["checkpoint-6"] == ("done", "")
    assert status["checkpoint-4"] == (
        "failed", "its process ended by signal SIGKILL (the out-of-memory killer sends it, as "
        "does kill -9) before the runs finished")
    again, text = run()
    assert "checkpoint-2: done before" in text and "checkpoint-6: done before" in text
    assert all(c.status == "done" for c in again.checkpoints), again.failed


def test_a_resumed_sweep_skips_what_is_done_and_redoes_what_changed(tmp_path: Path) -> None:
    run = tmp_path / "resumed"
    train(run, blimp_sentences(FULL_BLIMP_DIR, PARADIGMS, 16), steps=8, save_every=2, seed=1)

    def resume_from(folder: Path, suites: list[str] = SUITES, pairs: int = 2) -> tuple:
        lines: list[str] = []
        result = sweep(str(folder / "checkpoint-*"), suites, pairs_per_paradigm=pairs,
                       output_path=tmp_path / "out", local_path=tmp_path / "prod_env",
                       num_threads=2, plots=False, log=lines.append)
        return result, "\n".join(lines)

    def resume(suites: list[str] = SUITES) -> tuple:
        return resume_from(run, suites)

    first, _ = resume()
    assert all(c.status == "done" for c in first.checkpoints), first.failed
    half_done = next((tmp_path / "out" / "runs" / "sweep").glob(
        f"syntaxgym:suite={SUITES[0]},model=*@checkpoint-4"))
    shutil.rmtree(half_done)  # a sweep stopped in the middle of checkpoint-4
    # checkpoint-8 saved again, with other weights (checkpoint-2's).
    shutil.copy(run / "checkpoint-2" / "model.safetensors",
                run / "checkpoint-8" / "model.safetensors")
    again, text = resume()
    assert "checkpoint-2: done before" in text and "checkpoint-6: done before" in text
    assert "checkpoint-4 (x=4)" in text and "checkpoint-8: its files changed" in text
    assert half_done.is_dir()
    assert all(c.status == "done" for c in again.checkpoints), again.failed
    for before, after in zip(first.checkpoints[:3], again.checkpoints[:3], strict=True):
        assert after.counts == before.counts and after.identity == before.identity
    changed = again.checkpoints[3]
    assert changed.identity == checkpoint_identity(str(run / "checkpoint-8"))
    assert changed.identity != first.checkpoints[3].identity
    assert changed.counts == again.checkpoints[0].counts  # the same weights as checkpoint-2 now
    _, text = resume()
    assert text.count("done before") == 4
    more, text = resume([*SUITES, "blimp_adjunct_island"])  # a suite given since: it alone runs
    assert "done before" not in text and all(len(c.counts) == 3 for c in more.checkpoints)
    assert all(c.counts[:2] == b.counts for c, b in zip(more.checkpoints, again.checkpoints,
                                                         strict=True))
    # The run moved elsewhere, its files unchanged: the same checkpoints, nothing run again.
    moved = tmp_path / "moved" / "resumed"
    shutil.copytree(run, moved)
    _, text = resume_from(moved, [*SUITES, "blimp_adjunct_island"])
    assert text.count("done before") == 4
    # Another training run whose checkpoints have the same names, under the same label: refused
    # (it took the first run's runs for stale ones of its own, and deleted them).
    other = tmp_path / "other" / "resumed"
    train(other, blimp_sentences(FULL_BLIMP_DIR, PARADIGMS, 16), steps=4, save_every=2, seed=2)
    with pytest.raises(SweepError, match=r"records checkpoint-2 from .*resumed/checkpoint-2, not "
                                         r".*other/resumed/checkpoint-2: another training run"):
        resume_from(other)
    # Another number of pairs: every run again with it, not a curve of two sample sizes.
    fewer, text = resume_from(moved, [*SUITES, "blimp_adjunct_island"], pairs=1)
    assert text.count("scored another number of items") == 4 and "done before" not in text
    assert all(count["items"] == 1 for c in fewer.checkpoints for count in c.counts)


def test_bad_input_is_refused_or_flagged_and_the_rest_is_kept(
        training_run: Path, tmp_path: Path) -> None:
    with pytest.raises(CheckpointSearchError, match="matches no folder"):
        sweep(str(training_run / "step-*"), SUITES, output_path=tmp_path)
    # A misspelt suite stops the sweep before any checkpoint is loaded (each one failed).
    with pytest.raises(RegistryError, match=r"unknown BLiMP suite 'blimp_adjunct_islnd': did "
                                            "you mean blimp_adjunct_island"):
        sweep(str(training_run / "checkpoint-*"), [*SUITES, "blimp_adjunct_islnd"],
              output_path=tmp_path / "out")
    with pytest.raises(CheckpointSearchError, match="no checkpoint folder under it"):
        sweep(str(tmp_path), SUITES, output_path=tmp_path / "out")
    named = tmp_path / "named"
    shutil.copytree(training_run / "checkpoint-2", named / "final")
    shutil.copytree(training_run / "checkpoint-4", named / "checkpoint-4")
    with pytest.raises(TrainingAxisError, match="final"):
        sweep(str(named), SUITES, output_path=tmp_path / "out")
    other = train(tmp_path / "gpt2", blimp_sentences(FULL_BLIMP_DIR, PARADIGMS[:1], 16),
                  architecture="gpt2", steps=2, save_every=2,
                  name=lambda step: f"checkpoint-{step + 10}")
    with pytest.raises(SweepError, match=r"llama \(checkpoint-4\), gpt2 \(checkpoint-12\)"):
        sweep([str(named / "checkpoint-4"), str(other[0])], SUITES, output_path=tmp_path)
    broken = tmp_path / "broken"
    for step in (2, 4, 6):
        shutil.copytree(training_run / f"checkpoint-{step}", broken / f"checkpoint-{step}")
    (broken / "checkpoint-4" / "config.json").unlink()
    weights = broken / "checkpoint-6" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:1000])
    result = sweep(str(broken / "checkpoint-*"), SUITES[:1], pairs_per_paradigm=2,
                   output_path=tmp_path / "out", local_path=tmp_path / "prod_env")
    status = {c.name: (c.status, c.error) for c in result.checkpoints}
    assert status["checkpoint-2"] == ("done", "")
    assert status["checkpoint-4"][0] == "failed" and "no config.json" in status["checkpoint-4"][1]
    assert status["checkpoint-6"][0] == "failed"
    assert "could not load" in status["checkpoint-6"][1]
    rows = _rows(result.outputs.files["curves"])
    assert [(r["revision"], r["status"][:6]) for r in rows] == [
        ("checkpoint-2", "done"), ("checkpoint-4", "failed"), ("checkpoint-6", "failed")]
    fast = json.loads(result.outputs.files["fast_eval_results"].read_text())
    assert [e is None for e in fast["fast_eval_results"]["blimp"]] == [False, True, True]


def test_hub_revisions_of_a_pythia_named_model_are_swept_beside_the_published_curve(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    trained = train(tmp_path / "trained", blimp_sentences(FULL_BLIMP_DIR, PARADIGMS, 24),
                    architecture="gpt_neox", steps=4, save_every=2, save_first=True,
                    name=lambda step: f"step{step}")
    folders = {path.name: path for path in trained}
    folders["main"] = trained[-1]
    folders["refs/pr/1"] = trained[1]  # a pull request's ref: no branch of the training run
    commits = hub_cache(tmp_path / "hub", "EleutherAI/pythia-160m-seed3", folders)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    result = sweep("EleutherAI/pythia-160m-seed3", SUITES, revisions="step*",
                   pairs_per_paradigm=3, output_path=tmp_path / "out",
                   local_path=tmp_path / "prod_env")
    assert result.model == "pythia-160m-seed3"
    assert [(c.name, c.x, c.commit) for c in result.checkpoints] == [
        (f"step{s}", s, commits[f"step{s}"]) for s in (0, 2, 4)]
    assert all(c.status == "done" for c in result.checkpoints), result.failed
    assert result.checkpoints[0].model == "EleutherAI/pythia-160m-seed3@step0"
    published = _rows(result.outputs.files["published"])
    assert {r["suite"] for r in published} == set(SUITES)
    assert len(published) == 24 * len(PARADIGMS)
    assert "a tie (both sentences equally likely) counts as right" in result.outputs.summary
    assert "a space before each sentence" in result.outputs.summary
    rows = _rows(result.outputs.files["checkpoints"])
    assert [r["commit"] for r in rows] == [commits[f"step{s}"] for s in (0, 2, 4)]
    everything = sweep("EleutherAI/pythia-160m-seed3", SUITES, revisions="all",
                       pairs_per_paradigm=3, output_path=tmp_path / "out",
                       local_path=tmp_path / "prod_env")
    # Not main, nor the pull request's ref (which stopped the sweep: it has no step).
    assert [c.name for c in everything.checkpoints] == ["step0", "step2", "step4"]
    with pytest.raises(CheckpointSearchError, match=r"no revision matches 'chck_\*M'"):
        sweep("EleutherAI/pythia-160m-seed3", SUITES, revisions="chck_*M", output_path=tmp_path)
    # A pattern of a list that matches nothing is said (it was dropped without a word).
    with pytest.raises(CheckpointSearchError, match=r"no revision matches step9\*"):
        sweep("EleutherAI/pythia-160m-seed3", SUITES, revisions="step0,step9*",
              output_path=tmp_path)
    # A revision named with a "/" is scored (HELM took "refs/pr/1" for the model "pr/1").
    named = sweep("EleutherAI/pythia-160m-seed3", SUITES[:1], revisions="refs/pr/1",
                  x_values="refs/pr/1=2", pairs_per_paradigm=3, output_path=tmp_path / "pr",
                  local_path=tmp_path / "prod_env")
    assert [(c.status, c.model) for c in named.checkpoints] == [
        ("done", "EleutherAI/pythia-160m-seed3@refs_pr_1")], named.failed
    assert not math.isnan(float(rows[0]["mean_accuracy"]))
