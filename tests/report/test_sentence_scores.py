"""Sentence scores (sum, mean, char, byte, ZhoBLiMP's SLLN-LP) on real runs, and
``--sentence-score`` in ``report`` and ``compare``.

Fast: no model runs. ``tests/fixtures/blimp_run`` is a real ``helm-run`` (SmolLM2-135M on 5 BLiMP
paradigms, Gemma-3-270M on 2, 4 pairs each) and ``tests/fixtures/pairs_run`` one paradigm each
of CLAMS, RuBLiMP, TurBLiMP and SLING (Cyrillic and Chinese: characters are not bytes). Every
score is checked against the same reduction made here by hand from ``scenario_state.json``'s raw
JSON (the request's prompt and the completion's token log-probabilities after the
beginning-of-text token), as lm-evaluation-harness and ZhoBLiMP's ``src/metrics.py`` compute
them: log-likelihood over characters (``len``), over UTF-8 bytes, over tokens, over tokens ** alpha.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from syntaxgym_helm.cli.main import main
from syntaxgym_helm.core.sentence_scores import (
    SentenceScore,
    parse_sentence_score,
    rescore_item,
    sentence_value,
)
from syntaxgym_helm.report.runs import RunRecord, find_run_dirs, load_runs
from syntaxgym_helm.report.sentence_scores import with_sentence_score

BLIMP_OUTPUT = Path(__file__).resolve().parents[1] / "fixtures" / "blimp_run"
#: CLAMS, RuBLiMP, TurBLiMP, SLING: characters of 2 and 3 UTF-8 bytes (char and byte differ).
PAIRS_OUTPUT = Path(__file__).resolve().parents[1] / "fixtures" / "pairs_run"
#: A real run of a SyntaxGym suite (number_prep), whose predictions compare regions only.
SUITE_OUTPUT = next(folder for folder in (Path(__file__).resolve().parents[1] / "fixtures" / name
                                          for name in ("number_prep_run", "old_layout_run"))
                    if folder.is_dir())
SCORES = ("sum", "mean", "char", "byte", "zhoblimp", "zhoblimp:0.8")


@pytest.fixture(scope="module")
def runs() -> list[RunRecord]:
    return (load_runs(find_run_dirs(BLIMP_OUTPUT), progress=False)
            + load_runs(find_run_dirs(PAIRS_OUTPUT), progress=False))


def _by_hand(run: RunRecord) -> dict[str, tuple[float, int, str]]:
    """Prompt -> (log-likelihood in nats of its tokens after the first, their number, the
    prompt), straight from the run's scenario_state.json."""
    state = json.loads((run.run_dir / "scenario_state.json").read_text(encoding="utf-8"))
    found = {}
    for request_state in state["request_states"]:
        prompt = request_state["request"]["prompt"]
        tokens = request_state["result"]["completions"][0]["tokens"]
        assert tokens[0]["text"] in ("<|endoftext|>", "<bos>")  # the model's prefix token
        found[prompt] = (math.fsum(t["logprob"] for t in tokens[1:]), len(tokens) - 1, prompt)
    return found


def _normalised(loglikelihood: float, tokens: int, text: str, score: str) -> float:
    """The field's own number (higher is better): log-likelihood over its length."""
    name, _, alpha = score.partition(":")
    return loglikelihood / {"sum": 1, "mean": tokens, "char": len(text),
                            "byte": len(text.encode("utf-8")),
                            "zhoblimp": tokens ** float(alpha or 0.5)}[name]


@pytest.mark.parametrize("score", SCORES)
def test_every_score_equals_the_reduction_by_hand(runs: list[RunRecord], score: str) -> None:
    parsed = parse_sentence_score(score)
    checked = 0
    for run in runs:
        by_hand = _by_hand(run)
        for item, evaluation in zip(run.suite.items, run.scores, strict=True):
            for values in evaluation.conditions:
                sentence = item.condition(values.condition_name).sentence
                expected = -_normalised(*by_hand[sentence], score) / math.log(2)
                assert sentence_value(values, sentence, parsed) == pytest.approx(expected,
                                                                                 rel=1e-12)
                checked += 1
    assert checked == 2 * sum(len(run.scores) for run in runs) > 2 * 4 * 7


@pytest.mark.parametrize("score", SCORES)
def test_verdicts_equal_the_comparison_by_hand(runs: list[RunRecord], score: str) -> None:
    for run in with_sentence_score(runs, parse_sentence_score(score)):
        assert run.label.endswith(f"[sentence score={parse_sentence_score(score)}]")
        by_hand = _by_hand(run)
        for item, evaluation in zip(run.suite.items, run.scores, strict=True):
            good, bad = (_normalised(*by_hand[item.condition(name).sentence], score)
                         for name in ("good", "bad"))
            assert evaluation.predictions[0].holds is (good > bad), (run.run_name, item)
            assert evaluation.predictions[0].tie is (good == bad)


def test_the_scores_differ_where_lengths_do(runs: list[RunRecord]) -> None:
    """The reductions are not all the same verdicts on these pairs (so the checks above could
    tell them apart), and ``sum`` gives back exactly the run's own verdicts."""
    verdicts = {}
    for score in SCORES:
        verdicts[score] = [e.predictions[0].holds for run in
                           with_sentence_score(runs, parse_sentence_score(score))
                           for e in run.scores]
    assert verdicts["sum"] == [e.predictions[0].holds for run in runs for e in run.scores]
    assert len({tuple(v) for v in verdicts.values()}) > 1


def test_alpha_ends_are_sum_and_mean(runs: list[RunRecord]) -> None:
    for run in runs:
        for item, evaluation in zip(run.suite.items, run.scores, strict=True):
            for alpha, same in ((0.0, "sum"), (1.0, "mean")):
                mine = rescore_item(run.suite, item, evaluation, SentenceScore("zhoblimp", alpha))
                other = rescore_item(run.suite, item, evaluation, SentenceScore(same))  # type: ignore[arg-type]
                assert mine.predictions == other.predictions


def test_region_predictions_are_kept() -> None:
    """Only whole-sentence predictions change: a SyntaxGym suite's predictions (regions only)
    come back as the run scored them."""
    suite_run = load_runs(find_run_dirs(SUITE_OUTPUT), progress=False)[0]
    assert all(ref.region is not None for p in suite_run.suite.predictions
               for ref in p.formula.region_refs)
    again = with_sentence_score([suite_run], SentenceScore("mean"))[0]
    assert [e.predictions for e in again.scores] == [e.predictions for e in suite_run.scores]


@pytest.mark.parametrize("text, message", [
    ("median", "not one of sum, mean, char, byte, zhoblimp"),
    ("mean:0.5", "only zhoblimp takes a value"),
    ("zhoblimp:x", "'x' is not a number"),
    ("zhoblimp:1.5", "between 0 and 1"),
])
def test_a_bad_score_is_refused(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_sentence_score(text)


def test_report_and_compare_take_the_option(tmp_path: Path, capsys: pytest.CaptureFixture
                                            ) -> None:
    assert main(["report", str(BLIMP_OUTPUT / "runs" / "blimp_fixture"), "-o",
                 str(tmp_path / "report"), "--sentence-score", "zhoblimp:0.7"]) == 0
    summary = (tmp_path / "report" / "blimp_fixture" / "summary.md").read_text()
    assert summary.startswith("Sentence score: **zhoblimp:0.7** (bits per token^0.7)")
    assert "[sentence score=zhoblimp:0.7]" in summary
    side = str(BLIMP_OUTPUT / "runs" / "blimp_fixture")
    capsys.readouterr()
    status = main(["compare", side, side, "--model-a", "syntaxgym/smollm2-135m-instruct-q4_1",
                   "--model-b", "syntaxgym/smollm2-135m-instruct-q4_1",
                   "--sentence-score", "char", "--same-weights"])
    assert status == 0
    assert "[sentence score=char]" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_:
        main(["report", side, "--sentence-score", "bits"])
    assert exit_.value.code == 2
    assert "'bits' is not one of" in capsys.readouterr().err
