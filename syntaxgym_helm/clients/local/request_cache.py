"""HELM's request cache for the local client, held open and committed in batches."""

from __future__ import annotations

import atexit
import threading
import time
from typing import Callable, Mapping, Sequence

from helm.common.cache import (
    Cache,
    KeyValueStoreCacheConfig,
    SqliteCacheConfig,
    cache_stats,
    create_key_value_store,
)
from helm.common.key_value_store import request_to_key


class RequestCache:
    """HELM's request cache for this client: the same store, keys and values as
    :class:`helm.common.cache.Cache` (and its query/compute statistics), but a SQLite store is
    held open and committed in batches instead of opened, written and committed per request
    (which costs HELM's threads several times the scoring itself). Other stores go through
    ``Cache.get``.
    """

    COMMIT_EVERY = 256  # writes
    COMMIT_AFTER_S = 5.0
    BUSY_TIMEOUT_MS = 300_000  # how long a write waits for another process's commit

    def __init__(self, cache: Cache | None) -> None:
        self.cache = cache
        self._lock = threading.Lock()
        self._table = None
        self._uncommitted = 0
        self._last_commit = time.monotonic()
        config = cache.config if cache is not None else None
        if isinstance(config, SqliteCacheConfig):
            from sqlitedict import SqliteDict

            # outer_stack=False: SqliteDict would otherwise capture a stack trace per access.
            self._table = SqliteDict(config.path, autocommit=False, outer_stack=False)
            # Several processes may share this file (MultiGPURunner's workers: one file per
            # model organization). Our writes stay uncommitted for up to COMMIT_AFTER_S plus a
            # batch, longer than sqlite's default 5 s wait for another writer's lock.
            self._table.conn.execute(f"PRAGMA busy_timeout = {self.BUSY_TIMEOUT_MS}")
            self._stats_key = config.cache_stats_key
            atexit.register(self.close)

    def get(self, key: Mapping, compute: Callable[[], dict]) -> tuple[dict, bool]:
        """The cached response for ``key``, else ``compute()``'s (then cached)."""
        if self._table is None:
            if self.cache is None:
                return compute(), False
            return self.cache.get(key, compute)
        cache_stats.increment_query(self._stats_key)
        text = request_to_key(key)
        response = self._table.get(text)
        if response is not None:
            return response, True
        cache_stats.increment_compute(self._stats_key)
        response = compute()
        self._table[text] = response
        with self._lock:
            self._uncommitted += 1
            due = (self._uncommitted >= self.COMMIT_EVERY
                   or time.monotonic() - self._last_commit > self.COMMIT_AFTER_S)
        if due:
            self.commit()
        return response, False

    def contains(self, keys: Sequence[Mapping]) -> list[bool]:
        if self._table is not None:
            return [request_to_key(key) in self._table for key in keys]
        if self.cache is None or not isinstance(self.cache.config, KeyValueStoreCacheConfig):
            return [False] * len(keys)
        with create_key_value_store(self.cache.config) as store:
            return [store.contains(key) for key in keys]

    def commit(self) -> None:
        if self._table is None:
            return
        with self._lock:
            self._uncommitted = 0
            self._last_commit = time.monotonic()
        self._table.commit()

    def close(self) -> None:
        if self._table is not None:
            table, self._table = self._table, None
            table.commit()
            table.close()
