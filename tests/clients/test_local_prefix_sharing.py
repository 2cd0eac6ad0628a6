"""The engine really takes its prefix-sharing path with the installed transformers.

Prefix sharing hands the model stored keys and values as a transformers ``Cache`` under the
keyword its ``forward`` declares (``cache``; ``past_key_values`` before transformers 5.24, removed
in 5.40). If the model stopped taking them, the engine's probe would find the logprobs wrong and
fall back to plain padded batches: the results stay right, only 2.5 times slower, and nothing but a
warning says so. These tests fail in that case (real SmolLM2-135M, no mocks).
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from syntaxgym_helm.clients.local import forward_passes
from syntaxgym_helm.clients.local.logprob_engine import LogprobEngine
from test_local_client import loaded  # noqa: F401 (the embedded SmolLM2, loaded once)

BOS = "<|endoftext|>"
PROMPTS = [
    "The keys to the cabinet are on the table.",
    "The keys to the cabinet is on the table.",
    "The author that the guards like laughs.",
    "The author that the guards like laugh.",
    "The author laughs.",
]

pytestmark = pytest.mark.slow


def test_prefix_sharing_is_taken_and_reuses_stored_prefixes(loaded):
    model, tokenizer = loaded
    engine = LogprobEngine(model, tokenizer, bos_text=BOS)
    assert engine.prefix_sharing, "prefix sharing fell back to plain batches (see the log)"
    # The current keyword, never the deprecated one where the model declares both.
    declared = inspect.signature(model.base_model.forward).parameters
    assert engine._shared.cache_keyword == ("cache" if "cache" in declared else "past_key_values")

    first = engine.prompt_logprobs(PROMPTS)
    counts = engine.counts
    assert counts["prompts"] == len(PROMPTS) and counts["passes"] >= 1
    # Shared beginnings are computed once: fewer positions than tokens (plain batches compute
    # every token of every prompt, padded).
    assert counts["positions"] < counts["tokens"] - len(PROMPTS)

    # Again, in another order: everything comes from the store of computed prefixes, which the
    # model was handed as past keys and values; no forward pass.
    passes = counts["passes"]
    again = engine.prompt_logprobs(PROMPTS[::-1])[::-1]
    assert engine.counts["passes"] == passes
    assert engine.counts["reused"] > 0
    for a, b in zip(first, again, strict=False):
        assert a.texts == b.texts
        assert max(abs(x - y) for x, y in zip(a.logprobs, b.logprobs, strict=False)) < 1e-4


def test_past_keys_under_a_name_the_model_ignores_turn_prefix_sharing_off(loaded, monkeypatch):
    """What a transformers release that drops our keyword would do: the probe notices and the
    engine falls back (which the test above then reports as a failure)."""
    model, tokenizer = loaded
    monkeypatch.setattr(forward_passes, "cache_keyword", lambda base: "ignored_past_keys")
    engine = LogprobEngine(model, tokenizer, bos_text=BOS)
    assert not engine.prefix_sharing
    scored = engine.prompt_logprobs(PROMPTS[:2])
    assert engine.counts["reused"] == 0 and engine.counts["positions"] >= engine.counts["tokens"]
    assert all(s.texts[0] == BOS for s in scored)
