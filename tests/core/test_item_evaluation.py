"""Scoring one item from token logprobs: region values, predictions and the unscorable cases."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from fixtures import SYNTAXGYM_CORE_DIR
from syntaxgym_helm.core.item_evaluation import RequestFailure, TokenScore, evaluate_item
from syntaxgym_helm.core.suite import load_suite, parse_suite

LN2 = math.log(2)

SUITE = {
    "meta": {"name": "agreement", "metric": "sum"},
    "region_meta": {"1": "subject", "2": "verb", "3": "rest"},
    "predictions": [{"type": "formula", "formula": "(2;%mismatch%) > (2;%match%)"},
                    "(3;%match%) = (3;%mismatch%)"],
    "items": [{"item_number": 1, "conditions": [
        {"condition_name": "match", "regions": [
            {"region_number": 1, "content": "The woman"},
            {"region_number": 2, "content": "plays"},
            {"region_number": 3, "content": "the guitar"}]},
        {"condition_name": "mismatch", "regions": [
            {"region_number": 1, "content": "The woman"},
            {"region_number": 2, "content": "play"},
            {"region_number": 3, "content": "the guitar"}]}]}],
}


def tokens(pairs: list[tuple[str, float | None]], bos: bool = True) -> list[TokenScore]:
    """Tokens with logprobs given as surprisals in bits (None: missing)."""
    head = [TokenScore("<|endoftext|>", 0.0)] if bos else []
    return head + [TokenScore(t, None if s is None else -s * LN2) for t, s in pairs]


def item_tokens(verb: str, verb_bits: float) -> list[TokenScore]:
    return tokens([("The", 3.0), (" woman", 9.0), (f" {verb}", verb_bits), (" the", 1.5),
                   (" guitar", 4.0)])


def test_prediction_outcomes_follow_region_sums() -> None:
    suite = parse_suite(SUITE)
    score = evaluate_item(suite, suite.items[0], {"match": item_tokens("plays", 5.0),
                                               "mismatch": item_tokens("play", 11.0)})
    assert score.scorable and score.passed
    assert [p.holds for p in score.predictions] == [True, True]
    values = score.region_values()
    assert values["match"][1]["sum"] == pytest.approx(12.0)
    assert values["mismatch"][2]["sum"] == pytest.approx(11.0)
    assert values["match"][3]["mean"] == pytest.approx(2.75)

    reversed_score = evaluate_item(suite, suite.items[0], {"match": item_tokens("plays", 11.0),
                                                        "mismatch": item_tokens("play", 5.0)})
    assert reversed_score.scorable and reversed_score.passed is False
    assert [p.holds for p in reversed_score.predictions] == [False, True]


def test_first_token_without_context_is_unscorable_by_default() -> None:
    suite = parse_suite(SUITE)
    bare = {name: tokens([("The", 0.0), (" woman", 9.0), (f" {verb}", 5.0), (" the", 1.5),
                          (" guitar", 4.0)], bos=False)
            for name, verb in (("match", "plays"), ("mismatch", "play"))}
    score = evaluate_item(suite, suite.items[0], bare)
    assert not score.scorable and score.passed is None
    assert "scored without any context" in score.problems[0]
    assert "prefix" in score.problems[0]

    excluded = evaluate_item(suite, suite.items[0], bare, first_token="exclude")
    assert excluded.scorable
    assert excluded.region_values()["match"][1]["sum"] == pytest.approx(9.0)


def test_failed_request_and_unalignable_tokens_are_reported_not_scored() -> None:
    suite = parse_suite(SUITE)
    failed = evaluate_item(suite, suite.items[0], {"match": item_tokens("plays", 5.0),
                                                "mismatch": RequestFailure("server down")})
    assert not failed.scorable and "server down" in failed.problems[0]
    wrong = item_tokens("plays", 5.0)
    wrong[3] = TokenScore(" a", wrong[3].logprob)
    unaligned = evaluate_item(suite, suite.items[0], {"match": item_tokens("plays", 5.0),
                                                   "mismatch": wrong})
    assert not unaligned.scorable and "'mismatch'" in unaligned.problems[0]
    missing = evaluate_item(suite, suite.items[0], {"match": item_tokens("plays", 5.0)})
    assert not missing.scorable


def test_missing_logprob_inside_the_sentence_is_unscorable() -> None:
    suite = parse_suite(SUITE)
    holed = tokens([("The", 3.0), (" woman", None), (" play", 5.0), (" the", 1.5),
                    (" guitar", 4.0)])
    score = evaluate_item(suite, suite.items[0], {"match": item_tokens("plays", 5.0),
                                               "mismatch": holed})
    assert not score.scorable and "no usable logprob" in score.problems[0]


@pytest.mark.parametrize(("logprob", "reason"), [
    (math.nan, "is NaN"), (-math.inf, "is -inf"), (math.inf, "is inf"),
    (0.5, "above 0: a probability of 1.65"),
])
def test_a_value_that_cannot_be_a_logprob_makes_the_item_unscorable(logprob: float,
                                                                     reason: str) -> None:
    suite = parse_suite(SUITE)
    bad = item_tokens("play", 11.0)
    bad[2] = TokenScore(" woman", logprob)
    score = evaluate_item(suite, suite.items[0], {"match": item_tokens("plays", 5.0),
                                               "mismatch": bad})
    assert not score.scorable and score.passed is None
    assert "token 2 ' woman' has no usable logprob" in score.problems[0], score.problems
    assert reason in score.problems[0]


def test_a_logprob_above_zero_by_rounding_reads_as_zero() -> None:
    suite = parse_suite(SUITE)
    near = item_tokens("play", 11.0)
    near[2] = TokenScore(" woman", 1e-6)  # a float32 log-softmax of a near-certain token
    score = evaluate_item(suite, suite.items[0], {"match": item_tokens("plays", 5.0),
                                               "mismatch": near})
    assert score.scorable
    values = {v.condition_name: v for v in score.conditions}["mismatch"]
    assert values.surprisals[2] == 0.0 and values.tokens[2] == " woman"


def test_prediction_over_an_undefined_region_value_is_unscorable() -> None:
    data = {**SUITE, "meta": {"name": "gap", "metric": "mean"},
            "predictions": ["(2;%mismatch%) > (2;%match%)"]}
    data["items"] = [{"item_number": 1, "conditions": [
        {"condition_name": "match", "regions": [
            {"region_number": 1, "content": "The woman"}, {"region_number": 2, "content": ""},
            {"region_number": 3, "content": "the guitar"}]},
        {"condition_name": "mismatch", "regions": [
            {"region_number": 1, "content": "The woman"}, {"region_number": 2, "content": "play"},
            {"region_number": 3, "content": "the guitar"}]}]}]
    suite = parse_suite(data)
    gap = tokens([("The", 3.0), (" woman", 9.0), (" the", 1.5), (" guitar", 4.0)])
    score = evaluate_item(
        suite, suite.items[0], {"match": gap, "mismatch": item_tokens("play", 5.0)}
    )
    assert not score.scorable
    assert "prediction 0" in score.problems[0]
    # With sum, the empty region is worth 0 bits and the prediction is decided.
    summed = parse_suite({**data, "meta": {"name": "gap", "metric": "sum"}})
    assert evaluate_item(summed, summed.items[0],
                      {"match": gap, "mismatch": item_tokens("play", 5.0)}).passed is True


def test_reference_surprisals_reproduce_reference_region_sums(syntaxgym_core_dir: Path) -> None:
    """Token surprisals of syntaxgym-core's GRNN fixture give its published region sums."""
    import json

    suite = load_suite(syntaxgym_core_dir / "test_in.json")
    rows = [line.split("\t") for line in
            (syntaxgym_core_dir / "test_surp_grnn.txt").read_text().splitlines()[1:]]
    by_sentence: dict[int, list[TokenScore]] = {}
    for sentence_id, _, token, surprisal in rows:
        by_sentence.setdefault(int(sentence_id), []).append(
            TokenScore(token, -float(surprisal) * LN2))
    expected = json.loads((syntaxgym_core_dir / "test_out_grnn.json").read_text())
    sentence = 0
    for item, expected_item in zip(suite.items, expected["items"], strict=False):
        results = {}
        for condition in item.conditions:
            sentence += 1
            results[condition.condition_name] = by_sentence[sentence]
        # The GRNN gave its first token 0 bits without context: exclude it, as the reference did.
        score = evaluate_item(suite, item, results, first_token="exclude")
        assert score.scorable, score.problems
        values = score.region_values()
        for condition in expected_item["conditions"]:
            for region in condition["regions"]:
                got = values[condition["condition_name"]][region["region_number"]]["sum"]
                assert got == pytest.approx(region["metric_value"]["sum"], abs=1e-5)


def test_a_region_whose_only_token_is_excluded_sums_to_zero_and_is_not_unmeasured() -> None:
    """first_token=exclude leaves region 1 with no token when its only token is the first: its
    sum is 0, as syntaxgym-core's, since the model did give that region a token."""
    suite = parse_suite({**SUITE, "items": [{"item_number": 1, "conditions": [
        {"condition_name": name, "regions": [
            {"region_number": 1, "content": "The"}, {"region_number": 2, "content": verb},
            {"region_number": 3, "content": "it"}]}
        for name, verb in (("match", "rains"), ("mismatch", "rain"))]}]})
    bare = {name: tokens([("The", 0.0), (f" {verb}", bits), (" it", 2.0)], bos=False)
            for name, verb, bits in (("match", "rains", 4.0), ("mismatch", "rain", 8.0))}
    score = evaluate_item(suite, suite.items[0], bare, first_token="exclude")
    assert score.scorable, score.problems
    assert score.conditions[0].value("sum", 1) == 0.0
    assert score.conditions[0].unmeasured == {}


def test_a_region_inside_another_regions_token_is_unmeasured_not_zero() -> None:
    """A tokenizer that joins two characters the suite puts in two regions leaves the second
    with no token of its own: its value is undefined (the item unscorable with the reason), never
    0, which would tie with any other such region."""
    suite = parse_suite({"meta": {"name": "zh", "region_separator": ""},
                         "region_meta": {"1": "a", "2": "b", "3": "c"},
                         "predictions": ["(2;%good%) < (2;%bad%)"],
                         "items": [{"item_number": 1, "conditions": [
                             {"condition_name": name, "regions": [
                                 {"region_number": 1, "content": "他吃"},
                                 {"region_number": 2, "content": aspect},
                                 {"region_number": 3, "content": "饭"}]}
                             for name, aspect in (("good", "了"), ("bad", "过"))]}]})
    results = {"good": tokens([("他", 1.0), ("吃了", 2.0), ("饭", 1.0)]),
               "bad": tokens([("他", 1.0), ("吃", 2.0), ("过", 3.0), ("饭", 1.0)])}
    score = evaluate_item(suite, suite.items[0], results, prefix="<|endoftext|>")
    assert not score.scorable
    assert "region 2 of condition `good` cannot be measured" in score.problems[0]
    assert "token 2 '吃了'" in score.problems[0]
    assert math.isnan(score.region_values()["good"][2]["sum"])
    assert score.region_values()["bad"][2]["sum"] == pytest.approx(3.0)


def test_first_token_excluded_changes_region_one_statistics_but_not_its_sum() -> None:
    """syntaxgym-core counts the context-free first token (0 bits) in region 1; exclude drops it.

    So region 1's sum agrees with the reference, while its mean, median, range and min are those
    of one token fewer (docs/differences_from_syntaxgym_core.md).
    """
    import json

    suite = load_suite(SYNTAXGYM_CORE_DIR / "test_in.json")
    rows = [line.split("\t") for line in
            (SYNTAXGYM_CORE_DIR / "test_surp_grnn.txt").read_text().splitlines()[1:]]
    by_sentence: dict[int, list[TokenScore]] = {}
    for sentence_id, _, token, surprisal in rows:
        by_sentence.setdefault(int(sentence_id), []).append(
            TokenScore(token, -float(surprisal) * LN2))
    item = suite.items[0]
    results = {c.condition_name: by_sentence[n] for n, c in enumerate(item.conditions, 1)}
    first = by_sentence[1]
    assert first[0].text == "I" and first[0].logprob == 0.0  # the reference's context-free token
    score = evaluate_item(suite, item, results, first_token="exclude")
    assert score.scorable, score.problems
    ours = score.region_values()[item.conditions[0].condition_name][1]
    reference = json.loads((SYNTAXGYM_CORE_DIR / "test_out_grnn.json").read_text())
    theirs = reference["items"][0]["conditions"][0]["regions"][0]["metric_value"]
    assert ours["sum"] == pytest.approx(theirs["sum"], abs=1e-5)  # "I" (0 bits) + know + that
    assert theirs["min"] == 0.0 and ours["min"] == pytest.approx(2.352034, abs=1e-5)
    assert theirs["mean"] == pytest.approx(theirs["sum"] / 3, abs=1e-5)
    assert ours["mean"] == pytest.approx(theirs["sum"] / 2, abs=1e-5)


def test_whole_sentence_value_applies_the_metric_to_all_its_tokens() -> None:
    """``(*;%c%)`` is the metric over the sentence's tokens; syntaxgym-core sums region values.

    With ``sum`` the two agree; with ``mean`` ours is the mean token surprisal (4.5 bits here)
    where syntaxgym-core would add up the three region means (6 + 5 + 2.75 = 13.75).
    """
    data = {**SUITE, "meta": {"name": "whole", "metric": "mean"},
            "predictions": ["(*;%match%) = 4.5", "(*;%mismatch%) < 5"]}
    suite = parse_suite(data)
    results = {"match": item_tokens("plays", 5.0), "mismatch": item_tokens("play", 5.0)}
    score = evaluate_item(suite, suite.items[0], results)
    assert score.scorable and [p.holds for p in score.predictions] == [True, True]
    summed = parse_suite({**data, "meta": {"name": "whole", "metric": "sum"},
                          "predictions": ["(*;%match%) = 22.5"]})
    assert evaluate_item(summed, summed.items[0], results).passed is True


@pytest.mark.parametrize(("metric", "holds"), [(["mean", "sum"], True), (["sum", "mean"], False),
                                               ("all", False)])
def test_predictions_use_the_first_metric_listed(metric: object, holds: bool) -> None:
    """A list or ``"all"`` is accepted and predictions use the first metric (``all``: sum);
    syntaxgym-core's Prediction raises ValueError for any ``meta.metric`` that is not one name."""
    suite = parse_suite({**SUITE, "meta": {"name": "metrics", "metric": metric},
                         "predictions": ["(3;%match%) < 3"]})  # "the guitar": mean 2.75, sum 5.5
    score = evaluate_item(suite, suite.items[0], {"match": item_tokens("plays", 5.0),
                                                  "mismatch": item_tokens("play", 11.0)})
    assert score.scorable and score.passed is holds
