"""Where the clients keep files between runs (no torch needed to ask)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """``$SYNTAXGYM_HELM_CACHE``, else ``$XDG_CACHE_HOME/syntaxgym_helm``, else
    ``~/.cache/syntaxgym_helm``."""
    if os.environ.get("SYNTAXGYM_HELM_CACHE"):
        return Path(os.environ["SYNTAXGYM_HELM_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "syntaxgym_helm"


def default_weights_cache_dir() -> Path:
    """Where dequantised GGUF weights go: ``<cache_root()>/weights``."""
    return cache_root() / "weights"


def assembled_gguf_root() -> Path:
    """Where GGUF files assembled from part packages go: ``<cache_root()>/gguf``."""
    return cache_root() / "gguf"
