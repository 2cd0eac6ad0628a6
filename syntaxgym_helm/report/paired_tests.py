"""Is B really better than A, or is it noise? Paired tests of two models on the same items.

Both sides scored the same items, so the tests are paired (far more sensitive than comparing two
intervals): only the items on which the models differ carry information.

- Per suite: the exact McNemar test over the items both sides scored: ``only A`` items passed by A
  and failed by B, ``only B`` the reverse; under "no difference" each such item is equally likely
  to go either way (binomial, 1/2). With many suites some p < 0.05 by chance alone, so each p is
  also given Holm-adjusted over the suites compared
  (:func:`syntaxgym_helm.core.uncertainty.holm_adjust`): a suite differs when its adjusted p < 0.05.
- Over all items: the McNemar test of every paired item of every suite (items weigh equally), and
  the paired bootstrap of the difference B - A of the mean over suites of the suite accuracies
  (the SG score's definition; suites weigh equally), resampling the same items for both sides
  within each suite (:func:`syntaxgym_helm.core.uncertainty.paired_bootstrap`): its 95% interval
  and two-sided p. When the suites compared include the paper's SG-score suites and others, the
  SG score's difference is given on its own too.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from syntaxgym_helm.core.registry import sg_score_suites
from syntaxgym_helm.core.uncertainty import (
    CONFIDENCE,
    RESAMPLES,
    SEED,
    McNemar,
    PairedDifference,
    holm_adjust,
    mcnemar_exact,
    mean_of_means,
    paired_bootstrap,
)

ALPHA = 0.05
HOW_TO_READ = (
    f"How to read: a suite differs beyond chance when its Holm-adjusted McNemar p < {ALPHA:g}; "
    f"overall, B differs from A when the paired bootstrap's {CONFIDENCE:.0%} interval of B − A "
    f"excludes 0 (its p < {ALPHA:g}). Otherwise the difference is within what the items' "
    "sampling alone produces.")


@dataclass(frozen=True)
class PairedOutcomes:
    """One suite's items scored on both sides, with each side's outcome (passed or not)."""

    suite: str
    items: tuple[int, ...]
    passed_a: tuple[bool, ...]
    passed_b: tuple[bool, ...]

    def __post_init__(self) -> None:
        if not len(self.items) == len(self.passed_a) == len(self.passed_b):
            raise ValueError(f"suite {self.suite}: {len(self.items)} items, "
                             f"{len(self.passed_a)} and {len(self.passed_b)} outcomes")


@dataclass(frozen=True)
class SuiteTest:
    """The McNemar test of one suite, and its p Holm-adjusted over the suites compared."""

    suite: str
    mcnemar: McNemar
    p_holm: float


@dataclass(frozen=True)
class MeanDifference:
    """B - A of the mean over ``suites`` of their accuracies, paired-bootstrapped."""

    label: str
    suites: tuple[str, ...]
    items: int
    accuracy_a: float
    accuracy_b: float
    paired: PairedDifference

    @property
    def significant(self) -> bool:
        interval = self.paired.interval
        return not math.isnan(interval.low) and (interval.low > 0 or interval.high < 0)


@dataclass(frozen=True)
class PairedTests:
    """Every paired test of a comparison."""

    suites: tuple[SuiteTest, ...]
    overall: McNemar
    items: int  # items paired over all suites
    means: tuple[MeanDifference, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "how_to_read": HOW_TO_READ,
            "confidence": CONFIDENCE, "alpha": ALPHA,
            "bootstrap": {"resamples": RESAMPLES, "seed": SEED},
            "items": self.items,
            "mcnemar": _mcnemar_json(self.overall),
            "mean_differences": [
                {"label": m.label, "suites": list(m.suites), "items": m.items,
                 "accuracy_a": _number(m.accuracy_a), "accuracy_b": _number(m.accuracy_b),
                 "difference": _number(m.paired.difference),
                 "low": _number(m.paired.interval.low), "high": _number(m.paired.interval.high),
                 "method": m.paired.interval.method, "p_value": _number(m.paired.p_value),
                 "significant": m.significant}
                for m in self.means],
        }

    def markdown_lines(self) -> list[str]:
        """The overall section: both tests, then how to read them."""
        lines = ["## Is the difference real?", "",
                 f"- McNemar over all {self.items} items both sides scored: "
                 + mcnemar_text(self.overall)]
        for m in self.means:
            interval = m.paired.interval
            lines.append(
                f"- {m.label}: A {_fmt(m.accuracy_a)}, B {_fmt(m.accuracy_b)}, B − A "
                f"{_signed(m.paired.difference)} [{_signed(interval.low)}, "
                f"{_signed(interval.high)}] ({interval.confidence:.0%} paired bootstrap over "
                f"items within suites), p {_bootstrap_p(m.paired.p_value)}"
                + (": a real difference" if m.significant else ": not distinguishable from 0"))
        return lines + ["", HOW_TO_READ]


def paired_tests(suites: Sequence[PairedOutcomes]) -> PairedTests:
    """The per-suite and overall tests of the suites compared (in the order given)."""
    tests = [mcnemar_exact(s.passed_a, s.passed_b) for s in suites]
    adjusted = holm_adjust([t.p_value if t.discordant else math.nan for t in tests])
    # A suite with no discordant item is no test (p = 1 by definition): it does not count in m.
    suite_tests = tuple(SuiteTest(s.suite, t, 1.0 if math.isnan(p) else p)
                        for s, t, p in zip(suites, tests, adjusted, strict=True))
    overall = mcnemar_exact([p for s in suites for p in s.passed_a],
                            [p for s in suites for p in s.passed_b])
    scored = [s for s in suites if s.items]
    paper = set(sg_score_suites())
    sg = [s for s in scored if s.suite in paper]
    groups = [] if len(sg) == len(scored) else [
        (f"mean over the {len(scored)} suites compared", scored)]
    if sg:
        groups.append((f"SG score ({len(sg)} of the paper's {len(paper)} suites)", sg))
    means = tuple(_mean_difference(label, members) for label, members in groups if members)
    return PairedTests(suite_tests, overall, sum(len(s.items) for s in suites), means)


def _mean_difference(label: str, suites: Sequence[PairedOutcomes]) -> MeanDifference:
    groups_a = [[float(p) for p in s.passed_a] for s in suites]
    groups_b = [[float(p) for p in s.passed_b] for s in suites]
    return MeanDifference(label, tuple(s.suite for s in suites),
                          sum(len(s.items) for s in suites), mean_of_means(groups_a),
                          mean_of_means(groups_b), paired_bootstrap(groups_a, groups_b))


def mcnemar_text(test: McNemar) -> str:
    return f"only A {test.only_a}, only B {test.only_b}, exact p = {format_p(test.p_value)}"


def _mcnemar_json(test: McNemar) -> dict[str, Any]:
    return {"only_a": test.only_a, "only_b": test.only_b, "discordant": test.discordant,
            "p_value": test.p_value}


def suite_test_json(test: SuiteTest) -> dict[str, Any]:
    return {**_mcnemar_json(test.mcnemar), "p_holm": test.p_holm}


def _bootstrap_p(value: float) -> str:
    """``= 0.042``, or ``< 0.0002`` when (almost) no resample crossed 0: a bootstrap of
    ``RESAMPLES`` cannot tell smaller p-values apart."""
    floor = 2 / RESAMPLES
    return f"< {floor:g}" if value < floor else f"= {format_p(value)}"


def _number(value: float) -> float | None:
    return value if math.isfinite(value) else None


def format_p(value: float) -> str:
    """``0.031``; ``0.00042`` below 0.001; ``–`` for none."""
    if math.isnan(value):
        return "–"
    return f"{value:.2g}" if value < 0.001 else f"{value:.3f}"


def _fmt(value: float) -> str:
    return "–" if math.isnan(value) else f"{value:.3f}"


def _signed(value: float) -> str:
    return "–" if math.isnan(value) else f"{value:+.3f}"
