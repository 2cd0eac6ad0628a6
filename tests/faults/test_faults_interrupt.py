"""How a run ends when interrupted: in seconds, status 130 (SIGINT) or 143 (SIGTERM), one line,
what was computed kept; a rerun gives the results of an uninterrupted run.

Before: Ctrl-C during scoring ended ``helm-run`` with ``terminate called without an active
exception`` (a C++ abort, status 134) or, at best, after 10 s of HELM's threads draining the
engine, with a traceback and the last batch of answers lost.
"""

from __future__ import annotations

import json
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
