"""Pseudo-log-likelihood of a sentence under a masked LM: each token scored with itself masked.

Two variants, chosen per deployment (:data:`PLL_VARIANTS`):

- ``original`` (Salazar et al. 2020, "Masked Language Model Scoring"): token *t* is replaced by
  the mask token, every other token is seen;
- ``within_word_l2r`` (Kauf & Ivanova 2023, "A Better Way to Do Masked Language Model Scoring"):
  the later tokens of the same word are masked too, so a word's first piece is not predicted from
  its own later pieces. Words are the tokenizer's pre-tokenizer words (``word_ids`` of a fast
  tokenizer), as minicons takes them.

Every token the tokenizer makes from the sentence is scored; the special tokens it adds (``[CLS]``,
``[SEP]``, ``<s>``, ``</s>``) are seen, never scored. Token texts are the exact slices of the
prompt each token comes from (the fast tokenizer's offsets, :func:`texts_from_offsets`), so
WordPiece ``##`` pieces, lower-cased or accent-stripped text, ``[UNK]`` and byte-level pieces all
align with the suite's regions as written. The first text returned is the sentence-start special
token with logprob 0.0, which no region counts: a masked LM has no first-token problem.

Batching: the masked copies of many sentences go through the model together, sentences sorted by
length so that a pass holds copies of (nearly) equal length, and a pass holds at most
``max_batch_tokens`` positions (copies x length), which bounds its memory (the logits of a pass
are ``max_batch_tokens x vocabulary`` floats) whatever the number or length of the sentences.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Sequence

import torch

from syntaxgym_helm.clients.masked import PLL_VARIANTS, PllVariant
from syntaxgym_helm.clients.local.prompt_encoding import (
    PromptError,
    PromptLogprobs,
    texts_from_offsets,
)



class UnscorableTokenizer(ValueError):
    """The tokenizer cannot do what the scoring needs (no mask token, no offsets, no words)."""


def check_variant(variant: str) -> PllVariant:
    if variant not in PLL_VARIANTS:
        raise ValueError(f"pll={variant!r} is not one of {', '.join(PLL_VARIANTS)}")
    return variant


@dataclass(frozen=True)
class MaskedSentence:
    """A prompt as the scorer needs it: its token ids (special tokens included), the positions
    scored, for each the positions masked, and the texts returned (start token first)."""

    prompt: str
    ids: tuple[int, ...]
    targets: tuple[int, ...]
    masked: tuple[tuple[int, ...], ...]
    texts: tuple[str, ...]


def check_tokenizer(tokenizer, variant: PllVariant, where: str) -> None:
    """Raise :class:`UnscorableTokenizer` naming ``where`` when ``tokenizer`` cannot score."""
    if tokenizer.mask_token_id is None:
        raise UnscorableTokenizer(
            f"{where}: the tokenizer has no mask token, so pseudo-log-likelihood cannot mask a "
            "token; is this a masked LM? (set mask_token in its tokenizer_config.json)")
    if not getattr(tokenizer, "is_fast", False):
        raise UnscorableTokenizer(
            f"{where}: the tokenizer is a slow (Python) tokenizer, which gives no character "
            "offsets or word ids; save the checkpoint with a fast tokenizer (tokenizer.json)")
    if variant == "within_word_l2r":
        words = tokenizer("two words", add_special_tokens=False).word_ids()
        if not words or any(word is None for word in words) or len(set(words)) < 2:
            raise UnscorableTokenizer(
                f"{where}: pll=within_word_l2r needs to know which word each token belongs to, "
                "and this tokenizer gives no word ids (no pre-tokenizer); use pll=original")


def encode_sentences(tokenizer, prompts: Sequence[str], variant: PllVariant,
                     max_length: int) -> list[MaskedSentence | PromptError]:
    """Each prompt's :class:`MaskedSentence`, or the :class:`PromptError` that refuses it."""
    encoded = tokenizer(list(prompts), return_offsets_mapping=True,
                        return_special_tokens_mask=True)
    start_text = tokenizer.cls_token or tokenizer.bos_token or "<s>"
    results: list[MaskedSentence | PromptError] = []
    for index, prompt in enumerate(prompts):
        ids = encoded["input_ids"][index]
        special = encoded["special_tokens_mask"][index]
        offsets = encoded["offset_mapping"][index]
        targets = [position for position, flag in enumerate(special) if not flag]
        if not prompt.strip() or not targets:
            results.append(PromptError(f"the prompt {prompt!r} has no tokens to score"))
            continue
        if len(ids) > max_length:
            results.append(PromptError(
                f"the prompt has {len(ids)} tokens with the special tokens, more than the "
                f"model's {max_length}"))
            continue
        if variant == "within_word_l2r":
            words = encoded.word_ids(index)
            masked = tuple((t, *(j for j in targets if j > t and words[j] == words[t]))
                           if words[t] is not None else (t,) for t in targets)
        else:
            masked = tuple((t,) for t in targets)
        texts = texts_from_offsets(prompt, [offsets[t] for t in targets])
        results.append(MaskedSentence(prompt, tuple(ids), tuple(targets), masked,
                                      (start_text, *texts)))
    return results


def pass_plan(sentences: Sequence[MaskedSentence], max_batch_tokens: int,
              ) -> list[list[tuple[int, int]]]:
    """The forward passes: lists of (sentence index, target number), longest sentences first,
    each pass at most ``max_batch_tokens`` positions (copies x their longest length), a pass
    holding at least one copy."""
    order = sorted(range(len(sentences)), key=lambda i: -len(sentences[i].ids))
    passes: list[list[tuple[int, int]]] = []
    current: list[tuple[int, int]] = []
    width = 0
    for index in order:
        length = len(sentences[index].ids)
        for target in range(len(sentences[index].targets)):
            width = max(width, length)
            if current and (len(current) + 1) * width > max_batch_tokens:
                passes.append(current)
                current, width = [], length
            current.append((index, target))
    if current:
        passes.append(current)
    return passes


class TargetLogits:
    """A masked LM's vocabulary logits at one position of each row: the scored token's.

    The model's output head (its first child module after the base model: BERT's ``cls``,
    RoBERTa's ``lm_head``, ModernBERT's ``head``) is position-wise, so it is given only the
    hidden state of each row's target (a forward pre-hook) instead of every position: the head's
    matrix product over the vocabulary, the largest single cost of a small masked LM, and the
    ``rows x length x vocabulary`` logits are not computed. :meth:`check` compares that with the
    full logits on one sentence when the model loads and turns it off for a model whose head is
    not found or not position-wise."""

    def __init__(self, model) -> None:
        self.model = model
        self._positions: torch.Tensor | None = None
        base = getattr(model, "base_model", None)
        heads = [module for _, module in model.named_children()
                 if module is not base and not isinstance(module, torch.nn.Dropout)]
        self._handle = heads[0].register_forward_pre_hook(self._slice) if heads else None

    def _slice(self, module, args):
        if self._positions is None or not args or not torch.is_tensor(args[0]):
            return None
        hidden = args[0]
        rows = torch.arange(hidden.shape[0], device=hidden.device)
        return (hidden[rows, self._positions.to(hidden.device)].unsqueeze(1), *args[1:])

    @property
    def active(self) -> bool:
        return self._handle is not None

    def off(self) -> None:
        if self._handle is not None:
            self._handle.remove()
            self._handle = None

    def __call__(self, ids: torch.Tensor, attention: torch.Tensor,
                 positions: torch.Tensor) -> torch.Tensor:
        """``(rows, vocabulary)`` logits at ``positions`` (one per row)."""
        if self._handle is not None:
            self._positions = positions
            try:
                logits = self.model(input_ids=ids, attention_mask=attention).logits
            finally:
                self._positions = None
            if logits.shape[1] == 1:
                return logits[:, 0]
            self.off()  # the hook did not reach the head: full logits from now on
        logits = self.model(input_ids=ids, attention_mask=attention).logits
        return logits[torch.arange(ids.shape[0], device=logits.device), positions.to(logits.device)]

    @torch.inference_mode()
    def check(self, sentence: MaskedSentence, mask_id: int, device: str,
              tolerance: float = 1e-4) -> bool:
        """Whether the head at the targets equals the full logits on ``sentence``'s masked
        copies; turns it off when not (or when the head cannot take it). Returns whether it
        stays on."""
        if self._handle is None:
            return False
        ids = torch.tensor([sentence.ids] * len(sentence.targets))
        for row, masked in enumerate(sentence.masked):
            ids[row, list(masked)] = mask_id
        ids, attention = ids.to(device), torch.ones_like(ids).to(device)
        positions = torch.tensor(sentence.targets)
        try:
            sliced = self(ids, attention, positions)
        except Exception:  # noqa: BLE001 - a head that cannot take one position per row
            self.off()
            return False
        if self._handle is None:
            return False
        handle, self._handle = self._handle, None
        full = self(ids, attention, positions)
        self._handle = handle
        if not torch.allclose(sliced.float(), full.float(), atol=tolerance, rtol=0):
            self.off()
        return self.active


@torch.inference_mode()
def score_sentences(model, sentences: Sequence[MaskedSentence], *, mask_id: int, pad_id: int,
                    device: str, max_batch_tokens: int = 4096,
                    counts: Counter[str] | None = None,
                    target_logits: TargetLogits | None = None) -> list[PromptLogprobs]:
    """The pseudo-log-likelihood token logprobs (nats) of each sentence, in order; ``counts``
    gets the passes and positions (copies x width) computed. ``target_logits``: the head at the
    targets only (made and checked on the first sentence here when not given)."""
    if target_logits is None and sentences:
        target_logits = TargetLogits(model)
        target_logits.check(sentences[0], mask_id, device)
    logprobs = [[0.0] * len(s.targets) for s in sentences]
    for copies in pass_plan(sentences, max_batch_tokens):
        width = max(len(sentences[i].ids) for i, _ in copies)
        ids = torch.full((len(copies), width), pad_id, dtype=torch.long)
        attention = torch.zeros((len(copies), width), dtype=torch.long)
        positions, wanted = [], []
        for row, (index, target) in enumerate(copies):
            sentence = sentences[index]
            ids[row, :len(sentence.ids)] = torch.tensor(sentence.ids)
            attention[row, :len(sentence.ids)] = 1
            ids[row, list(sentence.masked[target])] = mask_id
            position = sentence.targets[target]
            positions.append(position)
            wanted.append(sentence.ids[position])
        if counts is not None:
            counts["passes"] += 1
            counts["positions"] += ids.numel()
        assert target_logits is not None
        chosen = target_logits(ids.to(device), attention.to(device),
                               torch.tensor(positions)).float()
        values = torch.log_softmax(chosen, dim=-1)[torch.arange(len(copies)),
                                                   torch.tensor(wanted)]
        for (index, target), value in zip(copies, values.tolist()):
            logprobs[index][target] = value
    return [PromptLogprobs(s.prompt, s.texts, (0.0, *values))
            for s, values in zip(sentences, logprobs)]
