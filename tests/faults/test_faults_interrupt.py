"""How a run ends when interrupted: in seconds, status 130 (SIGINT) or 143 (SIGTERM), one line,
what was computed kept; a rerun gives the results of an uninterrupted run.

Before: Ctrl-C during scoring ended ``helm-run`` with ``terminate called without an active
exception`` (a C++ abort, status 134) or, at best, after 10 s of HELM's threads draining the
engine, with a traceback and the last batch of answers lost.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from sqlitedict import SqliteDict

from fault_helpers import BIN, private_env, start_with_default_signals, wait_for_text
from script_processes import run_script

WORKER = textwrap.dedent("""
    import sys, time
    from helm.common.cache import SqliteCacheConfig
    from syntaxgym_helm.clients import interruption
    from syntaxgym_helm.clients.request_cache import RequestCache
    assert interruption.install(end_process=sys.argv[2] == "helm-run")
    cache = RequestCache(SqliteCacheConfig(sys.argv[1]), commit_every=256)
    for index in range(100):  # fewer than a batch: all of them still uncommitted
        cache.get({"prompt": f"p{index}"}, lambda: {"logprobs": [-1.0]})
    print("computed", flush=True)
    try:
        time.sleep(60)
    except KeyboardInterrupt:  # a script using the Python API may catch it
        print("caught KeyboardInterrupt", flush=True)
""")


def _interrupt_worker(tmp_path: Path, mode: str, signum: int) -> tuple[int, float, str]:
    """Run :data:`WORKER` (``mode``: ``helm-run`` or ``script``), send it ``signum`` once it has
    computed; its status, the seconds it took to end, and its output."""
    log = tmp_path / "log.txt"
    process = start_with_default_signals(
        [sys.executable, "-c", WORKER, str(tmp_path / "cache.sqlite"), mode], cwd=tmp_path,
        env=private_env(tmp_path / "cache"), log=log)
    try:
        assert wait_for_text(log, "computed", process, 40), log.read_text()
        process.send_signal(signum)
        started = time.monotonic()
        status = process.wait(timeout=20)
        return status, time.monotonic() - started, log.read_text()
    finally:
        process.kill()


def _saved(path: Path) -> int:
    with SqliteDict(str(path)) as table:
        return len(table)


@pytest.mark.limit(60)
@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupted_process_commits_its_cache_and_ends_with_one_line(
        tmp_path: Path, signum: int, status: int) -> None:
    ended, seconds, text = _interrupt_worker(tmp_path, "helm-run", signum)
    assert ended == status and seconds < 10
    name = signal.Signals(signum).name
    assert text.strip().splitlines()[-1].startswith(
        f"syntaxgym-helm: interrupted ({name}); kept in the request cache: "
        f"{tmp_path / 'cache.sqlite'} (100 answers saved by this process)"), text
    assert "Traceback" not in text and _saved(tmp_path / "cache.sqlite") == 100


def test_elsewhere_ctrl_c_saves_and_then_raises_keyboard_interrupt(tmp_path: Path) -> None:
    """Outside helm-run (a script or notebook using the Python API), the answers are saved and
    the interrupt goes on as Python's own: a KeyboardInterrupt the caller may catch."""
    ended, _, text = _interrupt_worker(tmp_path, "script", signal.SIGINT)
    assert ended == 0 and text.strip().endswith("caught KeyboardInterrupt")
    assert (f"kept in the request cache: {tmp_path / 'cache.sqlite'} (100 answers saved by "
            "this process)") in text
    assert _saved(tmp_path / "cache.sqlite") == 100


SCRATCH_WORKER = textwrap.dedent("""
    import os, sys, time
    from syntaxgym_helm.api.helm_engine import local_path_of
    from syntaxgym_helm.clients import interruption
    assert interruption.install(end_process=sys.argv[1] == "helm-run")
    folder = local_path_of(None)  # no prod_env here: a scratch folder
    if os.fork() == 0:  # a forked child that ends at once leaves its parent's folder alone
        os._exit(0) if sys.argv[2] == "os_exit" else sys.exit(0)
    os.wait()
    print("scratch", folder, folder.is_dir(), flush=True)
    time.sleep(60)
""")


@pytest.mark.limit(120)
@pytest.mark.parametrize(("mode", "child"), [("helm-run", "os_exit"), ("script", "exit")])
def test_an_interrupted_process_removes_its_scratch_folder(tmp_path: Path, mode: str,
                                                           child: str) -> None:
    """The Python API's scratch folder for HELM's local path (where no ``prod_env`` is) goes
    with the process, also when a signal ends it at once (before: one empty folder left in the
    temporary directory by every interrupted command), and not with a child forked from it."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    log = tmp_path / "log.txt"
    process = start_with_default_signals(
        [sys.executable, "-c", SCRATCH_WORKER, mode, child], cwd=tmp_path,
        env=private_env(tmp_path / "cache", TMPDIR=str(scratch)), log=log)
    try:
        assert wait_for_text(log, "scratch", process, 60), log.read_text()
        folder, alive = log.read_text().split("scratch ", 1)[1].split()[:2]
        assert alive == "True" and Path(folder).parent == scratch, log.read_text()
        process.send_signal(signal.SIGINT)
        status = process.wait(timeout=20)
    finally:
        process.kill()
    assert status == (130 if mode == "helm-run" else -signal.SIGINT), log.read_text()
    assert list(scratch.iterdir()) == [], log.read_text()


def _per_instance(output: Path) -> dict[str, dict[str, list]]:
    """Per run and instance, its stats (name -> [count, sum]) but the efficiency ones (how long
    the model took, how much came from the cache: a rerun differs there by design), for exact
    comparison."""
    from syntaxgym_helm.harness.stats import CACHED, INFERENCE_TIME

    found = {}
    for run in sorted((output / "runs" / "interrupt").glob("syntaxgym:*")):
        stats = json.loads((run / "per_instance_stats.json").read_text())
        found[run.name] = {entry["instance_id"]: {s["name"]["name"]: [s["count"], s["sum"]]
                                                  for s in entry["stats"]
                                                  if s["name"]["name"] not in (CACHED,
                                                                               INFERENCE_TIME)}
                           for entry in stats}
    return found


@pytest.mark.slow
@pytest.mark.limit(1500)
def test_ctrl_c_during_scoring_ends_at_once_and_a_rerun_equals_an_uninterrupted_run(
        tmp_path: Path, smollm2_weights: Path) -> None:
    from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M

    model = SMOLLM2_135M.syntaxgym_name
    command = [str(BIN / "helm-run"), "--run-entries",
               *(f"syntaxgym:suite={suite},model={model}"
                 for suite in ("mvrr", "number_prep", "npi_orc_any")),
               # 12 items a suite: the first run's first batch (48 prompts) still takes seconds
               "--suite", "interrupt", "--max-eval-instances", "12"]
    env = private_env(tmp_path / "cache", smollm2_weights)
    interrupted, whole = tmp_path / "interrupted", tmp_path / "whole"
    for folder in (interrupted, whole):
        folder.mkdir()
    log = interrupted / "log.txt"
    process = start_with_default_signals(command, cwd=interrupted, env=env, log=log)
    try:
        assert wait_for_text(log, "distinct prompts", process, 600), log.read_text()[-3000:]
        time.sleep(1.0)  # inside the first run's scoring
        process.send_signal(signal.SIGINT)
        started = time.monotonic()
        status = process.wait(timeout=60)
        ended = time.monotonic() - started
    finally:
        process.kill()
    text = log.read_text(errors="replace")
    assert status == 130 and ended < 15, (status, ended, text[-3000:])
    assert "terminate called" not in text and "Traceback" not in text
    assert text.strip().splitlines()[-1].startswith("syntaxgym-helm: interrupted (SIGINT); ")
    # The rerun takes what was kept and computes the rest; an uninterrupted run, from nothing
    # (neither is interrupted: forked from the preloaded forkserver, see script_processes).
    for folder in (interrupted, whole):
        done = run_script(command, cwd=folder, env=env, timeout=900)
        assert done.returncode == 0, done.stderr[-3000:]
    assert _per_instance(interrupted / "benchmark_output") == _per_instance(whole /
                                                                           "benchmark_output")
    assert len(_per_instance(whole / "benchmark_output")) == 3


@pytest.mark.limit(120)
def test_what_the_engine_computed_ahead_of_helm_is_saved_when_interrupted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the run's requests handed over up front, the engine computes answers before HELM's
    threads ask for them; an interrupted run stores those too (a tiny real model)."""
    from helm.common.cache import SqliteCacheConfig
    from helm.common.request import Request

    from fault_helpers import save_tiny_checkpoint
    from syntaxgym_helm.clients.local.client import SyntaxGymClient
    from syntaxgym_helm.clients.local.model_loading import load_model_and_tokenizer
    from syntaxgym_helm.clients.local.server import ModelServerFactory

    monkeypatch.setattr(ModelServerFactory, "_servers", {})
    monkeypatch.setattr(ModelServerFactory, "_models", {})
    folder = save_tiny_checkpoint(tmp_path / "tiny")
    client = SyntaxGymClient(SqliteCacheConfig(str(tmp_path / "cache.sqlite")), str(folder),
                             bos_text="<s>", device="cpu", progress=False)
    ModelServerFactory._models[client._model_key] = load_model_and_tokenizer(str(folder),
                                                                             device="cpu")
    requests = [Request(model="mylab/tiny", model_deployment="mylab/tiny", echo_prompt=True,
                        max_tokens=0, prompt=prompt)
                for prompt in ("the keys are on the table .", "the key to the cabinet is .",
                               "the keys to the cabinet are on the table .")]
    assert client.prefetch(requests) == 3  # queued; HELM has asked for none of them yet
    deadline = time.monotonic() + 60
    while len(client.server.finished_results(1.0)) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert client.save_computed() == 3
    assert client.save_computed() == 0  # already kept
    client.flush()
    keys = [client._cache_key(request) for request in requests]
    assert client.request_cache.contains(keys) == [True, True, True]
    answer = client.make_request(requests[2])  # HELM asks now: from the cache, as computed
    assert answer.success and answer.cached


FORKING_WORKER = textwrap.dedent("""
    import multiprocessing, signal, time
    from syntaxgym_helm.clients import interruption
    # As in a terminal: Python's own SIGINT handler. A process started from a background job
    # inherits SIGINT ignored, which install() leaves alone (the test once failed so).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    assert interruption.install(end_process=False)
    assert signal.getsignal(signal.SIGINT) is signal.getsignal(signal.SIGTERM)  # both ours
    context = multiprocessing.get_context("fork")
    lock = context.Lock()

    def handlers(queue):
        queue.put((signal.getsignal(signal.SIGTERM) is signal.SIG_DFL,
                   signal.getsignal(signal.SIGINT) is signal.default_int_handler))

    def blocked(lock):
        lock.acquire()  # held by the parent: sleeps in sem_wait until ended

    queue = context.SimpleQueue()
    child = context.Process(target=handlers, args=(queue,))
    child.start(); child.join(10)
    print("child handlers", *queue.get(), flush=True)
    lock.acquire()
    child = context.Process(target=blocked, args=(lock,))
    child.start()
    time.sleep(0.5)
    started = time.monotonic()
    child.terminate(); child.join(10)
    print("ended", child.exitcode, round(time.monotonic() - started, 1), flush=True)
""")


@pytest.mark.limit(60)
def test_a_forked_worker_gets_the_default_handlers_and_ends_on_sigterm(tmp_path: Path) -> None:
    """A process forked after install (a report's pool worker) has SIGTERM's default action
    and Python's SIGINT back: Pool.terminate's SIGTERM ends it even while it sleeps on a lock
    (a Python-level handler can be marked due there and never run: a test run hung so)."""
    done = subprocess.run([sys.executable, "-c", FORKING_WORKER], cwd=tmp_path,
                          env=private_env(tmp_path / "cache"), capture_output=True, text=True,
                          timeout=50)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "child handlers True True", done.stdout
    word, exitcode, seconds = lines[1].split()
    assert word == "ended" and int(exitcode) == -signal.SIGTERM and float(seconds) < 5


def _interrupt_command(command: list[str], cwd: Path, env: dict[str, str], ready,
                       timeout_s: float = 600) -> tuple[int, str]:
    """Start ``command`` as a terminal would, wait until ``ready()``, then send SIGINT to its
    whole process group (as a terminal's Ctrl-C reaches every process of a command); its status
    and output."""
    log = cwd / "log.txt"
    process = start_with_default_signals(command, cwd=cwd, env=env, log=log)
    try:
        deadline = time.monotonic() + timeout_s
        while not ready(log) and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert process.poll() is None, f"it ended first: {log.read_text()[-3000:]}"
        os.killpg(process.pid, signal.SIGINT)
        status = process.wait(timeout=30)
    finally:
        process.kill()
    return status, log.read_text(errors="replace")


def _one_true_line(status: int, text: str) -> str:
    assert status == 130, (status, text[-3000:])
    assert "Traceback" not in text and "terminate called" not in text, text[-3000:]
    last = text.strip().splitlines()[-1]
    assert last.startswith("syntaxgym-helm: interrupted (SIGINT); "), text[-3000:]
    return last


@pytest.mark.slow
@pytest.mark.limit(900)
@pytest.mark.parametrize("moment", ["dequantising", "loading"])
def test_ctrl_c_during_a_commands_model_load_ends_with_status_130_and_one_true_line(
        tmp_path: Path, smollm2_weights: Path, moment: str) -> None:
    """Before: a traceback, or "terminate called without an active exception" and status 134
    (3 of 3 tries) while the engine thread loaded the model; and "nothing was computed to keep"
    while scoring, which was untrue."""
    from syntaxgym_helm.clients.checked_folders import folder_problem
    from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M

    (tmp_path / "texts.txt").write_text("The keys to the cabinet are on the table.\n" * 50)
    cache = tmp_path / "cache"
    env = private_env(cache, smollm2_weights if moment == "loading" else None)

    def ready(log: Path) -> bool:
        if moment == "dequantising":  # its temporary folder is there: the copy is being written
            return any((cache / "weights").glob(".*.tmp-*"))
        return "Loading weights" in log.read_text(errors="replace")

    status, text = _interrupt_command(
        [str(BIN / "syntaxgym-helm"), "surprisal", "texts.txt", "--model",
         SMOLLM2_135M.syntaxgym_name, "--device", "cpu", "-o", "words.tsv"], tmp_path, env, ready)
    last = _one_true_line(status, text)
    assert last.split("); ", 1)[1].startswith(
        "no word's surprisal is kept; words.tsv was not written: run the command again"), last
    assert not (tmp_path / "words.tsv").exists()
    if moment == "loading":  # the checked copy is intact and kept
        assert folder_problem(cache / "weights" / smollm2_weights.name) is None


SCRIPT_LOADING = textwrap.dedent("""
    import sys
    from syntaxgym_helm import score_sentences
    score_sentences(["The keys are on the table."], sys.argv[1])
""")


@pytest.mark.slow
@pytest.mark.limit(900)
def test_ctrl_c_in_a_script_while_the_model_loads_keeps_the_weights(
        tmp_path: Path, smollm2_weights: Path) -> None:
    """A script's Ctrl-C goes on as its KeyboardInterrupt, and Python exits while the engine
    thread still loads. Before: the process aborted ("terminate called without an active
    exception", status 134), or the load failed ("cannot schedule new futures after interpreter
    shutdown") and that was taken for damaged weights: the checked 540 MB copy was removed, to
    be dequantised again."""
    from syntaxgym_helm.clients.checked_folders import folder_problem
    from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M

    cache = tmp_path / "cache"
    env = private_env(cache, smollm2_weights)
    status, text = _interrupt_command(
        [sys.executable, "-c", SCRIPT_LOADING, SMOLLM2_135M.syntaxgym_name], tmp_path, env,
        lambda log: "Loading weights" in log.read_text(errors="replace"))
    # Python's own end of a KeyboardInterrupt (-SIGINT), or 130 where the engine thread was
    # still at work (before: an abort, "terminate called without an active exception").
    assert status in (130, -signal.SIGINT), (status, text[-3000:])
    assert "terminate called" not in text and "unusable" not in text, text[-3000:]
    assert folder_problem(cache / "weights" / smollm2_weights.name) is None


@pytest.mark.limit(300)
def test_ctrl_c_while_a_report_is_written_ends_every_process_with_one_line(
        tmp_path: Path) -> None:
    """The report's pool workers get the terminal's SIGINT too: they ignore it, and the parent
    ends them; one line says the report is incomplete (before: a traceback per process)."""
    from fault_helpers import ROOT

    output = Path(shutil.copytree(ROOT / "tests" / "fixtures" / "blimp_run",
                                  tmp_path / "benchmark_output"))
    status, text = _interrupt_command(
        [str(BIN / "syntaxgym-helm"), "report", str(output)], tmp_path,
        private_env(tmp_path / "cache"),
        lambda log: "writing reports" in log.read_text(errors="replace"))
    last = _one_true_line(status, text)
    assert last.split("); ", 1)[1].startswith(
        f"the report in {output / 'syntaxgym_report' / 'blimp_fixture'} is incomplete: run the "
        "command again"), last
    time.sleep(1.0)
    assert "KeyboardInterrupt" not in (tmp_path / "log.txt").read_text(errors="replace")


@pytest.mark.slow
@pytest.mark.limit(600)
def test_ctrl_c_during_a_sweeps_checkpoint_ends_its_process_saves_and_a_rerun_completes(
        tmp_path: Path, training_run: Path) -> None:
    """A sweep runs each checkpoint in a child process (which ignores the terminal's SIGINT):
    the parent stops it, the child saves its answers as an interrupted command does, and the
    parent's one line says so; no process of the sweep is left, and the same command again
    finishes every checkpoint."""
    from fixtures import FULL_BLIMP_DIR
    from training_runs import PARADIGMS

    env = private_env(tmp_path / "cache", SYNTAXGYM_BLIMP_DIR=str(FULL_BLIMP_DIR))
    command = [str(BIN / "syntaxgym-helm"), "sweep", str(training_run / "checkpoint-[24]"),
               "--suites", *(f"blimp_{uid}" for uid in PARADIGMS), "--pairs-per-paradigm",
               "500", "--no-plots", "--local-path", "prod_env", "--output-path", "out"]
    cache_files = tmp_path / "prod_env" / "cache"
    status, text = _interrupt_command(
        command, tmp_path, env,
        lambda log: "runs as local/" in log.read_text(errors="replace")
        and any(cache_files.glob("*.sqlite")))
    last = _one_true_line(status, text)
    assert last.split("); ", 1)[1].startswith("the checkpoint's process stopped"), last
    # What the sweep keeps is said once, by the parent (the child speaks for its cache only).
    assert last.count("checkpoints finished, recorded in") == 1, last
    assert "0 of 2 checkpoints finished" in last and "run the same command again" in last, last
    assert last.count("run the same command again") == 1, last
    left = subprocess.run(["pgrep", "-f", str(training_run / "checkpoint-[24]")],
                          capture_output=True, text=True, check=False)
    assert left.stdout == "", left.stdout
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.count("checkpoint-") >= 2 and "failed" not in done.stderr
