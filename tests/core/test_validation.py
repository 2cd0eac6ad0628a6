"""Tests of syntaxgym_helm.core.validation: located errors for malformed suites, and a fuzz test."""

from __future__ import annotations

import json
import random
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from syntaxgym_helm.core.errors import FormulaError, SuiteError
from syntaxgym_helm.core.formula import parse_formula
from syntaxgym_helm.core.suite import dumps_suite, parse_suite
from syntaxgym_helm.core.validation import MAX_ERRORS, check_suite, check_suite_file

SOURCE = "case.json"


def small_suite() -> dict[str, Any]:
    """A valid two-item suite: conditions match/mismatch, regions 1..3, one prediction."""

    def condition(name: str, verb: str) -> dict[str, Any]:
        return {"condition_name": name, "regions": [
            {"region_number": 1, "content": "The woman"},
            {"region_number": 2, "content": verb},
            {"region_number": 3, "content": "the guitar"}]}

    return {
        "meta": {"name": "agreement", "metric": "sum"},
        "region_meta": {"1": "subject", "2": "verb", "3": "object"},
        "predictions": [{"type": "formula", "formula": "(2;%mismatch%) > (2;%match%)"}],
        "items": [{"item_number": number, "conditions": [condition("match", "plays"),
                                                         condition("mismatch", "play")]}
                  for number in (1, 2)],
    }


def region(data: dict[str, Any], item: int, condition: int, index: int) -> dict[str, Any]:
    return data["items"][item]["conditions"][condition]["regions"][index]


def predict(prediction: Any) -> Callable[[dict[str, Any]], None]:
    """A mutation that makes ``prediction`` the suite's only prediction."""
    return lambda data: data.__setitem__("predictions", [prediction])


def formula(text: Any) -> Callable[[dict[str, Any]], None]:
    return predict({"type": "formula", "formula": text})


def legacy(**fields: Any) -> Callable[[dict[str, Any]], None]:
    prediction = {"region_number": 2, "l_operand": "mismatch", "relation": "greaterthan",
                  "r_operand": "match"}
    prediction.update(fields)
    return predict({key: value for key, value in prediction.items() if value is not None})


def set_meta(**fields: Any) -> Callable[[dict[str, Any]], None]:
    return lambda data: data["meta"].update(fields)


def rename_condition(item: int, index: int, name: str) -> Callable[[dict[str, Any]], None]:
    return lambda data: data["items"][item]["conditions"][index].update(condition_name=name)


def set_region(item: int, condition: int, index: int,
               **fields: Any) -> Callable[[dict[str, Any]], None]:
    return lambda data: region(data, item, condition, index).update(fields)


def delete(*keys: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(data: dict[str, Any]) -> None:
        node: Any = data
        for key in keys[:-1]:
            node = node[key]
        del node[keys[-1]]
    return mutate


# (id, mutation, JSON path of the error, message fragment, formula column or None)
MALFORMED: list[tuple[str, Callable[[dict[str, Any]], None], str, str, int | None]] = [
    # the suite's top level
    ("missing-meta", delete("meta"), "meta", 'the suite lacks the required field "meta"', None),
    ("missing-items", delete("items"), "items", 'lacks the required field "items"', None),
    ("missing-region-meta", delete("region_meta"), "region_meta",
     'lacks the required field "region_meta"', None),
    ("predictions-not-list", lambda d: d.update(predictions={}), "predictions",
     "expected a JSON list, got a JSON object", None),
    ("meta-not-object", lambda d: d.update(meta="agreement"), "meta",
     'expected a JSON object, got a string "agreement"', None),
    # meta
    ("name-mistyped", set_meta(name=5), "meta.name", "expected a string, got an integer 5", None),
    ("metric-unknown", set_meta(metric="total"), "meta.metric", "unknown metric 'total'", None),
    ("metric-list-unknown", set_meta(metric=["sum", "avg"]), "meta.metric[1]",
     "unknown metric 'avg'", None),
    ("metric-list-not-string", set_meta(metric=["sum", ["mean"]]), "meta.metric[1]",
     "unknown metric a JSON list", None),
    ("metric-empty", set_meta(metric=[]), "meta.metric", "the metric list is empty", None),
    ("metric-twice", set_meta(metric=["sum", "sum"]), "meta.metric", "a metric is listed twice",
     None),
    ("metric-mistyped", set_meta(metric=3), "meta.metric",
     "expected a string or a JSON list, got an integer 3", None),
    ("tag-mistyped", set_meta(tags=["ok", 7]), "meta.tags[1]", "a tag must be a string", None),
    ("tags-mistyped", set_meta(tags="agreement"), "meta.tags", "expected a JSON list", None),
    # region_meta
    ("region-meta-empty", lambda d: d.update(region_meta={}), "region_meta",
     "no regions are declared", None),
    ("region-meta-gap", lambda d: d.update(region_meta={"1": "a", "2": "b", "4": "c"}),
     "region_meta", "regions must be numbered 1..3 without gaps, got 1, 2, 4", None),
    ("region-meta-from-0", lambda d: d.update(region_meta={"0": "a", "1": "b", "2": "c"}),
     "region_meta.0", "region key '0' is not a region number", None),
    ("region-meta-not-number", lambda d: d["region_meta"].update(end="end"), "region_meta.end",
     "region key 'end' is not a region number", None),
    ("region-name-mistyped", lambda d: d["region_meta"].update({"2": None}), "region_meta.2",
     "a region name must be a string, got null", None),
    # items
    ("items-empty", lambda d: d.update(items=[]), "items", "the suite has no items", None),
    ("item-not-object", lambda d: d["items"].__setitem__(1, [1]), "items[1]",
     "an item must be a JSON object, got a JSON list", None),
    ("item-number-missing", delete("items", 1, "item_number"), "items[1].item_number",
     'an item lacks the required field "item_number"', None),
    ("item-number-mistyped", lambda d: d["items"][0].update(item_number="1"),
     "items[0].item_number", 'expected an integer, got a string "1"', None),
    ("item-number-boolean", lambda d: d["items"][0].update(item_number=True),
     "items[0].item_number", "expected an integer, got a boolean true", None),
    ("item-number-twice", lambda d: d["items"][1].update(item_number=1), "items[1].item_number",
     "item number 1 is used twice (also items[0])", None),
    ("item-without-conditions", lambda d: d["items"][0].update(conditions=[]),
     "items[0].conditions", "the item has no conditions", None),
    # conditions
    ("condition-name-missing", delete("items", 0, "conditions", 1, "condition_name"),
     "items[0].conditions[1].condition_name",
     'a condition lacks the required field "condition_name"', None),
    ("condition-name-unusable", rename_condition(1, 0, "mis match"),
     "items[1].conditions[0].condition_name", "condition name 'mis match' cannot be used", None),
    ("condition-twice", rename_condition(1, 1, "match"),
     "items[1].conditions[1].condition_name",
     "condition 'match' appears twice in this item (also conditions[0])", None),
    ("condition-set-differs", rename_condition(1, 1, "other"), "items[1].conditions",
     "item 2 lacks 'mismatch' and has unexpected 'other'", None),
    ("condition-missing", delete("items", 1, "conditions", 1), "items[1].conditions",
     "item 2 lacks 'mismatch'", None),
    ("regions-mistyped", lambda d: d["items"][0]["conditions"][0].update(regions="The woman"),
     "items[0].conditions[0].regions", 'expected a JSON list, got a string "The woman"', None),
    # regions
    ("content-missing", delete("items", 0, "conditions", 0, "regions", 1, "content"),
     "items[0].conditions[0].regions[1].content",
     'a region lacks the required field "content"', None),
    ("content-mistyped", set_region(0, 1, 2, content=5),
     "items[0].conditions[1].regions[2].content", "expected a string, got an integer 5", None),
    ("content-lone-surrogate", set_region(0, 1, 1, content="pl\ud800ay"),
     "items[0].conditions[1].regions[1].content", "is not valid Unicode text", None),
    ("region-undeclared", set_region(1, 0, 2, region_number=4),
     "items[1].conditions[0].regions[2].region_number", "region 4 is not declared in region_meta",
     None),
    ("region-number-float", set_region(1, 0, 2, region_number=3.0),
     "items[1].conditions[0].regions[2].region_number", "expected an integer, got a number 3.0",
     None),
    ("region-number-boolean", set_region(0, 0, 0, region_number=True),
     "items[0].conditions[0].regions[0].region_number", "expected an integer, got a boolean true",
     None),
    ("regions-out-of-order", set_region(0, 1, 1, region_number=3),
     "items[0].conditions[1].regions[2].region_number", "region 3 is listed twice", None),
    ("regions-swapped", lambda d: d["items"][0]["conditions"][1]["regions"].insert(
        0, d["items"][0]["conditions"][1]["regions"].pop(1)),
     "items[0].conditions[1].regions[1].region_number", "region 1 comes after region 2", None),
    ("region-twice", set_region(0, 1, 2, region_number=2),
     "items[0].conditions[1].regions[2].region_number", "region 2 is listed twice", None),
    ("sentence-empty",
     lambda d: [r.update(content="  ") for r in d["items"][0]["conditions"][0]["regions"]],
     "items[0].conditions[0].regions", "the sentence is empty", None),
    ("region-read-but-absent", delete("items", 1, "conditions", 1, "regions", 1),
     "items[1].conditions[1].regions",
     "region 2 is missing, but prediction 0 reads (2;%mismatch%)", None),
    # predictions
    ("predictions-empty", lambda d: d.update(predictions=[]), "predictions",
     "the suite has no predictions", None),
    ("prediction-mistyped", predict(5), "predictions[0]",
     "a prediction must be a formula string or object, got an integer 5", None),
    ("prediction-type-unknown", predict({"type": "regex", "formula": "x"}), "predictions[0].type",
     "unknown prediction type 'regex'", None),
    ("prediction-formula-missing", predict({"type": "formula"}), "predictions[0].formula",
     'a prediction lacks the required field "formula"', None),
    ("prediction-formula-mistyped", formula(3), "predictions[0].formula",
     "expected a string, got an integer 3", None),
    ("unknown-condition", formula("(2;%mismatch%) > (2;%mach%)"), "predictions[0].formula",
     "unknown condition `mach` in (2;%mach%)", 18),
    ("unknown-region", formula("(2;%mismatch%) > (5;%match%)"), "predictions[0].formula",
     "condition `match` has no region 5", 18),
    ("unknown-condition-string", predict("(2;%other%) < 1"), "predictions[0]",
     "unknown condition `other`", 1),
    ("legacy-relation", legacy(relation="lessthanorequal"), "predictions[0].relation",
     "unknown relation `lessthanorequal`", None),
    ("legacy-field-missing", legacy(r_operand=None), "predictions[0].r_operand",
     'a legacy prediction lacks the required field "r_operand"', None),
    ("legacy-region-0", legacy(region_number=0), "predictions[0].region_number",
     "bad region number an integer 0", None),
    ("legacy-operand", legacy(l_operand="mis match"), "predictions[0].l_operand",
     "bad condition name 'mis match'", None),
    ("legacy-unknown-condition", legacy(r_operand="mach"), "predictions[0]",
     "unknown condition `mach`", None),
    ("legacy-unknown-region", legacy(region_number=7), "predictions[0]",
     "condition `mismatch` has no region 7", None),
    # formula syntax, with the column
    ("formula-double-operator", formula("(2;%mismatch%) >> (2;%match%)"),
     "predictions[0].formula", "expected a value after `>`, found `>`", 17),
    ("formula-unclosed-region", formula("(2;%mismatch%) > (2;%match%"), "predictions[0].formula",
     "expected `)` to close the region reference", 28),
    ("formula-equals-equals", formula("(2;%mismatch%) == (2;%match%)"), "predictions[0].formula",
     "`==` is not an operator", 16),
    ("formula-percent-missing", formula("(2;mismatch%) > (2;%match%)"), "predictions[0].formula",
     "expected `%` before the condition name", 4),
    ("formula-unclosed-bracket", formula("[(2;%mismatch%) > (2;%match%)"),
     "predictions[0].formula", "expected `]` to close the bracket opened at column 1", 30),
    ("formula-unmatched-close", formula("(2;%mismatch%) > (2;%match%))"),
     "predictions[0].formula", "unmatched `)`", 29),
    ("formula-not-a-prediction", formula("(2;%mismatch%) + (2;%match%)"),
     "predictions[0].formula", "is a number, not a prediction", 1),
    ("formula-region-0", formula("(0;%match%) > 1"), "predictions[0].formula",
     "region number `0` is not allowed", 2),
    ("formula-empty", formula(""), "predictions[0].formula", "empty formula", 1),
    ("formula-mixed-logic", predict("(2;%match%) > 1 & (2;%match%) < 9 | (1;%match%) > 0"),
     "predictions[0]", "`&` and `|` cannot be mixed without brackets", 35),
    ("formula-bad-character", formula("(2;%mismatch%) $ 1"), "predictions[0].formula",
     "unexpected character `$`", 16),
    ("formula-unknown-function", formula("max(2;%match%) > 1"), "predictions[0].formula",
     "unknown function `max`", 1),
]


def test_there_are_enough_distinct_malformed_cases() -> None:
    assert len(MALFORMED) >= 25
    assert len({case[0] for case in MALFORMED}) == len(MALFORMED)
    assert len({case[3] for case in MALFORMED}) >= 25  # distinct messages, not one repeated


@pytest.mark.parametrize("mutate, path, fragment, column",
                         [case[1:] for case in MALFORMED], ids=[case[0] for case in MALFORMED])
def test_malformed_suite_gives_one_located_error(
        mutate: Callable[[dict[str, Any]], None], path: str, fragment: str,
        column: int | None) -> None:
    data = small_suite()
    mutate(data)
    report = check_suite(data, SOURCE)
    assert report.suite is None and not report.ok
    assert [(e.path, e.message) for e in report.errors if fragment in e.message][:1] == [
        (path, report.errors[0].message)], report.errors
    # one mistake gives one error, not a cascade of knock-on errors
    assert len(report.errors) == 1, [str(e) for e in report.errors]
    error = report.errors[0]
    assert error.file == SOURCE
    assert error.column == column
    assert str(error).startswith(f"{SOURCE}:{path}: ")
    with pytest.raises(SuiteError) as caught:
        parse_suite(data, SOURCE)
    assert (caught.value.path, caught.value.message) == (path, error.message)


def test_the_top_level_must_be_an_object() -> None:
    for data in ([], "suite", None, 3):
        report = check_suite(data, SOURCE)
        assert [(e.path, e.file) for e in report.errors] == [(None, SOURCE)]
        assert "the suite must be a JSON object" in report.errors[0].message


def test_items_conditions_and_regions_with_extra_fields_read_as_the_usual_ones() -> None:
    """The usual item, condition and region (exactly their two fields) are built without dacite;
    with a field more, dacite builds them: the same suite either way."""
    usual = parse_suite(small_suite(), SOURCE)
    data = small_suite()
    for item in data["items"]:
        item["comment"] = "extra"
        for condition in item["conditions"]:
            condition["comment"] = "extra"
            for region_data in condition["regions"]:
                region_data["comment"] = "extra"
    assert parse_suite(data, SOURCE) == usual


def test_errors_carry_a_hint() -> None:
    data = small_suite()
    data["items"][1]["conditions"][1]["condition_name"] = "mismatc"
    data["predictions"] = ["(2;%mismatch%) > (2;%mach%)"]
    errors = check_suite(data, SOURCE).errors
    assert errors[0].hint == "every item must have the same conditions"
    assert errors[1].hint and "did you mean `match`?" in errors[1].hint
    assert str(errors[1]).endswith("did you mean `match`?")


def test_formula_errors_are_formula_errors() -> None:
    data = small_suite()
    formula("(2;%mismatch%) >> 1")(data)
    with pytest.raises(FormulaError):
        parse_suite(data)


def test_all_errors_are_reported_in_order() -> None:
    data = small_suite()
    data["meta"]["metric"] = "avg"
    data["region_meta"]["5"] = "extra"
    data["items"][0]["conditions"][1]["regions"][0]["content"] = None
    data["items"][1]["item_number"] = 1
    data["predictions"].append("(2;%match%) >")
    paths = [error.path for error in check_suite(data, SOURCE).errors]
    assert paths == ["meta.metric", "region_meta", "items[0].conditions[1].regions[0].content",
                     "items[1].item_number", "predictions[1]"]


def test_errors_stop_at_the_limit() -> None:
    data = small_suite()
    for item in data["items"]:
        for condition in item["conditions"]:
            condition["regions"] += [{"region_number": n, "content": "x"} for n in range(4, 40)]
    report = check_suite(data, SOURCE)
    assert len(report.errors) == MAX_ERRORS
    assert report.warnings[-1] == f"{SOURCE}: stopped after {MAX_ERRORS} errors"
    assert all("is not declared in region_meta" in e.message for e in report.errors)


def test_whitespace_is_a_warning_not_an_error() -> None:
    data = small_suite()
    region(data, 0, 0, 0)["content"] = "The\twoman "
    region(data, 0, 1, 2)["content"] = "the  guitar"
    report = check_suite(data, SOURCE)
    assert report.ok and report.suite is not None
    assert [w.split(": ")[0] for w in report.warnings] == [
        f"{SOURCE}:items[0].conditions[0].regions[0].content",
        f"{SOURCE}:items[0].conditions[1].regions[2].content"]
    assert report.suite.items[0].conditions[0].sentence == "The woman plays the guitar"


def test_a_missing_name_is_a_warning() -> None:
    data = small_suite()
    del data["meta"]["name"]
    report = check_suite(data, "suites/agree.json")
    assert report.ok and report.suite is not None and report.suite.name == "agree"
    assert report.warnings == ["suites/agree.json:meta.name: no suite name; using the file name "
                               "'agree'"]


# -- the older format: formulas in meta.string_predictions ---------------------------------------

#: number_prep's formula as the first JSON release of the Hu et al. suites wrote it
#: (github.com/cpllab/syntactic-generalization, commit 069e007, test_suites/json/number_prep.json).
OLD_NUMBER_PREP = ("[(6;%match_sing%) < (6;%mismatch_sing%)] & "
                   "[(6;%match_plural%) < (6;%mismatch_plural%)]")
OLD_FORMAT_NOTE = ("meta.string_predictions: predictions read from meta.string_predictions (an "
                   "older suite format, with an empty \"predictions\" list)")


def old_format(data: dict[str, Any], formulas: Any) -> dict[str, Any]:
    """``data`` in the shape of that release: formulas in ``meta.string_predictions``, an empty
    ``predictions`` list, and a ``metric_value`` (a past model's surprisal) in every region."""
    data["meta"]["string_predictions"] = formulas
    data["predictions"] = []
    for item in data["items"]:
        for condition in item["conditions"]:
            for number, region_data in enumerate(condition["regions"]):
                region_data["metric_value"] = {"sum": 1.5 * number}
    return data


def test_an_older_hu2020_suite_reads_its_string_predictions(hu2020_dir: Path,
                                                           tmp_path: Path) -> None:
    current = hu2020_dir / "number_prep.json"
    path = tmp_path / "number_prep.json"
    path.write_text(json.dumps(old_format(json.loads(current.read_text()), [OLD_NUMBER_PREP]),
                               indent=4))
    report = check_suite_file(path)
    assert report.ok and report.suite is not None, report.errors
    assert report.warnings == [f"{path}:{OLD_FORMAT_NOTE}"]
    assert report.suite == check_suite_file(current).suite  # same items, same prediction
    assert [p.source for p in report.suite.predictions] == [OLD_NUMBER_PREP]
    assert "string_predictions" not in report.suite.meta.extra  # now they are the predictions
    assert json.loads(dumps_suite(report.suite))["predictions"] == [
        {"type": "formula", "formula": OLD_NUMBER_PREP}]


def test_string_predictions_without_a_predictions_key_are_read_too() -> None:
    data = old_format(small_suite(), ["(2;%mismatch%) > (2;%match%)"])
    del data["predictions"]
    report = check_suite(data, SOURCE)
    assert report.ok and report.warnings == [f"{SOURCE}:{OLD_FORMAT_NOTE}"]


def test_errors_in_string_predictions_are_located_there() -> None:
    data = old_format(small_suite(), ["(2;%mismatch%) > (2;%match%)", "(2;%mismatch%) >"])
    (error,) = check_suite(data, SOURCE).errors
    assert error.path == "meta.string_predictions[1]"
    bad = old_format(small_suite(), "(2;%mismatch%) > (2;%match%)")
    (error,) = check_suite(bad, SOURCE).errors
    assert error.path == "meta.string_predictions"
    assert error.message == ("expected a JSON list of formulas, got a string "
                             "\"(2;%mismatch%) > (2;%match%)\"")
    empty = old_format(small_suite(), [])
    assert [(e.path, e.message) for e in check_suite(empty, SOURCE).errors] == [
        ("meta.string_predictions", "the suite has no predictions")]


def test_filled_predictions_win_over_string_predictions() -> None:
    data = small_suite()
    data["meta"]["string_predictions"] = ["(2;%match%) > (2;%mismatch%)"]
    report = check_suite(data, SOURCE)
    assert report.ok and report.suite is not None and not report.warnings
    assert [p.source for p in report.suite.predictions] == ["(2;%mismatch%) > (2;%match%)"]
    assert report.suite.meta.extra == {"string_predictions": ["(2;%match%) > (2;%mismatch%)"]}


# -- files ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("content, fragment", [
    (b"", "not valid JSON: Expecting value at line 1, column 1"),
    (b"{\"meta\": ", "not valid JSON: Expecting value at line 1, column 10"),
    (b"\xff\xfe{}", "cannot read the file"),
    (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    (b"1" * 5000, "the number at line 1, column 1 is too large: it has 5000 digits"),
    (b"[1, 2]", "the suite must be a JSON object, got a JSON list"),
], ids=["empty", "truncated", "not-utf8", "deep", "huge-int", "list"])
def test_bad_files(tmp_path: Path, content: bytes, fragment: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    report = check_suite_file(path)
    assert len(report.errors) == 1 and report.suite is None
    assert fragment in report.errors[0].message
    assert report.errors[0].file == str(path)


def test_unreadable_paths(tmp_path: Path) -> None:
    for path in (tmp_path / "missing.json", tmp_path):
        error = check_suite_file(path).errors[0]
        assert error.file == str(path) and "cannot read the file" in error.message


def test_a_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(small_suite()).encode())
    assert check_suite_file(path).ok


# -- fuzz: nothing but SuiteError, whatever the input -------------------------------------------

def expect_suite_error_only(data: Any, case: str) -> None:
    """check_suite and parse_suite raise nothing but SuiteError, and agree with each other."""
    try:
        report = check_suite(data, "fuzz.json")
    except Exception as exc:  # noqa: BLE001 - the point of the test
        pytest.fail(f"check_suite raised {exc!r} on {case}: {json.dumps(data)[:300]}")
    for error in report.errors:
        assert isinstance(error, SuiteError) and error.file == "fuzz.json"
        str(error)
    try:
        suite = parse_suite(data, "fuzz.json")
    except SuiteError as exc:
        assert exc == report.errors[0]
        return
    except Exception as exc:  # noqa: BLE001
        pytest.fail(f"parse_suite raised {exc!r} on {case}: {json.dumps(data)[:300]}")
    assert report.ok and report.suite == suite
    assert parse_suite(json.loads(dumps_suite(suite))) == suite


def random_scalar(rng: random.Random) -> Any:
    return rng.choice([
        None, True, False, 0, 1, 2, 3, -1, 10**30, 1.5, float("inf"), "", " ", "sum", "all",
        "mean", "match", "mismatch", "(2;%match%) > (2;%mismatch%)", "(2;%match%) >", "1",
        "formula", "lessthan", "The  woman ", "\u00e9\u2028", "".join(
            rng.choice(string.printable) for _ in range(rng.randint(0, 12)))])


KEYS = ["meta", "region_meta", "predictions", "items", "name", "metric", "tags", "1", "2", "3",
        "0", "item_number", "conditions", "condition_name", "regions", "region_number",
        "content", "type", "formula", "relation", "l_operand", "r_operand", "x"]


def random_json(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.random()
    if depth >= 4 or kind < 0.4:
        return random_scalar(rng)
    if kind < 0.7:
        return [random_json(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {rng.choice(KEYS): random_json(rng, depth + 1) for _ in range(rng.randint(0, 5))}


def random_suite_like(rng: random.Random) -> Any:
    """Suite-shaped JSON whose parts are each, at random, right or random; some are all right."""
    bad = rng.choice([0.0, 0.01, 0.05, 0.2])

    def maybe(good: Callable[[], Any]) -> Any:
        return random_json(rng, 2) if rng.random() < bad else good()

    def region_(number: int) -> Any:
        return {"region_number": maybe(lambda: number),
                "content": maybe(lambda: rng.choice(["a", "", " b  c", "d"]))}

    def condition(name: str) -> Any:
        return {"condition_name": maybe(lambda: name),
                "regions": maybe(lambda: [maybe(lambda n=n: region_(n)) for n in (1, 2, 3)])}

    def item(number: int) -> Any:
        return {"item_number": maybe(lambda: number),
                "conditions": maybe(lambda: [maybe(lambda c=c: condition(c)) for c in "abc"])}

    def prediction() -> Any:
        text = rng.choice(["(1;%a%) < (1;%b%)", "[(2;%a%) > (2;%c%)] & (*;%b%) < 0",
                           "(3;%a%) = (3;%b%)", "(1;%a%) <", "(9;%a%) > 1", "(1;%z%) > 1"])
        return rng.choice([text, {"type": "formula", "formula": text},
                           {"region_number": rng.randint(0, 4), "l_operand": "a",
                            "relation": rng.choice(["lessthan", "equals", "greaterthan", "x"]),
                            "r_operand": rng.choice(["b", "c", "z"])}])

    suite = {
        "meta": maybe(lambda: {"name": maybe(lambda: "s"),
                               "metric": maybe(lambda: rng.choice(["sum", "all", ["min"]]))}),
        "region_meta": maybe(lambda: {"1": "r1", "2": "r2", "3": "r3"}),
        "predictions": maybe(lambda: [maybe(prediction) for _ in range(rng.randint(1, 2))]),
        "items": maybe(lambda: [maybe(lambda n=n: item(n)) for n in range(1, rng.randint(2, 4))]),
    }
    return {key: value for key, value in suite.items() if rng.random() >= bad}


def containers(node: Any) -> list[tuple[Any, Any]]:
    """Every (container, key) pair in a JSON tree."""
    found: list[tuple[Any, Any]] = []
    stack = [node]
    while stack:
        current = stack.pop()
        keys = (list(current) if isinstance(current, dict)
                else range(len(current)) if isinstance(current, list) else [])
        for key in keys:
            found.append((current, key))
            stack.append(current[key])
    return found


def mutate(data: Any, rng: random.Random) -> None:
    """Delete a key, change a value's type, or swap two values, one to three times."""
    for _ in range(rng.randint(1, 3)):
        places = containers(data)
        if not places:
            return
        container, key = rng.choice(places)
        action = rng.randrange(4)
        if action == 0:
            del container[key]
        elif action == 1:
            container[key] = random_json(rng, 3)
        elif action == 2:
            other, other_key = rng.choice(places)
            try:
                container[key], other[other_key] = other[other_key], container[key]
            except (KeyError, IndexError):  # the first swap moved the second place away
                pass
        elif isinstance(container[key], (list, dict)):
            container[key] = random_scalar(rng)
        else:
            container[key] = [container[key]]


@pytest.fixture(scope="module")
def real_suites(hu2020_dir: Path, syntaxgym_core_dir: Path) -> list[str]:
    """Real suites in every format, cut to two items so the fuzz stays fast, as JSON text."""
    suites = []
    for path in (hu2020_dir / "fgd_hierarchy.json", hu2020_dir / "mvrr.json",
                 syntaxgym_core_dir / "test_in.json", syntaxgym_core_dir / "sample_suite.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        data["items"] = data["items"][:2]
        suites.append(json.dumps(data))
    return suites


FORMULA_PIECES = ["(1;%a%)", "(*;%b%)", "(2 ; %c-d% )", "[", "]", "(", ")", "<", ">", "<=",
                  ">=", "=", "==", "+", "-", "*", "/", "&", "|", "~", "abs", "abs(", "1", "0.5",
                  "1e999", ".", ";", "%", "%a%", " ", "\t", "x", "(0;%a%)", "(99999999999;%a%)",
                  "\u00e9", "\x00"]


def random_formula(rng: random.Random) -> str:
    if rng.random() < 0.3:
        return "".join(rng.choice(string.printable) for _ in range(rng.randint(0, 30)))
    return "".join(rng.choice(FORMULA_PIECES) for _ in range(rng.randint(0, 15)))


def test_fuzz_random_input_raises_only_suite_errors(tmp_path: Path) -> None:
    """Random JSON, random suite-shaped JSON, random bytes and random formulas."""
    rng = random.Random(20200705)
    valid = 0
    for case in range(800):
        expect_suite_error_only(random_json(rng), f"random JSON {case}")
    for case in range(1500):
        data = random_suite_like(rng)
        expect_suite_error_only(data, f"random suite-like JSON {case}")
        valid += check_suite(data).ok
    path = tmp_path / "fuzz.json"
    for _ in range(200):
        path.write_bytes(bytes(rng.randrange(256) for _ in range(rng.randint(0, 200))))
        expect_file_suite_error_only(path)
    for _ in range(3000):
        text = random_formula(rng)
        try:
            parse_formula(text)
        except FormulaError as exc:
            assert exc.column is None or 1 <= exc.column <= len(text) + 1, (text, exc)
        except Exception as exc:  # noqa: BLE001
            pytest.fail(f"parse_formula raised {exc!r} on {text!r}")
    assert valid > 100  # the generator reaches valid suites too, so both outcomes are exercised


def test_fuzz_mutated_real_suites_raise_only_suite_errors(real_suites: list[str],
                                                          tmp_path: Path) -> None:
    """Real suites with keys deleted, types changed and values swapped, or bytes garbled."""
    rng = random.Random(20200706)
    for case in range(2000):
        data = json.loads(rng.choice(real_suites))
        mutate(data, rng)
        expect_suite_error_only(data, f"mutated real suite {case}")
    path = tmp_path / "fuzz.json"
    for _ in range(200):
        text = bytearray(rng.choice(real_suites).encode())
        for _ in range(rng.randint(1, 5)):
            text[rng.randrange(len(text))] = rng.randrange(256)
        path.write_bytes(bytes(text))
        expect_file_suite_error_only(path)


def expect_file_suite_error_only(path: Path) -> None:
    try:
        report = check_suite_file(path)
    except Exception as exc:  # noqa: BLE001
        pytest.fail(f"check_suite_file raised {exc!r} on {path.read_bytes()[:200]!r}")
    assert report.ok == (report.suite is not None)
    assert all(error.file == str(path) for error in report.errors)


#: Regions the quick path takes, and each way one can be wrong or need a word (region_meta 1..3).
_REGIONS = {
    "usual": {"region_number": 2, "content": "the keys"},
    "empty": {"region_number": 3, "content": ""},
    "extra spaces": {"region_number": 2, "content": " the  keys"},
    "undeclared": {"region_number": 4, "content": "keys"},
    "boolean number": {"region_number": True, "content": "keys"},
    "too long a number": {"region_number": 10 ** 19, "content": "keys"},
    "lone surrogate": {"region_number": 1, "content": "key\ud800"},
    "text not a string": {"region_number": 1, "content": 5},
    "a third field": {"region_number": 1, "content": "keys", "note": ""},
    "not an object": ["keys"],
}


@pytest.mark.parametrize("name", _REGIONS)
def test_the_quick_path_takes_a_region_only_where_the_full_check_says_nothing(name: str) -> None:
    """The validator's quick path for the usual region (it skips building the region's path)
    gives the region the full check gives, and leaves to it every region the full check
    reports, normalises or has to build with dacite (a third field)."""
    from syntaxgym_helm.core.validation.checker import Checker
    from syntaxgym_helm.core.validation.structure import _check_region, _usual_region

    meta = {1: "subject", 2: "verb", 3: "object"}
    checker = Checker("suite.json")
    full = _check_region(checker, _REGIONS[name], "items[0].conditions[0].regions[0]", meta)
    silent = not checker.report.errors and not checker.report.warnings
    quick = _usual_region(_REGIONS[name], meta, {})
    assert quick is None or (quick == full and silent), (name, quick, full)
    assert (quick is not None) == (name in ("usual", "empty"))  # the rest: checked at length
    # The regions a suite's check has met are remembered: one met before is that region again,
    # and the memory lets nothing else through (True == 1 as a key of a dict).
    known: dict = {}
    for number in (1, 2, 3):
        for content in ("keys", "the keys", ""):
            _usual_region({"region_number": number, "content": content}, meta, known)
    assert len(known) == 9
    again = _usual_region(_REGIONS[name], meta, known)
    assert again == quick and (again is None or again is known[again.region_number,
                                                                  again.content])
