"""Scoring one item: each condition's tokens and logprobs to region values and prediction outcomes.

This is the model-agnostic heart of the metric, free of HELM so it can be tested and reused by the
reports. Token logprobs (natural log) become surprisals in bits; tokens are mapped to regions by
:mod:`syntaxgym_helm.core.alignment`; a region's value is :func:`region_statistic` of its tokens'
surprisals; predictions are evaluated with the suite's main metric (the first it lists).

The first-token policy. A model scores a token given the tokens before it, so the first token a
request returns has no context: HELM's HuggingFace client reports 0.0 for it and OpenAI-compatible
servers report null. That number is not a certainty. When the first returned token belongs to the
sentence (no prefix such as the model's beginning-of-text token was scored before it), the policy
decides: ``error`` (default) reports the item as unscorable, saying how to fix the run; ``exclude``
drops that token from its region. syntaxgym-core's models gave that token 0 bits and counted it in
region 1, so with ``exclude`` region 1's sum agrees with theirs while its other statistics cover
one token fewer (docs/differences_from_syntaxgym_core.md lists every such difference).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from syntaxgym_helm.core.alignment import align_tokens
from syntaxgym_helm.core.errors import AlignmentError, EvaluationError
from syntaxgym_helm.core.formula import RegionRef
from syntaxgym_helm.core.logprobs import as_logprob, logprob_problem
from syntaxgym_helm.core.region_stats import (
    METRICS,
    all_statistics,
    nats_to_bits,
    region_statistic,
)
from syntaxgym_helm.core.run_options import FirstTokenPolicy, TiePolicy
from syntaxgym_helm.core.suite import Condition, Item, Prediction, Suite
from syntaxgym_helm.core.ties import has_tie, lenient


@dataclass(frozen=True)
class TokenScore:
    """One returned token: its text as the client gave it and its logprob (None when missing)."""

    text: str
    logprob: float | None


@dataclass(frozen=True)
class RequestFailure:
    """A condition whose request failed; ``message`` says why."""

    message: str


ConditionResult = Sequence[TokenScore] | RequestFailure


@dataclass(frozen=True)
class ConditionValues:
    """One condition's tokens, the region each counts for, and their surprisals in bits.

    ``unmeasured``: regions with text but no token of their own, and why. Their text lies inside
    a token that begins in an earlier region and counts there (rule 1 of
    :mod:`syntaxgym_helm.core.alignment`), which happens where a tokenizer joins characters
    across a region boundary (Mandarin, whose regions are not separated by spaces). Such a
    region's value is undefined, not 0: the model gave it no surprisal of its own.

    A region's surprisals and statistics are worked out once and kept (reports ask for every
    statistic of every region, often more than once)."""

    condition_name: str
    tokens: tuple[str, ...]
    regions: tuple[int | None, ...]
    surprisals: tuple[float, ...]
    unmeasured: Mapping[int, str] = field(default_factory=dict)

    @cached_property
    def _by_region(self) -> dict[int | None, list[float]]:
        """Region -> its tokens' surprisals; ``None`` -> every token of the sentence."""
        found: dict[int | None, list[float]] = {None: []}
        for token_region, surprisal in zip(self.regions, self.surprisals, strict=True):
            if token_region is not None:
                found.setdefault(token_region, []).append(surprisal)
                found[None].append(surprisal)
        return found

    @cached_property
    def _statistics(self) -> dict[int | None, dict[str, float]]:
        return {}

    def region_surprisals(self, region: int | None) -> list[float]:
        """Surprisals of a region's tokens; ``None`` means every token of the sentence."""
        return list(self._by_region.get(region, ()))

    def value(self, metric: str, region: int | None) -> float:
        if region is not None and region in self.unmeasured:
            raise EvaluationError(f"region {region} of condition `{self.condition_name}` "
                                  f"cannot be measured: {self.unmeasured[region]}")
        known = self._statistics.get(region)
        if known is not None and metric in known:
            return known[metric]
        return region_statistic(metric, self._by_region.get(region, ()))

    def statistics(self, region: int | None) -> dict[str, float]:
        """Every metric of a region (``None``: the whole sentence), in ``METRICS`` order; all
        undefined (NaN) for an unmeasured region."""
        if region in self.unmeasured:
            return {metric: math.nan for metric in METRICS}
        known = self._statistics.get(region)
        if known is None:
            known = self._statistics[region] = all_statistics(self._by_region.get(region, ()))
        return dict(known)


@dataclass(frozen=True)
class PredictionOutcome:
    """Whether one prediction held for an item; ``holds`` is None when it could not be evaluated."""

    index: int
    formula: str
    holds: bool | None
    error: str | None = None
    #: A strict comparison in it compared two exactly equal values (:mod:`.ties`).
    tie: bool = False


class ItemOutcome:
    """An item's outcome from its ``problems`` and ``predictions`` (for the classes that have
    them: :class:`ItemEvaluation`, and the Python API's results)."""

    problems: tuple[str, ...]
    predictions: tuple[PredictionOutcome, ...]

    @property
    def scorable(self) -> bool:
        return not self.problems

    @property
    def passed(self) -> bool | None:
        """All predictions hold (the item accuracy); None when the item is unscorable."""
        return all(p.holds for p in self.predictions) if self.scorable else None


@dataclass(frozen=True)
class ItemEvaluation(ItemOutcome):
    """Everything scoring found for one item. ``problems`` non-empty means unscorable."""

    item_number: int
    metric: str
    conditions: tuple[ConditionValues, ...]
    predictions: tuple[PredictionOutcome, ...]
    problems: tuple[str, ...]

    def region_values(self) -> dict[str, dict[int, dict[str, float]]]:
        """condition -> region -> metric -> value, for every metric (what reports print): the
        regions with tokens, and the unmeasured ones (every value NaN)."""
        return {
            values.condition_name: {
                region: values.statistics(region)
                for region in sorted({r for r in values.regions if r is not None}
                                     | set(values.unmeasured))
            }
            for values in self.conditions
        }


def evaluate_item(
    suite: Suite,
    item: Item,
    results: Mapping[str, ConditionResult],
    *,
    prefix: str = "",
    first_token: FirstTokenPolicy = "error",
    ties: TiePolicy = "fail",
) -> ItemEvaluation:
    """Score ``item`` of ``suite`` from each condition's returned tokens (keyed by condition name);
    ``first_token`` and ``ties``: the run's policies, checked where the run's options are read
    (:class:`~syntaxgym_helm.core.run_options.RunOptions`); ``ties``: whether a tie fails its
    comparison (default) or passes it (:mod:`.ties`)."""
    problems: list[str] = []
    conditions: list[ConditionValues] = []
    for condition in item.conditions:
        result = results.get(condition.condition_name)
        try:
            conditions.append(_condition_values(condition, result, prefix, first_token))
        except (AlignmentError, EvaluationError) as exc:
            problems.append(f"condition {condition.condition_name!r}: {exc}")
    metric = suite.meta.main_metric
    if problems:
        return ItemEvaluation(item.item_number, metric, tuple(conditions), (), tuple(problems))
    outcomes = tuple(_evaluate(prediction, conditions, metric, ties)
                     for prediction in suite.predictions)
    problems.extend(f"prediction {o.index} ({o.formula}): {o.error}" for o in outcomes if o.error)
    return ItemEvaluation(item.item_number, metric, tuple(conditions), outcomes, tuple(problems))


def _condition_values(condition: Condition, result: ConditionResult | None, prefix: str,
                      first_token: str) -> ConditionValues:
    if result is None:
        raise EvaluationError("no request result")
    if isinstance(result, RequestFailure):
        raise EvaluationError(f"the request failed: {result.message}")
    texts = [token.text for token in result]
    regions = align_tokens(
        [(region.region_number, region.content) for region in condition.regions], texts,
        prefix=prefix, separator=condition.separator,
    )
    # Before first_token=exclude takes a token out: a region whose only token that is still has
    # a token of its own (its sum is then 0, as syntaxgym-core's), it is not unmeasured.
    unmeasured = unmeasured_regions(condition, texts, regions)
    if regions and regions[0] is not None:
        if first_token == "error":
            raise EvaluationError(
                f"its first token {texts[0]!r} was scored without any context (the client "
                f"reports {result[0].logprob!r}, which is not a real logprob); run with a prefix "
                f"(the model's beginning-of-text token, e.g. prefix=<|endoftext|>), use the "
                f"syntaxgym client, or set first_token=exclude to leave that token out"
            )
        regions[0] = None
    surprisals: list[float] = []
    for index, (token, region) in enumerate(zip(result, regions, strict=False)):
        if region is None:
            surprisals.append(math.nan)
        else:
            # NaN, an infinity or a probability above 1 is no surprisal: never scored.
            logprob = token.logprob
            problem = "is None" if logprob is None else logprob_problem(logprob)
            if problem or logprob is None:
                raise EvaluationError(f"token {index} {token.text!r} has no usable logprob: "
                                      f"it {problem}")
            surprisals.append(nats_to_bits(as_logprob(logprob)))
    return ConditionValues(condition.condition_name, tuple(texts), tuple(regions),
                           tuple(surprisals), unmeasured)


def unmeasured_regions(condition: Condition, texts: Sequence[str],
                       regions: Sequence[int | None]) -> dict[int, str]:
    """The regions of ``condition`` that have text but no token, each with the reason: the
    token that covers its beginning (the last one counted for an earlier region)."""
    counted = set(regions)
    found: dict[int, str] = {}
    for region in condition.regions:
        if not region.content or region.region_number in counted:
            continue
        earlier = [index for index, owner in enumerate(regions)
                   if owner is not None and owner < region.region_number]
        where = (f"its text {region.content!r} lies inside token {earlier[-1]} "
                 f"{texts[earlier[-1]]!r}, which begins in region {regions[earlier[-1]]} and "
                 "counts there" if earlier else f"no token covers its text {region.content!r}")
        found[region.region_number] = (
            f"{where}; the model's tokens do not separate it from the region before it, so it "
            "has no surprisal of its own")
    return found


def _evaluate(prediction: Prediction, conditions: Sequence[ConditionValues],
              metric: str, ties: str = "fail") -> PredictionOutcome:
    by_name = {values.condition_name: values for values in conditions}
    cache: dict[RegionRef, float] = {}

    def value(ref: RegionRef) -> float:
        if ref not in cache:
            cache[ref] = by_name[ref.condition].value(metric, ref.region)
        return cache[ref]

    formula = prediction.formula if ties == "fail" else lenient(prediction.formula)
    try:
        return PredictionOutcome(prediction.index, prediction.source, formula.evaluate(value),
                                 tie=has_tie(prediction.formula, value))
    except EvaluationError as exc:
        return PredictionOutcome(prediction.index, prediction.source, None, str(exc))
