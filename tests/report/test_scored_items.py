"""The metric keeps what it found for every item in the run folder, and reports read that instead
of scoring the run again (``syntaxgym_helm/harness/scored_items.py``).

The round trip runs without a model; the rest on the session's real helm-run output
(:func:`test_report.produce_runs`).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from syntaxgym_helm.core.item_evaluation import (
    ConditionValues,
    ItemEvaluation,
    PredictionOutcome,
)
from syntaxgym_helm.harness.run_format import RUN_FORMAT_VERSION, WRITTEN_BY
from syntaxgym_helm.harness.scored_items import (
    FILE_NAME,
    read_scored_items,
    write_scored_items,
)
from syntaxgym_helm.report.build import summary_text
from syntaxgym_helm.report.runs import find_run_dirs, load_run
from test_report import SMOLLM_FAST, Runs, produce_runs

SUITE = {
    "meta": {"name": "tiny", "metric": "sum", "UID": "x"},
    "region_meta": {"1": "np", "2": "verb"},
    "predictions": [{"type": "formula", "formula": "(2;%good%) < (2;%bad%)"}],
    "items": [{"item_number": n, "conditions": [
        {"condition_name": c, "regions": [{"region_number": 1, "content": "The dog"},
                                          {"region_number": 2, "content": w}]}
        for c, w in (("good", "barks."), ("bad", "bark."))]} for n in (1, 2)],
}


def _evaluation(number: int, holds: bool | None, problems: tuple[str, ...] = ()
                ) -> ItemEvaluation:
    values = tuple(ConditionValues(c, ("<|endoftext|>", "The", " dog", " bark" + s),
                                   (None, 1, 1, 2), (math.nan, 9.5, 3.25, 0.1 + len(s)),
                                   {3: "its text lies inside a token of region 2"} if s == "."
                                   else {})
                   for c, s in (("good", "s."), ("bad", ".")))
    outcome = PredictionOutcome(0, "(2;%good%) < (2;%bad%)", holds,
                                None if holds is not None else "no value", tie=holds is True)
    return ItemEvaluation(number, "sum", values, () if problems else (outcome,), problems)


def test_round_trip_gives_back_every_item_exactly(tmp_path: Path) -> None:
    scored = [("item1", _evaluation(1, True)),
              ("item2", _evaluation(2, None, ("condition 'bad': the request failed: boom",)))]
    path = write_scored_items(tmp_path, "exclude", SUITE, scored,
                              run={"name": "syntaxgym:suite=tiny", "adapter_spec_sha256": "ab"},
                              notes=[(), ("condition 'bad' region 2: 'bark. ' is scored as "
                                          "'bark.'",)])
    assert path == tmp_path / FILE_NAME and not list(tmp_path.glob("*.partial"))
    json.loads(path.read_text(), parse_constant=pytest.fail)  # plain JSON: no NaN
    kept = read_scored_items(path)
    first_token, suite, ids, evaluations = (kept.first_token, kept.suite, kept.instance_ids,
                                            kept.evaluations)
    assert first_token == "exclude" and ids == ("item1", "item2")
    assert kept.format_version == RUN_FORMAT_VERSION and kept.written_by == WRITTEN_BY
    assert kept.run == {"name": "syntaxgym:suite=tiny", "adapter_spec_sha256": "ab",
                        "instances": 2}
    assert kept.notes == ((), ("condition 'bad' region 2: 'bark. ' is scored as 'bark.'",))
    assert kept.extras == ({}, {})
    assert suite is not None
    assert suite.name == "tiny" and [i.item_number for i in suite.items] == [1, 2]
    assert suite.to_json_dict() == SUITE
    # NaN marks tokens outside every region: repr compares it as it compares the numbers.
    assert repr(evaluations) == repr(tuple(e for _, e in scored))
    assert evaluations[1].scorable is False and evaluations[0].passed is True
    assert evaluations[0].predictions[0].tie is True
    assert evaluations[0].conditions[1].unmeasured == {
        3: "its text lies inside a token of region 2"
    }


def test_an_infinite_surprisal_comes_back_as_one(tmp_path: Path) -> None:
    """A token given probability 0 has an infinite surprisal: json writes Infinity, which orjson
    (the fast reader) refuses; the reader falls back to json and gives it back exactly."""
    evaluation = _evaluation(1, False)
    condition = evaluation.conditions[0]
    infinite = ConditionValues(condition.condition_name, condition.tokens, condition.regions,
                               (math.nan, 9.5, math.inf, 0.1))
    evaluation = ItemEvaluation(1, "sum", (infinite, evaluation.conditions[1]),
                                evaluation.predictions, ())
    path = write_scored_items(tmp_path, "error", SUITE, [("item1", evaluation)])
    assert "Infinity" in path.read_text()
    (read,) = read_scored_items(path).evaluations
    assert read.conditions[0].surprisals[2] == math.inf
    assert repr(read) == repr(evaluation)


def test_fields_a_feature_adds_are_kept_and_read_back(tmp_path: Path) -> None:
    """Per item and per condition, ``extras`` hold what other features add, by name; a reader
    that does not know a key still reads the rest."""
    path = write_scored_items(tmp_path, "error", SUITE, [("item1", _evaluation(1, True))])
    data = json.loads(path.read_text())
    data["items"][0]["extras"] = {"word_boundary": {"bits": 0.5}}
    data["items"][0]["conditions"][0][5] = {"sentence_bits": 12.5}
    path.write_text(json.dumps(data))
    kept = read_scored_items(path)
    assert kept.extras == ({"word_boundary": {"bits": 0.5}},)
    assert repr(kept.evaluations[0]) == repr(_evaluation(1, True))


def test_another_format_is_refused(tmp_path: Path) -> None:
    path = tmp_path / FILE_NAME
    path.write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(ValueError, match="something-else"):
        read_scored_items(path)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    return produce_runs(tmp_path_factory)


@pytest.mark.slow
def test_every_run_keeps_its_items_and_reading_them_equals_scoring_again(runs: Runs) -> None:
    run_dirs = find_run_dirs(runs.output)
    assert run_dirs and all((run_dir / FILE_NAME).is_file() for run_dir in run_dirs)
    kept = [load_run(run_dir) for run_dir in run_dirs]
    again = [load_run(run_dir, rescore=True) for run_dir in run_dirs]
    assert {run.model for run in kept} >= {SMOLLM_FAST}
    for a, b in zip(kept, again, strict=False):
        assert (a.model, a.suite_name, a.prefix, a.first_token, a.context, a.instance_ids) == (
            b.model, b.suite_name, b.prefix, b.first_token, b.context, b.instance_ids)
        assert a.suite == b.suite and a.suite.meta == b.suite.meta
        assert repr(a.scores) == repr(b.scores)
    assert summary_text(kept) == summary_text(again)
