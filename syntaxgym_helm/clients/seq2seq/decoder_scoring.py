"""An encoder-decoder LM (T5 family) scoring a sentence as the decoder's output.

The convention is minicons' ``Seq2SeqScorer.conditional_token_score(source, sentence)`` (0.3.39;
its ``token_score``, which would take no source, raises "currently erroneous"): the encoder reads
the source, tokenized without special tokens; the decoder reads ``decoder_start_token + " " +
sentence`` tokenized without special tokens (T5: ``<pad> The keys ...``), and each token after the
start token is scored given the source and the tokens before it. No end-of-sequence token is
scored. The source of a plain sentence is empty text; minicons cannot run an empty encoder input
(a tensor of 0 positions), so the encoder reads the tokenizer's end-of-sequence token alone, which
is what a T5 tokenizer makes of empty text (``tokenizer("")``) and what lm-evaluation-harness's
seq2seq models and BabyLM's ``enc_dec_prefix`` backend give the encoder for an empty context.

Token texts are exact slices of the prompt (offsets); the first text returned is the decoder
start token with logprob 0.0, which no region counts. Passes hold at most ``max_batch_tokens``
decoder positions, sentences sorted by length.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import torch

from syntaxgym_helm.clients.batch_settings import MAX_BATCH_TOKENS
from syntaxgym_helm.clients.local.prompt_encoding import (
    PromptError,
    PromptLogprobs,
    texts_from_offsets,
)


@dataclass(frozen=True)
class DecoderSentence:
    """A prompt's decoder ids (start token first) and returned texts (start token's first)."""

    prompt: str
    ids: tuple[int, ...]
    texts: tuple[str, ...]


def source_ids(tokenizer, where: str) -> tuple[int, ...]:
    """The encoder's input for a sentence with no source text (see the module doc)."""
    if tokenizer.eos_token_id is None:
        raise ValueError(f"{where}: the tokenizer has no end-of-sequence token to give the "
                         "encoder for an empty source; set eos_token in tokenizer_config.json")
    return (tokenizer.eos_token_id,)


def encode_sentences(tokenizer, start_text: str, prompts: Sequence[str],
                     max_length: int) -> list[DecoderSentence | PromptError]:
    """Each prompt tokenized as the decoder reads it, or the :class:`PromptError` refusing it."""
    lead = f"{start_text} "
    encoded = tokenizer([lead + prompt for prompt in prompts], add_special_tokens=False,
                        return_offsets_mapping=True)
    results: list[DecoderSentence | PromptError] = []
    for index, prompt in enumerate(prompts):
        ids = encoded["input_ids"][index]
        offsets = encoded["offset_mapping"][index]
        if not prompt.strip() or len(ids) < 2:
            results.append(PromptError(f"the prompt {prompt!r} has no tokens to score"))
            continue
        if len(ids) > max_length:
            results.append(PromptError(f"the prompt has {len(ids)} decoder tokens, more than "
                                       f"the model's {max_length}"))
            continue
        shifted = [(start - len(lead), end - len(lead)) for start, end in offsets[1:]]
        texts = texts_from_offsets(prompt, shifted)
        results.append(DecoderSentence(prompt, tuple(ids), (start_text, *texts)))
    return results


def padded_batches(rows: Sequence[Sequence[int]], pad_id: int, max_batch_tokens: int,
                   counts: Counter[str] | None = None,
                   ) -> Iterator[tuple[list[int], torch.Tensor, torch.Tensor]]:
    """The ``rows`` (token ids) in batches, longest first, each at most ``max_batch_tokens``
    positions (rows x its longest) and at least one row, right-padded with ``pad_id``: (the rows'
    indices, ids, attention mask); ``counts`` gets each batch's pass and positions."""
    order = sorted(range(len(rows)), key=lambda i: -len(rows[i]))
    start = 0
    while start < len(order):
        width = len(rows[order[start]])
        chunk = order[start:start + max(1, max_batch_tokens // max(width, 1))]
        start += len(chunk)
        ids = torch.full((len(chunk), width), pad_id, dtype=torch.long)
        attention = torch.zeros((len(chunk), width), dtype=torch.long)
        for row, index in enumerate(chunk):
            ids[row, :len(rows[index])] = torch.tensor(rows[index])
            attention[row, :len(rows[index])] = 1
        if counts is not None:
            counts["passes"] += 1
            counts["positions"] += ids.numel()
        yield chunk, ids, attention


@torch.inference_mode()
def score_sentences(model, sentences: Sequence[DecoderSentence], source: Sequence[int], *,
                    pad_id: int, device: str, max_batch_tokens: int = MAX_BATCH_TOKENS,
                    counts: Counter[str] | None = None) -> list[PromptLogprobs]:
    """Each sentence's token logprobs (nats) after the decoder start token, in order."""
    results: list[PromptLogprobs | None] = [None] * len(sentences)
    for chunk, decoder, attention in padded_batches([s.ids for s in sentences], pad_id,
                                                    max_batch_tokens, counts):
        encoder = torch.tensor([list(source)] * len(chunk), dtype=torch.long)
        logits = model(input_ids=encoder.to(device), decoder_input_ids=decoder.to(device),
                       decoder_attention_mask=attention.to(device)).logits
        for row, index in enumerate(chunk):
            ids = sentences[index].ids
            # One row's log-softmax at a time: all at once, a second copy of the pass's logits
            # (positions x vocabulary) would be in memory beside them.
            logprobs = torch.log_softmax(logits[row, :len(ids) - 1].float(), dim=-1)
            values = logprobs[torch.arange(len(ids) - 1), torch.tensor(ids[1:])]
            results[index] = PromptLogprobs(sentences[index].prompt, sentences[index].texts,
                                            (0.0, *values.tolist()))
    return [result for result in results if result is not None]
