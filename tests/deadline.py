"""A wall-clock bound for a block of a test, so that a hang fails the test instead of the run.

``tests/`` is on ``sys.path`` (see ``tests/fixtures/__init__.py``): import it as ``deadline``.
The ``wall_clock`` fixture of ``tests/conftest.py`` bounds a whole test (its ``limit`` mark).
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from typing import Any


class WallClockExceeded(BaseException):
    """Raised in the main thread when a bounded block runs too long. A BaseException, so that
    code under test that catches ``Exception`` cannot swallow it."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Fail with :class:`WallClockExceeded` if the block takes longer than ``seconds``."""
    def expired(signum: int, frame: Any) -> None:
        raise WallClockExceeded(f"still running after {seconds:g} s (a hang?)")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
