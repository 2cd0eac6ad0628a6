"""What :func:`~syntaxgym_helm.api.evaluate` returns: a suite's items, their conditions, regions
with surprisals in bits, and predictions with their outcomes, as frozen dataclasses that turn into
pandas DataFrames (one row per region, item or prediction).

They are views of :class:`~syntaxgym_helm.core.item_evaluation.ItemEvaluation`, the object the
HELM metric scores an item from; nothing here computes a surprisal or judges a prediction.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from syntaxgym_helm.core.item_evaluation import (
    ConditionValues,
    ItemEvaluation,
    ItemOutcome,
    PredictionOutcome,
)
from syntaxgym_helm.core.suite import Condition, Item
from syntaxgym_helm.core.uncertainty import Interval, no_interval, wilson_interval
from syntaxgym_helm.harness.stats import ItemCost

if TYPE_CHECKING:  # pandas comes with crfm-helm; imported only when a table is asked for
    import pandas

__all__ = ["ConditionScore", "ItemCost", "ItemResult", "PredictionOutcome", "RegionScore",
           "SuiteResult"]

Level = Literal["regions", "items", "predictions"]


@dataclass(frozen=True)
class RegionScore:
    """One region of one condition: its tokens, their surprisals (bits) and its value, the
    suite's metric (``sum`` unless the suite says otherwise) over them. An empty region has no
    tokens; its value is 0.0 for ``sum`` and NaN for other metrics (and NaN for any region the
    metric could not measure)."""

    number: int
    content: str
    tokens: tuple[str, ...]
    surprisals: tuple[float, ...]
    value: float


@dataclass(frozen=True)
class ConditionScore:
    """One condition's sentence as the model read it: every token it returned (beginning-of-text,
    prefix and context tokens included) with its surprisal in bits (NaN for tokens that count
    for no region), and the sentence's regions."""

    name: str
    sentence: str
    tokens: tuple[str, ...]
    surprisals: tuple[float, ...]
    regions: tuple[RegionScore, ...]

    def region(self, number: int) -> RegionScore:
        for region in self.regions:
            if region.number == number:
                return region
        raise KeyError(f"condition {self.name!r} has no region {number}")

    @property
    def total(self) -> float:
        """The sentence's surprisal in bits: the sum over the tokens that count for a region."""
        return math.fsum(s for s in self.surprisals if not math.isnan(s))


@dataclass(frozen=True)
class ItemResult(ItemOutcome):
    """One item: its conditions, its predictions' outcomes, and what scoring it cost. An item
    with ``problems`` could not be scored (a failed request, tokens that do not align...): it
    has no outcome and counts in no accuracy, as in a HELM run."""

    item_number: int
    conditions: tuple[ConditionScore, ...]
    predictions: tuple[PredictionOutcome, ...]
    problems: tuple[str, ...]
    cost: ItemCost
    #: What reading the suite changed in the item's text (whitespace; conditions made the same
    #: sentence), as ``syntaxgym-helm validate`` and a run's log say it; empty: none.
    notes: tuple[str, ...] = ()

    def condition(self, name: str) -> ConditionScore:
        for condition in self.conditions:
            if condition.name == name:
                return condition
        raise KeyError(f"item {self.item_number} has no condition {name!r}")


@dataclass(frozen=True)
class SuiteResult:
    """A suite scored on one model: every item, in suite order.

    ``prefix`` is the text each sentence was scored after (``prefix=auto`` resolved for the
    model), ``metric`` the region statistic predictions compare, ``checkpoint`` the identity of
    the checkpoint scored (what its files held, or a Hub commit; empty for a model whose client
    does not say, a served one: :mod:`syntaxgym_helm.clients.checkpoint_identity`)."""

    suite: str
    model: str
    metric: str
    prefix: str
    items: tuple[ItemResult, ...]
    checkpoint: str = ""

    @property
    def scored_items(self) -> int:
        return sum(1 for item in self.items if item.scorable)

    @property
    def accuracy(self) -> float:
        """Share of the scorable items that pass (``syntaxgym_accuracy``); NaN with none."""
        scored = self.scored_items
        return self.passed_items / scored if scored else math.nan

    @property
    def passed_items(self) -> int:
        return sum(1 for item in self.items if item.passed)

    @property
    def interval(self) -> Interval:
        """The accuracy's 95% Wilson score interval over the scorable items (as the reports)."""
        scored = self.scored_items
        return wilson_interval(self.passed_items, scored) if scored else no_interval("wilson")

    @property
    def inference_time_s(self) -> float:
        """Model seconds spent on the suite (see :class:`ItemCost`)."""
        return math.fsum(item.cost.inference_time_s for item in self.items)

    def to_dataframe(self, level: Level = "regions") -> pandas.DataFrame:
        """The results as a table: one row per ``regions`` (item, condition, region), per
        ``items`` or per ``predictions`` (item, prediction)."""
        import pandas

        makers = {"regions": _region_rows, "items": _item_rows, "predictions": _prediction_rows}
        if level not in makers:
            raise ValueError(f"level={level!r}: use one of {', '.join(makers)}")
        return pandas.DataFrame([{"suite": self.suite, "model": self.model, **row}
                                 for row in makers[level](self)])


def _region_rows(result: SuiteResult) -> list[dict[str, Any]]:
    return [{"item": item.item_number, "condition": condition.name, "region": region.number,
             "content": region.content, "tokens": len(region.tokens),
             f"surprisal_{result.metric}_bits": region.value, "passed": item.passed}
            for item in result.items for condition in item.conditions
            for region in condition.regions]


def _item_rows(result: SuiteResult) -> list[dict[str, Any]]:
    return [{"item": item.item_number, "passed": item.passed, "scorable": item.scorable,
             "problems": "; ".join(item.problems),
             "inference_time_s": item.cost.inference_time_s, "tokens": item.cost.tokens,
             "cached_requests": item.cost.cached_requests, "requests": item.cost.requests}
            for item in result.items]


def _prediction_rows(result: SuiteResult) -> list[dict[str, Any]]:
    return [{"item": item.item_number, "prediction": outcome.index, "formula": outcome.formula,
             "holds": outcome.holds, "error": outcome.error}
            for item in result.items for outcome in item.predictions]


def item_result(item: Item, score: ItemEvaluation, cost: ItemCost,
                notes: tuple[str, ...] = ()) -> ItemResult:
    """The result of ``item`` from the metric's evaluation of it (``notes``: its text changes)."""
    values = {v.condition_name: v for v in score.conditions}
    conditions = tuple(_condition_score(condition, values.get(condition.condition_name),
                                        score.metric)
                       for condition in item.conditions)
    return ItemResult(item.item_number, conditions, score.predictions, score.problems, cost,
                      notes)


def _condition_score(condition: Condition, values: ConditionValues | None,
                     metric: str) -> ConditionScore:
    """A condition's score; without values (its request failed) it has no tokens and its regions
    have NaN values."""
    regions = []
    for region in condition.regions:
        if values is None:
            regions.append(RegionScore(region.region_number, region.content, (), (), math.nan))
            continue
        picked = [(text, surprisal) for text, number, surprisal
                  in zip(values.tokens, values.regions, values.surprisals, strict=False)
                  if number == region.region_number]
        regions.append(RegionScore(region.region_number, region.content,
                                   tuple(text for text, _ in picked),
                                   tuple(surprisal for _, surprisal in picked),
                                   # NaN where the region cannot be measured, not an error
                                   values.statistics(region.region_number)[metric]))
    tokens = values.tokens if values else ()
    surprisals = values.surprisals if values else ()
    return ConditionScore(condition.condition_name, condition.sentence, tokens, surprisals,
                          tuple(regions))
