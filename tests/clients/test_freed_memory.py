"""Memory a load freed goes back to the system; a tokenizer's Python copy of the vocabulary it was
built from is dropped without changing what it does."""

from __future__ import annotations

import sys

import pytest

from syntaxgym_helm.clients.local.freed_memory import (
    drop_tokenizer_build_inputs,
    return_freed_memory,
)


def _tokenizer():
    from transformers import GPT2Tokenizer

    vocab = {c: i for i, c in enumerate("abcdefghijklmnopqrstuvwxyz.Ġ")}
    merges = [("t", "h"), ("th", "e"), ("Ġ", "the"), ("c", "a"), ("ca", "t")]
    for merge in merges:
        vocab["".join(merge)] = len(vocab)
    vocab["<|endoftext|>"] = len(vocab)
    return GPT2Tokenizer(vocab=vocab, merges=merges)


def test_dropping_the_build_inputs_keeps_encoding_decoding_and_the_vocabulary() -> None:
    tokenizer = _tokenizer()
    texts = ["the cat sat on the mat.", "<|endoftext|>the cat"]
    before = [tokenizer(text, return_offsets_mapping=True) for text in texts]
    vocabulary = tokenizer.get_vocab()
    assert isinstance(tokenizer._vocab, dict) and isinstance(tokenizer._merges, list)
    assert drop_tokenizer_build_inputs(tokenizer) == 2
    assert tokenizer._vocab is None and tokenizer._merges is None
    after = [tokenizer(text, return_offsets_mapping=True) for text in texts]
    assert [dict(b) for b in before] == [dict(a) for a in after]
    assert tokenizer.get_vocab() == vocabulary
    assert tokenizer.decode(after[0]["input_ids"]) == texts[0]
    assert drop_tokenizer_build_inputs(tokenizer) == 0  # nothing left to drop
    assert drop_tokenizer_build_inputs(object()) == 0  # no Rust tokenizer: left alone


def _anonymous_kb() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("RssAnon:"))


def test_freed_memory_goes_back_to_the_system() -> None:
    """Blocks freed below one still in use stay in glibc's heap (resident) until trimmed."""
    import ctypes
    import platform

    if not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc":
        pytest.skip("malloc_trim is glibc's")
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    blocks = [libc.malloc(16 * 1024) for _ in range(6000)]  # about 96 MB, under the mmap threshold
    for block in blocks:
        ctypes.memset(block, 1, 16 * 1024)
    pin = libc.malloc(64)  # keeps the heap's top in use: freeing alone trims nothing
    for block in blocks:
        libc.free(block)
    freed = _anonymous_kb()
    assert return_freed_memory()
    assert freed - _anonymous_kb() > 60 * 1024
    libc.free(pin)


_LARGE_BLOCKS = """
import ctypes
from syntaxgym_helm.clients.local.freed_memory import map_large_blocks_apart

def anonymous_kb():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("RssAnon:"))

assert map_large_blocks_apart()
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
libc.free(libc.malloc(16 << 20))  # would raise glibc's threshold to 16 MB
before = anonymous_kb()
blocks = [libc.malloc(4 << 20) for _ in range(30)]  # 120 MB
for block in blocks:
    ctypes.memset(block, 1, 4 << 20)
pin = libc.malloc(512 << 10)  # a block in use above them: the heap's top cannot shrink
held = anonymous_kb() - before
for block in blocks:
    libc.free(block)
print(held, anonymous_kb() - before)
"""


def test_large_blocks_are_handed_back_when_freed() -> None:
    """Once a 16 MB block was freed, glibc would serve 4 MB blocks from its heap and keep them
    resident after they are freed; with the threshold fixed, each is mapped alone and handed
    back. In a process of its own: free chunks that earlier tests left in this process's heap
    would serve the blocks before any mapping."""
    import platform
    import subprocess

    if not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc":
        pytest.skip("mallopt is glibc's")
    done = subprocess.run([sys.executable, "-c", _LARGE_BLOCKS], capture_output=True, text=True,
                          timeout=120, check=True)
    held, left = map(int, done.stdout.split())
    assert held > 100 * 1024  # the blocks were resident while in use
    assert left < 20 * 1024  # and handed back when freed
