"""Which conditions a suite's predictions call better or worse (the rule of context=acceptable)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from fixtures import HU2020_DIR as HU2020
from syntaxgym_helm.core.context_polarity import (
    RULE_SIGNS,
    RULE_TWO_CONDITIONS,
    comparisons,
    linear_terms,
    polarity,
)
from syntaxgym_helm.core.formula import parse_formula, render
from syntaxgym_helm.core.suite import load_suite, parse_suite

BUILTIN = Path(__file__).resolve().parents[2] / "syntaxgym_helm" / "suites"


def _pairs(formula: str) -> list[tuple[str, str]]:
    return [(render(low), render(high)) for low, high in comparisons(parse_formula(formula).root)]


def test_comparisons_read_direction_chains_and_negation() -> None:
    assert _pairs("(1;%a%) < (1;%b%)") == [("(1;%a%)", "(1;%b%)")]
    assert _pairs("(1;%a%) >= (1;%b%)") == [("(1;%b%)", "(1;%a%)")]
    assert _pairs("(1;%a%) < (1;%b%) < (1;%c%)") == [("(1;%a%)", "(1;%b%)"),
                                                     ("(1;%b%)", "(1;%c%)")]
    assert _pairs("~[(1;%a%) < (1;%b%)]") == [("(1;%b%)", "(1;%a%)")]
    assert _pairs("[(1;%a%) < (1;%b%)] & [(2;%c%) > (2;%d%)]") == [
        ("(1;%a%)", "(1;%b%)"), ("(2;%d%)", "(2;%c%)")]
    # Equalities and disjunctions assert no direction.
    assert _pairs("(1;%a%) = (1;%b%)") == []
    assert _pairs("[(1;%a%) < (1;%b%)] | [(1;%c%) < (1;%d%)]") == []


def test_linear_terms_add_regions_and_refuse_products_of_regions() -> None:
    def terms(text: str):
        return linear_terms(parse_formula(f"{text} > 0").root.operands[0])

    assert terms("(6;%a%) + (7;%a%) - (6;%b%)") == {"a": 2.0, "b": -1.0}
    assert terms("-((6;%a%) - (6;%b%)) * 2") == {"a": -2.0, "b": 2.0}
    assert terms("2 * (6;%a%) / 4") == {"a": 0.5}
    assert terms("(6;%a%) * (6;%b%)") is None
    assert terms("(6;%a%) / (6;%b%)") is None
    assert terms("(6;%a%) / 0") is None
    assert terms("abs((6;%a%) - (6;%b%))") is None


def _documented_outcomes() -> list[tuple[list[str], set[str], set[str], str]]:
    """docs/context.md's table of every suite's outcome: (name patterns, acceptable,
    unacceptable, rule), in the table's order."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "context.md").read_text()
    table = text[text.index("| suites | acceptable | unacceptable | rule |"):].split("\n\n")[0]
    rows = []
    for line in table.splitlines()[2:]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        suites, acceptable, unacceptable, rule = cells
        rows.append(([p.strip() for p in suites.split(",")],
                     {c.strip() for c in acceptable.split(",")},
                     {c.strip() for c in unacceptable.split(",")},
                     {"2": RULE_TWO_CONDITIONS, "3": RULE_SIGNS}[rule.split()[0]]))
    return rows


def test_every_hu2020_and_builtin_suite_gets_the_outcome_the_docs_give() -> None:
    """Each of the 45 suites matches one row of docs/context.md's table and gets exactly its
    acceptable and unacceptable conditions, by its rule."""
    from fnmatch import fnmatch

    rows = _documented_outcomes()
    paths = sorted(HU2020.glob("*.json")) + sorted(BUILTIN.glob("*.json"))
    assert len(paths) == 45
    used = set()
    for path in paths:
        matching = [i for i, row in enumerate(rows)
                    if any(fnmatch(path.stem, pattern) for pattern in row[0])]
        assert len(matching) == 1, f"{path.stem} matches rows {matching} of the docs' table"
        _, acceptable, unacceptable, rule = rows[matching[0]]
        found = polarity(load_suite(path))
        assert (set(found.acceptable), set(found.unacceptable), found.rule) == (
            acceptable, unacceptable, rule), path.stem
        assert len(found.acceptable) == len(acceptable)  # no condition twice
        used.add(matching[0])
    assert used == set(range(len(rows))), "a row of the docs' table matches no suite"


def test_agreement_and_filler_gap_suites_get_their_grammatical_conditions() -> None:
    number = polarity(load_suite(HU2020 / "number_prep.json"))
    assert number.acceptable == ("match_sing", "match_plural")
    assert number.unacceptable == ("mismatch_sing", "mismatch_plural")
    assert number.rule == RULE_TWO_CONDITIONS
    fgd = polarity(load_suite(HU2020 / "fgd_subject.json"))
    assert fgd.acceptable == ("that_nogap", "what_gap")
    assert fgd.unacceptable == ("what_nogap", "that_gap")


def test_an_interaction_term_is_ignored_when_simple_comparisons_exist() -> None:
    # mvrr's third conjunct, (RA - UA) > (RU - UU), would call unreduced_unambig "worse" by signs.
    found = polarity(load_suite(HU2020 / "mvrr.json"))
    assert found.rule == RULE_TWO_CONDITIONS
    assert found.acceptable == ("unreduced_ambig", "reduced_unambig")
    assert found.unacceptable == ("reduced_ambig",)


def test_signs_decide_when_no_comparison_names_two_conditions() -> None:
    found = polarity(load_suite(HU2020 / "cleft.json"))
    assert found.rule == RULE_SIGNS
    assert found.acceptable == ("np_match", "vp_match")
    assert found.unacceptable == ("np_mismatch", "vp_mismatch")


def _with_predictions(formulas: list[str]):
    data = json.loads((HU2020 / "number_prep.json").read_text())
    data = copy.deepcopy(data)
    data["predictions"] = [{"type": "formula", "formula": f} for f in formulas]
    return parse_suite(data)


def test_a_condition_called_both_better_and_worse_is_neither() -> None:
    found = polarity(_with_predictions([
        "(6;%match_sing%) < (6;%mismatch_sing%)",
        "(6;%mismatch_sing%) < (6;%match_plural%)",
    ]))
    assert found.acceptable == ("match_sing",)
    assert found.unacceptable == ("match_plural",)


@pytest.mark.parametrize("formula", [
    "(6;%match_sing%) = (6;%mismatch_sing%)",
    "[(6;%match_sing%) < (6;%mismatch_sing%)] | [(6;%match_plural%) < (6;%mismatch_plural%)]",
    "abs((6;%match_sing%) - (6;%mismatch_sing%)) > 1",
])
def test_predictions_that_say_nothing_give_no_condition(formula: str) -> None:
    found = polarity(_with_predictions([formula]))
    assert found == type(found)((), (), "")
