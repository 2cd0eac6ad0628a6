"""The end of a model server's life: closing it frees its model (a folder saved again, a sweep
that holds one checkpoint in memory at a time), and a server whose model could not be loaded says
why."""

from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Any


class ServerLifecycle:
    """What :class:`~.server.ModelServer` adds to close itself; it sets the attributes used here
    (its condition, queue, pending futures, thread, memo, the engine and the error that making
    it raised)."""

    _cond: threading.Condition
    _queue: list[str]
    _pending: dict[str, Future]
    _thread: threading.Thread
    _ready: threading.Event
    _setup_error: BaseException | None
    _memo: Any
    _kept: dict[str, Any]
    _closed: str | None
    engine: Any

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called (the server computes nothing more)."""
        return self._closed is not None

    @property
    def setup_error(self) -> BaseException | None:
        """What making the engine (loading the model) raised, once it is done; None if nothing."""
        return self._setup_error if self._ready.is_set() else None

    def close(self, reason: str, timeout_s: float | None = None) -> bool:
        """Stop serving: what waits fails with ``reason``, and the engine thread ends after the
        pass it is computing, dropping the model (freed with its last reference). With
        ``timeout_s``, wait that long for the thread to end and drop the engine and the results
        kept, so that the model's memory can be handed back; returns whether the thread ended."""
        with self._cond:
            self._closed, pending, self._pending, self._queue = reason, self._pending, {}, []
            self._cond.notify_all()
        for future in pending.values():
            if not future.done():
                future.set_exception(RuntimeError(reason))
        if timeout_s is None:
            return not self._thread.is_alive()
        self._thread.join(timeout_s)
        self.engine = None
        self._memo.clear()
        self._kept.clear()
        return not self._thread.is_alive()
