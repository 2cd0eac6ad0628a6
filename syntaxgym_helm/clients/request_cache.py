"""The plugin clients' request cache: HELM's, made safe to keep between runs.

:class:`RequestCache` is a drop-in :class:`helm.common.cache.Cache` (same configuration, keys,
values, file and query/compute statistics) that the plugin's clients and tokenizers use in place
of HELM's. It differs in four ways:

1. **A SQLite file cannot hang the process** (:mod:`.sqlite_store`): every lock wait has a
   deadline, a damaged file is moved aside with a warning and started again, a failed write (full
   disk) is reported and writing stops, errors name the file.
2. **Only possible answers are kept.** ``get(key, compute, check)`` (or the cache's own
   ``check``): an answer ``check`` refuses
   (a NaN logprob, tokens that do not spell the prompt) raises :class:`RefusedAnswer` and is never
   stored; a stored answer it refuses (cached by an earlier version) is computed again.
3. **Keys can name more than the request** (``key_fields``): the checkpoint's identity
   (:mod:`.checkpoint_identity`), so a model name pointed at other weights gets other entries.
4. **Batched commits** (``commit_every``): the local engine's many fast answers are committed 256
   at a time or every 5 s, not one by one; :meth:`commit` (after each HELM run, at exit, and when
   the run is interrupted: :func:`commit_open_caches`) saves the rest.

Other stores (MongoDB, none) go through HELM's own key-value stores, with the same checks.
"""

from __future__ import annotations

import atexit
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from helm.common.cache import (
    Cache,
    CacheConfig,
    KeyValueStoreCacheConfig,
    SqliteCacheConfig,
    cache_stats,
    create_key_value_store,
)
from helm.common.key_value_store import request_to_key

from syntaxgym_helm.clients.sqlite_store import SqliteStore, open_store

Check = Callable[[Mapping[str, Any]], "str | None"]

_OPEN: weakref.WeakSet[RequestCache] = weakref.WeakSet()


#: Ends every :class:`RefusedAnswer` message (and so the error of its failed request).
REFUSED_MARK = "this answer is not cached"


class RefusedAnswer(ValueError):
    """A computed answer that cannot be true (the message says why); it is not cached."""


class RequestCache(Cache):
    """HELM's request cache for the plugin's clients; see the module doc."""

    COMMIT_AFTER_S = 5.0
    BUSY_TIMEOUT_S = 300.0  # how long a write waits for another process's commit

    def __init__(self, config: CacheConfig | None, *, key_fields: Mapping[str, Any] | None = None,
                 check: Check | None = None, commit_every: int = 1) -> None:
        self.config = config  # type: ignore[assignment]  # None: no caching
        self.key_fields = dict(key_fields or {})
        self.check = check  # for callers that cannot pass one (HELM's own client code)
        self.commit_every = max(1, int(commit_every))
        self._lock = threading.Lock()
        self._last_commit = time.monotonic()
        self.store: SqliteStore | None = None
        if isinstance(config, SqliteCacheConfig):
            # Several processes may share this file (MultiGPURunner's workers; HELM's tokenizer
            # of the same organisation), hence the long wait for another writer's lock.
            self.store = open_store(config.path, busy_timeout_s=self.BUSY_TIMEOUT_S)
            _OPEN.add(self)
            atexit.register(self.close)
        self._stats_key = config.cache_stats_key if config is not None else "none"

    @property
    def path(self) -> str | None:
        return str(self.store.path) if self.store is not None else None

    def full_key(self, key: Mapping[str, Any]) -> dict[str, Any]:
        return {**key, **self.key_fields}

    def get(self, key: Mapping, compute: Callable[[], dict],
            check: Check | None = None) -> tuple[dict, bool]:
        """The cached response for ``key``, else ``compute()``'s (then cached); an answer
        ``check`` refuses raises :class:`RefusedAnswer` and is not cached."""
        full = self.full_key(key)
        check = check or self.check
        if self.store is None:
            return self._get_through_helm(full, compute, check)
        cache_stats.increment_query(self._stats_key)
        text = request_to_key(full)
        response = self.store.get(text)
        if response is not None and (check is None or check(response) is None):
            return response, True
        cache_stats.increment_compute(self._stats_key)
        response = _checked(compute(), check)
        self.store.put(text, response)
        with self._lock:
            due = (self.store.pending >= self.commit_every
                   or time.monotonic() - self._last_commit > self.COMMIT_AFTER_S)
        if due:
            self.commit()
        return response, False

    def _get_through_helm(self, key: dict, compute: Callable[[], dict],
                          check: Check | None) -> tuple[dict, bool]:
        if not isinstance(self.config, KeyValueStoreCacheConfig):
            return _checked(compute(), check), False
        cache_stats.increment_query(self._stats_key)
        with create_key_value_store(self.config) as store:
            response = store.get(key)
            if response and (check is None or check(response) is None):
                return response, True
            cache_stats.increment_compute(self._stats_key)
            response = _checked(compute(), check)
            store.put(key, response)
        return response, False

    def put_if_absent(self, key: Mapping, response: dict, check: Check | None = None,
                      timeout_s: float = 2.0) -> bool:
        """Store a response computed outside :meth:`get` (what an interrupted run's engine had
        ready), unless ``key`` has one, ``check`` refuses it or the file stays busy longer than
        ``timeout_s``; returns whether it was stored."""
        store = self.store
        if store is None or (check is not None and check(response) is not None):
            return False
        text = request_to_key(self.full_key(key))
        with store.free_within(timeout_s) as free:
            if not free or store.contains([text])[0]:
                return False
            store.put(text, response)
            return True

    def contains(self, keys: Sequence[Mapping]) -> list[bool]:
        if self.store is not None:
            return self.store.contains([request_to_key(self.full_key(key)) for key in keys])
        if not isinstance(self.config, KeyValueStoreCacheConfig):
            return [False] * len(keys)
        with create_key_value_store(self.config) as store:
            return [store.contains(self.full_key(key)) for key in keys]

    def commit(self, timeout_s: float | None = None) -> bool:
        """Commit what is pending (see :meth:`SqliteStore.commit`); whether it could."""
        if self.store is None:
            return True
        with self._lock:
            self._last_commit = time.monotonic()
        return self.store.commit(timeout_s)

    def close(self) -> None:
        if self.store is not None:
            store, self.store = self.store, None
            _OPEN.discard(self)
            store.close()


def _checked(response: dict, check: Check | None) -> dict:
    problem = check(response) if check is not None else None
    if problem:
        raise RefusedAnswer(f"{problem} ({REFUSED_MARK})")
    return response


def open_caches() -> list[RequestCache]:
    """The request caches this process holds open."""
    return list(_OPEN)


def commit_open_caches(timeout_s: float = 2.0) -> list[tuple[str, int]]:
    """Commit every open request cache of this process, each waiting at most ``timeout_s`` for
    another thread to let go of it (an interrupted run keeps what it computed); returns each
    file and how many answers this process saved to it. Never raises."""
    saved: dict[str, int] = {}
    for cache in list(_OPEN):
        store = cache.store
        try:
            if store is not None and cache.commit(timeout_s):
                saved[str(store.path)] = saved.get(str(store.path), 0) + store.saved
        except Exception:  # noqa: BLE001 - the process is ending; save what can be saved
            continue
    return sorted(saved.items())
