"""The SyntaxGym metric: scores an item from all of its conditions' echo requests at once.

A HELM ``ReferenceMetric`` sees every condition's ``RequestState`` of an instance together. For each
item it emits:

- ``syntaxgym_accuracy``: 1 when all of the suite's predictions hold (the main metric, as the
  HuggingFace ``cpllab/syntaxgym`` metric and Brain-Score score an item);
- ``syntaxgym_first_prediction_accuracy``: the first prediction alone (how Hu et al. 2020 scored);
- ``syntaxgym_prediction_<i>_accuracy``: each prediction on its own;
- ``syntaxgym_unscorable``: 1 when the item could not be scored (a request failed, the tokens
  could not be aligned, a value was undefined). Such an item gets no accuracy stat at all, so it
  is never counted as a pass or a fail; the reason is logged as a warning.

HELM averages each stat over the items that have it.
"""

from __future__ import annotations

from typing import List

from helm.benchmark.adaptation.adapter_spec import AdapterSpec
from helm.benchmark.adaptation.request_state import RequestState
from helm.benchmark.metrics.metric_name import MetricName
from helm.benchmark.metrics.metric_service import MetricService
from helm.benchmark.metrics.reference_metric import ReferenceMetric
from helm.benchmark.metrics.statistic import Stat
from helm.common.hierarchical_logger import hwarn

from syntaxgym_helm.harness.scenario import ITEM_KEY
from syntaxgym_helm.core.item_evaluation import (
    ConditionResult,
    ItemEvaluation,
    RequestFailure,
    TokenScore,
    check_first_token_policy,
    evaluate_item,
)
from syntaxgym_helm.core.suite import Suite

ACCURACY = "syntaxgym_accuracy"
FIRST_PREDICTION_ACCURACY = "syntaxgym_first_prediction_accuracy"
UNSCORABLE = "syntaxgym_unscorable"


def prediction_accuracy_name(index: int) -> str:
    return f"syntaxgym_prediction_{index}_accuracy"


class SyntaxGymMetric(ReferenceMetric):
    """Region surprisals (bits) from echoed token logprobs, and the suite's predictions over them."""

    def __init__(self, first_token: str = "error", prefix: str = "auto") -> None:
        self.first_token = check_first_token_policy(first_token)
        self.prefix = prefix  # the run entry's prefix argument, as given (the prompt shows it)

    def evaluate_references(
        self,
        adapter_spec: AdapterSpec,
        reference_request_states: List[RequestState],
        metric_service: MetricService,
        eval_cache_path: str,
    ) -> List[Stat]:
        score = evaluate_request_states(reference_request_states, self.first_token)
        if not score.scorable:
            instance_id = reference_request_states[0].instance.id
            hwarn(f"SyntaxGym item {score.item_number} ({instance_id}) is unscorable: "
                  + "; ".join(score.problems))
        return item_stats(score)


def item_suite(state: RequestState) -> Suite:
    """The one-item suite the scenario put in the instance."""
    instance = state.instance
    if not instance.extra_data or ITEM_KEY not in instance.extra_data:
        raise ValueError(f"instance {instance.id} was not made by SyntaxGymScenario")
    # Written by the scenario from a validated suite: read back without validating it again.
    return Suite.from_trusted_json(instance.extra_data[ITEM_KEY], f"instance {instance.id}")


def evaluate_request_states(states: List[RequestState], first_token: str = "error") -> ItemEvaluation:
    """Score one instance from its per-condition request states (also used by the reports)."""
    suite = item_suite(states[0])
    item = suite.items[0]
    results: dict[str, ConditionResult] = {}
    prefixes: set[str] = set()
    for state in states:
        assert state.reference_index is not None
        condition = item.conditions[state.reference_index]
        prompt = state.request.prompt
        if not prompt.endswith(condition.sentence):
            results[condition.condition_name] = RequestFailure(
                f"the prompt {prompt!r} does not end with the sentence {condition.sentence!r}; "
                "the adapter must add nothing after it")
            continue
        prefixes.add(prompt[: len(prompt) - len(condition.sentence)])
        results[condition.condition_name] = _condition_result(state)
    prefix = prefixes.pop() if len(prefixes) == 1 else ""
    return evaluate_item(suite, item, results, prefix=prefix, first_token=first_token)


def _condition_result(state: RequestState) -> ConditionResult:
    result = state.result
    if result is None:
        return RequestFailure("the request has no result")
    if not result.success:
        return RequestFailure(result.error or "unknown error")
    if not result.completions:
        return RequestFailure("the result has no completion")
    return [TokenScore(token.text, token.logprob) for token in result.completions[0].tokens]


def item_stats(score: ItemEvaluation) -> List[Stat]:
    stats = [Stat(MetricName(UNSCORABLE)).add(0 if score.scorable else 1)]
    if not score.scorable:
        return stats
    stats.append(Stat(MetricName(ACCURACY)).add(bool(score.passed)))
    for outcome in score.predictions:
        stats.append(Stat(MetricName(prediction_accuracy_name(outcome.index))).add(outcome.holds))
    if score.predictions:
        stats.append(Stat(MetricName(FIRST_PREDICTION_ACCURACY)).add(score.predictions[0].holds))
    return stats
