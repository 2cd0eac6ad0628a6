"""Fixtures of the fault-injection tests (helpers they import are in ``fault_helpers.py``).

The faults themselves (zeros over weights, garbage over a cache file, a full disk, a killed
process, Ctrl-C, a deleted run file) are made by each test, on copies in its own temporary folder:
nothing here touches the shared caches under ``~/.cache/syntaxgym_helm``.
"""

from __future__ import annotations

import logging
from typing import Iterator

import pytest


class Warnings(list):
    """The messages HELM's logger received (``hwarn``, ``hlog``) while the test ran."""

    def text(self) -> str:
        return "\n".join(self)


@pytest.fixture
def helm_log() -> Iterator[Warnings]:
    found = Warnings()

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            found.append(record.getMessage())

    logger = logging.getLogger("helm")
    handler = Collect(level=logging.INFO)
    previous = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield found
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)


@pytest.fixture(autouse=True)
def _every_fault_test_is_bounded(wall_clock: None) -> None:
    """Every test here makes something fail that once hung a run: one that hangs fails itself
    (after its ``limit`` mark's seconds, 30 by default), instead of the whole test run."""
