"""Region statistics: how a region's token surprisals become the one number a prediction compares.

SyntaxGym measures a region by aggregating the surprisals (in bits) of the tokens that
:mod:`syntaxgym_helm.core.alignment` assigns to it. The metrics are those of the reference
implementation (syntaxgym-core): ``sum``, ``mean``, ``median`` (the mean of the two middle values
for an even count, as numpy's), ``range`` (max - min), ``max`` and ``min``. ``sum`` is the one
the SyntaxGym papers use.

Empty regions. Real suites have regions whose content is empty (the region is absent from that
condition's sentence), so they get no tokens:

* ``sum`` of no tokens is ``0.0``: the surprisal of nothing is zero. This is what makes a
  prediction such as "region 3 + region 4 of condition A > region 3 + region 4 of condition B"
  work when one condition leaves region 3 out (a gap).
* every other metric of no tokens is undefined and returned as ``math.nan``. The formula
  evaluator (:mod:`syntaxgym_helm.core.formula`) raises an ``EvaluationError`` when a prediction
  uses an undefined value, so the item is reported as unscorable instead of a comparison with NaN
  silently coming out false.

A NaN among the surprisals makes every metric NaN (undefined) for the same reason; infinities
(a token of probability zero) are kept as they are. Where these rules give other values than
syntaxgym-core's (empty regions, ``sum`` rounding): docs/differences_from_syntaxgym_core.md.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence

__all__ = [
    "LN2",
    "METRICS",
    "all_statistics",
    "nats_to_bits",
    "region_statistic",
]

METRICS: tuple[str, ...] = ("sum", "mean", "median", "range", "max", "min")
"""The metric names a suite may ask for, in the reference implementation's order."""

LN2: float = math.log(2)
"""Natural log of 2: nats per bit."""


def nats_to_bits(logprob: float) -> float:
    """Surprisal in bits of a token whose natural-log probability is ``logprob``.

    ``-logprob / ln 2``: a logprob of ``-ln 2`` (probability 1/2) is 1 bit. A logprob of 0 gives
    ``0.0`` (never ``-0.0``).
    """
    return -logprob / LN2 + 0.0  # + 0.0 turns -0.0 into 0.0


def _range(values: Sequence[float]) -> float:
    return max(values) - min(values)


# Every function here gets a non-empty list without NaN; region_statistic handles those cases.
_NONEMPTY: dict[str, Callable[[Sequence[float]], float]] = {
    "sum": math.fsum,  # exact rounding, so the order of tokens cannot change the result
    "mean": lambda values: math.fsum(values) / len(values),
    "median": statistics.median,
    "range": _range,
    "max": max,
    "min": min,
}


def region_statistic(metric: str, surprisals: Sequence[float]) -> float:
    """Aggregate one region's token surprisals with ``metric`` (one of :data:`METRICS`).

    Returns ``0.0`` for the ``sum`` of an empty region and ``math.nan`` for any other metric of
    an empty region, or for any metric when a surprisal is NaN. Raises ``ValueError`` for a
    metric name not in :data:`METRICS`.
    """
    if metric not in _NONEMPTY:
        raise ValueError(f"unknown metric {metric!r}: use one of {', '.join(METRICS)}")
    values = [float(value) for value in surprisals]
    if not values:
        return 0.0 if metric == "sum" else math.nan
    if any(math.isnan(value) for value in values):
        # max/min/median would give an order-dependent answer with NaN; undefined is honest.
        return math.nan
    return float(_NONEMPTY[metric](values))


def all_statistics(surprisals: Sequence[float]) -> dict[str, float]:
    """Every metric of one region, keyed by name in :data:`METRICS` order (``"metric": "all"``):
    the values :func:`region_statistic` gives, computed together (reports ask for all of them, for
    every region of every item: hundreds of thousands of regions in BLiMP)."""
    values = sorted(float(value) for value in surprisals)
    if not values or any(math.isnan(value) for value in values):
        return {metric: region_statistic(metric, values) for metric in METRICS}
    total = math.fsum(values)
    middle = len(values) // 2
    median = values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2
    return {"sum": total, "mean": total / len(values), "median": median,
            "range": values[-1] - values[0], "max": values[-1], "min": values[0]}
