"""A deadline on the whole of each HTTP request of a served-model client (connect, send, every
read).

The OpenAI library passes its ``timeout`` to httpx, where it bounds each phase and each *read*, not
the request: a server or proxy that sends its answer a byte a second keeps a request alive for as
long as the answer lasts. :class:`RequestDeadline` bounds each attempt (the first try and each of
the OpenAI library's retries) to ``seconds`` of wall-clock time, with public hooks only:

- an httpx ``request`` event hook starts a timer when an attempt starts, and adds httpcore's
  ``trace`` extension to the request, which hands over the connection's socket once connected;
- when the timer fires, the socket is shut down (``shutdown`` wakes a read blocked in another
  thread; ``close`` would not), so the attempt fails at once with a connection error, and the
  client reports it as a timeout (:attr:`Call.expired`).

Connections are not kept alive between requests: a reused connection is never "connected" again, so
its socket would not reach the timer. That costs one TCP (and TLS) handshake per request; on a local
server a fraction of a millisecond.
"""

from __future__ import annotations

import dataclasses
import socket
import threading
import time
from typing import Any

import httpx


@dataclasses.dataclass
class _Attempt:
    """One try of one request: its socket (once connected) and whether its deadline passed."""

    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)
    sock: socket.socket | None = None
    expired: bool = False
    timer: threading.Timer | None = None

    def expire(self) -> None:
        with self.lock:
            self.expired = True
            sock = self.sock
        _shut(sock)

    def trace(self, event: str, info: dict[str, Any]) -> None:
        """httpcore's ``trace`` extension: keep the newest socket of the connection (TCP, then
        TLS: wrapping a socket in TLS detaches the plain one)."""
        if event not in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
            return
        stream = info.get("return_value")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if not isinstance(sock, socket.socket):
            return
        with self.lock:
            self.sock = sock
            expired = self.expired
        if expired:  # the deadline passed while connecting
            _shut(sock)

    def cancel(self) -> None:
        if self.timer is not None:
            self.timer.cancel()


def _shut(sock: socket.socket | None) -> None:
    if sock is None:
        return
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # already closed: the attempt ended on its own


@dataclasses.dataclass
class Call:
    """The attempts of one client call (the first try and the OpenAI library's retries)."""

    attempts: list[_Attempt] = dataclasses.field(default_factory=list)
    started: float = dataclasses.field(default_factory=time.monotonic)

    @property
    def expired(self) -> int:
        """How many of the attempts were cut off by the deadline."""
        return sum(attempt.expired for attempt in self.attempts)

    def elapsed(self) -> float:
        return time.monotonic() - self.started


class RequestDeadline:
    """Bounds every attempt of every request of one httpx client to ``seconds``; see the module doc.

    Use :meth:`http_client` as the OpenAI client's ``http_client``, and wrap each call in
    :meth:`call` to learn whether the deadline cut it off. Thread-safe: HELM calls a client from
    several threads, and each thread's call keeps its own attempts.
    """

    def __init__(self, seconds: float) -> None:
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not (
                0 < seconds < float("inf")):
            raise ValueError(f"`timeout` in the deployment's client_spec args must be a positive "
                             f"number of seconds, not {seconds!r}")
        self.seconds = float(seconds)
        self._local = threading.local()

    def http_client(self) -> httpx.Client:
        """An httpx client like the OpenAI library's default one, with the deadline installed."""
        import openai

        return openai.DefaultHttpxClient(
            limits=httpx.Limits(max_connections=1000, max_keepalive_connections=0),
            event_hooks={"request": [self._start_attempt]})

    def call(self) -> _CallScope:
        """``with deadline.call() as call:`` one client call; ``call.expired`` afterwards."""
        return _CallScope(self)

    def _start_attempt(self, request: httpx.Request) -> None:
        call: Call | None = getattr(self._local, "call", None)
        attempt = _Attempt()
        if call is not None:
            for earlier in call.attempts:
                earlier.cancel()  # it ended: the library is retrying
            call.attempts.append(attempt)
        attempt.timer = threading.Timer(self.seconds, attempt.expire)
        attempt.timer.daemon = True
        request.extensions["trace"] = attempt.trace
        attempt.timer.start()


class _CallScope:
    """The ``with`` block of one call: the thread's current :class:`Call` while it runs; at its
    end every timer of the call is stopped (a finished call leaves no timer behind)."""

    def __init__(self, deadline: RequestDeadline) -> None:
        self._deadline = deadline
        self._call = Call()

    def __enter__(self) -> Call:
        self._deadline._local.call = self._call
        return self._call

    def __exit__(self, *exc_info: Any) -> None:
        self._deadline._local.call = None
        for attempt in self._call.attempts:
            attempt.cancel()
