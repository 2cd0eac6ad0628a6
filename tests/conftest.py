"""Fixtures shared by the test modules."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The project's shared data folder (``../shared`` from the project root), or skip."""
    path = Path(__file__).resolve().parents[1].parent / "shared"
    if not path.is_dir():
        pytest.skip(f"the shared data folder {path} is missing (see shared/README.md)")
    return path
