"""A sweep's checkpoint process ends with the sweep's process, however that ends.

Before: ``kill -9`` of a sweep (or the out-of-memory killer choosing it) left the checkpoint's
forked child running, reparented to PID 1, loading and scoring for minutes; a sweep started again
then had two processes writing the same run folders and request cache.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from sqlitedict import SqliteDict

from fault_helpers import private_env, wait_for_text

#: A sweep's process as far as its checkpoint's child goes: the interruption handler every
#: ``syntaxgym-helm`` command installs, then :func:`run_in_child` from the main thread, with work
#: that computes 100 answers into a request cache (fewer than a batch: none committed yet), says
#: its pid and then runs on, as a checkpoint that is still loading or scoring. Another thread runs
#: beside the main one, as in a sweep (a killed process's threads end one by one).
SWEEP = textwrap.dedent("""
    import os, sys, threading, time
    from helm.common.cache import SqliteCacheConfig
    from syntaxgym_helm.api.checkpoint_process import run_in_child
    from syntaxgym_helm.clients import interruption
    from syntaxgym_helm.clients.request_cache import RequestCache

    def checkpoint():
        cache = RequestCache(SqliteCacheConfig(sys.argv[1]), commit_every=256)
        for index in range(100):
            cache.get({"prompt": f"p{index}"}, lambda: {"logprobs": [-1.0]})
        print("child", os.getpid(), flush=True)
        time.sleep(120)

    assert interruption.install(end_process=True)
    threading.Thread(target=time.sleep, args=(120,), daemon=True).start()
    run_in_child(checkpoint)
""")


def _running(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie does not: whoever adopted it, PID 1 here, may
    not reap it at once)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


@pytest.mark.limit(90)
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a sweep forks only on Linux")
def test_a_checkpoint_process_saves_and_ends_when_the_sweep_is_killed(tmp_path: Path) -> None:
    """SIGKILL to the sweep's process (no handler of its own runs) ends the checkpoint's child
    within seconds, its answers kept in the request cache, and its one line on the output it
    shares with the sweep."""
    log, cache = tmp_path / "log.txt", tmp_path / "cache.sqlite"
    with open(log, "wb") as stream:
        sweep = subprocess.Popen([sys.executable, "-c", SWEEP, str(cache)], cwd=tmp_path,
                                 env=private_env(tmp_path / "plugin_cache"), stdout=stream,
                                 stderr=subprocess.STDOUT, start_new_session=True)
    child = 0
    try:
        assert wait_for_text(log, "child ", sweep, 60), log.read_text()
        child = int(log.read_text().split("child ", 1)[1].split()[0])
        assert _running(child)
        sweep.kill()
        assert sweep.wait(timeout=10) == -signal.SIGKILL
        deadline = time.monotonic() + 20
        while _running(child) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _running(child), f"the checkpoint's process {child} outlived the sweep's"
    finally:
        sweep.kill()
        if child and _running(child):
            os.kill(child, signal.SIGKILL)
    text = log.read_text()
    assert text.strip().splitlines()[-1].startswith(
        f"syntaxgym-helm: interrupted (SIGTERM); kept in the request cache: {cache} "
        "(100 answers saved by this process); the sweep's process has ended; run the same "
        "command again to go on ("), text
    assert "Traceback" not in text
    with SqliteDict(str(cache)) as table:
        assert len(table) == 100
