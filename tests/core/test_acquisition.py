"""Ages of acquisition: the sigmoid fit finds where a curve of known shape crosses its threshold,
and curves that never learn say why."""

from __future__ import annotations

import math

import numpy as np
import pytest

from syntaxgym_helm.core.acquisition import (
    APPROXIMATE_VOCABULARY,
    chance_of,
    crossing,
    fit_sigmoid,
    log_axis,
    pearson,
    sigmoid,
    suite_acquisition,
    word_acquisition,
)

#: Pythia's first checkpoints and then every 10,000 steps.
STEPS = [0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000, 10000, 20000, 40000, 80000, 143000]


def test_a_paradigm_learned_along_a_sigmoid_is_acquired_where_it_crosses_halfway() -> None:
    # From chance (0.5) up to 0.9, steepest at log10(x+1) = 3 (step 999).
    truth = (0.4, 2.5, 3.0, 0.5)
    accuracies = list(sigmoid(log_axis(STEPS), *truth))
    found = suite_acquisition(STEPS, accuracies, chance=0.5)
    final = accuracies[-1]
    assert found.threshold == pytest.approx(0.5 + (final - 0.5) / 2)
    assert found.reason == ""
    expected = crossing(truth, found.threshold)
    assert expected is not None and found.x == pytest.approx(expected, rel=1e-3)
    # The first checkpoint at or above the threshold on the fitted curve.
    assert found.checkpoint_x == min(s for s, a in zip(STEPS, accuracies, strict=True)
                                     if a >= found.threshold - 1e-9)


def test_noise_moves_the_age_little_and_missing_checkpoints_are_skipped() -> None:
    rng = np.random.default_rng(0)
    truth = (0.35, 3.0, 2.5, 0.5)
    accuracies = sigmoid(log_axis(STEPS), *truth) + rng.normal(0, 0.01, len(STEPS))
    accuracies[3] = math.nan  # a checkpoint that failed
    found = suite_acquisition(STEPS, list(accuracies))
    assert found.x is not None
    assert math.log10(found.x + 1) == pytest.approx(2.5, abs=0.15)


def test_curves_that_never_learn_have_no_age_and_say_why() -> None:
    flat = suite_acquisition(STEPS, [0.5] * len(STEPS))
    assert flat.x is None and "not above chance" in flat.reason
    short = suite_acquisition([1, 2, 3], [0.5, 0.7, 0.9])
    assert short.x is None and "a sigmoid needs 4" in short.reason
    none = suite_acquisition([1, 2], [math.nan, math.nan])
    assert none.x is None and "no checkpoint" in none.reason
    assert isinstance(fit_sigmoid([1, 2], [0.5, 0.6]), str)


def test_a_word_is_acquired_halfway_between_chance_and_its_lowest_surprisal() -> None:
    # Surprisal falling from 18 bits to 6 bits, steepest at log10(x+1) = 2.
    truth = (12.0, 3.0, 2.0, -18.0)  # on -surprisal
    surprisals = list(-sigmoid(log_axis(STEPS), *truth))
    found = word_acquisition(STEPS, surprisals)
    chance = math.log2(APPROXIMATE_VOCABULARY)
    lowest = min(surprisals)
    assert -found.threshold == pytest.approx(chance - 0.5 * (chance - lowest))
    expected = crossing(truth, found.threshold)
    assert expected is not None and found.x == pytest.approx(expected, rel=1e-3)
    # Chance above the curve's start: never crossed within the checkpoints.
    late = word_acquisition(STEPS, [s + 100 for s in surprisals], vocabulary=2)
    assert late.x is None and late.checkpoint_x is None
    assert "stays below the threshold up to the last checkpoint" in late.reason


def test_a_curve_past_its_threshold_from_the_first_checkpoint_was_acquired_by_then() -> None:
    """Not "never" (a word was said not to cross, where a suite of the same shape had an age
    and no reason): the first checkpoint is the age, with no crossing x, and says why."""
    later = STEPS[8:]  # from step 128: the suite's curve (steepest at step 9) is high by then
    suite = suite_acquisition(later, list(sigmoid(log_axis(later), 0.4, 2.5, 1.0, 0.5)))
    assert (suite.x, suite.checkpoint_x) == (None, later[0])
    assert "acquired by then" in suite.reason
    surprisals = list(-sigmoid(log_axis(later), 12.0, 3.0, 1.0, -18.0))
    word = word_acquisition(later, surprisals)
    assert (word.x, word.checkpoint_x) == (None, later[0]) and word.reason == suite.reason


def test_chance_and_correlation() -> None:
    assert chance_of(1) == 0.5 and chance_of(2) == 0.25 and chance_of(0) == 0.5
    r, n = pearson([1.0, 2.0, 3.0, math.nan], [2.0, 4.0, 6.5, 1.0])
    assert n == 3 and r == pytest.approx(np.corrcoef([1, 2, 3], [2, 4, 6.5])[0, 1])
    assert math.isnan(pearson([1.0, 2.0], [1.0, 2.0])[0])
