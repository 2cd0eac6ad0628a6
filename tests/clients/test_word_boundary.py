"""The word-boundary correction in the local engine (``word_boundary=True``, the ``~bow`` models):
exact against plain transformers on the embedded SmolLM2 (the mask and the sums computed here
independently, from the full softmax), and refused for a tokenizer that marks no word
beginnings."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from syntaxgym_helm.clients.local.logprob_engine import LogprobEngine
from syntaxgym_helm.clients.local.word_boundary import (
    WordBoundaryError,
    beginning_of_word_mark,
    token_and_boundary_logprobs,
)
from test_local_client import loaded  # noqa: F401 (the embedded SmolLM2, loaded once)

BOS = "<|endoftext|>"
SENTENCES = [
    "The keys to the cabinet are on the table.",
    "The keys to the cabinet is on the table.",
    "The author that the guards like laughs.",
    "He left in 1990, didn't he?",
    "No",
]


def _reference(model, tokenizer, ids: tuple[int, ...]) -> tuple[list[float], list[float]]:
    """Token logprobs and log P(next token begins a word or ends the text) at every position,
    from one plain forward pass and the full softmax."""
    vocabulary = model.get_output_embeddings().weight.shape[0]
    bow = torch.zeros(vocabulary, dtype=torch.bool)
    for text, index in tokenizer.get_vocab().items():
        if text.startswith("Ġ") and index < vocabulary:
            bow[index] = True
    bow[tokenizer.eos_token_id] = True
    bow[tokenizer.convert_tokens_to_ids(BOS)] = True  # the document separator SmolLM2 ends with
    with torch.inference_mode():
        logits = model(input_ids=torch.tensor([ids])).logits[0].float()
    logsoftmax = logits.log_softmax(-1)
    tokens = [0.0] + [logsoftmax[j, ids[j + 1]].item() for j in range(len(ids) - 1)]
    boundary = [torch.logsumexp(logsoftmax[j][bow], -1).item() for j in range(len(ids))]
    return tokens, boundary


def _words_by_hand(texts: tuple[str, ...], tokens: list[float], boundary: list[float]
                   ) -> list[float]:
    """Each word's corrected logprob (Pimentel & Meister 2024): its tokens' sum, less log P(bow)
    before it (not for the first word), plus log P(bow) after it."""
    starts = [k for k in range(1, len(texts)) if k == 1 or texts[k].startswith(" ")]
    ends = [s - 1 for s in starts[1:]] + [len(texts) - 1]
    return [sum(tokens[s: e + 1]) - (boundary[s - 1] if s > 1 else 0.0) + boundary[e]
            for s, e in zip(starts, ends, strict=False)]


@pytest.mark.slow
@pytest.mark.parametrize("prefix_sharing", [True, False])
def test_corrected_word_logprobs_equal_plain_transformers(loaded, prefix_sharing):
    model, tokenizer = loaded
    engine = LogprobEngine(model, tokenizer, bos_text=BOS, word_boundary=True,
                           prefix_sharing=prefix_sharing)
    assert engine.prefix_sharing is prefix_sharing
    encoded = [engine.encoder.encode(s) for s in SENTENCES]
    corrected = engine.logprobs_of_encoded(encoded)
    raw = token_and_boundary_logprobs(engine, encoded)
    for e, values, (tokens, boundary) in zip(encoded, corrected, raw, strict=False):
        ref_tokens, ref_boundary = _reference(model, tokenizer, e.ids)
        assert tokens == pytest.approx(ref_tokens, abs=5e-4)
        assert boundary == pytest.approx(ref_boundary, abs=5e-4)
        assert all(v <= 0.0 for v in values)
        # Summing a word's corrected token values gives the word's corrected logprob.
        starts = [k for k in range(1, len(e.texts)) if k == 1 or e.texts[k].startswith(" ")]
        ends = [s - 1 for s in starts[1:]] + [len(e.texts) - 1]
        words = [sum(values[s: e_ + 1]) for s, e_ in zip(starts, ends, strict=False)]
        assert words == pytest.approx(_words_by_hand(e.texts, ref_tokens, ref_boundary),
                                      abs=1e-3)
        # The sentence's sum moves by log P(bow) after its last token alone (the terms telescope).
        assert sum(values) - sum(tokens) == pytest.approx(ref_boundary[-1], abs=1e-3)


@pytest.mark.slow
def test_uncorrected_engine_is_unchanged_by_the_option(loaded):
    model, tokenizer = loaded
    plain = LogprobEngine(model, tokenizer, bos_text=BOS).prompt_logprobs(SENTENCES)
    corrected_engine = LogprobEngine(model, tokenizer, bos_text=BOS, word_boundary=True)
    raw = token_and_boundary_logprobs(corrected_engine,
                                      [corrected_engine.encoder.encode(s) for s in SENTENCES])
    for result, (tokens, _) in zip(plain, raw, strict=False):
        assert list(result.logprobs) == pytest.approx(tokens, abs=2e-4)


def _word_level_tokenizer(tmp_path: Path):
    """A real fast tokenizer that splits on whitespace and marks nothing (a WordPiece-like
    vocabulary: ``##`` marks a word's inside, not its beginning)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"[UNK]": 0, "[BOS]": 1, "the": 2, "a": 3, "x": 4, "cat": 5, "##s": 6}
    inner = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    inner.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=inner, unk_token="[UNK]", bos_token="[BOS]")


def test_a_tokenizer_without_a_beginning_of_word_mark_is_refused(tmp_path):
    tokenizer = _word_level_tokenizer(tmp_path)
    with pytest.raises(WordBoundaryError, match="marks no beginning of a word"):
        beginning_of_word_mark(tokenizer)


@pytest.mark.slow
def test_the_embedded_tokenizer_marks_word_beginnings_with_g(loaded):
    assert beginning_of_word_mark(loaded[1]) == "Ġ"
