"""Handing memory the process has freed back to the operating system (:func:`return_freed_memory`).

Loading a checkpoint allocates much more than it keeps: the tokenizers library parses a
``tokenizer.json`` into temporaries several times the size of the tokenizer it builds (Gemma-3's
262,144 words and 514,906 merges: about 340 MB parsed for a tokenizer of about 60 MB), and a
GGUF checkpoint is read, dequantised and converted through copies of its tensors. glibc's
``malloc`` keeps most of what is freed in its heaps for later allocations, so the process's
resident memory stays at the high-water mark of the load, and every later peak (the engine's
packed weights, its passes) comes on top of it. ``malloc_trim(0)`` returns the free pages of
every heap. Where the C library has no ``malloc_trim`` (musl, macOS, Windows), nothing is done.

A model's forward passes free their activations the same way, many megabytes at a time: glibc
raises its threshold for serving a block from its own mapping to the size of the largest such
block freed (up to 32 MB), so that from the second pass on, activations come from the heap, where
one still in use keeps the free ones around it resident. :func:`map_large_blocks_apart` fixes the
threshold, so that each block of a megabyte or more is mapped alone and handed back when freed.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import sys

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


def return_freed_memory() -> bool:
    """Collect garbage (objects in reference cycles, e.g. a model just replaced) and return the
    C heaps' free pages to the operating system; returns whether ``malloc_trim`` was there to
    call. Takes milliseconds: call it after a load, not in a loop."""
    gc.collect()
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


_M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter

#: The size from which :func:`map_large_blocks_apart` has each block mapped alone.
LARGE_BLOCK = 1 << 20


def map_large_blocks_apart(threshold: int = LARGE_BLOCK) -> bool:
    """Have glibc's ``malloc`` serve every block of ``threshold`` bytes or more from a mapping of
    its own, returned to the system when it is freed, for the rest of the process (a fixed
    threshold: glibc stops raising it). Returns whether it was set (False where the C library is
    not glibc)."""
    trim = _malloc_trim()  # glibc's malloc_trim: the same library has mallopt
    mallopt = getattr(_libc, "mallopt", None) if trim is not None else None
    return bool(mallopt is not None and mallopt(_M_MMAP_THRESHOLD, int(threshold)) == 1)


#: Attributes in which transformers' tokenizer classes keep the vocabulary and merges they built
#: their Rust tokenizer from (``GemmaTokenizer``, ``LlamaTokenizer``, ``GPT2Tokenizer``, ...).
_BUILD_INPUTS = ("_vocab", "_merges")


def drop_tokenizer_build_inputs(tokenizer: object) -> int:
    """Drop the Python copies of the vocabulary and merges that a transformers tokenizer built
    its Rust tokenizer (``backend_tokenizer``) from and keeps only for ``__init__`` (Gemma-3's
    262,144 words and 514,906 merges: about 150 MB of Python objects); encoding, decoding and
    ``get_vocab`` read the Rust tokenizer. Only for a tokenizer that has one; saving it afterwards
    is not supported (save before). Returns how many attributes were dropped."""
    if getattr(tokenizer, "backend_tokenizer", None) is None:
        return 0
    dropped = 0
    for name in _BUILD_INPUTS:
        if isinstance(getattr(tokenizer, name, None), (dict, list)):
            setattr(tokenizer, name, None)
            dropped += 1
    return dropped
