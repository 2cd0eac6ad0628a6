"""The word-boundary correction of token logprobs (Pimentel & Meister 2024, "How to Compute the
Probability of a Word"; Oh & Schuler 2024) for tokenizers whose tokens carry a word's leading
space (``Ġ``, ``▁``): a word ends only if the next token begins a word, so

    log p(word | context) = Σ log p(its tokens) + log P(bow | context + word)
                            − log P(bow | context),

where P(bow | c) is the probability that the token after ``c`` begins a word (the sum of the
probabilities of the vocabulary's beginning-of-word tokens, and of the end of text).

:func:`corrected_logprobs` spreads the two terms over a word's tokens, so that HELM's per-token
format needs no change and a region's sum is the sum of its words' corrected logprobs: a
word-initial token gets ``− log P(bow)`` at its own position, a word-final token gets
``+ log P(bow)`` at the position after it. Both keep a token's value at most 0: a word-initial
token is itself one of the beginning-of-word tokens, so its probability is at most P(bow).
A sentence's sum changes only by ``log P(bow)`` after its last token (the terms telescope).
"""

from __future__ import annotations

from collections.abc import Sequence


def corrected_logprobs(logprobs: Sequence[float], begins_word: Sequence[bool],
                       boundary: Sequence[float]) -> list[float]:
    """Token logprobs under the word-boundary correction.

    ``logprobs``: one per token, the first for the beginning-of-text token (0.0, kept);
    ``begins_word[k]``: token ``k`` carries the beginning-of-word mark (index 0 unused);
    ``boundary[k]``: log P(bow) at the position that predicts token ``k + 1`` (so
    ``len(boundary) == len(logprobs)``: the last is the position after the last token).

    Token 1 (the first after the beginning-of-text token) begins a word whatever its mark
    (nothing precedes it in the text), so it gets no ``− log P(bow)``; a token ends a word when
    the next token begins one, or when it is the last token.
    """
    count = len(logprobs)
    if len(begins_word) != count or len(boundary) != count:
        raise ValueError(f"{count} logprobs, {len(begins_word)} word-beginning flags and "
                         f"{len(boundary)} boundary logprobs: they must be as many")
    result = list(logprobs)
    for k in range(1, count):
        if k >= 2 and begins_word[k]:
            result[k] -= boundary[k - 1]
        if k == count - 1 or begins_word[k + 1]:
            result[k] += boundary[k]
        # Rounding alone can lift a word-initial token that is the only likely one above 0.
        result[k] = min(result[k], 0.0)
    return result


def word_spans(begins_word: Sequence[bool]) -> list[tuple[int, int]]:
    """The words of a token sequence by its marks: ``(first, last)`` token indices (inclusive),
    tokens from index 1 (index 0 is the beginning-of-text token)."""
    spans: list[tuple[int, int]] = []
    for k in range(1, len(begins_word)):
        if k == 1 or begins_word[k]:
            spans.append((k, k))
        else:
            spans[-1] = (spans[-1][0], k)
    return spans


def regions_split_inside_words(contents: Sequence[tuple[int, str]],
                               separator: str) -> list[tuple[int, int]]:
    """The pairs of consecutive non-empty regions ``(number, content)`` of a sentence (joined by
    ``separator``) whose boundary falls inside a word (no whitespace between them). Under the
    word-boundary correction such a word's ``− log P(bow)`` goes to the first region and its
    ``+ log P(bow)`` to the region of its last token: the caller reports them."""
    present = [(number, content) for number, content in contents if content]
    if separator and separator.isspace():
        return []
    return [(a, b) for (a, first), (b, second) in zip(present, present[1:], strict=False)
            if not (first + separator)[-1].isspace() and not (separator + second)[0].isspace()]
