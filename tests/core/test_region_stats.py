"""Tests of region statistics: the six metrics, empty regions, NaN, and logprob-to-bits."""

from __future__ import annotations

import math

import pytest

from syntaxgym_helm.core.region_stats import (
    LN2,
    METRICS,
    all_statistics,
    nats_to_bits,
    region_statistic,
)


def test_metrics_are_the_reference_six_in_order() -> None:
    assert METRICS == ("sum", "mean", "median", "range", "max", "min")


@pytest.mark.parametrize(
    ("metric", "expected"),
    [
        ("sum", 10.0),
        ("mean", 2.5),
        ("median", 2.5),  # even count: mean of the two middle values
        ("range", 3.0),
        ("max", 4.0),
        ("min", 1.0),
    ],
)
def test_each_metric_on_an_even_count(metric: str, expected: float) -> None:
    assert region_statistic(metric, [4.0, 1.0, 3.0, 2.0]) == pytest.approx(expected)


def test_median_of_an_odd_count_is_the_middle_value() -> None:
    assert region_statistic("median", [9.0, 0.5, 2.0]) == 2.0


def test_single_token_region() -> None:
    assert all_statistics([3.25]) == {
        "sum": 3.25, "mean": 3.25, "median": 3.25, "range": 0.0, "max": 3.25, "min": 3.25,
    }


def test_empty_region_sum_is_zero_and_other_metrics_are_undefined() -> None:
    assert region_statistic("sum", []) == 0.0
    for metric in METRICS[1:]:
        assert math.isnan(region_statistic(metric, [])), metric


def test_nan_surprisal_makes_every_metric_undefined() -> None:
    for metric in METRICS:
        assert math.isnan(region_statistic(metric, [1.0, math.nan, 2.0])), metric


def test_infinite_surprisal_is_kept() -> None:
    assert region_statistic("sum", [1.0, math.inf]) == math.inf
    assert region_statistic("max", [1.0, math.inf]) == math.inf


def test_sum_is_exactly_rounded() -> None:
    assert region_statistic("sum", [1e16, 1.0, -1e16]) == 1.0


def test_unknown_metric_names_the_valid_ones() -> None:
    with pytest.raises(ValueError) as info:
        region_statistic("average", [1.0])
    message = str(info.value)
    assert "'average'" in message
    for metric in METRICS:
        assert metric in message


def test_all_statistics_follows_metric_order() -> None:
    assert tuple(all_statistics([1.0, 2.0])) == METRICS


def test_nats_to_bits() -> None:
    assert nats_to_bits(-LN2) == pytest.approx(1.0)
    assert nats_to_bits(math.log(0.125)) == pytest.approx(3.0)
    assert nats_to_bits(-1.0) == pytest.approx(1.4426950408889634)  # bits in one nat
    zero = nats_to_bits(0.0)
    assert zero == 0.0 and math.copysign(1.0, zero) == 1.0  # never -0.0
    assert nats_to_bits(-math.inf) == math.inf


def test_all_statistics_equal_each_statistic_alone() -> None:
    """all_statistics computes the six together; it must give exactly region_statistic's values
    (empty regions, NaN, infinities, ties and even counts included)."""
    import random

    rng = random.Random(0)
    pool = [0.0, 1e-9, 2.5, 5.0, 17.25, math.inf]
    for _ in range(5000):
        values = [rng.choice(pool) if rng.random() < 0.3 else rng.uniform(0, 30)
                  for _ in range(rng.randint(0, 7))]
        if values and rng.random() < 0.05:
            values[rng.randrange(len(values))] = math.nan
        together = all_statistics(values)
        for metric in METRICS:
            alone = region_statistic(metric, values)
            assert together[metric] == alone or (math.isnan(alone) and math.isnan(together[metric]))
