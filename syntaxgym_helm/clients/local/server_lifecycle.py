"""The end of a model server's life: closing it frees its model (a sweep holds one checkpoint in
memory at a time), and a server whose model could not be loaded says why."""

from __future__ import annotations

import threading
from typing import Any


class ServerLifecycle:
    """What :class:`~.server.ModelServer` adds to close itself; it sets the attributes used here
    (its condition, queue, thread, memo, the engine and the error that making it raised)."""

    _cond: threading.Condition
    _queue: list[str]
    _thread: threading.Thread
    _ready: threading.Event
    _setup_error: BaseException | None
    _memo: Any
    _kept: dict[str, Any]
    _closing = False
    engine: Any

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called (the server computes nothing more)."""
        return self._closing

    @property
    def setup_error(self) -> BaseException | None:
        """What making the engine (loading the model) raised, once it is done; None if nothing."""
        return self._setup_error if self._ready.is_set() else None

    def close(self, timeout_s: float = 30.0) -> bool:
        """End the engine thread once its current batch is done (prompts still queued are
        dropped: they are closed with a run that asks for nothing more) and drop the engine and
        the results kept, so that the model can be freed; returns whether the thread ended
        within ``timeout_s``."""
        with self._cond:
            self._closing = True
            self._queue = []
            self._cond.notify_all()
        self._thread.join(timeout_s)
        self.engine = None
        self._memo.clear()
        self._kept.clear()
        return not self._thread.is_alive()
