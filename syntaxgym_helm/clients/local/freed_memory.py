"""Memory a process no longer uses, given up: the Python copies of the vocabulary and merges a
transformers tokenizer keeps after building its Rust tokenizer
(:func:`drop_tokenizer_build_inputs`), and the C heaps' free pages once a model is released
(:func:`trim_heaps`).

Loading a checkpoint's tokenizer leaves behind what scoring never reads: transformers' tokenizer
classes keep the vocabulary and merges they built their Rust tokenizer from (Gemma-3's 262,144
words and 514,906 merges: about 150 MB of Python objects) for the length of the process. This is
a reach into transformers' private attributes (:mod:`syntaxgym_helm.clients.reaches`:
``tokenizer_build_inputs``), used only where it is active.

A sweep releases each checkpoint's model before it loads the next. glibc's ``malloc`` keeps what
is freed in its heaps, and once a model's large blocks are freed it serves blocks of their size
from the heap rather than from fresh mappings; the next model's tensors then sit among the
holes of the last, and each checkpoint's peak comes on top of what the one before left (measured:
BENCHMARKS.md, the reaches' ``sweep`` workload). ``malloc_trim(0)`` after the release
hands the heaps' free pages back. Where the C library has none (musl, macOS, Windows), nothing
is done. This is the reach ``malloc_trim``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from functools import cache

from syntaxgym_helm.clients import reaches

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


@cache
def _malloc_trim():
    """glibc's ``malloc_trim``, or None where the C library has none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    return getattr(libc, "malloc_trim", None)


def malloc_trim_problems() -> list[str]:
    """The probe of the reach ``malloc_trim``: the C library must have it (glibc's)."""
    return [] if _malloc_trim() is not None else ["the C library has no malloc_trim (not glibc)"]


def trim_heaps() -> bool:
    """Hand the C heaps' free pages back to the operating system (``malloc_trim(0)``: tens of
    milliseconds; call it after a model is released, not in a loop), unless the reach
    ``malloc_trim`` is off or the C library has none; returns whether it was called."""
    trim = _malloc_trim()
    if trim is None or not reaches.active("malloc_trim"):
        return False
    trim(0)
    return True
