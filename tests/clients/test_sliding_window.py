"""Sliding-window attention in the engine's prefix-shared passes: a model whose layers see only
the last ``window`` positions (Gemma-3's local layers, Mistral's every layer) is scored as
transformers scores it, also past the window, also from stored prefixes."""

from __future__ import annotations

import pytest
import torch

from syntaxgym_helm.clients.local.logprob_engine import LogprobEngine
from syntaxgym_helm.clients.local.sliding_window import SlidingWindow, sliding_window_of
from tiny_checkpoints import _tokenizer

WINDOW = 8


def test_the_window_is_read_from_the_config() -> None:
    import transformers as tf

    gemma = tf.Gemma3TextConfig(sliding_window=512, num_hidden_layers=6)
    assert sliding_window_of(gemma) == SlidingWindow(512, mixed=True)
    assert sliding_window_of(tf.MistralConfig(sliding_window=4096)) == SlidingWindow(4096, False)
    assert sliding_window_of(tf.MistralConfig(sliding_window=None)) is None
    assert sliding_window_of(tf.Qwen2Config(use_sliding_window=False, sliding_window=64)) is None
    assert sliding_window_of(tf.LlamaConfig()) is None
    assert sliding_window_of(None) is None


def _model(kind: str, vocab: int):
    import transformers as tf

    torch.manual_seed(0)
    sizes = dict(vocab_size=vocab, hidden_size=32, intermediate_size=64, num_attention_heads=2,
                 num_key_value_heads=1, head_dim=16, num_hidden_layers=4,
                 max_position_embeddings=256, sliding_window=WINDOW)
    if kind == "gemma3":
        config = tf.Gemma3TextConfig(**sizes, layer_types=[
            "sliding_attention", "full_attention", "sliding_attention", "full_attention"])
        model = tf.Gemma3ForCausalLM(config)
    else:
        model = tf.MistralForCausalLM(tf.MistralConfig(**sizes))
    return model.eval()


def _reference(model, ids: list[int], mask=None) -> list[float]:
    """Token logprobs by one plain forward pass (0.0 first); ``mask``: a 4D mask for every
    layer instead of the model's own."""
    with torch.inference_mode():
        inputs = torch.tensor([ids])
        logits = model(input_ids=inputs, attention_mask=mask).logits.float()
    logprobs = torch.log_softmax(logits[0], dim=-1)
    return [0.0] + logprobs[torch.arange(len(ids) - 1), inputs[0, 1:]].tolist()


@pytest.mark.parametrize("kind", ["gemma3", "mistral"])
def test_prompts_past_the_window_score_as_transformers_scores_them(kind: str) -> None:
    tokenizer = _tokenizer("roberta")
    model = _model(kind, len(tokenizer))
    engine = LogprobEngine(model, tokenizer, bos_text="<s>", max_row_nodes=16,
                           max_batch_positions=48)
    shared = ("The keys to the cabinet are on the table and the author that the guards like "
              "laughs while")
    prompts = [f"{shared} no student has ever passed that exam.",
               f"{shared} every student has ever read that book."]
    encoded = [engine.encoder.encode(p) for p in prompts]
    assert engine.prefix_sharing and all(len(e.ids) > 3 * WINDOW for e in encoded)
    first = engine.logprobs_of_encoded(encoded)
    again = engine.logprobs_of_encoded(encoded)  # now from the stored prefixes
    assert engine.counts["reused"] > 0
    for e, ours, stored in zip(encoded, first, again, strict=True):
        reference = _reference(model, list(e.ids))
        assert max(abs(a - b) for a, b in zip(ours, reference, strict=True)) < 1e-4
        assert max(abs(a - b) for a, b in zip(stored, reference, strict=True)) < 1e-4
        # The window matters here: every layer seeing the whole text scores otherwise.
        length = len(e.ids)
        causal = torch.full((length, length), torch.finfo(torch.float32).min).triu(1)
        unwindowed = _reference(model, list(e.ids), causal[None, None])
        assert max(abs(a - b) for a, b in zip(unwindowed[WINDOW + 1:],
                                              reference[WINDOW + 1:], strict=True)) > 1e-3
