"""Tests of the intervals and paired tests, each against an independent computation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from syntaxgym_helm.core.uncertainty import (
    bootstrap_interval,
    mcnemar_exact,
    mean_of_means,
    paired_bootstrap,
    wilson_interval,
)


def _textbook_wilson(passed: int, items: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = passed / items
    centre = (p + z * z / (2 * items)) / (1 + z * z / items)
    half = z / (1 + z * z / items) * math.sqrt(p * (1 - p) / items + z * z / (4 * items * items))
    return centre - half, centre + half


@pytest.mark.parametrize(("passed", "items"), [(19, 30), (0, 24), (40, 40), (1, 1), (7, 19)])
def test_wilson_matches_the_textbook_formula(passed: int, items: int) -> None:
    interval = wilson_interval(passed, items)
    low, high = _textbook_wilson(passed, items)
    assert interval.low == pytest.approx(max(0.0, low), abs=1e-9)
    assert interval.high == pytest.approx(min(1.0, high), abs=1e-9)
    assert 0.0 <= interval.low <= passed / items <= interval.high <= 1.0


def test_wilson_of_a_typical_suite_is_wide() -> None:
    interval = wilson_interval(19, 30)
    assert interval.text() == "[0.46, 0.78]"


def test_wilson_refuses_impossible_counts_and_has_no_interval_for_no_items() -> None:
    with pytest.raises(ValueError, match="between 0 and items"):
        wilson_interval(5, 4)
    assert wilson_interval(0, 0).text() == "[-]"


def test_the_multinomial_bootstrap_has_scipys_bootstrap_distribution() -> None:
    """SciPy's percentile bootstrap of the same statistic, each group resampled on its own (items
    drawn by index): the same interval up to the random draws."""
    from scipy.stats import bootstrap

    groups = [[1.0] * 14 + [0.0] * 10, [1.0] * 30 + [0.0] * 2, [0.0] * 20 + [1.0] * 9]
    ours = bootstrap_interval(groups, resamples=40_000, seed=1)

    def statistic(*samples: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.mean([sample.mean(axis=axis) for sample in samples], axis=0)

    scipy = bootstrap(tuple(np.asarray(g) for g in groups), statistic, n_resamples=40_000,
                      method="percentile", paired=False, vectorized=True, random_state=2)
    assert ours.low == pytest.approx(scipy.confidence_interval.low, abs=0.006)
    assert ours.high == pytest.approx(scipy.confidence_interval.high, abs=0.006)
    assert ours.low < mean_of_means(groups) < ours.high


def test_the_bootstrap_is_reproducible_and_its_seed_matters() -> None:
    groups = [[1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0]]
    assert bootstrap_interval(groups, seed=3) == bootstrap_interval(groups, seed=3)
    assert bootstrap_interval(groups, seed=3) != bootstrap_interval(groups, seed=4)


def test_the_bootstrap_skips_empty_groups_and_refuses_nan() -> None:
    assert bootstrap_interval([[], [1.0, 1.0]]) == wilson_interval(2, 2)
    assert bootstrap_interval([[]]).text() == "[-]"
    with pytest.raises(ValueError, match="unscorable"):
        bootstrap_interval([[1.0, math.nan]])


def test_where_every_item_is_alike_the_interval_is_wilsons_over_all_items() -> None:
    """Four languages' pairs all failed: not [0.00, 0.00] (every resample alike), which claimed
    more certainty than any one language's Wilson interval, but Wilson's over the 4 items."""
    assert bootstrap_interval([[0.0], [0.0], [0.0, 0.0]]) == wilson_interval(0, 4)
    assert bootstrap_interval([[1.0] * 200, [1.0] * 200]) == wilson_interval(400, 400)
    assert bootstrap_interval([[1.0] * 200, [1.0] * 200]).low < 1.0
    mixed = bootstrap_interval([[1.0] * 200, [1.0] * 199 + [0.0]])
    assert mixed.method == "bootstrap" and mixed.low < mixed.high


def _exact_two_sided(k: int, n: int) -> float:
    tail = sum(math.comb(n, i) for i in range(0, min(k, n - k) + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def test_mcnemar_counts_discordant_items_and_matches_the_binomial_tail() -> None:
    a = [True] * 10 + [True] * 8 + [False] * 2 + [False] * 5
    b = [True] * 10 + [False] * 8 + [True] * 2 + [False] * 5
    test = mcnemar_exact(a, b)
    assert (test.only_a, test.only_b, test.discordant) == (8, 2, 10)
    assert test.p_value == pytest.approx(_exact_two_sided(2, 10))
    assert mcnemar_exact(b, a).p_value == pytest.approx(test.p_value)


def test_mcnemar_without_discordant_items_is_no_evidence() -> None:
    assert mcnemar_exact([True, False], [True, False]).p_value == 1.0
    with pytest.raises(ValueError, match="equal lengths"):
        mcnemar_exact([True], [True, False])


def test_paired_bootstrap_sees_a_consistent_difference_that_unpaired_intervals_miss() -> None:
    # b passes 6 more items of 40 than a and never fewer: the unpaired intervals overlap, the
    # paired difference is clearly above 0.
    a = [[1.0] * 20 + [0.0] * 20]
    b = [[1.0] * 26 + [0.0] * 14]
    assert wilson_interval(20, 40).high > wilson_interval(26, 40).low
    paired = paired_bootstrap(a, b, seed=0)
    assert paired.difference == pytest.approx(0.15)
    assert paired.interval.low > 0
    assert paired.p_value < 0.05


def test_paired_bootstrap_of_identical_models_finds_nothing() -> None:
    a = [[1.0, 0.0, 1.0], [0.0, 1.0]]
    paired = paired_bootstrap(a, a)
    assert paired.difference == 0.0
    assert paired.p_value == 1.0


def test_paired_bootstrap_refuses_unpaired_groups() -> None:
    with pytest.raises(ValueError, match="items"):
        paired_bootstrap([[1.0, 0.0]], [[1.0]])


def test_holm_adjust_matches_the_step_down_rule_worked_by_hand() -> None:
    from syntaxgym_helm.core.uncertainty import holm_adjust

    # m = 4, sorted p: 0.01 (x4), 0.02 (x3), 0.03 (x2), 0.5 (x1): 0.04, 0.06, 0.06 (monotone), 0.5.
    assert holm_adjust([0.03, 0.5, 0.01, 0.02]) == pytest.approx([0.06, 0.5, 0.04, 0.06])
    assert holm_adjust([0.4, 0.9]) == pytest.approx([0.8, 0.9])
    assert holm_adjust([0.6, 0.7]) == [1.0, 1.0]  # capped at 1
    adjusted = holm_adjust([math.nan, 0.02, 0.04])  # a NaN is no test: m = 2
    assert math.isnan(adjusted[0]) and adjusted[1:] == pytest.approx([0.04, 0.04])
    assert holm_adjust([]) == [] and holm_adjust([0.03]) == [0.03]
    with pytest.raises(ValueError, match="between 0 and 1"):
        holm_adjust([1.5])
