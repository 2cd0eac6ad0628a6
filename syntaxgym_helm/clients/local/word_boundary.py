"""Which tokens of a vocabulary begin a word, for the word-boundary correction
(:mod:`syntaxgym_helm.core.word_boundary`): :func:`boundary_mask` over the output layer's rows.

A tokenizer marks a word's beginning when the token of a space before a letter differs from the
token of the letter alone by a leading mark (``Ġ`` for byte-level BPE, ``▁`` for SentencePiece).
A tokenizer that marks nothing of the kind (WordPiece's ``##`` marks the inside of words, some
tokenizers split spaces off) is refused with :class:`WordBoundaryError`: the correction would be
meaningless, and scoring uncorrected under the correction's name would be silent.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

import torch

from syntaxgym_helm.clients.local.forward_passes import OnPass
from syntaxgym_helm.clients.local.prompt_encoding import EncodedPrompt
from syntaxgym_helm.core.word_boundary import corrected_logprobs


class WordBoundaryError(ValueError):
    """The tokenizer marks no beginning of a word: the word-boundary correction cannot apply."""


def beginning_of_word_mark(tokenizer) -> str:
    """The character that begins the vocabulary strings of word-initial tokens (``Ġ``, ``▁``);
    WordBoundaryError when the tokenizer has none."""
    name = getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__
    marks = set()
    for letters in ("a", "the", "x"):
        spaced = tokenizer.convert_ids_to_tokens(
            tokenizer(" " + letters, add_special_tokens=False)["input_ids"])
        bare = tokenizer.convert_ids_to_tokens(
            tokenizer(letters, add_special_tokens=False)["input_ids"])
        first = spaced[0] if spaced else ""
        if (not first or not bare or first[0] == letters[0]
                or first in (tokenizer.bos_token, tokenizer.eos_token, tokenizer.unk_token)
                or bare[0].startswith(first[0])):
            raise WordBoundaryError(
                f"the tokenizer of {name} marks no beginning of a word (the tokens of "
                f"{' ' + letters!r} are {spaced!r}, of {letters!r} {bare!r}): the word-boundary "
                "correction needs tokens that carry a word's leading space, as byte-level BPE "
                "(Ġ) and SentencePiece (▁) tokenizers have; score this model without it")
        marks.add(first[0])
    if len(marks) != 1:
        raise WordBoundaryError(f"the tokenizer of {name} marks word beginnings inconsistently "
                                f"({sorted(marks)!r})")
    return marks.pop()


def boundary_mask(tokenizer, rows: int, end_of_text: Iterable[int]) -> torch.Tensor:
    """A boolean vector over the output layer's ``rows``: True for the tokens whose vocabulary
    string begins with the tokenizer's beginning-of-word mark, for added tokens that swallow the
    space before them (``lstrip``), and for the ``end_of_text`` ids (a text's end ends its last
    word). Rows beyond the tokenizer's vocabulary (padding of the output layer) are False."""
    mark = beginning_of_word_mark(tokenizer)
    mask = torch.zeros(rows, dtype=torch.bool)
    for text, index in tokenizer.get_vocab().items():
        if index < rows and text.startswith(mark):
            mask[index] = True
    for index, added in getattr(tokenizer, "added_tokens_decoder", {}).items():
        if index < rows and getattr(added, "lstrip", False):
            mask[index] = True
    for index in end_of_text:
        if index is not None and 0 <= index < rows:
            mask[index] = True
    return mask


def engine_boundary_mask(model, tokenizer, bos_id: int, end_of_text: bool = True) -> torch.Tensor:
    """:func:`boundary_mask` over ``model``'s output layer, with :func:`end_of_text_ids` (none
    without ``end_of_text``: minicons' rule)."""
    weight = getattr(model.get_output_embeddings(), "weight", None)
    rows = int(weight.shape[0]) if isinstance(weight, torch.Tensor) else int(
        model.config.vocab_size)
    return boundary_mask(tokenizer, rows,
                         end_of_text_ids(tokenizer, bos_id) if end_of_text else [])


def end_of_text_ids(tokenizer, bos_id: int) -> list[int]:
    """The ids that end a text: the tokenizer's end-of-sequence token, and the engine's
    beginning-of-text token when it is not the tokenizer's beginning-of-sequence token (then it is
    the separator between documents, as ``<|endoftext|>`` is for SmolLM2)."""
    ids = []
    if tokenizer.eos_token_id is not None:
        ids.append(int(tokenizer.eos_token_id))
    if bos_id != tokenizer.bos_token_id and bos_id not in ids:
        ids.append(int(bos_id))
    return ids


def begins_word(mask: torch.Tensor, ids: Iterable[int]) -> list[bool]:
    """The mask's value of each id."""
    index = torch.tensor(list(ids), dtype=torch.long)
    return mask[index].tolist()


def with_boundaries(encoded: Sequence[EncodedPrompt], extra_id: int) -> list[EncodedPrompt]:
    """The prompts with boundary outputs and one more token (``extra_id``: any, it is not
    scored), so that the position after the last token is computed and gives its boundary
    logprob."""
    return [replace(e, ids=(*e.ids, extra_id), boundaries=True) for e in encoded]


def split(encoded: EncodedPrompt, raw: list[float]) -> tuple[list[float], list[float]]:
    """A pass's result for :func:`with_boundaries`'s prompt: its token logprobs (0.0 first) and,
    as many, log P(the next token begins a word) at the position that predicts the token after
    each (the last: after the prompt's last token)."""
    count = len(encoded.ids)
    return raw[:count], raw[count + 1: 2 * count + 1]


def corrected(encoded: EncodedPrompt, raw: list[float], mask: torch.Tensor) -> list[float]:
    """A pass's result for :func:`with_boundaries`'s prompt as corrected token logprobs."""
    tokens, boundary = split(encoded, raw)
    return corrected_logprobs(tokens, begins_word(mask, encoded.ids), boundary)


def corrected_logprobs_of_encoded(engine: Any, encoded: Sequence[EncodedPrompt],
                                  on_pass: OnPass | None = None) -> list[list[float]]:
    """The token logprobs of ``encoded`` by ``engine`` (a
    :class:`~.logprob_engine.LogprobEngine` made with ``word_boundary``), corrected for word
    boundaries (``on_pass`` gets them corrected too)."""
    mask = engine.boundary_mask
    if mask is None:
        raise ValueError("this engine was made without word_boundary")

    def corrected_pass(indices: list[int], raws: list[list[float]]) -> None:
        assert on_pass is not None
        on_pass(
            indices,
            [corrected(encoded[i], raw, mask) for i, raw in zip(indices, raws, strict=False)],
        )

    raws = engine.uncorrected_logprobs(with_boundaries(encoded, engine.encoder.bos_id),
                                       None if on_pass is None else corrected_pass)
    return [corrected(e, raw, mask) for e, raw in zip(encoded, raws, strict=False)]


def token_and_boundary_logprobs(engine: Any, encoded: Sequence[EncodedPrompt]
                                ) -> list[tuple[list[float], list[float]]]:
    """Per prompt, its uncorrected token logprobs and its boundary logprobs (:func:`split`), from
    an engine made with ``word_boundary``."""
    if engine.boundary_mask is None:
        raise ValueError("this engine was made without word_boundary")
    raws = engine.uncorrected_logprobs(with_boundaries(encoded, engine.encoder.bos_id))
    return [split(e, raw) for e, raw in zip(encoded, raws, strict=False)]
