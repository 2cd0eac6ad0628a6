"""BLiMP in the report: the summary beside Warstadt et al. (2020), and the region analysis and plot.

Fast: no model runs. ``tests/fixtures/blimp_run`` is a real ``helm-run`` (see the fixtures README):
SmolLM2-135M (the plugin's client) on 5 paradigms, Gemma-3-270M on 2 of them, 4 pairs each. What
the report computes is checked against what HELM wrote (``stats.json``), against sums of the
token logprobs in ``scenario_state.json`` made here by hand, and against the shipped paper table.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import fields
from pathlib import Path

import pytest
from PIL import Image

from syntaxgym_helm.cli.main import main
from syntaxgym_helm.core.minimal_pairs.blimp import BLIMP, PARADIGMS
from syntaxgym_helm.core.minimal_pairs.blimp_paper import (
    PAPER_COLUMNS,
    paper_means,
    paper_paradigms,
)
from syntaxgym_helm.harness.stats import FIRST_PREDICTION_ACCURACY, prediction_accuracy_name
from syntaxgym_helm.report.build import write_report
from syntaxgym_helm.report.pairs_plots import _heat_value, _layout
from syntaxgym_helm.report.pairs_regions import RegionAnalysisRow, analyse
from syntaxgym_helm.report.pairs_summary import (
    PairResults as BlimpResults,
    dataset_summary_markdown as blimp_summary_markdown,
    group_table,
    split_pairs as split_blimp,
)
from syntaxgym_helm.report.runs import RunRecord, find_run_dirs, load_runs

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
BLIMP_OUTPUT = FIXTURES / "blimp_run"
NUMBER_PREP_OUTPUT = FIXTURES / "number_prep_run"  # number_prep: a suite that is not BLiMP's
SMOLLM = "syntaxgym/smollm2-135m-instruct-q4_1"
GEMMA = "syntaxgym/gemma-3-270m-q4_k_m"
UIDS = ("adjunct_island", "anaphor_number_agreement", "determiner_noun_agreement_2",
        "only_npi_scope", "wh_questions_object_gap")
LN2 = math.log(2)


@pytest.fixture(scope="module")
def runs() -> list[RunRecord]:
    return load_runs(find_run_dirs(BLIMP_OUTPUT), progress=False)


def _stat(run: RunRecord, name: str) -> float:
    stats = json.loads((run.run_dir / "stats.json").read_text())
    return next(s["mean"] for s in stats if s["name"]["name"] == name
                and s["name"].get("split") == "test" and "perturbation" not in s["name"])


def _row_cells(markdown: str, label: str) -> list[str]:
    line = next(line for line in markdown.splitlines() if line.startswith(f"| {label} |"))
    return [cell.strip() for cell in line.strip("|").split("|")][1:]


def test_the_fixture_is_what_the_tests_expect(runs: list[RunRecord]) -> None:
    assert sorted((run.model, run.suite_name) for run in runs) == sorted(
        [(SMOLLM, f"blimp_{uid}") for uid in UIDS]
        + [(GEMMA, "blimp_anaphor_number_agreement"), (GEMMA, "blimp_only_npi_scope")])
    assert all(len(run.scores) == 4 and all(s.scorable for s in run.scores) for run in runs)


def test_paradigm_accuracy_is_helms_first_prediction_stat_with_the_paper_beside_it(
        runs: list[RunRecord]) -> None:
    text = blimp_summary_markdown(runs, BLIMP)
    models = list(BlimpResults.of(runs, BLIMP).models)
    for uid in UIDS:
        cells = _row_cells(text, uid)
        assert cells[0] == PARADIGMS[uid].phenomenon and cells[1] == "4/4"
        for index, model in enumerate(models):
            run = next((r for r in runs if r.model == model and r.suite_name == f"blimp_{uid}"),
                       None)
            expected = "–" if run is None else f"{_stat(run, FIRST_PREDICTION_ACCURACY):.3f}"
            assert cells[2 + index].split(" ")[0] == expected
        paper = paper_paradigms()[uid].accuracy
        assert cells[2 + len(models):] == [f"{paper[c]:.3f}" for c in PAPER_COLUMNS]


def test_phenomena_and_overall_are_unweighted_means_over_paradigms(
        runs: list[RunRecord]) -> None:
    text = blimp_summary_markdown(runs, BLIMP)
    smollm = {run.suite_name.removeprefix("blimp_"): _stat(run, FIRST_PREDICTION_ACCURACY)
              for run in runs if run.model == SMOLLM}
    models = list(BlimpResults.of(runs, BLIMP).models)
    cells = _row_cells(text, "**overall**")
    assert cells[0] == "5/67"
    assert cells[1 + models.index(SMOLLM)].startswith(f"{sum(smollm.values()) / 5:.3f} [")
    # Gemma ran 2 of the 5 paradigms: its mean is over those two, and the cell says so.
    assert cells[1 + models.index(GEMMA)].endswith("(2/5)")
    rows = paper_paradigms()
    assert cells[1 + len(models):] == [
        f"{sum(rows[uid].accuracy[c] for uid in UIDS) / 5:.3f}" for c in PAPER_COLUMNS]
    island = _row_cells(text, "island_effects")
    assert island[0] == "1/8"
    assert island[1 + models.index(SMOLLM)].startswith(f"{smollm['adjunct_island']:.3f} [")


def test_over_all_67_paradigms_the_paper_columns_are_the_papers_own_means() -> None:
    outcomes = {uid: [1.0, 0.0] for uid in PARADIGMS}
    results = BlimpResults(BLIMP, ("m",), {"m": outcomes}, {"m": {uid: 2 for uid in PARADIGMS}})
    table = group_table(results)
    means = paper_means()
    for label, cells in table.rows:
        name = label.strip("*")
        assert cells[2:] == tuple(f"{means[name][c]:.3f}" for c in PAPER_COLUMNS)
        assert cells[1].startswith("0.500 [")
    assert len(table.rows) == 13  # overall and the paper's 12 phenomena


def _sentence_surprisal(state: dict) -> float:
    """Bits of the sentence's tokens, by hand: every token after the beginning-of-text token."""
    tokens = state["result"]["completions"][0]["tokens"]
    assert tokens[0]["text"] in ("<|endoftext|>", "<bos>")
    return -sum(token["logprob"] for token in tokens[1:]) / LN2


def test_region_differences_add_up_to_the_sentence_difference_from_the_raw_logprobs(
        runs: list[RunRecord]) -> None:
    rows = analyse(runs)
    assert len(rows) == len(runs)
    for row in rows:
        run = next(
            r for r in runs if r.name == row.model and r.suite_name == f"blimp_{row.paradigm}"
        )
        deltas = _check_region_sums(row, run)
        assert row.accuracy == pytest.approx(sum(d > 0 for d in deltas) / len(deltas))
        assert row.accuracy == pytest.approx(_stat(run, FIRST_PREDICTION_ACCURACY))


def _check_region_sums(row: RegionAnalysisRow, run: RunRecord) -> list[float]:
    """The row's mean sentence difference is the raw logprobs', its prefix adds nothing (same
    words, scored first) and its regions add up to the sentence; the per-item differences."""
    states = json.loads((run.run_dir / "scenario_state.json").read_text())["request_states"]
    by_item: dict[str, dict[str, float]] = {}
    for state in states:
        condition = state["instance"]["references"][state["reference_index"]]["tags"][0]
        by_item.setdefault(state["instance"]["id"], {})[condition] = _sentence_surprisal(state)
    deltas = [c["condition:bad"] - c["condition:good"] for c in by_item.values()]
    assert row.delta_total == pytest.approx(sum(deltas) / len(deltas), abs=1e-6)
    assert row.delta_prefix == pytest.approx(0.0, abs=1e-9)
    assert (row.delta_prefix + row.delta_critical + row.delta_next_word + row.delta_rest
            == pytest.approx(row.delta_total, abs=1e-6))
    return deltas


def test_positions_are_shares_of_the_sentences_words(runs: list[RunRecord]) -> None:
    rows = {(row.model, row.paradigm): row for row in analyse(runs)}
    for row in rows.values():
        assert (row.share_prefix + row.share_critical + row.share_next_word + row.share_rest
                == pytest.approx(1.0))
        assert row.critical_start == row.share_prefix
        assert row.critical_start <= row.critical_end <= 1.0 + 1e-12
    # adjunct_island (word diff): the prefix is the sentences' longest shared beginning, here
    # worked out from the two sentences HELM sent, not from the suite's regions.
    run = next(r for r in runs if r.suite_name == "blimp_adjunct_island")
    states = json.loads((run.run_dir / "scenario_state.json").read_text())["request_states"]
    shares, words = [], []
    for instance in {s["instance"]["id"]: s["instance"] for s in states}.values():
        good, bad = (ref["output"]["text"].split() for ref in instance["references"])
        shared = next(i for i, (a, b) in enumerate(zip(good, bad, strict=False)) if a != b)
        shares.append((shared / len(good) + shared / len(bad)) / 2)
        words.append((len(good) + len(bad)) / 2)
    row = rows[SMOLLM, "adjunct_island"]
    assert row.critical_start == pytest.approx(sum(shares) / len(shares))
    assert row.words == pytest.approx(sum(words) / len(words))
    # only_npi_scope's sentences begin differently ("Only ..." / "... only"): no shared prefix.
    assert rows[SMOLLM, "only_npi_scope"].share_prefix == 0.0
    # The same items for both models: the positions agree.
    assert rows[GEMMA, "only_npi_scope"].critical_end == rows[SMOLLM, "only_npi_scope"].critical_end


def test_a_region_alone_is_the_prefix_method_where_blimp_defines_one(
        runs: list[RunRecord]) -> None:
    """``positive_critical`` in a one-prefix paradigm and ``positive_next_word`` in a two-prefix
    one are the share of pairs passing prediction 1 (HELM's stat), the paper's prefix methods."""
    rows = {(row.model, row.paradigm): row for row in analyse(runs)}
    for uid, field in (("anaphor_number_agreement", "positive_critical"),
                       ("determiner_noun_agreement_2", "positive_next_word")):
        run = next(r for r in runs if r.model == SMOLLM and r.suite_name == f"blimp_{uid}")
        assert getattr(rows[SMOLLM, uid], field) == pytest.approx(
            _stat(run, prediction_accuracy_name(1)))
    # The reflexive ends every sentence: no next word, no rest, so the plot leaves them blank.
    anaphor = rows[SMOLLM, "anaphor_number_agreement"]
    assert anaphor.share_next_word == anaphor.share_rest == 0.0
    assert math.isnan(_heat_value(anaphor, "delta_rest"))
    assert _heat_value(anaphor, "delta_critical") == anaphor.delta_critical


def test_the_report_writes_the_blimp_summary_plot_and_csv(runs: list[RunRecord],
                                                          tmp_path: Path) -> None:
    files = write_report(runs, tmp_path / "report")
    text = files.summary.read_text()
    assert text.startswith("# BLiMP (5 of 67 paradigms)")
    assert "SG score" not in text  # only BLiMP runs: no SyntaxGym summary above it
    png = tmp_path / "report" / "blimp_regions.png"
    assert png in files.plots
    with Image.open(png) as image:
        width, height = image.size
    assert width > height > 300  # 9 rows (5 paradigms, 4 phenomena) and two model panels
    with (tmp_path / "report" / "blimp_regions.csv").open() as stream:
        table = list(csv.DictReader(stream))
    assert list(table[0]) == [field.name for field in fields(RegionAnalysisRow)]
    assert len(table) == 7
    assert {row["phenomenon"] for row in table} == {PARADIGMS[u].phenomenon for u in UIDS}
    by_key = {(row.model, row.paradigm): row for row in analyse(runs)}
    for line in table:
        assert float(line["delta_total"]) == by_key[line["model"], line["paradigm"]].delta_total


def test_other_suites_keep_their_summary_and_blimp_follows_it(tmp_path: Path) -> None:
    runs = load_runs([*find_run_dirs(BLIMP_OUTPUT), *find_run_dirs(NUMBER_PREP_OUTPUT)],
                     progress=False)
    blimp, others = split_blimp(runs)
    assert [run.suite_name for run in others] == ["number_prep"] and len(blimp) == 7
    text = write_report(runs, tmp_path / "report").summary_text
    syntaxgym, _, blimp_part = text.partition("# BLiMP (5 of 67 paradigms)")
    assert "| number_prep |" in syntaxgym and "blimp_" not in syntaxgym
    assert "| adjunct_island |" in blimp_part and "number_prep" not in blimp_part


def test_the_plot_groups_paradigms_under_their_phenomenon(runs: list[RunRecord]) -> None:
    layout = _layout(analyse(runs))
    headers = [label for label, paradigm in layout if paradigm is None]
    assert headers == sorted({PARADIGMS[u].phenomenon for u in UIDS})
    assert [paradigm for _, paradigm in layout if paradigm] == sorted(
        UIDS, key=lambda uid: (PARADIGMS[uid].phenomenon, uid))


def test_report_command_prints_the_blimp_tables(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(BLIMP_OUTPUT), "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "# BLiMP (5 of 67 paradigms)" in out and "## Per paradigm" in out
    assert (tmp_path / "blimp_fixture" / "blimp_regions.png").is_file()


# --- the other data sets: a real helm-run of one suite each ------------------------------------

PAIRS_OUTPUT = FIXTURES / "pairs_run"


@pytest.fixture(scope="module")
def pair_runs() -> list[RunRecord]:
    return load_runs(find_run_dirs(PAIRS_OUTPUT), progress=False)


def test_each_data_set_has_its_section_with_helms_accuracy_and_clams_beside_its_paper(
        pair_runs: list[RunRecord], tmp_path: Path) -> None:
    from syntaxgym_helm.core.minimal_pairs.papers import paper_figures

    files = write_report(pair_runs, tmp_path / "report")
    text = files.summary.read_text()
    for title, total in (("CLAMS", 50), ("RuBLiMP", 45), ("TurBLiMP", 38), ("SLING", 54)):
        assert f"# {title} (1 of {total} paradigms)" in text
    for run in pair_runs:
        key = run.suite_name.split("_", 1)[1]
        cells = _row_cells(text, key)
        assert cells[1] == "3/3"
        assert cells[2].split(" ")[0] == f"{_stat(run, FIRST_PREDICTION_ACCURACY):.3f}"
    clams = paper_figures("clams").by_paradigm["en_simple_agrmt"]
    assert clams == {"LSTM (mono)": 1.0, "LSTM (multi)": 1.0, "mBERT": 1.0, "BERT": 1.0}
    assert _row_cells(text, "en_simple_agrmt")[3:] == ["1.000"] * 4
    assert "Mueller et al. (2020) LSTM (mono)" in text
    assert "The paper's figures are not held here: see Song et al. (2022)" in text
    assert "0 of 3 scored pairs" in text  # the tie counts
    for name in ("clams", "rublimp", "turblimp", "sling"):
        assert (tmp_path / "report" / f"{name}_regions.png") in files.plots
        rows = list(csv.DictReader((tmp_path / "report" / f"{name}_regions.csv").open()))
        assert len(rows) == 1 and rows[0]["dataset"] == name


def test_region_differences_add_up_in_every_script(pair_runs: list[RunRecord]) -> None:
    """Russian, Turkish and Mandarin as English: the four regions' differences add up to the
    sentence's, from the raw logprobs; Mandarin's units are characters."""
    for row in analyse(pair_runs):
        _check_region_sums(row, next(r for r in pair_runs if r.suite_name.endswith(row.paradigm)))
    sling = next(row for row in analyse(pair_runs) if row.dataset == "sling")
    assert sling.words > 10  # characters, not the one "word" a sentence without spaces is


def test_ties_are_counted_per_model_and_paradigm() -> None:
    from syntaxgym_helm.core.minimal_pairs.catalogue import DATASETS
    from syntaxgym_helm.report.pairs_summary import PairResults, ties_text

    results = PairResults(DATASETS["sling"], ("m",), {"m": {"aspect_zai_le": [1.0, 0.0, 0.0]}},
                          {"m": {"aspect_zai_le": 3}}, {"m": {"aspect_zai_le": 1}})
    assert "m: 1 of 3 scored pairs (aspect_zai_le 1)" in ties_text(results)


def test_a_region_inside_a_token_of_the_region_before_is_left_out_not_an_error() -> None:
    """Mandarin: the full stop (region 3) shares its token with the last character of region 2,
    so region 3 has no surprisal of its own in the good sentence; the region analysis gives it
    NaN (left out of the region's mean) and keeps the whole-sentence difference."""
    from syntaxgym_helm.core.item_evaluation import TokenScore, evaluate_item
    from syntaxgym_helm.core.minimal_pairs.catalogue import DATASETS, convert_file
    from syntaxgym_helm.core.suite import parse_suite
    from syntaxgym_helm.report.pairs_regions import item_deltas

    conversion = convert_file(DATASETS["sling"],
                              FIXTURES / "multilingual" / "excerpts" / "sling" / "Aspect" /
                              "zai_le.txt")
    suite = parse_suite(conversion.suite)
    item = suite.items[0]  # 他们在缴|罚款了|。 against 他们在缴|了罚款|。
    assert item.condition("good").sentence == "他们在缴罚款了。"
    bits = {
        "good": ["他们", "在", "缴", "罚款", "了。"],
        "bad": ["他们", "在", "缴", "了", "罚款", "。"],
    }
    results = {name: [TokenScore("<|endoftext|>", 0.0)]
               + [TokenScore(text, -1.0) for text in texts] for name, texts in bits.items()}
    score = evaluate_item(suite, item, results, prefix="<|endoftext|>")
    assert score.scorable
    deltas = item_deltas(score)
    assert deltas is not None and math.isnan(deltas["next_word"])
    assert deltas["total"] == pytest.approx(1 / LN2)  # one token more in the bad sentence
    assert deltas["critical"] == pytest.approx(0.0)
