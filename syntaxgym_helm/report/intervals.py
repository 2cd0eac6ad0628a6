"""An accuracy and its 95% interval, as every report shows it.

A suite has 19 to 40 items, so its accuracy is a rough estimate: 19 of 30 items is 0.633, but
anything from 0.46 to 0.78 is compatible with it. The reports therefore never print a bare mean:

- a suite's accuracy (the share of its scorable items that pass) gets the Wilson score interval
  over those items (:func:`syntaxgym_helm.core.uncertainty.wilson_interval`);
- a mean over suites (a circuit, the SG score) gets a percentile bootstrap that resamples items
  within each suite, the suites themselves fixed
  (:func:`syntaxgym_helm.core.uncertainty.bootstrap_interval`; seeded, so a report is the same
  every time it is written). A "mean" over a single suite is that suite's accuracy and gets its
  Wilson interval: the same number gets the same interval (a percentile bootstrap of a few items
  is coarser, e.g. [0.25, 0.88] against Wilson's [0.31, 0.86] for 5 of 8).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from syntaxgym_helm.core.uncertainty import (
    CONFIDENCE,
    RESAMPLES,
    SEED,
    Interval,
    bootstrap_interval,
    mean_of_means,
    no_interval,
    wilson_interval,
)

#: The one line under a table that says what its brackets are.
INTERVALS_NOTE = (
    f"In brackets: {CONFIDENCE:.0%} intervals. A suite's accuracy: the Wilson score interval over "
    "its scorable items. A circuit or the SG score (a mean over suites): a percentile bootstrap, "
    f"items resampled within each suite ({RESAMPLES:,} resamples, seed {SEED}); over one suite, "
    "that suite's Wilson interval.")


@dataclass(frozen=True)
class Estimate:
    """An accuracy (NaN: no item) and its interval."""

    value: float
    interval: Interval

    def text(self) -> str:
        """``0.633 [0.46, 0.78]``; ``–`` when there is no value."""
        if math.isnan(self.value):
            return "–"
        return f"{self.value:.3f} {self.interval.text()}"


def suite_estimate(outcomes: Sequence[float]) -> Estimate:
    """A suite's accuracy from its items' outcomes (1.0 pass, 0.0 fail; scorable items only)."""
    passed = _passes(outcomes)
    if not outcomes:
        return Estimate(math.nan, no_interval("wilson"))
    return Estimate(passed / len(outcomes), wilson_interval(passed, len(outcomes)))


def mean_estimate(suites: Sequence[Sequence[float]]) -> Estimate:
    """The mean of suite accuracies (suites without a scorable item left out), bootstrapped; one
    suite's is its own :func:`suite_estimate`."""
    kept = [outcomes for outcomes in suites if outcomes]
    if not kept:
        return Estimate(math.nan, no_interval("bootstrap"))
    if len(kept) == 1:
        return suite_estimate(kept[0])
    return Estimate(mean_of_means(kept), bootstrap_interval(kept))


def _passes(outcomes: Sequence[float]) -> int:
    for value in outcomes:
        if value not in (0.0, 1.0):
            raise ValueError(f"an item outcome must be 0 or 1, got {value}")
    return int(sum(outcomes))
