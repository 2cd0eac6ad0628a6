"""Faults in the request cache (HELM's SQLite file): nothing hangs, damage is moved aside and
named, a full disk stops the writing and says so, a stuck lock ends with the file's name, and no
answer that cannot be true is ever kept.

Each test that could hang carries its own wall-clock limit; subprocesses have timeouts.
"""

from __future__ import annotations

import math
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from helm.common.cache import SqliteCacheConfig
from sqlitedict import SqliteDict

from fault_helpers import garbage, overwrite
from syntaxgym_helm.clients.request_cache import RefusedAnswer, RequestCache
from syntaxgym_helm.clients.sqlite_store import CacheFileError, SqliteStore

pytestmark = pytest.mark.limit(60)


def _answer(index: int) -> dict:
    return {"tokens": ["<s>", f" word{index}"] * 20, "logprobs": [0.0, -1.5 - index / 1000] * 20,
            "request_time": 0.1}


def _filled(path: Path, count: int = 300) -> Path:
    """A cache file as HELM writes it (sqlitedict), ``count`` answers, about 200 kB."""
    with SqliteDict(str(path)) as table:
        for index in range(count):
            table[f'{{"prompt": "p{index}"}}'] = _answer(index)
        table.commit()
    return path


def _get(cache: RequestCache, index: int, computed: list[int]) -> tuple[dict, bool]:
    def compute() -> dict:
        computed.append(index)
        return _answer(index)

    return cache.get({"prompt": f"p{index}"}, compute)


@pytest.mark.parametrize("offset", [0, 4096])
def test_garbage_over_the_file_is_moved_aside_named_and_the_cache_started_again(
        tmp_path: Path, offset: int, helm_log: list) -> None:
    path = _filled(tmp_path / "syntaxgym.sqlite")
    overwrite(path, offset, garbage(64 << 10))  # 64 KiB of garbage (sqlitedict hung on it)
    computed: list[int] = []
    cache = RequestCache(SqliteCacheConfig(str(path)))
    assert _get(cache, 7, computed) == (_answer(7), False) and computed == [7]
    assert _get(cache, 7, computed)[1] is True  # the new file works
    (aside,) = tmp_path.glob("syntaxgym.sqlite.damaged-*")
    (warning,) = [line for line in helm_log if "is damaged" in line]
    assert f"the request cache {path} is damaged" in warning and str(aside) in warning
    cache.close()
    with SqliteDict(str(path)) as table:  # still HELM's format
        assert table['{"prompt": "p7"}'] == _answer(7)


def test_damage_met_while_the_file_is_in_use_is_moved_aside_too(
        tmp_path: Path, helm_log: list, monkeypatch: pytest.MonkeyPatch) -> None:
    """Damage the open-time check cannot see: a file too large to check page by page when opened
    (here: any file), damaged while in use."""
    import syntaxgym_helm.clients.sqlite_store as sqlite_store

    monkeypatch.setattr(sqlite_store, "QUICK_CHECK_MAX_BYTES", 0)
    path = _filled(tmp_path / "cache.sqlite", count=2000)
    cache = RequestCache(SqliteCacheConfig(str(path)))
    computed: list[int] = []
    assert _get(cache, 1, computed)[1] is True
    for offset in range(8192, path.stat().st_size, 4096):  # every page but the first two
        overwrite(path, offset, garbage(4096, seed=offset))
    for index in range(0, 2000, 97):  # lookups that reach the damaged pages
        response, _ = _get(cache, index, computed)
        assert response == _answer(index)
    assert any("is damaged" in line for line in helm_log)
    assert list(tmp_path.glob("cache.sqlite.damaged-*"))


def test_a_file_deleted_while_in_use_is_started_again(tmp_path: Path, helm_log: list) -> None:
    path = tmp_path / "cache.sqlite"
    cache = RequestCache(SqliteCacheConfig(str(path)))
    computed: list[int] = []
    _get(cache, 1, computed)
    path.unlink()  # sqlite would answer "attempt to write a readonly database"
    _get(cache, 2, computed)
    assert any(f"the request cache {path} was deleted or replaced while in use" in line
               for line in helm_log), helm_log
    cache.close()
    with SqliteDict(str(path)) as table:
        assert '{"prompt": "p2"}' in table


FULL_DISK = textwrap.dedent("""
    import resource, signal, sys
    from helm.common.cache import SqliteCacheConfig
    from syntaxgym_helm.clients.request_cache import RequestCache
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))  # a disk with 64 kB free
    cache = RequestCache(SqliteCacheConfig(sys.argv[1]), commit_every=20)
    answers = 0
    for index in range(2000):
        response, cached = cache.get({"prompt": f"p{index}"},
                                     lambda: {"tokens": ["x"] * 50, "logprobs": [-1.0] * 50})
        answers += response["logprobs"][0] == -1.0
    cache.close()
    print("answers", answers, "writable", cache.store is None)
""")


@pytest.mark.limit(120)
def test_a_full_disk_stops_the_writing_with_a_warning_and_never_hangs(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    done = subprocess.run([sys.executable, "-c", FULL_DISK, str(path)], capture_output=True,
                          text=True, timeout=100)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "answers 2000" in done.stdout  # every request was still answered
    output = done.stdout + done.stderr
    assert f"cannot write the request cache {path}" in output, output[-2000:]
    assert output.count("cannot write the request cache") == 1  # said once
    with SqliteDict(str(path)) as table:  # what was committed before the disk filled is kept
        assert 0 < len(table) < 2000


HOLD_LOCK = textwrap.dedent("""
    import sqlite3, sys, time
    connection = sqlite3.connect(sys.argv[1], isolation_level=None)
    connection.execute("BEGIN EXCLUSIVE")
    print("locked", flush=True)
    time.sleep(60)
""")


def test_a_lock_held_past_the_deadline_ends_with_the_files_name(tmp_path: Path) -> None:
    path = _filled(tmp_path / "cache.sqlite", count=3)
    store = SqliteStore(path, busy_timeout_s=1.0)
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(path)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"  # type: ignore[union-attr]
        started = time.monotonic()
        with pytest.raises(CacheFileError, match=f"the request cache {path} is still locked by "
                                                 "another process after 1 s"):
            store.get('{"prompt": "p1"}')
        assert time.monotonic() - started < 10
    finally:
        holder.kill()
        holder.wait(timeout=30)
    assert store.get('{"prompt": "p1"}') == _answer(1)  # released: usable again


def test_files_are_helms_format_both_ways(tmp_path: Path) -> None:
    from helm.common.key_value_store import SqliteKeyValueStore

    path = _filled(tmp_path / "cache.sqlite", count=2)  # written by sqlitedict
    cache = RequestCache(SqliteCacheConfig(str(path)))
    computed: list[int] = []
    assert _get(cache, 1, computed) == (_answer(1), True) and not computed
    _get(cache, 5, computed)
    cache.close()
    with SqliteKeyValueStore(str(path)) as store:  # HELM reads what we wrote
        assert store.get({"prompt": "p5"}) == _answer(5)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, 0.5])
def test_an_answer_that_cannot_be_a_logprob_is_refused_and_never_stored(
        tmp_path: Path, bad: float) -> None:
    from syntaxgym_helm.clients.local.client import impossible_logprob

    path = tmp_path / "cache.sqlite"
    cache = RequestCache(SqliteCacheConfig(str(path)), check=impossible_logprob)
    broken = {"tokens": ["<s>", "The", " keys"], "logprobs": [0.0, -2.0, bad]}
    with pytest.raises(RefusedAnswer, match="token 2 ' keys' has a logprob that is"):
        cache.get({"prompt": "The keys"}, lambda: broken)
    assert cache.contains([{"prompt": "The keys"}]) == [False]
    # Stored by an earlier version: read as a miss, computed again and replaced.
    cache.close()
    with SqliteDict(str(path)) as table:
        table['{"prompt": "The keys"}'] = broken
        table.commit()
    cache = RequestCache(SqliteCacheConfig(str(path)), check=impossible_logprob)
    fixed = {"tokens": ["<s>", "The", " keys"], "logprobs": [0.0, -2.0, -3.0]}
    assert cache.get({"prompt": "The keys"}, lambda: fixed) == (fixed, False)
    assert cache.get({"prompt": "The keys"}, lambda: broken) == (fixed, True)


def test_a_store_of_several_processes_waits_for_the_others_commit(tmp_path: Path) -> None:
    """Two processes writing one file (MultiGPURunner's workers): both finish, all answers
    kept (each waits, within its deadline, for the other's commit)."""
    code = textwrap.dedent("""
        import sys
        from helm.common.cache import SqliteCacheConfig
        from syntaxgym_helm.clients.request_cache import RequestCache
        cache = RequestCache(SqliteCacheConfig(sys.argv[1]), commit_every=7)
        for index in range(200):
            cache.get({"prompt": f"{sys.argv[2]}{index}"}, lambda: {"logprobs": [-1.0]})
        cache.close()
    """)
    path = tmp_path / "shared.sqlite"
    workers = [subprocess.Popen([sys.executable, "-c", code, str(path), name])
               for name in ("a", "b")]
    assert [worker.wait(timeout=50) for worker in workers] == [0, 0]
    with SqliteDict(str(path)) as table:
        assert len(table) == 400


def test_sqlite_reports_damage_as_damage() -> None:
    """The store tells damage (move aside) from a lock (wait, then fail) by sqlite's codes."""
    from syntaxgym_helm.clients.sqlite_store import _is_busy, _is_damage

    damaged = sqlite3.connect(":memory:")
    with pytest.raises(sqlite3.DatabaseError) as caught:
        damaged.execute("PRAGMA no_such_pragma = 1; SELECT * FROM missing")
    assert not _is_damage(caught.value) and not _is_busy(caught.value)


@pytest.mark.limit(120)
def test_a_nan_from_broken_weights_fails_its_request_and_is_not_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The local engine on a real (tiny) model whose output layer holds a NaN: every logprob is
    NaN. The request fails without stopping the run, nothing is cached, and once the weights are
    fixed the same request is computed and cached."""
    import torch
    from helm.common.request import Request

    from fault_helpers import save_tiny_checkpoint
    from syntaxgym_helm.clients.local.client import SyntaxGymClient
    from syntaxgym_helm.clients.local.model_loading import load_model_and_tokenizer
    from syntaxgym_helm.clients.local.server import ModelServerFactory

    monkeypatch.setattr(ModelServerFactory, "_servers", {})
    monkeypatch.setattr(ModelServerFactory, "_models", {})
    folder = save_tiny_checkpoint(tmp_path / "tiny")
    request = Request(model="mylab/tiny", model_deployment="mylab/tiny", echo_prompt=True,
                      prompt="the keys to the cabinet are on the table .", max_tokens=0)
    config = SqliteCacheConfig(str(tmp_path / "cache.sqlite"))
    results = []
    for broken in (True, False):
        model, tokenizer = load_model_and_tokenizer(str(folder), device="cpu")
        if broken:
            with torch.no_grad():
                model.lm_head.weight[3, 0] = math.nan
        ModelServerFactory._servers.clear()
        client = SyntaxGymClient(config, str(folder), bos_text="<s>", device="cpu",
                                 progress=False)
        ModelServerFactory._models[client._model_key] = (model, tokenizer)
        results.append(client.make_request(request))
        client.flush()
        results.append(client.request_cache.contains([client._cache_key(request)])[0])
    failed, kept_then, fixed, kept_now = results
    assert not failed.success and failed.error_flags.is_fatal is False
    assert "the model's answer cannot be used: token 1 'the' has a logprob that is NaN" in \
        failed.error and "(this answer is not cached)" in failed.error
    assert kept_then is False
    assert fixed.success and not fixed.cached and kept_now is True
