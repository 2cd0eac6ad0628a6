"""Two sets of runs side by side: accuracy differences, items they disagree on, and how closely
their region surprisals agree, with a detector for scoring backends that disagree.

Runs are paired by SyntaxGym suite. Per suite it reports each side's accuracy over the items both
scored, the items whose outcome differs, and the Pearson correlation, largest and mean absolute
difference of the region surprisals (sum, bits) of every region both sides have tokens in.

The backend-bug detector. Two correct scorers of the same weights (e.g. HELM's HuggingFaceClient
and the plugin's batched client) differ only by floating-point rounding, orders of magnitude
below the threshold here in fp32 (BENCHMARKS.md compares them token by token). So when both
sides run the same weights with the same first-token policy, a suite is flagged when

- any region differs by more than ``max_abs_diff`` = 0.01 bits (100 times the rounding noise, far
  below what a real bug does: a token scored without its context, a logprob shifted by one
  position, nats read as bits or a token in the wrong region change regions by a bit or more), or
- the Pearson r of the region surprisals is below ``min_r`` = 0.999 (a systematic difference), or
- an item is scorable on one side only (e.g. one backend returns tokens that cannot be aligned).

Whether a difference in accuracy is real or noise: :mod:`syntaxgym_helm.report.paired_tests`
(McNemar per suite and overall, a paired bootstrap of the mean over suites), in the markdown and
the JSON.

"Same weights" means the same model name after the organisation (our models are named per weights
variant: ``helmhf/x`` and ``syntaxgym/x`` are the same weights); ``same_weights=True/False``
overrides it. For different models nothing is flagged: r is reported as a measure of similarity.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from scipy.stats import pearsonr

from syntaxgym_helm.core.item_evaluation import ItemEvaluation
from syntaxgym_helm.harness.stats import ACCURACY, item_stat_values
from syntaxgym_helm.report.paired_tests import (
    PairedOutcomes,
    PairedTests,
    format_p,
    paired_tests,
    suite_test_json,
)
from syntaxgym_helm.report.runs import RunRecord, RunsError
from syntaxgym_helm.report.summary import Table, fmt

DEFAULT_MAX_ABS_DIFF_BITS = 0.01
DEFAULT_MIN_PEARSON_R = 0.999


@dataclass(frozen=True)
class Thresholds:
    """When two runs of the same weights disagree "far more than rounding" (see module doc)."""

    max_abs_diff: float = DEFAULT_MAX_ABS_DIFF_BITS
    min_r: float = DEFAULT_MIN_PEARSON_R


@dataclass(frozen=True)
class Disagreement:
    """An item whose outcome differs: ``passed`` None means unscorable on that side."""

    item: int
    passed_a: bool | None
    passed_b: bool | None
    predictions: tuple[tuple[int, bool | None, bool | None], ...]  # (index, holds A, holds B)


@dataclass(frozen=True)
class SuiteComparison:
    suite: str
    label_a: str
    label_b: str
    common_items: int  # items run on both sides
    both_scored: int  # items scorable on both sides: the accuracies below are over these
    accuracy_a: float
    accuracy_b: float
    disagreements: tuple[Disagreement, ...]
    regions: int  # region values compared
    pearson_r: float | None  # None: fewer than two values, or one side constant
    max_abs_diff: float | None
    mean_abs_diff: float | None
    same_scorer: bool  # same weights and first-token policy: the thresholds apply
    problems: tuple[str, ...]  # why it is flagged (empty: not flagged)
    paired: PairedOutcomes  # each side's outcome on the items both scored: the paired tests

    @property
    def flagged(self) -> bool:
        return bool(self.problems)

    @property
    def accuracy_diff(self) -> float:
        return self.accuracy_b - self.accuracy_a

    @property
    def verdict(self) -> str:
        if self.flagged:
            return "DISAGREE: " + "; ".join(self.problems)
        if self.same_scorer:
            return "agree"
        return "different models"


@dataclass(frozen=True)
class Comparison:
    """All suites of two sets of runs."""

    suites: tuple[SuiteComparison, ...]
    only_a: tuple[str, ...]
    only_b: tuple[str, ...]
    thresholds: Thresholds = field(default_factory=Thresholds)

    @property
    def flagged(self) -> bool:
        return any(suite.flagged for suite in self.suites)

    @cached_property
    def tests(self) -> PairedTests:
        """McNemar per suite and overall, and the paired bootstrap of the mean over suites."""
        return paired_tests([suite.paired for suite in self.suites])

    def markdown(self, max_items: int = 20) -> str:
        return comparison_markdown(self, max_items)

    def to_json(self) -> dict[str, Any]:
        def number(value: float | None) -> float | None:
            return value if value is not None and math.isfinite(value) else None

        return {
            "thresholds": {"max_abs_diff_bits": self.thresholds.max_abs_diff,
                           "min_pearson_r": self.thresholds.min_r},
            "flagged": self.flagged,
            "only_a": list(self.only_a),
            "only_b": list(self.only_b),
            "paired_tests": self.tests.to_json(),
            "suites": [
                {"suite": s.suite, "a": s.label_a, "b": s.label_b,
                 "common_items": s.common_items, "both_scored": s.both_scored,
                 "accuracy_a": number(s.accuracy_a), "accuracy_b": number(s.accuracy_b),
                 "accuracy_diff": number(s.accuracy_diff), "regions": s.regions,
                 "pearson_r": number(s.pearson_r), "max_abs_diff": number(s.max_abs_diff),
                 "mean_abs_diff": number(s.mean_abs_diff), "same_scorer": s.same_scorer,
                 "flagged": s.flagged, "problems": list(s.problems),
                 "mcnemar": suite_test_json(test),
                 "disagreements": [
                     {"item": d.item, "passed_a": d.passed_a, "passed_b": d.passed_b,
                      "predictions": [{"index": i, "holds_a": a, "holds_b": b}
                                      for i, a, b in d.predictions]}
                     for d in s.disagreements]}
                for s, test in zip(self.suites, self.tests.suites, strict=False)
            ],
        }


def pair_runs(runs_a: Sequence[RunRecord], runs_b: Sequence[RunRecord]
              ) -> tuple[list[tuple[RunRecord, RunRecord]], list[str], list[str]]:
    """Pairs by suite, and the suites found on one side only. Each side must have at most one run
    per suite (choose a model or run suite otherwise)."""
    side_a, side_b = _by_suite(runs_a, "A"), _by_suite(runs_b, "B")
    pairs = [(side_a[s], side_b[s]) for s in sorted(side_a) if s in side_b]
    return pairs, sorted(set(side_a) - set(side_b)), sorted(set(side_b) - set(side_a))


def _by_suite(runs: Sequence[RunRecord], side: str) -> dict[str, RunRecord]:
    grouped: dict[str, list[RunRecord]] = {}
    for run in runs:
        grouped.setdefault(run.suite_name, []).append(run)
    for suite, group in grouped.items():
        if len(group) > 1:
            choices = "; ".join(f"{run.name} ({run.run_suite})" for run in group)
            raise RunsError(
                f"side {side} has {len(group)} runs of suite {suite}: {choices}. Choose one with "
                f"--model-{side.lower()} (a HELM model name) or --run-suite-{side.lower()}")
    return {suite: group[0] for suite, group in grouped.items()}


def compare_runs(runs_a: Sequence[RunRecord], runs_b: Sequence[RunRecord],
                 thresholds: Thresholds = Thresholds(),
                 same_weights: bool | None = None) -> Comparison:
    """Compare every suite the two sides share (``same_weights`` None: decided from the names)."""
    pairs, only_a, only_b = pair_runs(runs_a, runs_b)
    return Comparison(
        suites=tuple(compare_suite(a, b, thresholds, same_weights) for a, b in pairs),
        only_a=tuple(only_a), only_b=tuple(only_b), thresholds=thresholds)


def compare_suite(run_a: RunRecord, run_b: RunRecord, thresholds: Thresholds = Thresholds(),
                  same_weights: bool | None = None) -> SuiteComparison:
    scores_a = {score.item_number: score for score in run_a.scores}
    scores_b = {score.item_number: score for score in run_b.scores}
    common = sorted(set(scores_a) & set(scores_b))
    both = [n for n in common if scores_a[n].scorable and scores_b[n].scorable]
    disagreements = tuple(d for n in common
                          if (d := _disagreement(n, scores_a[n], scores_b[n])) is not None)
    pairs = [pair for n in both for pair in _region_pairs(scores_a[n], scores_b[n])]
    diffs = [abs(a - b) for a, b in pairs]
    max_diff = max(diffs) if diffs else None
    r = pearson([a for a, _ in pairs], [b for _, b in pairs])
    if same_weights is None:
        same_weights = run_a.weights == run_b.weights
    same_scorer = same_weights and run_a.first_token == run_b.first_token
    problems: list[str] = []
    if same_scorer:
        if max_diff is not None and max_diff > thresholds.max_abs_diff:
            problems.append(f"max abs diff {max_diff:.3g} bits > {thresholds.max_abs_diff:g}")
        if r is not None and r < thresholds.min_r:
            problems.append(f"r {r:.4f} < {thresholds.min_r:g}")
        one_sided = [n for n in common if scores_a[n].scorable != scores_b[n].scorable]
        if one_sided:
            problems.append(f"{len(one_sided)} item(s) scorable on one side only: "
                            + ", ".join(map(str, one_sided[:10])))
    return SuiteComparison(
        suite=run_a.suite_name, label_a=run_a.name, label_b=run_b.name,
        common_items=len(common), both_scored=len(both),
        accuracy_a=_accuracy([scores_a[n] for n in both]),
        accuracy_b=_accuracy([scores_b[n] for n in both]),
        disagreements=disagreements, regions=len(pairs), pearson_r=r, max_abs_diff=max_diff,
        mean_abs_diff=math.fsum(diffs) / len(diffs) if diffs else None,
        same_scorer=same_scorer, problems=tuple(problems),
        paired=PairedOutcomes(run_a.suite_name, tuple(both),
                              tuple(bool(scores_a[n].passed) for n in both),
                              tuple(bool(scores_b[n].passed) for n in both)))


def _accuracy(scores: Sequence[ItemEvaluation]) -> float:
    """Mean of the metric's own item accuracy over the items that have one (the scorable)."""
    values = [v[ACCURACY] for v in map(item_stat_values, scores) if ACCURACY in v]
    return math.fsum(values) / len(values) if values else math.nan


def _disagreement(item: int, a: ItemEvaluation, b: ItemEvaluation) -> Disagreement | None:
    holds_a = {p.index: p.holds for p in a.predictions} if a.scorable else {}
    holds_b = {p.index: p.holds for p in b.predictions} if b.scorable else {}
    if a.passed == b.passed and holds_a == holds_b:
        return None
    indexes = sorted(set(holds_a) | set(holds_b))
    return Disagreement(item, a.passed, b.passed, tuple(
        (i, holds_a.get(i), holds_b.get(i)) for i in indexes
        if holds_a.get(i) != holds_b.get(i)))


def _region_pairs(a: ItemEvaluation, b: ItemEvaluation) -> list[tuple[float, float]]:
    """(A, B) summed surprisal of every region that has tokens on both sides."""
    conditions_b = {c.condition_name: c for c in b.conditions}
    pairs = []
    for condition_a in a.conditions:
        condition_b = conditions_b.get(condition_a.condition_name)
        if condition_b is None:
            continue
        regions = ({r for r in condition_a.regions if r is not None}
                   & {r for r in condition_b.regions if r is not None})
        for region in sorted(regions):
            value_a, value_b = condition_a.value("sum", region), condition_b.value("sum", region)
            if math.isfinite(value_a) and math.isfinite(value_b):
                pairs.append((value_a, value_b))
    return pairs


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Pearson's r; None for fewer than two points or a constant side. Identical sequences give
    exactly 1.0."""
    if len(xs) < 2:
        return None
    if list(xs) == list(ys):
        return 1.0 if len(set(xs)) > 1 else None
    if len(set(xs)) == 1 or len(set(ys)) == 1:
        return None  # SciPy warns and answers NaN
    return float(pearsonr(xs, ys).statistic)


def _outcome(passed: bool | None) -> str:
    return {True: "pass", False: "fail", None: "unscorable"}[passed]


def comparison_markdown(comparison: Comparison, max_items: int = 20) -> str:
    """The comparison for people: a table per suite, then the items that differ."""
    t = comparison.thresholds
    pairs = sorted({(s.label_a, s.label_b) for s in comparison.suites})
    lines = ["# SyntaxGym comparison", ""]
    lines += [f"- A = {a}, B = {b}" for a, b in pairs]
    lines += [f"- backend check (same weights and first-token policy): flagged when a region "
              f"differs by more than {t.max_abs_diff:g} bits or Pearson r < {t.min_r:g}; "
              "different models: r is reported only", ""]
    table = Table("suite", ("items (both scored)", "acc. A", "acc. B", "B − A", "only A",
                            "only B", "McNemar p (Holm)", "items disagreeing", "regions",
                            "Pearson r", "max abs diff (bits)", "mean abs diff (bits)",
                            "verdict"), tuple(
        (s.suite, (f"{s.common_items} ({s.both_scored})", fmt(s.accuracy_a), fmt(s.accuracy_b),
                   _signed(s.accuracy_diff), str(test.mcnemar.only_a),
                   str(test.mcnemar.only_b),
                   f"{format_p(test.mcnemar.p_value)} ({format_p(test.p_holm)})",
                   str(len(s.disagreements)), str(s.regions),
                   "–" if s.pearson_r is None else f"{s.pearson_r:.5f}",
                   _small(s.max_abs_diff), _small(s.mean_abs_diff), s.verdict))
        for s, test in zip(comparison.suites, comparison.tests.suites, strict=False)))
    lines.append(table.markdown())
    lines += ["", "Accuracies are over the items both sides scored; only A / only B: items "
                  "passed by one side alone (McNemar's discordant items); items disagreeing also "
                  "counts a prediction's outcome or scorability that differs.", ""]
    lines += comparison.tests.markdown_lines()
    if comparison.only_a or comparison.only_b:
        lines += ["", f"Suites in A only: {', '.join(comparison.only_a) or 'none'}; "
                      f"in B only: {', '.join(comparison.only_b) or 'none'}."]
    differing = [s for s in comparison.suites if s.disagreements]
    if differing:
        lines += ["", "## Items where A and B disagree", ""]
        for s in differing:
            shown = ", ".join(
                f"{d.item} (A {_outcome(d.passed_a)}, B {_outcome(d.passed_b)})"
                for d in s.disagreements[:max_items])
            more = len(s.disagreements) - max_items
            lines.append(f"- {s.suite}: {shown}" + (f", and {more} more" if more > 0 else ""))
    lines += ["", "Verdict: " + ("DISAGREEMENT beyond rounding in "
                                 + ", ".join(s.suite for s in comparison.suites if s.flagged)
                                 if comparison.flagged else "nothing flagged")]
    return "\n".join(lines) + "\n"


def _signed(value: float) -> str:
    return "–" if math.isnan(value) else f"{value:+.3f}"


def _small(value: float | None) -> str:
    return "–" if value is None else f"{value:.3g}"
