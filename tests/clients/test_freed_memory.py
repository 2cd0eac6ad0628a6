"""A tokenizer's Python copy of the vocabulary and merges it was built from is dropped without
changing what it does, and kept where the reach is off."""

from __future__ import annotations

import pytest

from syntaxgym_helm.clients import reaches
from syntaxgym_helm.clients.local.freed_memory import drop_tokenizer_build_inputs


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


def test_with_the_reach_off_the_vocabulary_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """``stock`` (the client's setting) or ``SYNTAXGYM_STOCK`` naming the reach: no private
    attribute of the tokenizer dropped (syntaxgym_helm/clients/reaches.py)."""
    tokenizer = _tokenizer()
    assert drop_tokenizer_build_inputs(tokenizer, stock=True) == 0
    monkeypatch.setenv(reaches.STOCK_VARIABLE, "tokenizer_build_inputs")
    assert drop_tokenizer_build_inputs(tokenizer) == 0
    assert isinstance(tokenizer._vocab, dict) and isinstance(tokenizer._merges, list)


def _anonymous_kb() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("RssAnon:"))


def test_released_memory_goes_back_to_the_system_unless_the_reach_is_off(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks freed below one still in use stay in glibc's heap (resident) until trimmed; with
    ``SYNTAXGYM_STOCK`` naming the reach, nothing is trimmed."""
    import ctypes
    import platform
    import sys

    from syntaxgym_helm.clients.local.freed_memory import trim_heaps

    if not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc":
        pytest.skip("malloc_trim is glibc's")
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    for stocked, expected in (("malloc_trim", False), ("", True)):
        monkeypatch.setenv(reaches.STOCK_VARIABLE, stocked)
        blocks = [libc.malloc(16 * 1024) for _ in range(6000)]  # about 96 MB, below mmap's
        for block in blocks:
            ctypes.memset(block, 1, 16 * 1024)
        pin = libc.malloc(64)  # keeps the heap's top in use: freeing alone trims nothing
        for block in blocks:
            libc.free(block)
        freed = _anonymous_kb()
        assert trim_heaps() is expected
        assert (freed - _anonymous_kb() > 60 * 1024) is expected
        libc.free(pin)
        trim_heaps()
