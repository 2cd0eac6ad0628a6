"""Code that reaches into another library's internals is registered, and no library code changes
process-wide state.

A module of the package that uses torch's private ops, ctypes, replaces a module's ``forward``,
hooks a model, imports transformers' loader internals or touches a tokenizer's private
attributes must be named by a reach of ``syntaxgym_helm/clients/reaches.py`` (which says why,
what it gains, the versions checked and its probe, and which ``SYNTAXGYM_STOCK`` turns off). No
module sets an environment variable, the matplotlib backend, glibc's allocator or the garbage
collector's frozen generation for the whole process.
"""

from __future__ import annotations

import re
from pathlib import Path

from syntaxgym_helm.clients.reaches import REACHES

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "syntaxgym_helm"

#: What marks a reach into another library's internals.
REACH_MARKS = re.compile(
    r"torch\.ops\.|^import ctypes|MethodType|register_forward_(pre_)?hook|\.forward = "
    r"|from transformers\.(modeling_gguf_pytorch_utils|core_model_loading|modeling_utils"
    r"|integrations)|_get_field_parts|\"_vocab\"|malloc_trim|madvise", re.MULTILINE)

#: What changes process-wide state (an environment variable, the plotting backend, glibc's
#: allocator, the collector's frozen objects).
PROCESS_STATE = re.compile(
    r"os\.environ\[[^]]+\]\s*=|environ\.setdefault|os\.putenv|matplotlib\.use\(|mallopt"
    r"|gc\.freeze\(|torch\.set_default_dtype|torch\.backends\.\w+\.\w+\s*=")

#: The register itself, and what restores what it changes before it returns (the report's
#: collector pause, scoped by a context manager).
SCOPED = {"syntaxgym_helm/clients/reaches.py", "syntaxgym_helm/report/heap.py"}


def _modules() -> dict[str, str]:
    return {str(path.relative_to(ROOT)): path.read_text() for path in PACKAGE.rglob("*.py")}


def test_every_module_that_reaches_into_internals_is_registered() -> None:
    registered = {path for reach in REACHES.values() for path in reach.used_by}
    reaching = {path for path, text in _modules().items() if REACH_MARKS.search(text)}
    assert reaching - registered - SCOPED == set(), (
        "reaches into other libraries' internals not in syntaxgym_helm/clients/reaches.py")


def test_every_registered_module_exists() -> None:
    for reach in REACHES.values():
        for path in reach.used_by:
            assert (ROOT / path).is_file(), f"{reach.name}: {path}"


def test_no_module_changes_process_wide_state() -> None:
    found = {path: PROCESS_STATE.findall(text) for path, text in _modules().items()
             if path not in SCOPED and PROCESS_STATE.search(text)}
    assert found == {}
