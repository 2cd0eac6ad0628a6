"""Nothing out of sight in the report: a SyntaxGym suite's ties are counted as the minimal-pair
sets' are, and the pairs a conversion left out (identical sentences, repeated ids) are counted per
suite in the run's log and the summary, with each one's line and reason in a file.

Real suites (Hu et al.'s number_prep; TurBLiMP's anaphor_agreement, whole, from the archive),
scored by the metric's own item evaluation from token log-probabilities given per word."""

from __future__ import annotations

import csv
import dataclasses
from collections.abc import Collection
from pathlib import Path

from fixtures import FULL_MULTILINGUAL_DIR, HU2020_DIR
from syntaxgym_helm.core.item_evaluation import TokenScore, evaluate_item
from syntaxgym_helm.core.minimal_pairs.catalogue import convert_file
from syntaxgym_helm.core.minimal_pairs.convert import left_out
from syntaxgym_helm.core.minimal_pairs.turblimp import TURBLIMP
from syntaxgym_helm.core.suite import Suite, load_suite
from syntaxgym_helm.harness.scenario import left_out_note
from syntaxgym_helm.report.build import summary_text, write_report
from syntaxgym_helm.report.pairs_summary import LEFT_OUT_NAME, left_out_rows
from syntaxgym_helm.report.runs import RunRecord
from syntaxgym_helm.report.summary import summary_markdown

BOS = "<|endoftext|>"
ANAPHOR = FULL_MULTILINGUAL_DIR / "turblimp" / "base" / "augmented_anaphor_agreement.csv"


def scored_run(suite: Suite, flat: Collection[int] = ()) -> RunRecord:
    """A run of ``suite`` whose model gives each word ``-len(word)`` nats, or ``-1`` to every word
    of the items in ``flat`` (so that two conditions' one-word regions tie)."""
    scores = []
    for item in suite.items:
        results = {}
        for condition in item.conditions:
            words = condition.sentence.split(" ")
            results[condition.condition_name] = [TokenScore(BOS, 0.0)] + [
                TokenScore(word if i == 0 else f" {word}",
                           -1.0 if item.item_number in flat else -float(len(word)))
                for i, word in enumerate(words)]
        scores.append(evaluate_item(suite, item, results, prefix=BOS))
    return RunRecord(run_dir=Path("."), run_name=f"syntaxgym:suite={suite.name},model=m",
                     run_suite="blind_spots", model="m", suite_name=suite.name, suite=suite,
                     scores=tuple(scores), instance_ids=tuple(f"id{i}" for i in suite.items),
                     prefix=BOS, first_token="error")


def test_a_syntaxgym_suites_ties_are_counted_in_the_summary() -> None:
    suite = load_suite(HU2020_DIR / "number_prep.json")
    suite = dataclasses.replace(suite, items=suite.items[:8])
    flat = {item.item_number for item in suite.items[:4]}
    run = scored_run(suite, flat)
    assert all(score.scorable for score in run.scores)
    tied = [score.item_number for score in run.scores
            if any(outcome.tie for outcome in score.predictions)]
    assert set(tied) == flat  # is/are: one word each, -1 both: a tie; else 2 vs 3 nats
    text = summary_markdown([run])
    assert "Ties (a prediction compared two exactly equal values" in text
    assert "m: 4 of 8 scored items (number_prep 4)." in text
    assert "m: 0 of 8 scored items." in summary_markdown([scored_run(suite)])


def _identical_lines() -> list[int]:
    """The lines of the file whose two sentences are the same, read by hand (header: line 1)."""
    lines = ANAPHOR.read_text(encoding="utf-8").splitlines()
    return [number for number, line in enumerate(lines, start=1)
            if number > 1 and line.split(";")[0] == line.split(";")[1]]


def test_pairs_left_out_at_conversion_are_counted_logged_and_listed(tmp_path: Path) -> None:
    conversion = convert_file(TURBLIMP, ANAPHOR)
    suite = Suite.from_trusted_json(conversion.suite)
    assert suite.name == "turblimp_anaphor_agreement" and len(suite.items) == 990
    lines = _identical_lines()
    assert len(lines) == 10
    found = left_out(suite.meta.extra)
    assert found is not None and (found.dataset, found.pairs) == ("turblimp", 1000)
    assert found.ids() == [str(line) for line in lines]

    note = left_out_note(suite)  # the scenario's line in the run's log
    assert note.startswith("turblimp_anaphor_agreement: 10 of 1,000 pairs left out at conversion "
                           f"(lines {', '.join(map(str, lines))};")
    assert left_out_note(load_suite(HU2020_DIR / "number_prep.json")) == ""

    run = scored_run(suite)
    text = summary_text([run])
    row = next(line for line in text.splitlines() if line.startswith("| anaphor_agreement |"))
    assert "| 990/990 (10 left out) |" in row
    assert ("Pairs left out at conversion (identical sentences, an id used twice, a line that "
            "cannot be read; never scored): 10 of 1,000 pairs: anaphor_agreement 10 of 1,000. "
            f"Each one's line, id and reason: `{LEFT_OUT_NAME}`") in text

    files = write_report([run], tmp_path / "report")
    listed = tmp_path / "report" / LEFT_OUT_NAME
    assert listed in files.tables
    rows = list(csv.DictReader(listed.open(encoding="utf-8")))
    assert [int(row["line"]) for row in rows] == lines
    assert {(row["dataset"], row["suite"]) for row in rows} == {
        ("turblimp", "turblimp_anaphor_agreement")}
    assert all("are the same sentence" in row["reason"] for row in rows)
    assert left_out_rows([run, dataclasses.replace(run, model="n")]) == left_out_rows([run])


def test_a_suite_with_nothing_left_out_says_so_and_writes_no_list(tmp_path: Path) -> None:
    path = FULL_MULTILINGUAL_DIR / "turblimp" / "experimental" / \
        "argument_structure_transitive_VOS.csv"
    run = scored_run(Suite.from_trusted_json(convert_file(TURBLIMP, path).suite))
    assert "Pairs left out at conversion: none (of the 100 pairs of the paradigms run)." in \
        summary_text([run])
    assert left_out_rows([run]) == []
