"""Tests of syntaxgym_helm.core.formula: parsing, type checking, rendering and evaluating
predictions."""

from __future__ import annotations

import json
import math
import random
import sys

import pytest

from fixtures import HU2020_DIR
from syntaxgym_helm.core.errors import EvaluationError, FormulaError
from syntaxgym_helm.core.formula import (
    EQUALITY_ATOL,
    EQUALITY_RTOL,
    MAX_DEPTH,
    MAX_FORMULA_LENGTH,
    And,
    Binary,
    Call,
    Comparison,
    Formula,
    Not,
    Number,
    Or,
    RegionRef,
    Unary,
    approx_equal,
    legacy_to_formula,
    parse_formula,
)

SUITE_FILES = sorted(HU2020_DIR.glob("*.json"))

A, B, C = RegionRef(1, "a"), RegionRef(1, "b"), RegionRef(1, "c")


def real_predictions() -> list[tuple[str, int, str, dict]]:
    found = []
    for path in SUITE_FILES:
        suite = json.loads(path.read_text())
        for index, prediction in enumerate(suite["predictions"]):
            found.append((path.name, index, prediction["formula"], suite))
    return found


REAL = real_predictions()
REAL_IDS = [f"{name}[{index}]" for name, index, _, _ in REAL]
# Used when the real suites are absent, so that the fuzz test still mutates realistic input.
FALLBACK_FORMULAS = [
    "((6;%match_sing%) < (6;%mismatch_sing%)) & ((6;%match_plural%) < (6;%mismatch_plural%))",
    "[(6;%match_sing%) < (6;%mismatch_sing%)] & [(6;%match_plural%) < (6;%mismatch_plural%)]",
    "((6;%np_mismatch%)-(6;%np_match%))+(((5;%vp_mismatch%)+(6;%vp_mismatch%))-((5;%vp_match%)+(6;%vp_match%)))>0",
    "((9;%what_nogap%) =  (9;%that_nogap%))& ((6;%what_subjgap%) =  (6;%that_subjgap%)) ",
]


def evaluate(text: str, **values: float) -> bool:
    """Evaluate ``text`` with region 1 of condition ``name`` set to ``values[name]``."""
    return parse_formula(text).evaluate(
        {RegionRef(1, name): value for name, value in values.items()}
    )


def same_tree(text: str, explicit: str) -> bool:
    return parse_formula(text).root == parse_formula(explicit).root


# ------------------------------------------------------------------------------------------
# The real suites
# ------------------------------------------------------------------------------------------


def test_all_34_hu2020_suites_are_there() -> None:
    assert len(SUITE_FILES) == 34
    assert len(REAL) >= 34


@pytest.mark.parametrize(("name", "index", "text", "suite"), REAL, ids=REAL_IDS)
def test_real_formula_parses_and_names_the_suites_conditions(
    name: str, index: int, text: str, suite: dict
) -> None:
    formula = parse_formula(text)
    conditions = {c["condition_name"] for item in suite["items"] for c in item["conditions"]}
    regions = {
        c["condition_name"]: {r["region_number"] for r in c["regions"]}
        for c in suite["items"][0]["conditions"]
    }
    assert formula.conditions <= conditions
    assert len(formula.conditions) >= 2, "a prediction contrasts at least two conditions"
    assert all(ref.region in regions[ref.condition] for ref in formula.region_refs)
    assert {str(ref.region) for ref in formula.region_refs} <= set(suite["region_meta"])
    formula.check_references(conditions, regions)


@pytest.mark.parametrize(("name", "index", "text", "suite"), REAL, ids=REAL_IDS)
def test_real_formula_round_trips_through_str(
    name: str, index: int, text: str, suite: dict
) -> None:
    formula = parse_formula(text)
    canonical = str(formula)
    again = parse_formula(canonical)
    assert again == formula
    assert again.root == formula.root
    assert str(again) == canonical


def test_real_formulas_evaluate() -> None:
    rng = random.Random(7)
    for _, _, text, _ in REAL:
        formula = parse_formula(text)
        values = {ref: rng.uniform(0, 20) for ref in formula.region_refs}
        assert formula.evaluate(values) in (True, False)


def test_number_agreement_formula() -> None:
    text = "((6;%match_sing%) < (6;%mismatch_sing%)) & ((6;%match_plural%) < (6;%mismatch_plural%))"
    formula = parse_formula(text)
    hu_style = parse_formula(
        text.replace("((6", "[(6").replace("%)) &", "%)] &").replace("%))", "%)]")
    )
    assert formula == hu_style
    assert isinstance(formula.root, And) and len(formula.root.operands) == 2
    assert formula.conditions == {"match_sing", "mismatch_sing", "match_plural", "mismatch_plural"}
    assert formula.regions == {6}
    assert (
        str(formula)
        == "[(6;%match_sing%) < (6;%mismatch_sing%)] & [(6;%match_plural%) < (6;%mismatch_plural%)]"
    )
    values = {RegionRef(6, "match_sing"): 1.0, RegionRef(6, "mismatch_sing"): 2.0,
              RegionRef(6, "match_plural"): 1.0, RegionRef(6, "mismatch_plural"): 0.5}
    assert formula.evaluate(values) is False
    values[RegionRef(6, "mismatch_plural")] = 3.0
    assert formula.evaluate(values) is True


# ------------------------------------------------------------------------------------------
# Structure, precedence and semantics
# ------------------------------------------------------------------------------------------


def test_tree_of_a_simple_comparison() -> None:
    formula = parse_formula("(3;%that%) > (3;%what%)")
    assert formula.root == Comparison((RegionRef(3, "that"), RegionRef(3, "what")), (">",))
    assert formula.region_refs == {RegionRef(3, "that"), RegionRef(3, "what")}


def test_whole_sentence_region() -> None:
    formula = parse_formula("(*;%a%) < (*;%b%)")
    assert formula.region_refs == {RegionRef(None, "a"), RegionRef(None, "b")}
    assert formula.regions == {None}
    assert formula.evaluate(lambda ref: 1.0 if ref.condition == "a" else 2.0) is True
    assert str(formula) == "(*;%a%) < (*;%b%)"


def test_whitespace_inside_region_refs_and_condition_name_characters() -> None:
    formula = parse_formula("( 12 ; %no-obj_no-comma% ) < (12;%X9%)")
    assert formula.region_refs == {RegionRef(12, "no-obj_no-comma"), RegionRef(12, "X9")}


@pytest.mark.parametrize(
    ("text", "explicit"),
    [
        ("1 + 2 * 3 < 7", "(1 + (2 * 3)) < 7"),
        ("1 * 2 + 3 < 7", "((1 * 2) + 3) < 7"),
        ("1 - 2 - 3 < 0", "((1 - 2) - 3) < 0"),
        ("8 / 4 / 2 < 0", "((8 / 4) / 2) < 0"),
        ("8 / 4 * 2 < 0", "((8 / 4) * 2) < 0"),
        ("-1 * 2 < 0", "((-1) * 2) < 0"),
        ("-(1;%a%) - 2 < 0", "((-(1;%a%)) - 2) < 0"),
        ("1 < 2 & 3 < 4", "[1 < 2] & [3 < 4]"),
        ("1 < 2 | 3 < 4 | 5 < 6", "[1 < 2] | [3 < 4] | [5 < 6]"),
        ("~ 1 < 2 & 3 < 4", "[~[1 < 2]] & [3 < 4]"),
        ("~~1 < 2", "~[~[1 < 2]]"),
        ("~ 1 + 2 < 3", "~[(1 + 2) < 3]"),
        ("abs(1 - 2) * 3 < 4", "(abs(1 - 2) * 3) < 4"),
        ("[(1;%a%) + 1] < 3", "((1;%a%) + 1) < 3"),
    ],
)
def test_precedence(text: str, explicit: str) -> None:
    assert same_tree(text, explicit)


def test_tree_shapes() -> None:
    assert parse_formula("1 - 2 - 3 < 0").root.operands[0] == Binary(
        "-", Binary("-", Number(1), Number(2)), Number(3)
    )
    assert parse_formula("-(1;%a%) * 2 < 0").root.operands[0] == Binary(
        "*", Unary("-", A), Number(2)
    )
    assert parse_formula("abs((1;%a%)) < 1").root.operands[0] == Call("abs", A)
    assert parse_formula("abs(1;%a%) < 1") == parse_formula("abs((1;%a%)) < 1")
    assert parse_formula("~(1;%a%) < 1").root == Not(Comparison((A, Number(1)), ("<",)))
    three = parse_formula("(1;%a%) < 1 & (1;%b%) < 1 & (1;%c%) < 1").root
    assert isinstance(three, And) and len(three.operands) == 3
    nested = parse_formula("[(1;%a%) < 1 & (1;%b%) < 1] & (1;%c%) < 1").root
    assert isinstance(nested, And) and isinstance(nested.operands[0], And)
    either = parse_formula("(1;%a%) < 1 | (1;%b%) < 1").root
    assert isinstance(either, Or)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2 + 3 * 4 = 14", True),
        ("8 / 4 / 2 = 1", True),
        ("10 - 4 - 3 = 3", True),
        ("--3 = 3", True),
        ("-2 * -3 = 6", True),
        ("+2 = 2", True),
        ("-(1;%a%) > 0", True),
        ("abs((1;%a%)) = 2", True),
        ("abs((1;%a%) - (1;%b%)) < 0.5", False),
        ("abs((1;%b%) - 5) < 0.5", True),
        ("~[(1;%a%) < 0]", False),
        ("~~[(1;%a%) < 0]", True),
        ("(1;%a%) < 0 | (1;%b%) > 4", True),
        ("(1;%a%) < 0 & (1;%b%) > 6", False),
        ("1.5e1 = 15 & .5 = 0.5 & 2. = 2", True),
    ],
)
def test_evaluation(text: str, expected: bool) -> None:
    assert evaluate(text, a=-2.0, b=5.0) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1 < 2 < 3", True),
        ("1 < 3 < 2", False),  # the reference would drop `< 2` and say True
        ("3 > 2 > 1", True),
        ("1 < 2 > 0", True),
        ("1 < 2 > 3", False),
        ("1 <= 1 <= 1", True),
        ("1 = 1.0001 < 2", True),
        ("1 < 2 < 3 < 2", False),
    ],
)
def test_chained_comparisons_chain_like_python(text: str, expected: bool) -> None:
    formula = parse_formula(text)
    assert isinstance(formula.root, Comparison)
    assert len(formula.root.operands) == len(formula.root.ops) + 1
    assert formula.evaluate({}) is expected


def test_exact_order_comparisons() -> None:
    assert evaluate("(1;%a%) <= (1;%b%)", a=1.0, b=1.0) is True
    assert evaluate("(1;%a%) >= (1;%b%)", a=1.0, b=1.0000001) is False
    assert evaluate("(1;%a%) < (1;%b%)", a=1.0, b=1.0) is False


# ------------------------------------------------------------------------------------------
# Approximate equality
# ------------------------------------------------------------------------------------------


def test_equality_constants() -> None:
    assert EQUALITY_RTOL == 1e-5
    assert EQUALITY_ATOL == 1e-3


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (0.0, 0.0, True),
        (0.001, 0.0, True),  # exactly atol away: inside
        (0.0010001, 0.0, False),  # just outside atol
        (-0.001, 0.0, True),
        (1000.0109, 1000.0, True),  # tolerance at b = 1000 is 0.001 + 0.01 = 0.011
        (1000.0111, 1000.0, False),
        (999.9891, 1000.0, True),
        (999.9889, 1000.0, False),
        (0.0, 0.001000005, True),  # the tolerance scales with b ...
        (0.001000005, 0.0, False),  # ... only, as in numpy.isclose
        (math.inf, math.inf, True),
        (-math.inf, math.inf, False),
        (math.inf, 1e308, False),
        (math.nan, math.nan, False),
    ],
)
def test_approx_equal_boundary(a: float, b: float, expected: bool) -> None:
    assert approx_equal(a, b) is expected


def test_equals_in_a_formula_uses_approx_equal() -> None:
    assert evaluate("(1;%a%) = (1;%b%)", a=1000.0109, b=1000.0) is True
    assert evaluate("(1;%a%) = (1;%b%)", a=1000.0111, b=1000.0) is False
    assert evaluate("(1;%a%) = (1;%b%)", a=0.0, b=0.001000005) is True
    assert evaluate("(1;%a%) = (1;%b%)", a=0.001000005, b=0.0) is False
    assert evaluate("~[(1;%a%) = (1;%b%)]", a=1.0, b=1.5) is True


def test_approx_equal_matches_numpy_isclose() -> None:
    numpy = pytest.importorskip("numpy")
    rng = random.Random(3)
    for _ in range(2000):
        b = rng.choice([0.0, rng.uniform(-2000, 2000), rng.uniform(-1, 1)])
        tolerance = EQUALITY_ATOL + EQUALITY_RTOL * abs(b)
        a = b + rng.uniform(-2, 2) * tolerance
        expected = bool(numpy.isclose(a, b, rtol=EQUALITY_RTOL, atol=EQUALITY_ATOL))
        assert approx_equal(a, b) is expected, (a, b)


# ------------------------------------------------------------------------------------------
# Malformed formulas
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "fragment", "column"),
    [
        ("", "empty formula", 1),
        ("   ", "empty formula", 1),
        ("(6;match%) < 1", "expected `%` before the condition name, found `m`", 4),
        ("(x;%a%) < 1", "bad region number `x`", 2),
        ("(0;%a%) < 1", "region number `0` is not allowed", 2),
        ("(;%a%) < 1", "missing its region number", 2),
        ("(6%a%) < 1", "expected `;` after the region number", 3),
        ("(6;%%) < 1", "empty condition name", 5),
        ("(6;%a.b%) < 1", "unexpected `.` in the condition name", 6),
        ("(6;%a b%) < 1", "expected `%` after the condition name `a`, found `b`", 7),
        ("(6;%a%] < 1", "expected `)` to close the region reference, found `]`", 7),
        ("[6;%a%] < 1", "round brackets", 1),
        ("(1234567890;%a%) < 1", "region number `1234567890` is too large", 2),
        ("(6;%a%) < $", "unexpected character `$`", 11),
        ("(6;%a%) < 1 ; 2", "unexpected character `;`", 13),
        ("(6;%a%) <", "expected a value after `<`, found the end of the formula", 10),
        ("(6;%a%) < < 1", "expected a value after `<`, found `<`", 11),
        ("& (6;%a%) < 1", "expected a value, found `&`", 1),
        ("(6;%a%) < 1 &", "expected a value after `&`", 14),
        ("() < 1", "expected a value after `(`, found `)`", 2),
        ("((6;%a%) < 1", "expected `)` to close the bracket opened at column 1, found the end", 13),
        ("((6;%a%) < 1]", "`]` does not match the `(` at column 1", 13),
        ("[(6;%a%) < 1)", "`)` does not match the `[` at column 1", 13),
        ("(6;%a%) < 1)", "unmatched `)`", 12),
        ("(6;%a%) < 1]", "unmatched `]`", 12),
        ("(6;%a%) < 1 2", "expected an operator or the end of the formula, found `2`", 13),
        ("(6;%a%) (6;%b%)", "expected an operator or the end of the formula, found `(6;%b%)`", 9),
        ("log((6;%a%)) < 1", "unknown function `log`", 1),
        ("a < 1", "unexpected name `a`", 1),
        ("abs 1 < 2", "expected `(` after `abs`, found `1`", 5),
        ("abs((6;%a%), 1) < 2", "`abs` takes exactly one argument", 12),
        ("(6;%a%) == 1", "`==` is not an operator", 9),
        ("(6;%a%) != 1", "`!=` is not an operator", 9),
        ("!(6;%a%) < 1", "`!` is not an operator", 1),
        ("1 < 2 && 2 < 3", "`&&` is not an operator", 7),
        ("(6;%a%) < 1e999", "number `1e999` is too large", 11),
        ("(6;%a%)", "is a number, not a prediction", 1),
        ("(6;%a%) - (6;%b%)", "is a number, not a prediction", 1),
        ("(6;%a%) & 1 < 2", "`&` needs a truth value, but `(6;%a%)` is a number", 1),
        ("1 < 2 | (6;%a%)", "`|` needs a truth value, but `(6;%a%)` is a number", 9),
        ("~(6;%a%)", "`~` needs a truth value, but `(6;%a%)` is a number", 2),
        ("[1 < 2] + 1 < 3", "`+` needs a number, but `[1 < 2]` is a truth value", 1),
        ("-[1 < 2] < 3", "unary `-` needs a number, but `[1 < 2]` is a truth value", 2),
        ("abs(1 < 2) < 3", "`abs` needs a number, but `1 < 2` is a truth value", 5),
        ("[1 < 2] < 3", "`<` needs a number, but `[1 < 2]` is a truth value", 1),
        ("1 < ~[1 < 2]", "`<` needs a number, but `~[1 < 2]` is a truth value", 5),
        ("1 < 2 & 3 < 4 | 5 < 6", "`&` and `|` cannot be mixed without brackets", 15),
        ("1 < 2 | 3 < 4 & 5 < 6", "`&` and `|` cannot be mixed without brackets", 15),
        ("(6;%a%) < 1 + é", "unexpected character `é`", 15),
        ("(6;%a%) < 1 + \x00", "unexpected character '\\x00'", 15),
    ],
)
def test_malformed_formula(text: str, fragment: str, column: int) -> None:
    with pytest.raises(FormulaError) as caught:
        parse_formula(text)
    error = caught.value
    assert fragment in error.message
    assert error.column == column
    assert error.hint is None or error.hint.strip()
    assert f"(column {column})" in str(error)


def test_mixing_and_or_hint_shows_both_bracketings_with_the_source_text() -> None:
    with pytest.raises(FormulaError) as caught:
        parse_formula("(1;%a%) < 1 & (1;%b%) < 1 | (1;%c%) < 1")
    hint = caught.value.hint
    assert "`[(1;%a%) < 1 & (1;%b%) < 1] | (1;%c%) < 1`" in hint
    assert "`(1;%a%) < 1 & [(1;%b%) < 1 | (1;%c%) < 1]`" in hint
    assert caught.value.column == 27
    # Each suggestion parses.
    for suggestion in hint.split("`")[1::2]:
        parse_formula(suggestion)


def test_mixing_hint_with_runs_on_both_sides() -> None:
    with pytest.raises(FormulaError) as caught:
        parse_formula("1<2 & 2<3 | 3<4 & 4<5")
    assert "`[1<2 & 2<3] | [3<4 & 4<5]`" in caught.value.hint
    assert "`1<2 & [2<3 | 3<4] & 4<5`" in caught.value.hint


@pytest.mark.parametrize(
    "value", [None, 5, 1.5, b"(1;%a%) < 1", ["(1;%a%) < 1"], {"formula": "1 < 2"}]
)
def test_non_string_is_a_formula_error(value: object) -> None:
    with pytest.raises(FormulaError, match="must be a string"):
        parse_formula(value)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------
# Limits and fuzzing
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "(" * 100_000,
        "[" * 100_000,
        "(" * 5_000,
        "(" * 5_000 + "1 < 2" + ")" * 5_000,
        "-" * 5_000 + "1 < 2",
        "~" * 5_000 + "[1 < 2]",
        "abs(" * 2_000 + "1" + ")" * 2_000 + " < 2",
        "1 < " + " + ".join(["(1;%a%)"] * 1_000),
        "1 < " + "1" * 9_000,
        "(1;%" + "a" * 20_000 + "%) < 1",
        "(1;%a%) < 1 & " * 5_000,
    ],
    ids=[
        "open100k",
        "bracket100k",
        "open5k",
        "balanced5k",
        "minus5k",
        "not5k",
        "abs2k",
        "sum1k",
        "longnumber",
        "longname",
        "long-and",
    ],
)
def test_hostile_input_gives_formula_error(text: str) -> None:
    with pytest.raises(FormulaError):
        parse_formula(text)


def test_limits_allow_reasonable_nesting() -> None:
    depth = MAX_DEPTH - 1
    formula = parse_formula("(" * depth + "(1;%a%) < 2" + ")" * depth)
    assert formula.evaluate({A: 1.0}) is True
    # The tree of `~~...~[1 < 2]` is two levels deeper than its run of `~`: 1 < 2 is a comparison of
    # numbers.
    nots = MAX_DEPTH - 2
    assert parse_formula("~" * nots + "[1 < 2]").evaluate({}) is (nots % 2 == 0)
    with pytest.raises(FormulaError, match="nested too deeply"):
        parse_formula("~" * (nots + 1) + "[1 < 2]")
    long_and = " & ".join(["(1;%a%) < 2"] * 700)
    assert len(long_and) < MAX_FORMULA_LENGTH
    assert parse_formula(long_and).evaluate({A: 1.0}) is True
    with pytest.raises(FormulaError, match="too long"):
        parse_formula(" " * (MAX_FORMULA_LENGTH + 1))


def test_a_nearly_full_caller_stack_still_gets_formula_error() -> None:
    text = "[1 < 2 & " * (MAX_DEPTH - 2) + "1 < 2" + "]" * (MAX_DEPTH - 2)

    def parse_at(depth: int) -> str:
        if depth > 0:
            return parse_at(depth - 1)
        try:
            parse_formula(text)
        except FormulaError:
            return "error"
        return "parsed"

    outcomes = {parse_at(sys.getrecursionlimit() - extra) for extra in (60, 150, 300, 600)}
    assert outcomes <= {"error", "parsed"}
    assert parse_at(0) == "parsed"


def test_deep_nesting_reports_column() -> None:
    with pytest.raises(FormulaError) as caught:
        parse_formula("(" * 5_000)
    assert caught.value.column == MAX_DEPTH + 1
    assert "nested too deeply" in caught.value.message


FUZZ_PIECES = list("()[]0123456789;%*+-/<>=&|~ .eE_,!a\t") + [
    "(1;%a%)",
    "(2;%b-c%)",
    "(*;%a%)",
    "abs(",
    "abs",
    "log(",
    "<=",
    ">=",
    "==",
    "1.5",
    "1e3",
    "%a%",
    ";%",
    "1;",
]


def check_parse_only_raises_formula_error(text: str, rng: random.Random) -> bool:
    """Parse ``text``; if it parses, check the round trip and evaluation.  True if it parsed."""
    try:
        formula = parse_formula(text)
    except FormulaError as error:
        assert error.column is None or 1 <= error.column <= len(text) + 1, (text, error)
        str(error)
        return False
    again = parse_formula(str(formula))
    assert again == formula, text
    values = {
        ref: rng.choice([0.0, 1.0, -2.5, rng.uniform(-10, 10)]) for ref in formula.region_refs
    }
    try:
        assert formula.evaluate(values) in (True, False)
    except EvaluationError:
        pass
    return True


def test_fuzz_random_strings_over_the_formula_alphabet() -> None:
    rng = random.Random(20200417)
    parsed = 0
    for _ in range(4_000):
        text = "".join(rng.choice(FUZZ_PIECES) for _ in range(rng.randint(0, 25)))
        parsed += check_parse_only_raises_formula_error(text, rng)
    assert parsed > 0, "the fuzzer never produced a valid formula: make it smarter"


def test_fuzz_mutations_of_real_formulas() -> None:
    rng = random.Random(1729)
    seeds = [text for _, _, text, _ in REAL] or FALLBACK_FORMULAS
    alphabet = "()[]0123456789;%*+-/<>=&|~ ._,a"
    parsed = 0
    for _ in range(4_000):
        text = list(rng.choice(seeds))
        for _ in range(rng.randint(1, 4)):
            where = rng.randrange(len(text) + 1)
            action = rng.choice(["delete", "insert", "replace", "swap", "duplicate"])
            if action == "delete" and where < len(text):
                del text[where]
            elif action == "insert":
                text.insert(where, rng.choice(alphabet))
            elif action == "replace" and where < len(text):
                text[where] = rng.choice(alphabet)
            elif action == "swap" and where + 1 < len(text):
                text[where], text[where + 1] = text[where + 1], text[where]
            elif action == "duplicate":
                end = min(len(text), where + rng.randint(1, 12))
                text[where:where] = text[where:end]
        parsed += check_parse_only_raises_formula_error("".join(text), rng)
    assert parsed > 0


# ------------------------------------------------------------------------------------------
# Evaluation errors
# ------------------------------------------------------------------------------------------


def test_missing_value_names_the_region() -> None:
    formula = parse_formula("(6;%a%) < (6;%b%)")
    with pytest.raises(EvaluationError, match=r"no value for \(6;%b%\)"):
        formula.evaluate({RegionRef(6, "a"): 1.0})


def test_missing_value_from_a_function() -> None:
    def lookup(ref: RegionRef) -> float:
        raise KeyError(ref)

    with pytest.raises(EvaluationError, match="no value for"):
        parse_formula("(*;%a%) < 1").evaluate(lookup)


def test_all_operands_are_evaluated_so_missing_values_are_always_reported() -> None:
    with pytest.raises(EvaluationError, match="no value"):
        parse_formula("1 < 2 | (6;%a%) < 1").evaluate({})
    with pytest.raises(EvaluationError, match="no value"):
        parse_formula("2 < 1 & (6;%a%) < 1").evaluate({})


def test_nan_value_is_an_error_not_a_silent_false() -> None:
    formula = parse_formula("(6;%a%) < (6;%b%)")
    with pytest.raises(EvaluationError) as caught:
        formula.evaluate({RegionRef(6, "a"): 1.0, RegionRef(6, "b"): math.nan})
    message = str(caught.value)
    assert "(6;%b%)" in message and "NaN" in message and "region 6 of condition `b`" in message
    assert "empty region" in message


@pytest.mark.parametrize("bad", ["1.0", None, True, object()])
def test_non_numeric_value_is_an_error(bad: object) -> None:
    with pytest.raises(EvaluationError, match="not a number"):
        parse_formula("(6;%a%) < 1").evaluate({RegionRef(6, "a"): bad})  # type: ignore[dict-item]


def test_division_by_zero() -> None:
    with pytest.raises(EvaluationError, match="division by zero"):
        parse_formula("(6;%a%) / (6;%b%) < 1").evaluate(
            {RegionRef(6, "a"): 1.0, RegionRef(6, "b"): 0.0}
        )


@pytest.mark.parametrize("value", [math.inf, -math.inf])
def test_an_infinite_value_is_an_error_not_a_comparison(value: float) -> None:
    # inf - inf would be NaN and inf > 1e300 "true": a probability of 0 decides nothing.
    for text in ("(6;%a%) - (6;%b%) < 1", "(6;%a%) > 1e300", "(6;%a%) = (6;%b%)"):
        with pytest.raises(EvaluationError, match=r"\(6;%a%\) is infinite .*probability 0"):
            parse_formula(text).evaluate({RegionRef(6, "a"): value, RegionRef(6, "b"): value})


@pytest.mark.parametrize(("text", "problem"), [
    # The case: inf = inf held, a pass decided by the overflow.
    ("(1;%a%) * 1e300 * 1e10 = (1;%b%) * 1e300 * 1e10", "overflows"),
    ("(1;%a%) / 1e-300 / 1e-10 > (1;%b%) / 1e-300 / 1e-10", "overflows"),
    ("(1;%a%) - 1e300 * 1e10 < 0", "overflows"),  # constants alone
    ("-(1;%a%) * 1e300 * 1e10 < 0", "overflows"),  # to -inf
    ("(1;%a%) * 1e-300 * 1e-300 = (1;%b%) * 1e-300 * 1e-300", "underflows to 0"),
    ("(1;%a%) / 1e300 / 1e300 = 0", "underflows to 0"),
    # A huge constant swallows the region values: 1e17 >= 1e17 whatever they are.
    ("(1;%a%) + 1e17 >= (1;%b%) + 1e17", "loses a region value to rounding"),
    ("1e17 + (1;%a%) >= 1e17 + (1;%b%)", "loses a region value to rounding"),
    ("(1;%a%) - 1e17 >= (1;%b%) - 1e17", "loses a region value to rounding"),
    ("1e17 - (1;%a%) <= 1e17 - (1;%b%)", "loses a region value to rounding"),
])
def test_arithmetic_that_rounding_decides_is_an_error_never_a_pass(text: str, problem: str) -> None:
    values = {RegionRef(1, "a"): 3.0, RegionRef(1, "b"): 3.5}
    with pytest.raises(EvaluationError, match=problem) as caught:
        parse_formula(text).evaluate(values)
    assert "cannot be decided" in str(caught.value)


@pytest.mark.parametrize(("text", "expected"), [
    ("(1;%a%) * 0 = 0", True),  # an exact zero is not an underflow
    ("(1;%a%) - (1;%a%) = 0", True),
    ("(1;%a%) + 0 < (1;%b%)", True),  # nor is adding zero
    ("0 - (1;%z%) = 0", True),  # -0.0 = 0
    ("(1;%z%) * -1 < 0", False),  # -0.0 < 0 is false, as IEEE and mathematics say
    ("(1;%z%) * -1 >= 0", True),
    ("(1;%a%) + 1e10 > (1;%b%) + 1e10", False),  # large but not swallowing: still exact enough
    ("(1;%a%) * 1e300 < (1;%b%) * 1e300", True),  # large but finite
    ("(1;%tiny%) + 100 > 100", True),  # 1e-12 survives beside 100
])
def test_exact_zeros_signed_zeros_and_large_finite_values_still_compare(text: str,
                                                                         expected: bool) -> None:
    values = {RegionRef(1, "a"): 3.0, RegionRef(1, "b"): 3.5, RegionRef(1, "z"): 0.0,
              RegionRef(1, "tiny"): 1e-12}
    assert parse_formula(text).evaluate(values) is expected


def test_values_are_fetched_once_each() -> None:
    calls: list[RegionRef] = []

    def lookup(ref: RegionRef) -> float:
        calls.append(ref)
        return 1.0

    parse_formula("(6;%a%) = (6;%a%) & (6;%a%) < 2").evaluate(lookup)
    assert calls == [RegionRef(6, "a")]


def test_evaluate_rejects_a_bad_values_argument() -> None:
    with pytest.raises(TypeError):
        parse_formula("1 < 2").evaluate(3)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------
# Rendering, equality and other API
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("(1;%a%)<(1;%b%)", "(1;%a%) < (1;%b%)"),
        ("((1;%a%) - (1;%b%)) - 1 > 0", "(1;%a%) - (1;%b%) - 1 > 0"),
        ("(1;%a%) - ((1;%b%) - 1) > 0", "(1;%a%) - ((1;%b%) - 1) > 0"),
        ("-((1;%a%) + 1) * 2 > 0", "-((1;%a%) + 1) * 2 > 0"),
        ("- - 2 = 2", "--2 = 2"),
        ("abs( (1;%a%) ) >= 0.50", "abs((1;%a%)) >= 0.5"),
        ("(1;%a%) < 1e-5", "(1;%a%) < 1e-05"),
        ("~ (1;%a%) < 1 & ~[(1;%b%) < 1 | 2 < 1]", "~[(1;%a%) < 1] & ~[[(1;%b%) < 1] | [2 < 1]]"),
        ("[[1 < 2 & 2 < 3]] & 3 < 4", "[[1 < 2] & [2 < 3]] & [3 < 4]"),
        ("(06;%a%) < 1", "(6;%a%) < 1"),
    ],
)
def test_canonical_rendering(text: str, canonical: str) -> None:
    formula = parse_formula(text)
    assert str(formula) == canonical
    assert parse_formula(canonical) == formula


def test_formula_equality_ignores_spelling_but_keeps_source() -> None:
    first, second = parse_formula("(1;%a%)<1"), parse_formula("[ (1;%a%) < 1.0 ]")
    assert first == second and hash(first) == hash(second)
    assert first.source == "(1;%a%)<1" and second.source == "[ (1;%a%) < 1.0 ]"
    assert parse_formula("(1;%a%) < 1") != parse_formula("(1;%a%) < 2")


def test_formula_is_frozen() -> None:
    formula = parse_formula("1 < 2")
    with pytest.raises(AttributeError):
        formula.root = Number(1)  # type: ignore[misc]


def test_numeric_root_is_rejected_when_constructed_directly() -> None:
    with pytest.raises(FormulaError):
        Formula("1", Number(1))


def test_region_refs_conditions_and_regions() -> None:
    formula = parse_formula("(1;%a%) + (2;%a%) < (*;%b%) & ~[(3;%c%) = 0]")
    assert formula.region_refs == {
        RegionRef(1, "a"),
        RegionRef(2, "a"),
        RegionRef(None, "b"),
        RegionRef(3, "c"),
    }
    assert formula.conditions == {"a", "b", "c"}
    assert formula.regions == {1, 2, 3, None}


def test_check_references() -> None:
    formula = parse_formula("(1;%match%) < (2;%mismatch%)")
    formula.check_references(["match", "mismatch"])
    with pytest.raises(FormulaError) as caught:
        formula.check_references(["match", "mismatches"])
    assert "unknown condition `mismatch`" in caught.value.message
    assert caught.value.column == 15
    assert "did you mean `mismatches`" in caught.value.hint
    with pytest.raises(FormulaError) as caught:
        formula.check_references(["match", "mismatch"], {"match": {1}, "mismatch": {1}})
    assert "has no region 2" in caught.value.message and caught.value.column == 15
    with pytest.raises(FormulaError) as caught:
        formula.check_references(["other"])
    assert "unknown condition `match`" in caught.value.message and caught.value.column == 1


def test_errors_can_be_located_in_a_suite() -> None:
    with pytest.raises(FormulaError) as caught:
        parse_formula("(1;%a%) <")
    located = caught.value.located(file="suite.json", path="predictions[0].formula")
    assert isinstance(located, FormulaError)
    assert str(located).startswith("suite.json:predictions[0].formula: expected a value")


# ------------------------------------------------------------------------------------------
# Legacy predictions
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("relation", "expected"),
    [
        ("greaterthan", "(3;%that%) > (3;%what%)"),
        ("lessthan", "(3;%that%) < (3;%what%)"),
        ("equals", "(3;%that%) = (3;%what%)"),
    ],
)
def test_legacy_to_formula(relation: str, expected: str) -> None:
    text = legacy_to_formula(3, "that", relation, "what")
    assert text == expected
    assert parse_formula(text).region_refs == {RegionRef(3, "that"), RegionRef(3, "what")}


def test_legacy_unknown_relation_lists_the_valid_ones() -> None:
    with pytest.raises(FormulaError) as caught:
        legacy_to_formula(3, "that", "bigger", "what")
    assert "unknown relation `bigger`" in caught.value.message
    for relation in ("lessthan", "equals", "greaterthan"):
        assert relation in caught.value.hint


@pytest.mark.parametrize(
    ("region", "left", "right"),
    [
        (0, "a", "b"),
        (True, "a", "b"),
        ("3", "a", "b"),
        (3, "a%", "b"),
        (3, "a", ""),
        (3, "a", None),
    ],
)
def test_legacy_bad_operands(region: object, left: object, right: object) -> None:
    with pytest.raises(FormulaError):
        legacy_to_formula(region, left, "lessthan", right)  # type: ignore[arg-type]
