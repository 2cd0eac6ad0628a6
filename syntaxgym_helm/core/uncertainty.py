"""How sure an accuracy over a few items is, and whether two models differ on the same items.

SyntaxGym suites are small (19 to 40 items): a suite accuracy of 0.63 over 30 items could be
anything from about 0.45 to 0.78. These are the intervals and paired tests the reports print:

- :func:`wilson_interval`: a 95% Wilson score interval for one suite's accuracy over its scorable
  items (SciPy's ``binomtest(...).proportion_ci(method="wilson")``). Unlike the normal
  approximation it stays inside [0, 1] and is honest at 0/n and n/n.
- :func:`bootstrap_interval`: a percentile bootstrap of a mean of group means (a circuit over its
  suites, the SG score over the suites run, BLiMP over its paradigms), resampling items with
  replacement *within* each group: the groups are fixed, the items are the sample. Where every
  item passed (or every item failed) each resample is the same, and the percentile interval a
  single point that claims certainty no sample gives: there it is the Wilson interval of all the
  items together (whose mean is then the mean of means), as for one suite.
- :func:`mcnemar_exact`: the exact McNemar test of two models on the same items: only the
  discordant items count (passed by one model, failed by the other); under the null each is
  equally likely to favour either model, a binomial(n_discordant, 1/2).
- :func:`paired_bootstrap`: the difference of two models' mean of group means, resampling the
  *same* items for both (pairs stay pairs), with its interval and a two-sided bootstrap p-value.
- :func:`holm_adjust`: Holm's step-down adjustment of several p-values (one test per suite), so
  that "some suite differs" at p < 0.05 holds at 5% over all of them, not 5% per suite.

The bootstraps are seeded (same seed, same interval) and exact in distribution yet fast: an item's
value takes few distinct levels (0 and 1; a difference -1, 0 and 1), so the sum of n items drawn
with replacement is a multinomial count of those levels, drawn directly instead of n indices.

Libraries. Wilson intervals and McNemar's binomial tail are SciPy's. Not
``scipy.stats.bootstrap``: it gives the same percentile intervals up to the random draws (tested)
but draws every index, orders of magnitude more work on BLiMP's 67 x 1,000 items. Not
``scipy.stats.false_discovery_control``: it is Benjamini-Hochberg, which bounds the share of false
findings, not the chance of any (Holm); SciPy has no Holm, and statsmodels' ``multipletests``
would be a dependency for ten lines.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

CONFIDENCE = 0.95
RESAMPLES = 10_000
SEED = 0


@dataclass(frozen=True)
class Interval:
    """A ``confidence`` interval ``[low, high]`` made by ``method``; NaN bounds when undefined."""

    low: float
    high: float
    method: str
    confidence: float = CONFIDENCE

    def text(self, digits: int = 2) -> str:
        """``[0.45, 0.78]``, or ``[-]`` when there is no interval."""
        if math.isnan(self.low) or math.isnan(self.high):
            return "[-]"
        return f"[{self.low:.{digits}f}, {self.high:.{digits}f}]"


NO_INTERVAL_METHOD = "none"


def no_interval(method: str = NO_INTERVAL_METHOD) -> Interval:
    return Interval(math.nan, math.nan, method)


def wilson_interval(passed: int, items: int, confidence: float = CONFIDENCE) -> Interval:
    """The Wilson score interval of ``passed / items``; no interval for 0 items."""
    if not 0 <= passed <= items:
        raise ValueError(f"passed={passed} must be between 0 and items={items}")
    if items == 0:
        return no_interval("wilson")
    from scipy.stats import binomtest  # imported when first used: SciPy's stats take seconds

    ci = binomtest(passed, items).proportion_ci(confidence_level=confidence, method="wilson")
    return Interval(float(ci.low), float(ci.high), "wilson", confidence)


def _resampled_means(values: Sequence[float], resamples: int,
                     rng: np.random.Generator) -> np.ndarray:
    """``resamples`` means of ``len(values)`` values drawn with replacement (multinomial counts
    of the distinct levels: the same distribution as drawing indices, far less work)."""
    levels, counts = np.unique(np.asarray(values, dtype=float), return_counts=True)
    draws = rng.multinomial(len(values), counts / counts.sum(), size=resamples)
    return np.asarray(draws @ levels / len(values))


def _check_groups(groups: Sequence[Sequence[float]]) -> list[Sequence[float]]:
    kept = [group for group in groups if len(group) > 0]
    for group in kept:
        if any(math.isnan(value) for value in group):
            raise ValueError("bootstrap values must not be NaN: leave unscorable items out")
    return kept


def mean_of_means(groups: Sequence[Sequence[float]]) -> float:
    """The unweighted mean over non-empty groups of each group's mean (NaN with no group)."""
    kept = [group for group in groups if len(group) > 0]
    if not kept:
        return math.nan
    return float(np.mean([np.mean(group) for group in kept]))


def bootstrap_interval(groups: Sequence[Sequence[float]], confidence: float = CONFIDENCE,
                       resamples: int = RESAMPLES, seed: int = SEED) -> Interval:
    """Percentile interval of :func:`mean_of_means`, items resampled within their group; where
    every item passed, or every item failed, the Wilson interval of all the items together."""
    kept = _check_groups(groups)
    if not kept:
        return no_interval("bootstrap")
    levels = {float(value) for group in kept for value in group}
    if levels in ({0.0}, {1.0}):  # every resample alike: the percentile interval is one point
        items = sum(len(group) for group in kept)
        return wilson_interval(items if levels == {1.0} else 0, items, confidence)
    rng = np.random.default_rng(seed)
    totals = sum((_resampled_means(group, resamples, rng) for group in kept), np.zeros(resamples))
    return _percentile_interval(totals / len(kept), confidence)


def _percentile_interval(samples: np.ndarray, confidence: float) -> Interval:
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(samples, [tail, 100 - tail])
    return Interval(float(low), float(high), "bootstrap", confidence)


@dataclass(frozen=True)
class McNemar:
    """Two models on the same items: how many each passed alone, and the exact two-sided p."""

    only_a: int
    only_b: int
    p_value: float

    @property
    def discordant(self) -> int:
        return self.only_a + self.only_b


def mcnemar_exact(outcomes_a: Sequence[bool], outcomes_b: Sequence[bool]) -> McNemar:
    """Exact McNemar test over paired outcomes (item i of ``a`` pairs with item i of ``b``)."""
    if len(outcomes_a) != len(outcomes_b):
        raise ValueError(f"paired outcomes need equal lengths ({len(outcomes_a)} and "
                         f"{len(outcomes_b)})")
    only_a = sum(1 for a, b in zip(outcomes_a, outcomes_b, strict=True) if a and not b)
    only_b = sum(1 for a, b in zip(outcomes_a, outcomes_b, strict=True) if b and not a)
    if only_a + only_b == 0:
        return McNemar(0, 0, 1.0)
    from scipy.stats import binomtest  # imported when first used: SciPy's stats take seconds

    p_value = binomtest(only_a, only_a + only_b, 0.5).pvalue
    return McNemar(only_a, only_b, float(min(1.0, p_value)))


@dataclass(frozen=True)
class PairedDifference:
    """``b - a`` of a mean of group means over the same items, its interval and bootstrap p."""

    difference: float
    interval: Interval
    p_value: float


def paired_bootstrap(groups_a: Sequence[Sequence[float]], groups_b: Sequence[Sequence[float]],
                     confidence: float = CONFIDENCE, resamples: int = RESAMPLES,
                     seed: int = SEED) -> PairedDifference:
    """The difference ``b - a`` of :func:`mean_of_means`, resampling items of each group with
    both models' values together. The p-value is two-sided: twice the smaller share of resampled
    differences on either side of 0 (at most 1; at least 1 / ``resamples`` when none crosses)."""
    if len(groups_a) != len(groups_b):
        raise ValueError(f"paired groups need equal counts ({len(groups_a)} and {len(groups_b)})")
    differences = []
    for group_a, group_b in zip(groups_a, groups_b, strict=True):
        if len(group_a) != len(group_b):
            raise ValueError(f"a paired group has {len(group_a)} and {len(group_b)} items")
        differences.append([b - a for a, b in zip(group_a, group_b, strict=True)])
    kept = _check_groups(differences)
    if not kept:
        return PairedDifference(math.nan, no_interval("paired bootstrap"), math.nan)
    rng = np.random.default_rng(seed)
    samples = sum((_resampled_means(group, resamples, rng) for group in kept),
                  np.zeros(resamples)) / len(kept)
    interval = _percentile_interval(samples, confidence)
    below, above = float(np.mean(samples <= 0)), float(np.mean(samples >= 0))
    p_value = max(min(1.0, 2 * min(below, above)), 1 / resamples)
    return PairedDifference(mean_of_means(kept),
                            Interval(interval.low, interval.high, "paired bootstrap", confidence),
                            p_value)


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm's adjusted p-values, in the order given (NaN stays NaN and counts as no test).

    With m tests sorted by p, the i-th smallest (from 1) is multiplied by m - i + 1, capped at 1
    and made non-decreasing along the order. Rejecting where the adjusted p < alpha keeps the
    chance of any false rejection at most alpha (Holm 1979), with no assumption on dependence."""
    tested = sorted((p, index) for index, p in enumerate(p_values) if not math.isnan(p))
    for p, _ in tested:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p-value {p} is not between 0 and 1")
    adjusted = [math.nan] * len(p_values)
    running = 0.0
    for rank, (p, index) in enumerate(tested):
        running = max(running, min(1.0, (len(tested) - rank) * p))
        adjusted[index] = running
    return adjusted
