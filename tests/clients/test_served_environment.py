"""The environment ``make install`` and ``make test-served`` leave: every model import still works.

Installing the ``served`` extra re-resolves crfm-helm's dependencies and brings back PyPI's CUDA
build of torchvision, which cannot load beside the CPU torch and breaks transformers' model imports
(``Could not import module 'LlamaConfig'``); the Makefile drops it after every install step. This
checks the result in a fresh interpreter (this one may have imported things already). It runs in
``make test`` and as the last step of ``make test-served``.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.environment

PROBE = r"""
import importlib.util, json
found = {}
if importlib.util.find_spec("torchvision") is not None:
    import torchvision  # present: it must import (a broken CUDA build raises here)
    found["torchvision"] = torchvision.__version__
import torch
from transformers import AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM
found["torch"] = torch.__version__
found["llama"] = LlamaForCausalLM.__name__
if importlib.util.find_spec("llama_cpp") is not None:
    import llama_cpp  # the served extra, when installed
    found["llama_cpp"] = llama_cpp.__version__
print(json.dumps(found))
"""


def test_torchvision_imports_or_is_absent_and_transformers_models_import() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          timeout=180)
    assert done.returncode == 0, (
        "the environment is broken (after installing an extra, run the Makefile's "
        "DROP_BROKEN_TORCHVISION line: `python -c 'import torchvision' || pip uninstall -y "
        f"torchvision`):\n{done.stderr[-3000:]}")
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["llama"] == "LlamaForCausalLM"
    if "llama_cpp" in found:
        # The version the fixtures were recorded with (pyproject's `served` extra pins it).
        assert found["llama_cpp"] == "0.3.36", found


def test_the_check_fails_on_a_torchvision_that_does_not_load(tmp_path) -> None:
    """What the CUDA build does beside the CPU torch, stood in by a package that fails to load."""
    fake = tmp_path / "torchvision"
    fake.mkdir()
    (fake / "__init__.py").write_text(
        "raise RuntimeError('operator torchvision::nms does not exist')\n")
    env = {"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          timeout=180, env=env)
    assert done.returncode != 0 and "torchvision::nms does not exist" in done.stderr
