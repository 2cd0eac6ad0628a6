"""Faults in scoring: an overflow is no pass, and a truncated prompt is no 145,845-character
log line."""

from __future__ import annotations

import math

import pytest

from syntaxgym_helm.core.item_evaluation import TokenScore, evaluate_item
from syntaxgym_helm.core.suite import parse_suite

LN2 = math.log(2)


def _suite(formula: str):
    regions = [{"region_number": 1, "content": "The keys"}, {"region_number": 2, "content": "are"}]
    verb = [{"region_number": 1, "content": "The keys"}, {"region_number": 2, "content": "is"}]
    return parse_suite({
        "meta": {"name": "overflow", "metric": "sum"},
        "region_meta": {"1": "subject", "2": "verb"},
        "predictions": [{"type": "formula", "formula": formula}],
        "items": [{"item_number": 1, "conditions": [
            {"condition_name": "a", "regions": regions},
            {"condition_name": "b", "regions": verb}]}]})


def _tokens(verb: str, bits: float) -> list[TokenScore]:
    return [TokenScore("<s>", 0.0), TokenScore("The", -3 * LN2), TokenScore(" keys", -9 * LN2),
            TokenScore(f" {verb}", -bits * LN2)]


@pytest.mark.parametrize(("formula", "problem"), [
    ("(2;%a%) * 1e300 * 1e10 = (2;%b%) * 1e300 * 1e10", "overflows"),  # inf = inf held
    ("(2;%a%) + 1e17 >= (2;%b%) + 1e17", "loses a region value to rounding"),
    ("(2;%a%) * 1e-300 * 1e-300 = (2;%b%) * 1e-300 * 1e-300", "underflows to 0"),
])
def test_a_prediction_decided_by_rounding_makes_the_item_unscorable(formula: str,
                                                                    problem: str) -> None:
    suite = _suite(formula)
    score = evaluate_item(
        suite, suite.items[0], {"a": _tokens("are", 2.0), "b": _tokens("is", 7.0)}, prefix="<s>"
    )
    assert not score.scorable and score.passed is None
    assert problem in score.problems[0] and "cannot be decided" in score.problems[0]


def test_helms_log_lines_are_bounded(helm_log: list) -> None:
    from helm.common.hierarchical_logger import hlog

    from syntaxgym_helm.clients.log_limit import MAX_LOG_LINE, install_log_line_limit

    install_log_line_limit()  # as the plugin does when HELM loads it
    prompt = "<bos>" + "dog cat river " * 10_417  # 145,843 characters: Gemma's 32,768 tokens
    hlog(prompt)  # what HELM's adapter does with a run's first prompt ("Sample prompts")
    (line,) = [line for line in helm_log if "dog cat" in line]
    assert len(line) < MAX_LOG_LINE + 100
    assert line.startswith("<bos>dog cat") and line.rstrip().endswith("river")
    assert "characters ...]" in line


def test_an_unscorable_truncated_prompt_is_one_short_warning(tmp_path_factory,
                                                             helm_log: list) -> None:
    from helm.benchmark.adaptation.request_state import RequestState
    from helm.benchmark.metrics.metric import MetricInterface  # noqa: F401  (HELM's import order)
    from helm.common.request import GeneratedOutput, Request, RequestResult, Token

    from syntaxgym_helm.harness.metric import SyntaxGymMetric
    from syntaxgym_helm.harness.scenario import SyntaxGymScenario

    instance = SyntaxGymScenario(suite="sgh_agreement_pp").get_instances(
        str(tmp_path_factory.mktemp("scenario")))[0]
    truncated = "<|endoftext|>" + "the driver near the scientists " * 4_700  # cut to fit

    def state(index: int) -> RequestState:
        result = RequestResult(success=True, embedding=[], cached=False, completions=[
            GeneratedOutput(text=truncated, logprob=-1.0, tokens=[Token(truncated, -1.0)])])
        return RequestState(
            instance=instance, reference_index=index, request_mode="original",
            train_trial_index=0, output_mapping=None, num_train_instances=0, prompt_truncated=True,
            request=Request(model="m/m", model_deployment="m/m", prompt=truncated,
                            echo_prompt=True, max_tokens=0), result=result)

    states = [state(index) for index in range(len(instance.references))]
    SyntaxGymMetric().evaluate_references(None, states, None, "")  # type: ignore[arg-type]
    (warning,) = [line for line in helm_log if "is unscorable" in line]
    assert len(warning) < 2_500, len(warning)
    assert f"the prompt ({len(truncated):,} characters)" in warning
    assert "it was truncated to fit the model's context" in warning
