"""The SyntaxGym metric: scores an item from all of its conditions' echo requests at once.

A HELM ``ReferenceMetric`` sees every condition's ``RequestState`` of an instance together. Each
state is matched to its condition by the tag its reference carries (see
:mod:`syntaxgym_helm.harness.scenario`). The item's stats are those of
:mod:`syntaxgym_helm.harness.stats`, with what its requests cost (:func:`item_cost`); an unscorable
item's reason is logged as a warning. HELM averages each stat over the items that have it; the
metric then adds the run's count of items scored (:func:`syntaxgym_helm.harness.stats.run_stats`),
and keeps what it found for every item (region values, outcomes) in the run folder for the reports
(:mod:`syntaxgym_helm.harness.scored_items`), so that they never score the run again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from helm.benchmark.adaptation.adapter_spec import AdapterSpec
from helm.benchmark.adaptation.request_state import RequestState
from helm.benchmark.adaptation.scenario_state import ScenarioState
from helm.benchmark.metrics.metric import MetricMetadata, MetricResult
from helm.benchmark.metrics.metric_name import MetricName
from helm.benchmark.metrics.metric_service import MetricService
from helm.benchmark.metrics.reference_metric import ReferenceMetric
from helm.benchmark.metrics.statistic import Stat
from helm.common.hierarchical_logger import hwarn
from helm.common.request import RequestResult

from syntaxgym_helm.clients.checkpoint_identity import used_checkpoint
from syntaxgym_helm.core.errors import clip
from syntaxgym_helm.core.item_evaluation import (
    ConditionResult,
    ItemEvaluation,
    RequestFailure,
    TokenScore,
    evaluate_item,
)
from syntaxgym_helm.core.run_options import RunOptions, options_from
from syntaxgym_helm.core.suite import Condition, Item, Suite
from syntaxgym_helm.harness.exact_texts import exact_texts
from syntaxgym_helm.harness.run_format import adapter_digest
from syntaxgym_helm.harness.scenario import (
    ITEM_KEY,
    condition_of_reference,
    instance_notes,
    read_item_payload,
)
from syntaxgym_helm.harness.scored_items import (
    begin_output,
    current_run_dir,
    current_run_name,
    merge_one_item_suites,
    write_scored_items,
)
from syntaxgym_helm.harness.stats import (
    ItemCost,
    cost_stat_values,
    item_stat_values,
    metric_metadata,
    run_stats,
)
from syntaxgym_helm.harness.word_regions import report_words_split_by_regions
from syntaxgym_helm.helm_compat import require

DEFAULT_OPTIONS = RunOptions()
#: The longest reason (characters) an unscorable item's log line quotes.
MAX_PROBLEM_CHARS = 500


class SyntaxGymMetric(ReferenceMetric):
    """Region surprisals (bits) from echoed token logprobs, and the suite's predictions over
    them."""

    def __init__(self, **options: Any) -> None:
        """The run options its run spec records (:class:`RunOptions`; strings are read as a run
        entry's). Scoring reads the policies; the prefix and the context are recorded for readers
        of run_spec.json (the prompt minus the sentence is never scored)."""
        require("metric")  # the overridden methods and the RequestResult fields read
        self.options: RunOptions = options_from(options, where="SyntaxGymMetric: ")

    def evaluate(self, scenario_state: ScenarioState, metric_service: MetricService,
                 eval_cache_path: str, parallelism: int) -> MetricResult:
        """HELM's evaluation, plus the count of items scored (HELM keeps only means); what was
        found for every item is written to the run folder (:mod:`.scored_items`).

        Items are scored on one thread whatever ``--num-threads`` says: scoring is pure Python,
        which HELM's worker threads would only make wait for one another (the GIL)."""
        self._scored: list[tuple[Any, ItemEvaluation, dict[str, Any]]] = []
        result = super().evaluate(scenario_state, metric_service, eval_cache_path, parallelism=1)
        self._keep_scored_items(eval_cache_path, scenario_state)
        return MetricResult([*result.aggregated_stats, *run_stats(result.per_instance_stats)],
                            result.per_instance_stats)

    def _keep_scored_items(self, eval_cache_path: str, scenario_state: ScenarioState) -> None:
        """Write the items scored to the run folder, once HELM's files of the run it replaces
        are gone (:func:`.scored_items.begin_output`); a failure to write them only costs the
        reports time (they score the run again from HELM's files)."""
        scored, self._scored = self._scored, []
        folder = current_run_dir(eval_cache_path)
        if folder is None or not scored:
            return
        begin_output(folder)
        try:
            scored.sort(key=lambda entry: entry[1].item_number)
            suite = merge_one_item_suites([one_item for _, _, one_item in scored])
            run: dict[str, Any] = {"name": current_run_name(),
                                   "adapter_spec_sha256": adapter_digest(
                                       scenario_state.adapter_spec)}
            # What the model's files held when its client scored the run (none for a served
            # model): the report's rows name it.
            used = used_checkpoint(scenario_state.adapter_spec.model_deployment)
            if used is not None:
                run["checkpoint"] = used.record()
            write_scored_items(folder, self.options.first_token, suite,
                               [(instance.id, evaluation) for instance, evaluation, _ in scored],
                               run=run,
                               notes=[instance_notes(instance) for instance, _, _ in scored])
        except Exception as exc:  # noqa: BLE001 - the reports can score the run again
            hwarn(f"SyntaxGym: could not keep the items scored in {folder} "
                  f"({type(exc).__name__}: {exc}); `syntaxgym-helm report` will score the run "
                  "again from HELM's files")

    def evaluate_references(
        self,
        adapter_spec: AdapterSpec,
        reference_request_states: list[RequestState],
        metric_service: MetricService,
        eval_cache_path: str,
    ) -> list[Stat]:
        # The item's one-item suite, read once for scoring and for the items kept.
        one_item = item_json(reference_request_states[0])
        score = evaluate_request_states(reference_request_states, self.options, one_item)
        report_words_split_by_regions(reference_request_states)
        scored = getattr(self, "_scored", None)
        if scored is not None:
            scored.append((reference_request_states[0].instance, score, one_item))
        if not score.scorable:
            instance_id = reference_request_states[0].instance.id
            # One bounded line per item, however long the reasons (a client's error can quote a
            # whole prompt).
            hwarn(f"SyntaxGym item {score.item_number} ({instance_id}) is unscorable: "
                  + clip("; ".join(clip(problem, MAX_PROBLEM_CHARS) for problem in score.problems),
                         4 * MAX_PROBLEM_CHARS))
        return item_stats(score) + cost_stats(item_cost(reference_request_states))

    def get_metadata(self) -> list[MetricMetadata]:
        """Display text of the stats (HELM's ``helm-summarize --auto-generate-schema`` reads it;
        the leaderboard schema is generated from the same :func:`metric_metadata`)."""
        return metric_metadata()


def item_json(state: RequestState) -> dict[str, Any]:
    """The one-item suite the scenario put in the instance, as JSON."""
    instance = state.instance
    if not instance.extra_data or ITEM_KEY not in instance.extra_data:
        raise ValueError(f"instance {instance.id} was not made by SyntaxGymScenario")
    return read_item_payload(instance.extra_data[ITEM_KEY])


def item_suite(state: RequestState, one_item: dict[str, Any] | None = None) -> Suite:
    """The one-item suite the scenario put in the instance (``one_item``: its JSON, already
    read by :func:`item_json`)."""
    # Written by the scenario from a validated suite: read back without validating it again.
    return Suite.from_trusted_json(item_json(state) if one_item is None else one_item,
                                   f"instance {state.instance.id}")


def evaluate_request_states(states: list[RequestState], options: RunOptions = DEFAULT_OPTIONS,
                            one_item: dict[str, Any] | None = None) -> ItemEvaluation:
    """Score one instance from its per-condition request states under the run's ``options``
    (also used by the reports and the Python API); ``one_item``: the instance's one-item suite
    as :func:`item_json` reads it (read here when not given)."""
    suite = item_suite(states[0], one_item)
    item = suite.items[0]
    results: dict[str, ConditionResult] = {}
    prefixes: set[str] = set()
    for state in states:
        condition = state_condition(state, item)
        if condition.condition_name in results:
            raise ValueError(f"instance {state.instance.id}: two requests for condition "
                             f"{condition.condition_name!r}; each reference must name another")
        prompt = state.request.prompt
        if not prompt.endswith(condition.sentence):
            # A window service truncates a prompt too long for the model: quote only its ends.
            results[condition.condition_name] = RequestFailure(
                f"the prompt ({len(prompt):,} characters) {clip(prompt, 80)!r} does not end "
                f"with the sentence ({len(condition.sentence):,} characters) "
                f"{clip(condition.sentence, 80)!r}; it was truncated to fit the model's context, "
                "or the adapter added something after it")
            continue
        prefixes.add(prompt[: len(prompt) - len(condition.sentence)])
        results[condition.condition_name] = _condition_result(state)
    prefix = prefixes.pop() if len(prefixes) == 1 else ""
    return evaluate_item(suite, item, results, prefix=prefix, first_token=options.first_token,
                         ties=options.ties)


def state_condition(state: RequestState, item: Item) -> Condition:
    """The condition a request state scores: the one its reference's tag names."""
    index = state.reference_index
    if index is None or not 0 <= index < len(state.instance.references):
        raise ValueError(f"instance {state.instance.id}: request state without a valid "
                         f"reference_index ({index}); the adapter must make one request per "
                         "reference")
    name = condition_of_reference(state.instance.references[index])
    if name is None:
        raise ValueError(f"instance {state.instance.id}: reference {index} has no condition tag "
                         "(condition:<name>); the instance was not made by this version's "
                         "SyntaxGymScenario")
    try:
        return item.condition(name)
    except KeyError:
        raise ValueError(f"instance {state.instance.id}: reference {index} names condition "
                         f"{name!r}, which item {item.item_number} does not have (conditions: "
                         f"{', '.join(c.condition_name for c in item.conditions)})") from None


def _condition_result(state: RequestState) -> ConditionResult:
    result = state.result
    if result is None:
        return RequestFailure("the request has no result")
    if not result.success:
        return RequestFailure(result.error or "unknown error")
    if not result.completions:
        return RequestFailure("the result has no completion")
    tokens = result.completions[0].tokens
    texts = [token.text for token in tokens]
    # Texts that lost pieces of characters (U+FFFD) are read again from the tokenizer.
    texts = exact_texts(state.request, texts) or texts
    return [TokenScore(text, token.logprob) for text, token in zip(texts, tokens, strict=False)]


def item_stats(score: ItemEvaluation) -> list[Stat]:
    return [Stat(MetricName(name)).add(value) for name, value in item_stat_values(score).items()]


def cost_stats(cost: ItemCost) -> list[Stat]:
    return [Stat(MetricName(name)).add(value) for name, value in cost_stat_values(cost).items()]


def request_seconds(result: RequestResult) -> float:
    """A request's model time: its share of its batch when the client batched it (HELM's
    ``batch_request_time / batch_size``), else its ``request_time`` (0 when not recorded)."""
    if result.batch_request_time is not None and result.batch_size:
        return result.batch_request_time / result.batch_size
    return result.request_time or 0.0


def item_cost(states: Sequence[RequestState]) -> ItemCost:
    """What an item's requests cost: model seconds, tokens returned, requests and cache hits."""
    seconds, tokens, cached = 0.0, 0, 0
    for state in states:
        result = state.result
        if result is None:
            continue
        cached += bool(result.cached)
        seconds += request_seconds(result)
        if result.success and result.completions:
            tokens += len(result.completions[0].tokens)
    return ItemCost(seconds, tokens, len(states), cached)
