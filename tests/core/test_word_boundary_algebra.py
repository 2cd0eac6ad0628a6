"""The word-boundary correction's algebra (:mod:`syntaxgym_helm.core.word_boundary`) on token
distributions made here, and the region boundaries it reports."""

from __future__ import annotations

import math
import random

import pytest

from syntaxgym_helm.core.word_boundary import (
    corrected_logprobs,
    regions_split_inside_words,
    word_spans,
)


def _case(seed: int, count: int = 12) -> tuple[list[float], list[bool], list[float]]:
    """Random token logprobs and boundary logprobs that a distribution could give: a
    word-initial token's probability is at most P(bow) at its position."""
    rng = random.Random(seed)
    begins = [False] + [True] + [rng.random() < 0.6 for _ in range(count - 2)]
    boundary = [math.log(rng.uniform(0.05, 1.0)) for _ in range(count)]
    logprobs = [0.0]
    for k in range(1, count):
        ceiling = boundary[k - 1] if begins[k] else 0.0
        logprobs.append(ceiling + math.log(rng.uniform(0.01, 1.0)))
    return logprobs, begins, boundary


@pytest.mark.parametrize("seed", range(20))
def test_words_sum_to_their_corrected_probability_and_every_value_stays_at_most_0(seed):
    logprobs, begins, boundary = _case(seed)
    values = corrected_logprobs(logprobs, begins, boundary)
    assert values[0] == 0.0 and all(v <= 0.0 for v in values)
    for first, last in word_spans(begins):
        expected = (sum(logprobs[first: last + 1]) + boundary[last]
                    - (boundary[first - 1] if first > 1 else 0.0))
        assert sum(values[first: last + 1]) == pytest.approx(expected, abs=1e-9)
    # The terms telescope: the sentence moves by log P(bow) after its last token only.
    assert sum(values) == pytest.approx(sum(logprobs) + boundary[-1], abs=1e-9)


def test_words_are_cut_before_each_marked_token():
    assert word_spans([False, False, True, False, False, True]) == [(1, 1), (2, 4), (5, 5)]


def test_mismatched_lengths_are_refused():
    with pytest.raises(ValueError, match="as many"):
        corrected_logprobs([0.0, -1.0], [False, True], [-0.1])


@pytest.mark.parametrize("regions, separator, expected", [
    ([(1, "The keys"), (2, "are"), (3, "here.")], " ", []),
    ([(1, "The table"), (2, "."), (3, "")], "", [(1, 2)]),
    ([(1, "他"), (2, ""), (3, "喜欢"), (4, "猫")], "", [(1, 3), (3, 4)]),
    ([(1, "The "), (2, "cat")], "", []),
])
def test_region_boundaries_inside_words_are_found(regions, separator, expected):
    assert regions_split_inside_words(regions, separator) == expected
