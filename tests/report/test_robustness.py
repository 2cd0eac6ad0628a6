"""The robustness table: context runs paired with the run without context, item by item.

The runs here are built from item outcomes (no model): what is tested is the pairing and the
arithmetic. ``tests/harness/test_context_end_to_end.py`` makes real context runs and reports them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fixtures import HU2020_DIR as HU2020
from syntaxgym_helm.core.context import ContextSpec
from syntaxgym_helm.core.item_evaluation import ItemEvaluation, PredictionOutcome
from syntaxgym_helm.core.suite import load_suite
from syntaxgym_helm.core.uncertainty import paired_bootstrap
from syntaxgym_helm.report.robustness import (
    ALL_SUITES,
    pairings,
    robustness_markdown,
    robustness_rows,
)
from syntaxgym_helm.report.runs import RunRecord, assign_labels

UNRELATED = ContextSpec("unrelated", 3, 0)
ACCEPTABLE = ContextSpec("acceptable", 3, 0)
NO_CONTEXT = ContextSpec()


def _run(suite_name: str, passed: list[bool | None], context: ContextSpec = NO_CONTEXT,
         model: str = "org/model") -> RunRecord:
    """A run whose items pass, fail or (None) could not be scored."""
    suite = load_suite(HU2020 / f"{suite_name}.json")
    items = suite.items[:len(passed)]
    scores = tuple(
        ItemEvaluation(item.item_number, "sum", (),
                       () if ok is None else (PredictionOutcome(0, "f", ok),),
                       ("unscorable",) if ok is None else ())
        for item, ok in zip(items, passed, strict=False))
    return RunRecord(run_dir=Path("."), run_name=f"{suite_name}-{context.label}", run_suite="rs",
                     model=model, suite_name=suite_name, suite=suite, scores=scores,
                     instance_ids=tuple(f"item{i.item_number}" for i in items), prefix="",
                     first_token="error", context=context)


def test_a_context_run_is_paired_on_the_items_both_runs_scored() -> None:
    baseline = _run("number_prep", [True, True, False, None, True])
    context = _run("number_prep", [False, True, False, True, None], UNRELATED)
    other_model = _run("number_prep", [True] * 5, UNRELATED, model="org/other")
    (pair,) = pairings([baseline, context, other_model])
    assert pair.baseline is baseline and pair.run is context
    assert pair.items == (1, 2, 3)
    assert pair.baseline_passed == (1.0, 1.0, 0.0) and pair.passed == (0.0, 1.0, 0.0)


def test_rows_give_each_suite_and_the_mean_over_suites() -> None:
    runs = assign_labels([
        _run("number_prep", [True, True, True, True]),
        _run("number_prep", [False, True, False, True], ACCEPTABLE),
        _run("mvrr", [True, False, True, False]),
        _run("mvrr", [True, True, True, False], ACCEPTABLE),
    ])
    rows = {row.suite: row for row in robustness_rows(runs)}
    assert list(rows) == ["number_prep", "mvrr", ALL_SUITES]  # circuit order, then the mean
    number = rows["number_prep"]
    assert (number.accuracy_none, number.accuracy, number.change) == (1.0, 0.5, -0.5)
    expected = paired_bootstrap([[1.0] * 4], [[0.0, 1.0, 0.0, 1.0]])
    assert (number.change_low, number.change_high) == (expected.interval.low,
                                                        expected.interval.high)
    assert number.change_low < -0.4 < number.change_high <= 0
    mean = rows[ALL_SUITES]
    assert mean.accuracy_none == pytest.approx(0.75) and mean.accuracy == pytest.approx(0.625)
    assert mean.change == pytest.approx(-0.125) and mean.items == 8
    assert (mean.context, mean.context_sentences, mean.context_seed) == ("acceptable", 3, 0)


def test_the_section_has_a_table_per_model_and_lists_unpaired_runs() -> None:
    runs = assign_labels([
        _run("number_prep", [True, True, False, False]),
        _run("number_prep", [True, True, True, False], UNRELATED),
        _run("number_prep", [False, False, False, False], ACCEPTABLE),
        _run("mvrr", [True, True], UNRELATED, model="org/lonely"),
    ])
    text = robustness_markdown(runs)
    assert text.startswith("## Robustness to context")
    assert "### org/model" in text and "### org/lonely" not in text
    assert "| suite | none | unrelated (3, seed 0) | acceptable (3, seed 0) |" in text
    assert "| number_prep | 0.500 | 0.750 (+0.250 [" in text
    assert "0.000 (-0.500 [" in text
    assert "mvrr, org/lonely [context=unrelated, 3 sentences, seed 0]: 1.000" in text
    assert robustness_markdown(runs[:1]) == ""  # no context run: no section


def test_the_annotated_suite_names_the_runs_context(tmp_path: Path) -> None:
    from syntaxgym_helm.core.item_evaluation import ConditionValues
    from syntaxgym_helm.report.annotate import write_annotated

    suite = load_suite(HU2020 / "number_prep.json")
    item = suite.items[0]
    conditions = tuple(ConditionValues(c.condition_name, tuple(r.content for r in c.regions),
                                       tuple(r.region_number for r in c.regions),
                                       tuple(1.0 for _ in c.regions)) for c in item.conditions)
    score = ItemEvaluation(item.item_number, "sum", conditions,
                           (PredictionOutcome(0, "f", True),), ())
    run = RunRecord(run_dir=Path("."), run_name="r", run_suite="rs", model="org/model",
                    suite_name="number_prep", suite=suite, scores=(score,),
                    instance_ids=("item1",), prefix="", first_token="error", context=ACCEPTABLE)
    path = write_annotated(run, tmp_path / "a.json")
    extra = json.loads(path.read_text())["syntaxgym_helm"]
    assert extra["context"] == {"kind": "acceptable", "sentences": 3, "seed": 0, "file": None}
