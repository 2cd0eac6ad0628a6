"""Age of acquisition: when in training a model learns a paradigm, a suite or a word.

Both fit the four-parameter sigmoid ``f(t) = d + a / (1 + exp(-b (t - c)))`` over
``t = log10(x + 1)`` (x: words, tokens or steps seen; the ``+ 1`` keeps ``step0`` on the axis, as
BabyLM's pipeline does) by least squares (scipy's ``curve_fit``), and read where it crosses a
threshold halfway between chance and where the model ends up:

- a paradigm or suite (:func:`suite_acquisition`): the curve of accuracies, the threshold halfway
  from chance (0.5 for a minimal pair; ``0.5 ** k`` for an item of ``k`` predictions, as if each
  were a coin toss) to the accuracy at the last checkpoint; its age is the first checkpoint where
  the fitted curve is at or above it, and the x where the curve crosses it;
- a word (:func:`word_acquisition`, Chang and Bergen 2022, as BabyLM scores it): the curve of the
  negated surprisal of the word (bits, the mean over its contexts at each checkpoint), the
  threshold halfway between chance, ``log2(300,000)`` bits (a uniform guess over an approximate
  vocabulary), and the word's lowest surprisal over the checkpoints; its age is the x where the
  curve crosses it, within the checkpoints' range.

A curve that never reaches its threshold, ends at or below chance, or whose fit fails has no age,
and says why (``reason``). A curve already at or past its threshold at the first checkpoint has
that checkpoint for its age and no crossing x, and says so: acquired by then, not "never".
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: The vocabulary Chang and Bergen (2022) take for chance: a uniform guess costs log2 of it.
APPROXIMATE_VOCABULARY = 300_000
#: A four-parameter curve needs at least this many checkpoints.
MIN_CHECKPOINTS = 4
#: Why a curve past its threshold at the first checkpoint has no crossing, yet an age.
ALREADY = ("the fitted curve is at or past the threshold from the first checkpoint on: acquired "
           "by then (no crossing within the checkpoints' range)")


@dataclass(frozen=True)
class Acquisition:
    """Where a curve crosses its threshold: ``x`` (None: it has no age, ``reason`` says why),
    ``checkpoint_x`` (the first checkpoint at or past it, for a suite), the threshold and the
    fitted parameters ``(a, b, c, d)`` (empty when there is no fit)."""

    x: float | None
    checkpoint_x: float | None
    threshold: float
    parameters: tuple[float, ...]
    reason: str = ""


def sigmoid(t: np.ndarray, a: float, b: float, c: float, d: float) -> np.ndarray:
    """``d + a / (1 + exp(-b (t - c)))``."""
    return d + a / (1.0 + np.exp(-b * (t - c)))


def log_axis(xs: Sequence[float]) -> np.ndarray:
    """``log10(x + 1)`` of each x."""
    return np.log10(np.asarray(xs, dtype=float) + 1.0)


def fit_sigmoid(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, ...] | str:
    """The least-squares ``(a, b, c, d)`` of an increasing sigmoid through ``(log10(x+1), y)``,
    or why there is none (too few points, no convergence)."""
    t, y = log_axis(xs), np.asarray(ys, dtype=float)
    keep = ~np.isnan(y)
    t, y = t[keep], y[keep]
    if len(t) < MIN_CHECKPOINTS:
        return f"{len(t)} checkpoint(s) with a value: a sigmoid needs {MIN_CHECKPOINTS}"
    spread = float(np.ptp(y)) or 1e-6
    low, high = float(t.min()), float(t.max())
    guess = [spread, 4.0 / max(high - low, 1e-6), float(np.mean(t)), float(y.min())]
    bounds = ([0.0, 0.0, low - 1.0, float(y.min()) - spread],
              [2.0 * spread + abs(float(y.max())), 100.0, high + 1.0, float(y.max())])
    try:
        from scipy.optimize import OptimizeWarning, curve_fit

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", OptimizeWarning)
            fitted, _ = curve_fit(sigmoid, t, y, p0=guess, bounds=bounds, maxfev=20000)
    except (RuntimeError, ValueError) as error:
        return f"the sigmoid fit failed ({error})"
    return tuple(float(value) for value in fitted)


def crossing(parameters: Sequence[float], level: float) -> float | None:
    """The x (not log) where the fitted curve equals ``level``; None when it never does."""
    a, b, c, d = parameters
    if a <= 0 or b <= 0 or not d < level < a + d:
        return None
    return float(10 ** (c - math.log(a / (level - d) - 1.0) / b) - 1.0)


def suite_acquisition(xs: Sequence[float], accuracies: Sequence[float],
                      chance: float = 0.5) -> Acquisition:
    """The age of acquisition of a paradigm or suite (see the module doc); ``xs`` in training
    order, ``accuracies`` in [0, 1] (NaN: no scorable item at that checkpoint)."""
    values = [(x, y) for x, y in zip(xs, accuracies, strict=True) if not math.isnan(y)]
    if not values:
        return Acquisition(None, None, math.nan, (), "no checkpoint has a scorable item")
    final = values[-1][1]
    threshold = chance + (final - chance) / 2.0
    if final <= chance:
        return Acquisition(None, None, threshold, (),
                           f"the last checkpoint's accuracy {final:.3f} is not above chance "
                           f"{chance:.3f}")
    fitted = fit_sigmoid([x for x, _ in values], [y for _, y in values])
    if isinstance(fitted, str):
        return Acquisition(None, None, threshold, (), fitted)
    curve = sigmoid(log_axis([x for x, _ in values]), *fitted)
    reached = [x for (x, _), y in zip(values, curve, strict=True) if y >= threshold]
    if not reached:
        return Acquisition(None, None, threshold, fitted,
                           "the fitted curve stays below the threshold at every checkpoint")
    x = crossing(fitted, threshold)
    if reached[0] == values[0][0] and (x is None or x < values[0][0]):
        return Acquisition(None, reached[0], threshold, fitted, ALREADY)
    return Acquisition(x, reached[0], threshold, fitted)


def word_acquisition(xs: Sequence[float], surprisals: Sequence[float],
                     vocabulary: int = APPROXIMATE_VOCABULARY) -> Acquisition:
    """A word's age of acquisition by Chang and Bergen's rule (see the module doc): ``xs`` in
    training order, ``surprisals`` the word's mean surprisal (bits) at each (NaN: none). The
    threshold and parameters are on the negated surprisal."""
    values = [(x, s) for x, s in zip(xs, surprisals, strict=True) if not math.isnan(s)]
    chance = math.log2(vocabulary)
    if not values:
        return Acquisition(None, None, math.nan, (), "no checkpoint scored the word")
    lowest = min(s for _, s in values)
    threshold = -(chance - 0.5 * (chance - lowest))
    fitted = fit_sigmoid([x for x, _ in values], [-s for _, s in values])
    if isinstance(fitted, str):
        return Acquisition(None, None, threshold, (), fitted)
    x = crossing(fitted, threshold)
    first, last = values[0][0], values[-1][0]
    at_first, at_last = sigmoid(log_axis([first, last]), *fitted)
    if at_first >= threshold:  # (the sigmoid rises: past it from the first checkpoint on)
        return Acquisition(None, first, threshold, fitted, ALREADY)
    if x is None or not first <= x <= last:
        return Acquisition(None, None, threshold, fitted,
                           "the fitted curve stays below the threshold up to the last "
                           "checkpoint: not acquired by then" if at_last < threshold else
                           "the fitted curve does not cross the threshold within the "
                           "checkpoints' range")
    return Acquisition(x, next(v for v, _ in values if v >= x), threshold, fitted)


def chance_of(predictions: int) -> float:
    """The accuracy of coin tosses on an item of ``predictions`` predictions (all must hold)."""
    return 0.5 ** max(predictions, 1)


def pearson(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, int]:
    """Pearson's r over the pairs where both values exist, and how many there are (NaN with
    fewer than 3)."""
    pairs = [(x, y) for x, y in zip(xs, ys, strict=True)
             if x is not None and y is not None and not math.isnan(x) and not math.isnan(y)]
    if len(pairs) < 3:
        return math.nan, len(pairs)
    a, b = np.array(pairs, dtype=float).T
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return math.nan, len(pairs)
    return float(np.corrcoef(a, b)[0, 1]), len(pairs)
