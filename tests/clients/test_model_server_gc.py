"""The model server's engine thread takes what exists before a load out of the garbage
collector's scans (syntaxgym_helm/clients/local/server.py), after collecting it: the full
collections a load makes to hand memory back then scan only what the load made. No model: the
engine's maker records what it sees and fails, which the server reports."""

from __future__ import annotations

import gc

import pytest

from syntaxgym_helm.clients.local.server import ModelServer


def test_what_exists_before_a_load_is_collected_then_frozen_before_the_load_begins() -> None:
    gc.unfreeze()
    try:
        cycle: list = []
        cycle.append(cycle)
        garbage = id(cycle)
        del cycle  # garbage only a collection finds
        seen: list[tuple[int, bool]] = []

        def make_engine():
            seen.append((gc.get_freeze_count(),
                         any(id(o) == garbage for o in gc.get_objects(generation=2))))
            raise RuntimeError("no model in this test")

        server = ModelServer(make_engine)
        with pytest.raises(RuntimeError, match="no model in this test"):
            server.wait_ready()
        (frozen, garbage_left), = seen
        assert frozen > 0 and not garbage_left
    finally:
        gc.unfreeze()
