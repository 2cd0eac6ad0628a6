"""Handing memory the process has freed back to the operating system (:func:`return_freed_memory`).

Loading a checkpoint allocates much more than it keeps: the tokenizers library parses a
``tokenizer.json`` into temporaries several times the size of the tokenizer it builds (Gemma-3's
262,144 words and 514,906 merges: about 340 MB parsed for a tokenizer of about 60 MB), and a
GGUF checkpoint is read, dequantised and converted through copies of its tensors. glibc's
``malloc`` keeps most of what is freed in its heaps for later allocations, so the process's
resident memory stays at the high-water mark of the load, and every later peak (the engine's
packed weights, its passes) comes on top of it. ``malloc_trim(0)`` returns the free pages of
every heap. Where the C library has no ``malloc_trim`` (musl, macOS, Windows), nothing is done.

Both are reaches into other libraries' internals (:mod:`syntaxgym_helm.clients.reaches`:
``malloc_trim``, ``tokenizer_build_inputs``), used only where they are active.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import sys

from syntaxgym_helm.clients import reaches

_libc: ctypes.CDLL | None = None
_looked_up = False


def _malloc_trim():
    global _libc, _looked_up
    if not _looked_up:
        _looked_up = True
        if sys.platform.startswith("linux"):
            try:
                _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            except OSError:
                _libc = None
    return getattr(_libc, "malloc_trim", None) if _libc is not None else None


def malloc_trim_problems() -> list[str]:
    """The probe of the reach ``malloc_trim``: the C library must have it (glibc's)."""
    return [] if _malloc_trim() is not None else ["the C library has no malloc_trim (not glibc)"]


def return_freed_memory(stock: bool = False) -> bool:
    """Collect garbage (objects in reference cycles, e.g. a model just replaced) and return the
    C heaps' free pages to the operating system (:func:`trim_heaps`); returns whether
    ``malloc_trim`` was called. Takes milliseconds: call it after a load, not in a loop."""
    gc.collect()
    return trim_heaps(stock)


def trim_heaps(stock: bool = False) -> bool:
    """Return the C heaps' free pages to the operating system (``malloc_trim(0)``), unless the
    reach ``malloc_trim`` is off (``stock``) or the C library has none; returns whether it was
    called."""
    trim = _malloc_trim()
    if trim is None or not reaches.active("malloc_trim", stock):
        return False
    trim(0)
    return True


#: Attributes in which transformers' tokenizer classes keep the vocabulary and merges they built
#: their Rust tokenizer from (``GemmaTokenizer``, ``LlamaTokenizer``, ``GPT2Tokenizer``, ...).
_BUILD_INPUTS = ("_vocab", "_merges")


def drop_tokenizer_build_inputs(tokenizer: object, stock: bool = False) -> int:
    """Drop the Python copies of the vocabulary and merges that a transformers tokenizer built
    its Rust tokenizer (``backend_tokenizer``) from and keeps only for ``__init__`` (Gemma-3's
    262,144 words and 514,906 merges: about 150 MB of Python objects); encoding, decoding and
    ``get_vocab`` read the Rust tokenizer. Only for a tokenizer that has one; saving it afterwards
    is not supported (save before). Returns how many attributes were dropped (none where the
    reach ``tokenizer_build_inputs`` is off: ``stock``)."""
    if (getattr(tokenizer, "backend_tokenizer", None) is None
            or not reaches.active("tokenizer_build_inputs", stock)):
        return 0
    dropped = 0
    for name in _BUILD_INPUTS:
        if isinstance(getattr(tokenizer, name, None), (dict, list)):
            setattr(tokenizer, name, None)
            dropped += 1
    return dropped
