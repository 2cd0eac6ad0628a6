"""The metric's own logic, fast: request states built from a real suite's instances (the shipped
``sgh_agreement_pp``, made by the real scenario) with token results written here; no HELM run.

The item's prediction is ``(6;%match_sing%) < (6;%mismatch_sing%) & (6;%match_plural%) <
(6;%mismatch_plural%)``: the verb (region 6) must be less surprising where it agrees.
"""

from __future__ import annotations

import dataclasses
import math

import pytest
from helm.benchmark.adaptation.request_state import RequestState
from helm.benchmark.metrics.metric import MetricInterface  # noqa: F401  (HELM's import order)
from helm.benchmark.scenarios.scenario import Instance
from helm.common.request import GeneratedOutput, Request, RequestResult, Token

from syntaxgym_helm.harness.metric import SyntaxGymMetric, evaluate_request_states
from syntaxgym_helm.harness.scenario import (
    ITEM_KEY,
    SyntaxGymScenario,
    condition_of_reference,
    item_payload,
    read_item_payload,
)
from syntaxgym_helm.harness.stats import (
    ACCURACY,
    CACHED,
    FIRST_PREDICTION_ACCURACY,
    INFERENCE_TIME,
    SCORED_ITEMS,
    TIE,
    TOKENS,
    UNSCORABLE,
    efficiency_stat_names,
    metric_metadata,
    prediction_accuracy_name,
)

BOS = "<|endoftext|>"
SUITE = "sgh_agreement_pp"


@pytest.fixture(scope="module")
def instance(tmp_path_factory: pytest.TempPathFactory) -> Instance:
    """Item 1: "The driver near the scientists knows/know the answer" and its plural twin."""
    out = tmp_path_factory.mktemp("scenario")
    return SyntaxGymScenario(suite=SUITE).get_instances(str(out))[0]


def _tokens(sentence: str, verb_bits: float) -> list[Token]:
    """The plugin client's layout: the beginning-of-text token first (never scored), then one
    token per word with a leading space; the verb (region 6) costs ``verb_bits``, the rest 1 bit."""
    words = sentence.split(" ")
    tokens = [Token(BOS, 0.0)]
    for position, word in enumerate(words):
        bits = verb_bits if position == 5 else 1.0
        tokens.append(Token(word if position == 0 else " " + word, -bits * math.log(2)))
    return tokens


def _state(instance: Instance, index: int, verb_bits: float, success: bool = True,
           **timing: float | int | bool) -> RequestState:
    """``timing``: the result's ``request_time``, ``batch_request_time``, ``batch_size`` and
    ``cached``."""
    sentence = instance.references[index].output.text
    tokens = _tokens(sentence, verb_bits)
    result = RequestResult(
        success=success, embedding=[], cached=bool(timing.pop("cached", False)),
        error=None if success else "timed out", **timing,  # type: ignore[arg-type]
        completions=[GeneratedOutput(text=sentence, logprob=sum(t.logprob for t in tokens),
                                     tokens=tokens)] if success else [])
    return RequestState(
        instance=instance, reference_index=index, request_mode="original", train_trial_index=0,
        output_mapping=None, request=Request(model="m/m", model_deployment="m/m", prompt=sentence,
                                             echo_prompt=True, max_tokens=0),
        result=result, num_train_instances=0, prompt_truncated=False)


#: Verb surprisal (bits) per condition that makes the item pass: agreeing verbs are cheap.
PASSING = {"match_sing": 2.0, "mismatch_sing": 9.0, "match_plural": 3.0, "mismatch_plural": 8.0}


def _states(instance: Instance, verb_bits: dict[str, float]) -> list[RequestState]:
    return [_state(instance, index, verb_bits[condition_of_reference(reference) or ""])
            for index, reference in enumerate(instance.references)]


def _all_stats(states: list[RequestState], ties: str = "fail") -> dict[str, float]:
    stats = SyntaxGymMetric(ties=ties).evaluate_references(None, states, None, "")  # type: ignore[arg-type]
    return {stat.name.name: stat.mean for stat in stats}


def _stats(states: list[RequestState], ties: str = "fail") -> dict[str, float]:
    """The item's scoring stats (its efficiency stats, which every item has, left out)."""
    return {name: value for name, value in _all_stats(states, ties).items()
            if name not in efficiency_stat_names()}


def test_references_carry_their_condition_names(instance: Instance) -> None:
    names = [condition_of_reference(reference) for reference in instance.references]
    assert names == ["match_sing", "mismatch_sing", "match_plural", "mismatch_plural"]


def test_an_item_whose_agreeing_verbs_are_cheaper_passes(instance: Instance) -> None:
    assert _stats(_states(instance, PASSING)) == {
        UNSCORABLE: 0.0, ACCURACY: 1.0, FIRST_PREDICTION_ACCURACY: 1.0,
        prediction_accuracy_name(0): 1.0, TIE: 0.0}
    score = evaluate_request_states(_states(instance, PASSING))
    assert score.region_values()["mismatch_sing"][6]["sum"] == pytest.approx(9.0)
    assert score.region_values()["match_sing"][7]["sum"] == pytest.approx(2.0)  # "the answer"


def test_one_disagreeing_pair_fails_the_item(instance: Instance) -> None:
    stats = _stats(_states(instance, {**PASSING, "mismatch_plural": 1.0}))
    assert stats[ACCURACY] == 0.0 and stats[prediction_accuracy_name(0)] == 0.0
    assert stats[UNSCORABLE] == 0.0


def test_a_tie_fails_by_default_passes_with_ties_pass_and_is_counted_either_way(
        instance: Instance) -> None:
    tied = {**PASSING, "mismatch_plural": PASSING["match_plural"]}  # 3 bits both: a tie
    stats = _stats(_states(instance, tied))
    assert stats[ACCURACY] == 0.0 and stats[TIE] == 1.0
    stats = _stats(_states(instance, tied), ties="pass")
    assert stats[ACCURACY] == 1.0 and stats[TIE] == 1.0
    # A thousandth of a bit apart is no tie: the comparison decides, under either policy.
    close = {**PASSING, "mismatch_plural": PASSING["match_plural"] - 0.001}
    for policy in ("fail", "pass"):
        assert _stats(_states(instance, close), ties=policy)[ACCURACY] == 0.0
        assert _stats(_states(instance, close), ties=policy)[TIE] == 0.0
    with pytest.raises(ValueError, match="ties='maybe' is not one of fail, pass"):
        SyntaxGymMetric(ties="maybe")


def test_conditions_are_found_by_tag_not_by_position(instance: Instance) -> None:
    # The same references in another order: each request still scores its own condition.
    order = [3, 1, 0, 2]
    shuffled = dataclasses.replace(instance, references=[instance.references[i] for i in order])
    stats = _stats(_states(shuffled, {**PASSING, "mismatch_plural": 1.0}))
    assert stats[ACCURACY] == 0.0 and stats[UNSCORABLE] == 0.0
    assert _stats(_states(shuffled, PASSING))[ACCURACY] == 1.0


def test_a_reference_without_a_condition_tag_is_an_error(instance: Instance) -> None:
    """Every reference this version's scenario makes names its condition; one that does not was
    not made by it (runs of older versions are refused before scoring: run_format)."""
    untagged = dataclasses.replace(instance, references=[
        dataclasses.replace(reference, tags=[]) for reference in instance.references])
    verb_bits = list(PASSING.values())
    states = [_state(untagged, index, verb_bits[index]) for index in range(4)]
    with pytest.raises(ValueError, match="reference 0 has no condition tag"):
        evaluate_request_states(states)


def test_a_failed_request_makes_the_item_unscorable(instance: Instance) -> None:
    states = _states(instance, PASSING)
    states[2] = _state(instance, 2, 3.0, success=False)
    assert _stats(states) == {UNSCORABLE: 1.0}
    score = evaluate_request_states(states)
    assert any("match_plural" in problem and "timed out" in problem for problem in score.problems)


def test_a_tag_naming_no_condition_of_the_item_is_an_error(instance: Instance) -> None:
    bad = dataclasses.replace(instance.references[1], tags=["condition:mismatch_singular"])
    wrong = dataclasses.replace(instance, references=[instance.references[0], bad,
                                                      *instance.references[2:]])
    states = [_state(wrong, index, 1.0) for index in range(4)]
    with pytest.raises(ValueError, match=r"reference 1 names condition 'mismatch_singular'.*"
                                         r"conditions: match_sing, mismatch_sing"):
        evaluate_request_states(states)


def test_two_references_of_one_condition_are_an_error(instance: Instance) -> None:
    twice = dataclasses.replace(instance, references=[instance.references[0]] * 4)
    with pytest.raises(ValueError, match="two requests for condition 'match_sing'"):
        evaluate_request_states([_state(twice, index, 1.0) for index in range(4)])


def test_metadata_describes_every_stat_a_two_prediction_suite_emits(instance: Instance) -> None:
    one_item = read_item_payload(instance.extra_data[ITEM_KEY])
    one_item["predictions"].append({"type": "formula",
                                    "formula": "(6;%match_sing%) < (6;%match_plural%)"})
    two = dataclasses.replace(instance, extra_data={ITEM_KEY: item_payload(one_item)})
    stats = _stats(_states(two, PASSING))
    assert stats[prediction_accuracy_name(1)] == 1.0 and stats[ACCURACY] == 1.0
    described = {metadata.name for metadata in SyntaxGymMetric().get_metadata()}
    assert set(stats) <= described
    per_item = set(_all_stats(_states(instance, PASSING)))
    per_run = {SCORED_ITEMS}  # the run's count, added after HELM's averaging
    assert {m.name for m in metric_metadata(predictions=1)} == per_item | per_run
    assert all(m.display_name and m.description and m.group for m in metric_metadata(3))


def test_an_item_reports_what_its_requests_cost(instance: Instance) -> None:
    """Time: a batched request's share of its batch (HELM's batch_request_time / batch_size),
    else its request_time; tokens: every token returned; cached: the share of cache hits. An
    unscorable item costs what it cost too."""
    timings = [dict(request_time=5.0, batch_request_time=0.6, batch_size=3),  # 0.2 s
               dict(request_time=0.25),
               dict(request_time=0.5, cached=True),
               dict()]  # no time recorded: 0
    states = [
        _state(instance, index, PASSING[condition_of_reference(reference) or ""], **timing)
        for index, (reference, timing) in enumerate(zip(instance.references, timings, strict=False))
    ]
    tokens = sum(len(state.result.completions[0].tokens) for state in states)
    assert tokens == 4 * 9  # the beginning-of-text token and 8 words, per condition
    stats = _all_stats(states)
    assert stats[INFERENCE_TIME] == pytest.approx(0.2 + 0.25 + 0.5)
    assert stats[TOKENS] == tokens and stats[CACHED] == 0.25
    assert stats[ACCURACY] == 1.0
    states[3] = _state(instance, 3, 1.0, success=False, request_time=2.0)
    failed = _all_stats(states)
    assert failed[UNSCORABLE] == 1.0 and ACCURACY not in failed
    assert failed[INFERENCE_TIME] == pytest.approx(0.2 + 0.25 + 0.5 + 2.0)
    assert failed[TOKENS] == 3 * 9  # the failed request returned none



def test_the_run_counts_the_items_scored_as_a_stat_of_its_own(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """HELM's own evaluation over three items (a pass, a fail, a failed request): the accuracy is
    averaged over the two scorable items, and ``syntaxgym_scored_items`` is 2 in the test split
    (HELM's ``stats.json`` keeps only means, so the count is a stat whose mean is the count)."""
    from helm.benchmark.adaptation.adapter_spec import (
        ADAPT_MULTIPLE_CHOICE_SEPARATE_ORIGINAL,
        AdapterSpec,
    )
    from helm.benchmark.adaptation.scenario_state import ScenarioState

    instances = SyntaxGymScenario(suite=SUITE).get_instances(
        str(tmp_path_factory.mktemp("three")))[:3]
    states = [*_states(instances[0], PASSING),
              *_states(instances[1], {**PASSING, "mismatch_plural": 1.0}),
              *[_state(instances[2], index, 1.0, success=index != 1) for index in range(4)]]
    state = ScenarioState(AdapterSpec(method=ADAPT_MULTIPLE_CHOICE_SEPARATE_ORIGINAL), states)
    result = SyntaxGymMetric().evaluate(state, None, "", 1)  # type: ignore[arg-type]
    plain = {stat.name.name: stat for stat in result.aggregated_stats
             if stat.name.perturbation is None}
    assert plain[ACCURACY].mean == 0.5 and plain[UNSCORABLE].mean == pytest.approx(1 / 3)
    assert plain[SCORED_ITEMS].mean == 2 and plain[SCORED_ITEMS].count == 1
    assert plain[SCORED_ITEMS].name.split == plain[ACCURACY].name.split == "test"
    assert len(result.per_instance_stats) == 3  # per item: the item's own stats only
    assert all(SCORED_ITEMS not in {s.name.name for s in entry.stats}
               for entry in result.per_instance_stats)
