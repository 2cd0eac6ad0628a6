"""A model that cannot be loaded fails every request of a run with the same cause: one
traceback says it (a sweep's broken checkpoint printed six), the other failures a line each."""

from __future__ import annotations

import logging

import pytest

from syntaxgym_helm.clients.echo_client import _log_once


def _fail(cause: OSError) -> RuntimeError:
    """The engine's error for one request: its own, around the shared cause."""
    try:
        try:
            raise cause
        except OSError as error:
            raise RuntimeError(f"computing logprobs failed: {error}") from error
    except RuntimeError as error:
        return error


def test_a_shared_cause_is_logged_with_its_traceback_once(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    broken = OSError("could not load /models/checkpoint-6: incomplete metadata")

    def logged(level: int) -> list[str]:
        return [r.getMessage() for r in caplog.records if r.levelno == level]

    for _ in range(3):
        _log_once(_fail(broken))
    # hexception's record (the traceback, where HELM's logging prints it), then a line each.
    assert logged(logging.ERROR) == [f"computing logprobs failed: {broken}"]
    assert logged(logging.INFO) == [f"(again) RuntimeError: computing logprobs failed: {broken}"
                                    ] * 2
    _log_once(_fail(OSError("another cause")))  # a new cause has its own
    assert len(logged(logging.ERROR)) == 2
