"""Tests of syntaxgym_helm.core.suite: the suite model, read from every format, and dumped back."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from syntaxgym_helm.core.errors import SuiteError
from syntaxgym_helm.core.formula import parse_formula
from syntaxgym_helm.core.region_stats import METRICS
from syntaxgym_helm.core.suite import Suite, dumps_suite, load_suite, parse_suite
from syntaxgym_helm.core.validation import check_suite

HU2020_SUITES = 34
HU2020_SENTENCES = 3304


def small_suite(**meta: Any) -> dict[str, Any]:
    """A valid two-item, two-condition suite; ``meta`` entries replace or add meta fields."""

    def condition(name: str, verb: str) -> dict[str, Any]:
        return {"condition_name": name, "regions": [
            {"region_number": 1, "content": "The woman"},
            {"region_number": 2, "content": verb},
            {"region_number": 3, "content": "the guitar"}]}

    return {
        "meta": {"name": "agreement", "metric": "sum", **meta},
        "region_meta": {"1": "subject", "2": "verb", "3": "object"},
        "predictions": [{"type": "formula", "formula": "(2;%mismatch%) > (2;%match%)"}],
        "items": [{"item_number": number, "conditions": [condition("match", "plays"),
                                                         condition("mismatch", "play")]}
                  for number in (1, 2)],
    }


# -- the four prediction formats ----------------------------------------------------------------

EXPECTED = parse_formula("(2;%mismatch%) > (2;%match%)")


@pytest.mark.parametrize("prediction", [
    {"type": "formula", "formula": "(2;%mismatch%) > (2;%match%)"},
    {"formula": "(2;%mismatch%) > (2;%match%)"},
    "(2;%mismatch%) > (2;%match%)",
    {"region_number": 2, "l_operand": "mismatch", "relation": "greaterthan",
     "r_operand": "match"},
    "[(2;%mismatch%) > (2;%match%)]",
    {"type": "formula", "formula": "[ (2;%mismatch%)>(2;%match%) ]"},
], ids=["object", "object-without-type", "string", "legacy", "bracketed", "bracketed-object"])
def test_every_prediction_format_gives_the_same_formula(prediction: Any) -> None:
    data = small_suite()
    data["predictions"] = [prediction]
    suite = parse_suite(data)
    assert len(suite.predictions) == 1
    assert suite.predictions[0].index == 0
    assert suite.predictions[0].formula == EXPECTED
    assert str(suite.predictions[0].formula) == "(2;%mismatch%) > (2;%match%)"


@pytest.mark.parametrize("relation, op", [("lessthan", "<"), ("equals", "="),
                                          ("greaterthan", ">")])
def test_legacy_relations(relation: str, op: str) -> None:
    data = small_suite()
    data["predictions"] = [{"region_number": 2, "l_operand": "match", "relation": relation,
                            "r_operand": "mismatch"}]
    assert parse_suite(data).predictions[0].source == f"(2;%match%) {op} (2;%mismatch%)"


def test_predictions_keep_their_order_and_index() -> None:
    data = small_suite()
    data["predictions"] = ["(2;%match%) < (2;%mismatch%)",
                           {"type": "formula", "formula": "(*;%match%) < (*;%mismatch%)"}]
    suite = parse_suite(data)
    assert [p.index for p in suite.predictions] == [0, 1]
    assert [p.source for p in suite.predictions] == ["(2;%match%) < (2;%mismatch%)",
                                                     "(*;%match%) < (*;%mismatch%)"]


# -- meta ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("metric, expected", [
    *[(name, (name,)) for name in METRICS],
    (["mean", "sum"], ("mean", "sum")),
    (["max"], ("max",)),
    ("all", METRICS),
])
def test_metric_forms(metric: Any, expected: tuple[str, ...]) -> None:
    suite = parse_suite(small_suite(metric=metric))
    assert suite.meta.metrics == expected
    assert suite.meta.main_metric == expected[0]


def test_absent_metric_means_sum() -> None:
    data = small_suite()
    del data["meta"]["metric"]
    assert parse_suite(data).meta.metrics == ("sum",)


def test_meta_keeps_known_and_unknown_fields() -> None:
    data = small_suite(author="A. Author", reference="Author (2020)", description="agreement",
                       comment="a comment", tags=["agreement", "number"], version=3,
                       provenance={"from": "hu2020"})
    meta = parse_suite(data).meta
    assert (meta.name, meta.author, meta.reference, meta.description, meta.comment) == (
        "agreement", "A. Author", "Author (2020)", "agreement", "a comment")
    assert meta.tags == ("agreement", "number")
    assert meta.extra == {"version": 3, "provenance": {"from": "hu2020"}}


def test_missing_name_falls_back_to_the_file_name(tmp_path: Path) -> None:
    data = small_suite()
    del data["meta"]["name"]
    path = tmp_path / "my_suite.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert load_suite(path).name == "my_suite"


# -- the model ------------------------------------------------------------------------------------

def test_suite_accessors() -> None:
    suite = parse_suite(small_suite(), source="here.json")
    assert suite.name == "agreement" and suite.source == "here.json"
    assert len(suite) == 2 and [item.item_number for item in suite] == [1, 2]
    assert suite.condition_names == ("match", "mismatch")
    assert suite.region_meta == {1: "subject", 2: "verb", 3: "object"}
    item = suite.items[0]
    assert item.condition("mismatch").sentence == "The woman play the guitar"
    assert item.condition("match").region(2).content == "plays"
    assert item.condition("match").region(9) is None
    with pytest.raises(KeyError, match="no condition 'other'"):
        item.condition("other")
    assert suite.summary() == ("agreement: 2 items, 2 conditions, 3 regions, 1 predictions, "
                               "metrics sum")


def test_empty_regions_stay_but_are_not_in_the_sentence() -> None:
    data = small_suite()
    data["items"][0]["conditions"][0]["regions"][2]["content"] = ""
    condition = parse_suite(data).items[0].conditions[0]
    assert condition.region(3).content == ""
    assert condition.sentence == "The woman plays"


def test_whitespace_in_content_is_normalised_with_a_warning() -> None:
    data = small_suite()
    data["items"][1]["conditions"][1]["regions"][0]["content"] = "  The   woman "
    report = check_suite(data, "ws.json")
    assert report.ok
    assert report.suite is not None
    assert report.suite.items[1].conditions[1].regions[0].content == "The woman"
    assert report.suite.items[1].conditions[1].sentence == "The woman play the guitar"
    assert report.warnings == [
        "ws.json:items[1].conditions[1].regions[0].content: '  The   woman ' is scored as "
        "'The woman' (whitespace at its ends removed; tabs, line breaks and repeated spaces "
        "made one space)"]
    assert report.suite.notes == {
        2: ("condition 'mismatch' region 1: '  The   woman ' is scored as 'The woman'",)}


@pytest.mark.parametrize("space", ["\u00a0", "\u3000", "\u2028", "\u202f", " \u00a0 "])
def test_unicode_spaces_inside_a_region_are_kept_as_written(space: str) -> None:
    """They are text a model reads (a no-break space is not a space to a tokenizer): the text
    scored is the text written, as score_sentences scores it."""
    data = small_suite()
    data["items"][0]["conditions"][0]["regions"][0]["content"] = f"The{space}woman"
    report = check_suite(data, "u.json")
    assert report.ok and report.warnings == [] and report.suite is not None
    assert report.suite.items[0].conditions[0].regions[0].content == f"The{space}woman"
    assert report.suite.notes == {}


def test_a_change_that_makes_two_conditions_one_sentence_is_said() -> None:
    data = small_suite()
    conditions = data["items"][0]["conditions"]
    conditions[0]["regions"] = [dict(r) for r in conditions[1]["regions"]]
    conditions[0]["regions"][0]["content"] = conditions[1]["regions"][0]["content"].replace(
        " ", "\t")
    report = check_suite(data, "tab.json")
    assert report.ok and report.suite is not None
    (change, same) = report.suite.notes[1]
    assert "is scored as" in change
    assert same.startswith(f"conditions {conditions[0]['condition_name']!r} and "
                           f"{conditions[1]['condition_name']!r} differ as written but are the "
                           "same sentence as scored")


def test_equality_ignores_the_source() -> None:
    assert parse_suite(small_suite(), "a.json") == parse_suite(small_suite(), "b.json")
    assert parse_suite(small_suite()) != parse_suite(small_suite(name="other"))


# -- real suites -----------------------------------------------------------------------------------

def hu2020_files(hu2020_dir: Path) -> list[Path]:
    return sorted(hu2020_dir.glob("*.json"))


def test_all_hu2020_suites_load(hu2020_dir: Path) -> None:
    files = hu2020_files(hu2020_dir)
    assert len(files) == HU2020_SUITES
    suites = [load_suite(path) for path in files]
    assert [suite.name for suite in suites] == [path.stem for path in files]
    assert sum(len(s.items) * len(s.condition_names) for s in suites) == HU2020_SENTENCES
    for suite in suites:
        assert suite.meta.metrics == ("sum",)
        assert suite.predictions and all(p.formula.conditions <= set(suite.condition_names)
                                         for p in suite.predictions)
        for item in suite:
            assert {c.condition_name for c in item.conditions} == set(suite.condition_names)
            assert all(condition.sentence for condition in item.conditions)


def test_a_hu2020_suite_in_detail(hu2020_dir: Path) -> None:
    suite = load_suite(hu2020_dir / "fgd_hierarchy.json")
    assert (len(suite), len(suite.condition_names), len(suite.region_meta)) == (24, 6, 9)
    assert len(suite.predictions) == 2
    assert str(suite.predictions[0].formula) == (
        "[(6;%what_nogap%) > (6;%that_nogap%)] & [(6;%what_subjgap%) < (6;%that_subjgap%)]")
    assert suite.meta.author == suite.meta.reference == "" and suite.meta.extra == {}


@pytest.mark.parametrize("name, suite_name", [("test_in.json", "test"),
                                              ("test-unk_in.json", "test-unk v2.00000")])
def test_syntaxgym_core_legacy_fixtures(syntaxgym_core_dir: Path, name: str,
                                        suite_name: str) -> None:
    suite = load_suite(syntaxgym_core_dir / name)
    assert suite.name == suite_name
    assert suite.meta.metrics == METRICS  # "metric": "all"
    assert suite.meta.author == "Syntax James" and suite.meta.tags == ("filler-gap",)
    assert [p.source for p in suite.predictions] == ["(3;%that%) > (3;%what%)"]
    assert suite.predictions[0].formula == parse_formula("(3;%that%) > (3;%what%)")
    assert (len(suite), len(suite.condition_names), len(suite.region_meta)) == (2, 2, 6)


def test_syntaxgym_core_sample_suite(syntaxgym_core_dir: Path) -> None:
    suite = load_suite(syntaxgym_core_dir / "sample_suite.json")
    assert suite.name == "Sample subject--verb suite"
    assert suite.meta.metrics == ("sum",)
    assert [p.source for p in suite.predictions] == ["(2;%mismatch%) > (2;%match%)"]
    assert suite.items[0].condition("mismatch").sentence == "The woman play the guitar"


# -- dumping ---------------------------------------------------------------------------------------

def all_real_suite_files(hu2020_dir: Path, core: Path) -> list[Path]:
    return hu2020_files(hu2020_dir) + [core / "test_in.json", core / "test-unk_in.json",
                                       core / "sample_suite.json"]


def test_dumps_round_trips_every_real_suite(hu2020_dir: Path, syntaxgym_core_dir: Path) -> None:
    for path in all_real_suite_files(hu2020_dir, syntaxgym_core_dir):
        suite = load_suite(path)
        text = dumps_suite(suite)
        again = parse_suite(json.loads(text), source=str(path))
        assert again == suite, path
        assert dumps_suite(again) == text, path  # stable: a second dump is byte-identical


@pytest.mark.parametrize("meta", [
    {"metric": "all"},
    {"metric": ["median", "sum"]},
    {"metric": "min", "tags": ["x"], "author": "me", "comment": "c", "custom": [1, {"a": None}]},
])
def test_dumps_round_trips_meta(meta: dict[str, Any]) -> None:
    suite = parse_suite(small_suite(**meta))
    again = parse_suite(json.loads(dumps_suite(suite)))
    assert again == suite
    assert again.meta == suite.meta


def test_dumps_writes_the_syntaxgym_core_format() -> None:
    data = small_suite(metric="all")
    data["predictions"] = [{"region_number": 2, "l_operand": "mismatch",
                            "relation": "greaterthan", "r_operand": "match"}]
    dumped = json.loads(dumps_suite(parse_suite(data)))
    assert dumped["meta"] == {"name": "agreement", "metric": "all"}
    assert dumped["predictions"] == [{"type": "formula", "formula": "(2;%mismatch%) > (2;%match%)"}]
    assert dumped["region_meta"] == data["region_meta"]
    assert dumped["items"] == data["items"]


def test_parse_suite_does_not_modify_its_input() -> None:
    data = small_suite()
    data["items"][0]["conditions"][0]["regions"][0]["content"] = " The woman"
    before = copy.deepcopy(data)
    parse_suite(data)
    assert data == before


def test_load_suite_raises_a_located_error(tmp_path: Path) -> None:
    data = small_suite()
    data["items"][1]["conditions"][0]["regions"][1]["region_number"] = 7
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    assert caught.value.file == str(path)
    assert caught.value.path == "items[1].conditions[0].regions[1].region_number"
    assert "region 7 is not declared in region_meta" in str(caught.value)
    assert isinstance(parse_suite(small_suite()), Suite)


# -- reading back what the package wrote, without checks -------------------------------------------

def one_item_suites(suite: Suite) -> list[dict[str, Any]]:
    """The suite as the scenario hands it to the metric: one JSON suite per item."""
    data = suite.to_json_dict()
    items = data.pop("items")
    return [{**data, "items": [item]} for item in items]


def assert_same_suite(trusted: Suite, checked: Suite) -> None:
    assert trusted == checked
    assert trusted.meta == checked.meta  # equal fields, extra included
    assert [p.source for p in trusted.predictions] == [p.source for p in checked.predictions]
    assert trusted.condition_names == checked.condition_names


def test_the_trusting_constructor_builds_what_the_parser_builds(
        hu2020_dir: Path, syntaxgym_core_dir: Path) -> None:
    # The 842 one-item suites of the 34 Hu et al. suites took 1.2 s through parse_suite and
    # 0.1 s trusted, on 2 shared cores: what each HELM metric call and each report read saves.
    for path in all_real_suite_files(hu2020_dir, syntaxgym_core_dir):
        suite = load_suite(path)
        trusted = Suite.from_trusted_json(suite.to_json_dict(), str(path))
        assert_same_suite(trusted, suite)
        assert trusted.source == str(path)
        for one in one_item_suites(suite):
            assert_same_suite(Suite.from_trusted_json(one), parse_suite(one))


@pytest.mark.parametrize("meta", [
    {"metric": "all"},
    {"metric": ["median", "sum"]},
    {"metric": "min", "tags": ["x"], "author": "me", "reference": "r", "description": "d",
     "comment": "c", "custom": [1, {"a": None}]},
])
def test_the_trusting_constructor_reads_every_meta(meta: dict[str, Any]) -> None:
    suite = parse_suite(small_suite(**meta))
    assert_same_suite(Suite.from_trusted_json(suite.to_json_dict()), suite)


def test_suite_json_pieces_are_dumps_suite_json_made_one_item_at_a_time(hu2020_dir: Path) -> None:
    from syntaxgym_helm.core.suite import dumps_suite_json, suite_json_pieces

    data = load_suite(hu2020_dir / "fgd_hierarchy.json").to_json_dict()
    made: list[int] = []

    def items():  # each item made only when the pieces reach it
        for item in data["items"]:
            made.append(item["item_number"])
            yield item

    pieces = suite_json_pieces({**data, "items": []}, items())
    text = next(pieces)
    assert text.startswith("{\n") and made == []
    text += "".join(pieces)
    assert made == [item["item_number"] for item in data["items"]]
    assert text == dumps_suite_json(data) and json.loads(text) == data
    empty = {**data, "items": []}
    assert "".join(suite_json_pieces(empty, [])) == dumps_suite_json(empty)
    assert '"items": []' in dumps_suite_json(empty)
