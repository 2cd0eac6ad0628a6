"""An encoder-decoder LM scored under the two conventions of BabyLM's evaluation pipeline (2025,
``evaluation_pipeline/sentence_zero_shot``: ``dataset.py`` builds the inputs,
``compute_results.py`` scores them), for a sentence with no context (BLiMP's case: the whole
sentence is the completion).

Both use a *mask*, the tokenizer's mask token or, without one, its first extra special token (T5's
``<extra_id_0>``), and a *start*, the beginning-of-text token or, without one, that first extra
special token (BabyLM's ``additional_special_tokens_id[0]``, named ``extra_special_tokens`` since
transformers 5):

- ``enc_dec_mask`` (pseudo-log-likelihood through the decoder): for each token of the sentence
  (tokenized with the special tokens the tokenizer adds; scored: the tokens that are not special
  and end after the first character), the encoder reads the sentence with that token replaced by
  the mask; the decoder reads ``[start, mask]`` when the tokenizer has a beginning-of-text token,
  else ``[first extra special token]`` alone; the token's logprob is read at the decoder's last
  position. One encoder pass per token, as PLL.
- ``enc_dec_prefix`` (the sentence as the masked span's filling): the encoder reads
  ``[cls] mask [eos]`` (cls and eos when the tokenizer has them), the decoder reads
  ``start mask t_1 ... t_n-1`` (the sentence tokenized without special tokens) and scores
  every token ``t_1 ... t_n``, at positions 1 to n. One pass per sentence.

Token texts are exact slices of the prompt (offsets); the first text returned is the decoder's
first token with logprob 0.0, which no region counts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from syntaxgym_helm.clients.batch_settings import MAX_BATCH_TOKENS
from syntaxgym_helm.clients.local.prompt_encoding import (
    PromptError,
    PromptLogprobs,
    texts_from_offsets,
)
from syntaxgym_helm.clients.seq2seq.decoder_scoring import padded_batches


@dataclass(frozen=True)
class SpecialIds:
    """The ids the conventions build their inputs from (see the module doc)."""

    mask: int
    start: int
    mask_decoder: tuple[int, ...]  # enc_dec_mask's decoder input
    cls: int | None
    eos: int | None


def special_ids(tokenizer, where: str) -> SpecialIds:
    """The mask, start and decoder ids of ``tokenizer``; ValueError naming ``where`` when it has
    neither a mask token nor an extra special token (a sentinel such as ``<extra_id_0>``)."""
    extra = list(getattr(tokenizer, "extra_special_tokens_ids", None) or [])
    sentinel = extra[0] if extra else None
    mask = tokenizer.mask_token_id if tokenizer.mask_token_id is not None else sentinel
    bos = tokenizer.bos_token_id
    if mask is None or (bos is None and sentinel is None):
        raise ValueError(f"{where}: the tokenizer has no mask token and no extra special token "
                         "(a sentinel such as T5's <extra_id_0>) for BabyLM's enc_dec_mask and "
                         "enc_dec_prefix; set mask_token or extra_special_tokens in its "
                         "tokenizer_config.json")
    start = bos if bos is not None else sentinel
    assert start is not None
    decoder = (bos, mask) if bos is not None else (start,)
    return SpecialIds(mask, start, decoder, tokenizer.cls_token_id, tokenizer.eos_token_id)


@dataclass(frozen=True)
class BabyLMSentence:
    """A prompt's ids (``enc_dec_mask``: the encoder's, special tokens included;
    ``enc_dec_prefix``: the decoder's targets), the positions scored and the texts returned."""

    prompt: str
    ids: tuple[int, ...]
    targets: tuple[int, ...]
    texts: tuple[str, ...]


def encode_sentences(tokenizer, prompts: Sequence[str], convention: str, start_text: str,
                     max_length: int) -> list[BabyLMSentence | PromptError]:
    """Each prompt's :class:`BabyLMSentence`, or the :class:`PromptError` refusing it."""
    specials = convention == "enc_dec_mask"
    encoded = tokenizer(list(prompts), add_special_tokens=specials, return_offsets_mapping=True,
                        return_special_tokens_mask=True)
    results: list[BabyLMSentence | PromptError] = []
    for index, prompt in enumerate(prompts):
        ids = encoded["input_ids"][index]
        offsets = encoded["offset_mapping"][index]
        special = encoded["special_tokens_mask"][index]
        # enc_dec_mask scores the tokens that end after the first character and are not
        # special (BabyLM: offset end > start of the completion); enc_dec_prefix every token.
        targets = ([i for i, ((_, end), flag) in enumerate(zip(offsets, special, strict=True))
                    if end > 0 and not flag] if specials else list(range(len(ids))))
        if not prompt.strip() or not targets:
            results.append(PromptError(f"the prompt {prompt!r} has no tokens to score"))
            continue
        if len(ids) + 2 > max_length:
            results.append(PromptError(f"the prompt has {len(ids)} tokens, more than the "
                                       f"model's {max_length} less the special tokens"))
            continue
        texts = texts_from_offsets(prompt, [offsets[t] for t in targets])
        results.append(BabyLMSentence(prompt, tuple(ids), tuple(targets), (start_text, *texts)))
    return results


@torch.inference_mode()
def score_mask(model, sentences: Sequence[BabyLMSentence], ids: SpecialIds, *, pad_id: int,
               device: str, max_batch_tokens: int = MAX_BATCH_TOKENS,
               counts: Counter[str] | None = None) -> list[PromptLogprobs]:
    """``enc_dec_mask``: each sentence's token logprobs (nats), one masked encoder copy per
    token, at most ``max_batch_tokens`` encoder positions a pass."""
    copies = [(s, t) for s, sentence in enumerate(sentences) for t in sentence.targets]
    values: dict[tuple[int, int], float] = {}
    decoder = torch.tensor([list(ids.mask_decoder)])
    for indices, encoder, attention in padded_batches(
            [sentences[s].ids for s, _ in copies], pad_id, max_batch_tokens, counts):
        chunk = [copies[i] for i in indices]
        for row, (_, t) in enumerate(chunk):
            encoder[row, t] = ids.mask
        logits = model(input_ids=encoder.to(device), attention_mask=attention.to(device),
                       decoder_input_ids=decoder.expand(len(chunk), -1).to(device)).logits
        logprobs = torch.log_softmax(logits[:, -1].float(), dim=-1)
        wanted = torch.tensor([sentences[s].ids[t] for s, t in chunk])
        for key, value in zip(chunk, logprobs[torch.arange(len(chunk)), wanted].tolist(),
                              strict=True):
            values[key] = value
    return [PromptLogprobs(s.prompt, s.texts, (0.0, *(values[(n, t)] for t in s.targets)))
            for n, s in enumerate(sentences)]


@torch.inference_mode()
def score_prefix(model, sentences: Sequence[BabyLMSentence], ids: SpecialIds, *, pad_id: int,
                 device: str, max_batch_tokens: int = MAX_BATCH_TOKENS,
                 counts: Counter[str] | None = None) -> list[PromptLogprobs]:
    """``enc_dec_prefix``: each sentence's token logprobs (nats), sentences sorted by length,
    at most ``max_batch_tokens`` decoder positions a pass."""
    source = [i for i in (ids.cls, ids.mask, ids.eos) if i is not None]
    results: dict[int, PromptLogprobs] = {}
    inputs = [[ids.start, ids.mask, *sentence.ids[:-1]] for sentence in sentences]
    for chunk, decoder, attention in padded_batches(inputs, pad_id, max_batch_tokens, counts):
        encoder = torch.tensor([source] * len(chunk))
        logits = model(input_ids=encoder.to(device), decoder_input_ids=decoder.to(device),
                       decoder_attention_mask=attention.to(device)).logits
        for row, index in enumerate(chunk):
            sentence = sentences[index]
            own = torch.tensor(sentence.ids)
            # One row's log-softmax at a time (not a second copy of the pass's logits).
            logprobs = torch.log_softmax(logits[row, 1:len(own) + 1].float(), dim=-1)
            every = logprobs[torch.arange(len(own)), own].tolist()
            results[index] = PromptLogprobs(sentence.prompt, sentence.texts,
                                            (0.0, *(every[t] for t in sentence.targets)))
    return [results[i] for i in range(len(sentences))]
