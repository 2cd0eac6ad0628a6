"""The stats the SyntaxGym metric emits per item: their names, values and display text, once.

Everything that names or shows a stat reads it from here: the metric (the values, and HELM's
``get_metadata()``), the scenario (its main metric), the leaderboard schema (its metric fields are
this module's :class:`MetricMetadata`) and the reports (which average :func:`item_stat_values`
exactly as HELM averages the metric's stats).

Per item:

- ``syntaxgym_accuracy``: 1 when all of the suite's predictions hold (the main metric, as the
  HuggingFace ``cpllab/syntaxgym`` metric and Brain-Score score an item);
- ``syntaxgym_first_prediction_accuracy``: the first prediction alone (how Hu et al. 2020 scored);
- ``syntaxgym_prediction_<i>_accuracy``: each prediction on its own;
- ``syntaxgym_unscorable``: 1 when the item could not be scored. Such an item has no accuracy stat
  at all, so it is never counted as a pass or a fail;
- ``syntaxgym_tie``: 1 when a strict comparison of one of its predictions compared two exactly
  equal values (:mod:`syntaxgym_helm.core.ties`): scored as a failure unless the run says
  ``ties=pass``; its mean is the suite's tie rate.

Per item, what scoring it cost (:class:`ItemCost`, from its requests' results, also for items that
could not be scored):

- ``syntaxgym_inference_time``: seconds of model time for the item's requests. A request's time
  is HELM's ``RequestResult.request_time``, or, for batched inference (the local engine), its
  share of the batch: ``batch_request_time / batch_size``, as HELM's efficiency metrics count it.
  A request answered from the cache keeps the time it took when it was computed;
- ``syntaxgym_tokens``: the tokens the model read for the item's requests (every token the
  results return: the sentences, and any prefix, context or beginning-of-text token);
- ``syntaxgym_cached``: the share of the item's requests answered from HELM's request cache (its
  mean over items is the run's cache hit rate; time then was not spent again).

Per run (:func:`run_stats`, added by the metric after HELM's averaging):

- ``syntaxgym_scored_items``: how many items were scored, the n behind the accuracy. HELM keeps
  only each stat's mean in ``stats.json`` (its ``count`` is the number of train trials, not of
  items) and a table cell shows a stat's mean, so the count is a stat of its own whose value is the
  count; the leaderboard shows it beside the accuracy.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

from helm.benchmark.metrics.metric import MetricMetadata, PerInstanceStats
from helm.benchmark.metrics.metric_name import MetricName
from helm.benchmark.metrics.statistic import Stat

from syntaxgym_helm.core.item_evaluation import ItemEvaluation

ACCURACY = "syntaxgym_accuracy"
FIRST_PREDICTION_ACCURACY = "syntaxgym_first_prediction_accuracy"
UNSCORABLE = "syntaxgym_unscorable"
TIE = "syntaxgym_tie"
SCORED_ITEMS = "syntaxgym_scored_items"
#: The column name the leaderboard gives ``SCORED_ITEMS`` (``leaderboard show`` finds it by it).
SCORED_ITEMS_SHORT_NAME = "Items scored"

#: HELM metric groups (``MetricMetadata.group``): the main column, and the details beside it.
MAIN_GROUP = "syntaxgym_accuracy"
DETAILS_GROUP = "syntaxgym_details"
#: The count of items scored, shown beside the accuracy (no mean, no win rate: it is a count).
ITEMS_GROUP = "syntaxgym_items"

INFERENCE_TIME = "syntaxgym_inference_time"
TOKENS = "syntaxgym_tokens"
CACHED = "syntaxgym_cached"
#: What scoring cost, shown beside the accuracy (lower is better; no win rate).
EFFICIENCY_GROUP = "syntaxgym_efficiency"
#: Stats of the run, not of the model: two runs of the same model differ in them.
RUN_DEPENDENT_STATS = (INFERENCE_TIME, CACHED)

#: How many per-prediction stats ``SyntaxGymMetric.get_metadata()`` describes when it does not know
#: the suite: the most any registered or built-in suite has (Hu et al. 2020: fgd_hierarchy and
#: nn-nv-rpl have two).
DEFAULT_DESCRIBED_PREDICTIONS = 2


def prediction_accuracy_name(index: int) -> str:
    return f"syntaxgym_prediction_{index}_accuracy"


def item_stat_values(score: ItemEvaluation) -> dict[str, float]:
    """The value of each stat for one item; an unscorable item has ``UNSCORABLE`` only."""
    values = {UNSCORABLE: 0.0 if score.scorable else 1.0}
    if not score.scorable:
        return values
    values[ACCURACY] = float(bool(score.passed))
    values[TIE] = float(any(outcome.tie for outcome in score.predictions))
    # A scorable item's predictions all evaluated (one that could not makes the item unscorable).
    if score.predictions:
        values[FIRST_PREDICTION_ACCURACY] = float(bool(score.predictions[0].holds))
    for outcome in score.predictions:
        values[prediction_accuracy_name(outcome.index)] = float(bool(outcome.holds))
    return values


@dataclass(frozen=True)
class ItemCost:
    """What scoring one item cost: model seconds, tokens read, and requests (how many, how many
    answered from the cache). See the module doc."""

    inference_time_s: float
    tokens: int
    requests: int
    cached_requests: int

    @property
    def cached_share(self) -> float:
        return self.cached_requests / self.requests if self.requests else 0.0


def efficiency_stat_names() -> tuple[str, ...]:
    """The efficiency stats, in the order the leaderboard shows them."""
    return (INFERENCE_TIME, TOKENS, CACHED)


def cost_stat_values(cost: ItemCost) -> dict[str, float]:
    """The value of each efficiency stat for one item."""
    return {INFERENCE_TIME: cost.inference_time_s, TOKENS: float(cost.tokens),
            CACHED: cost.cached_share}


def run_stats(per_instance_stats: Sequence[PerInstanceStats]) -> list[Stat]:
    """``SCORED_ITEMS`` for each metric context (split, perturbation) the items' stats have: the
    number of scorable items, averaged over train trials as HELM averages every stat. Every item
    has an ``UNSCORABLE`` stat, so a run whose items were all unscorable counts 0, not nothing."""
    counts: Counter[tuple[int, MetricName]] = Counter()
    for entry in per_instance_stats:
        for stat in entry.stats:
            if stat.name.name == UNSCORABLE:
                key = entry.train_trial_index, replace(stat.name, name=SCORED_ITEMS)
                counts[key] += 0 if stat.mean else 1
    by_name: dict[MetricName, Stat] = {}
    for (_, name), count in counts.items():
        by_name.setdefault(name, Stat(name)).add(count)
    return list(by_name.values())


def metric_metadata(predictions: int = DEFAULT_DESCRIBED_PREDICTIONS) -> list[MetricMetadata]:
    """Display text of every stat, with per-prediction stats for ``predictions`` predictions."""
    return [
        MetricMetadata(
            name=ACCURACY, display_name="SyntaxGym accuracy", short_display_name="Accuracy",
            description="Fraction of items for which all of the suite's predictions hold (item "
                        "accuracy, as the cpllab/syntaxgym metric and Brain-Score compute it).",
            lower_is_better=False, group=MAIN_GROUP),
        MetricMetadata(
            name=FIRST_PREDICTION_ACCURACY, display_name="First-prediction accuracy",
            short_display_name="First pred.",
            description="Fraction of items for which the suite's first prediction holds: how Hu "
                        "et al. (2020) scored, which differs from item accuracy on suites with "
                        "several predictions.",
            lower_is_better=False, group=DETAILS_GROUP),
        MetricMetadata(
            name=UNSCORABLE, display_name="Unscorable items", short_display_name="Unscorable",
            description="Fraction of items that could not be scored (failed request, tokens that "
                        "could not be aligned to regions, undefined region value); they count in "
                        "no accuracy.",
            lower_is_better=True, group=DETAILS_GROUP),
        MetricMetadata(
            name=TIE, display_name="Ties", short_display_name="Ties",
            description="Fraction of scored items where a prediction compared two exactly equal "
                        "values with < or > (e.g. two equally surprising sentences): a failure "
                        "unless the run entry says ties=pass.",
            lower_is_better=True, group=DETAILS_GROUP),
        MetricMetadata(
            name=SCORED_ITEMS, display_name="Items scored",
            short_display_name=SCORED_ITEMS_SHORT_NAME,
            description="Number of items scored: the n of the accuracy. Suites are small (19 to "
                        "40 items): 18 of 30 (0.600) has a 95% interval of 0.42 to 0.75, so a "
                        "difference of a few points is noise; `syntaxgym-helm report` gives each "
                        "accuracy's interval and `syntaxgym-helm compare` paired tests.",
            lower_is_better=None, group=ITEMS_GROUP),
        MetricMetadata(
            name=INFERENCE_TIME, display_name="Inference time per item (s)",
            short_display_name="Time/item (s)",
            description="Seconds of model time per item, all of its conditions' requests: each "
                        "request's time, or for batched inference its share of the batch (HELM's "
                        "batch_request_time / batch_size); a cached answer keeps the time it took "
                        "when computed. Depends on the machine: compare rows run on the same one.",
            lower_is_better=True, group=EFFICIENCY_GROUP),
        MetricMetadata(
            name=TOKENS, display_name="Tokens per item", short_display_name="Tokens/item",
            description="Tokens the model read per item, all of its conditions' requests (the "
                        "sentences, and any prefix, context or beginning-of-text token): what an "
                        "API bills.",
            lower_is_better=True, group=EFFICIENCY_GROUP),
        MetricMetadata(
            name=CACHED, display_name="Requests answered from the cache",
            short_display_name="Cached",
            description="Share of the requests HELM's request cache answered (their time was "
                        "spent in an earlier run).",
            lower_is_better=None, group=EFFICIENCY_GROUP),
        *(MetricMetadata(
            name=prediction_accuracy_name(i), display_name=f"Prediction {i} accuracy",
            short_display_name=f"Pred. {i}",
            description=f"Fraction of items for which prediction {i} of the suite holds "
                        "(predictions are numbered from 0, in the suite's order).",
            lower_is_better=False, group=DETAILS_GROUP)
          for i in range(predictions)),
    ]
