"""BLiMP as SyntaxGym suites: regions from each pair, every pair converted or reported, suites that
pass the project's validation, checked sources, the paper's figures and the leaderboard groups."""

from __future__ import annotations

import csv
import functools
import hashlib
import http.server
import json
import shutil
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fixtures import BLIMP_EXCERPTS_DIR, FULL_BLIMP_DIR
from syntaxgym_helm.core.minimal_pairs import catalogue, convert
from syntaxgym_helm.core.minimal_pairs.blimp import (
    BLIMP as BLIMP_DATASET,
    BLIMP_COMMIT,
    ONE_PREFIX,
    PARADIGMS,
    TWO_PREFIX,
    BlimpError,
    blimp_groups,
    paradigm_of_suite,
)
from syntaxgym_helm.core.minimal_pairs.blimp_paper import (
    PAPER_COLUMNS,
    paper_means,
    paper_paradigms,
)
from syntaxgym_helm.core.minimal_pairs.convert import (
    WHOLE_SENTENCE,
    Conversion as BlimpConversion,
    convert_data,
)
from syntaxgym_helm.core.minimal_pairs.dataset import MinimalPair
from syntaxgym_helm.core.minimal_pairs.fetch import resolve_named
from syntaxgym_helm.core.minimal_pairs.regions import REGION_NAMES, PairRegions
from syntaxgym_helm.core.suite import load_suite, parse_suite
from syntaxgym_helm.core.validation import check_suite

FIXTURES = BLIMP_EXCERPTS_DIR
BLIMP = FULL_BLIMP_DIR
BLIMP_DIR_ENV = BLIMP_DATASET.env_var


def convert_file(path: Path) -> BlimpConversion:
    """A BLiMP file converted, as ``syntaxgym-helm convert blimp PATH`` does."""
    return catalogue.convert_file(BLIMP_DATASET, path)


def convert_lines(lines: list[str], uid: str, source: str) -> BlimpConversion:
    """The lines of a file ``<uid>.jsonl`` converted (``source`` names it in messages)."""
    data = "".join(f"{line}\n" for line in lines).encode("utf-8")
    return convert_data(BLIMP_DATASET, BLIMP_DATASET.describe(f"{uid}.jsonl"), data, source)


def split_pair(record: dict[str, str]) -> PairRegions:
    """The regions of one BLiMP record, as the conversion cuts them."""
    pair = MinimalPair(number=0, good=record["sentence_good"], bad=record["sentence_bad"],
                       line=1, paradigm="", language="en", fields=record)
    return convert.split_pair(BLIMP_DATASET, pair)


def resolve_blimp_suite(name: str, cache_dir: Path, data_dir: Path | None = None,
                        url: str | None = None) -> Path:
    """The converted suite ``name``, fetched as ``suite=blimp_<UID>`` fetches it."""
    return resolve_named(BLIMP_DATASET, name, cache_dir, data_dir, url)


def regions(conversion: BlimpConversion, index: int, condition: str) -> tuple[str, ...]:
    item = conversion.suite["items"][index]
    found = next(c for c in item["conditions"] if c["condition_name"] == condition)
    assert [r["region_number"] for r in found["regions"]] == [1, 2, 3, 4]
    return tuple(r["content"] for r in found["regions"])


def formulas(conversion: BlimpConversion) -> list[str]:
    return [p["formula"] for p in conversion.suite["predictions"]]


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def assert_faithful(conversion: BlimpConversion, source: Path) -> None:
    """Valid for the project's validation, and every item reads exactly its pair's sentences."""
    report = check_suite(conversion.suite, conversion.name)
    assert report.ok, [str(error) for error in report.errors[:3]]
    assert not report.warnings
    assert report.suite is not None
    by_number = {int(r["pairID"]): r for r in records(source)}
    for item in report.suite.items:
        record = by_number[item.item_number]
        assert item.condition("good").sentence == record["sentence_good"]
        assert item.condition("bad").sentence == record["sentence_bad"]
    skipped = conversion.suite["meta"]["blimp_conversion"]["skipped"]
    assert len(report.suite.items) + len(skipped) == len(by_number)  # nothing dropped silently


# --- one rule at a time, on excerpts of the real files ---------------------------------------

def test_one_prefix_fields_give_the_critical_word_after_the_shared_prefix() -> None:
    conversion = convert_file(FIXTURES / "anaphor_gender_agreement.jsonl")
    # The critical word keeps its glued full stop: a region boundary there would change the text.
    assert regions(conversion, 0, "good") == ("Katherine can't help", "herself.", "", "")
    assert regions(conversion, 0, "bad") == ("Katherine can't help", "himself.", "", "")
    assert formulas(conversion) == [WHOLE_SENTENCE, ONE_PREFIX]
    assert conversion.rules == Counter({("one_prefix", "one_span"): 2})
    meta = conversion.suite["meta"]
    assert meta["name"] == "blimp_anaphor_gender_agreement" and meta["metric"] == "sum"
    assert (meta["UID"], meta["field"], meta["linguistics_term"]) == (
        "anaphor_gender_agreement", "morphology", "anaphor_agreement")
    # An excerpt: not the file at the pinned commit, so it names the file it was cut from.
    assert meta["source_commit"] == "" and BLIMP_COMMIT in meta["modified_from"]
    assert conversion.suite["region_meta"] == {"1": "prefix", "2": "critical",
                                               "3": "next_word", "4": "rest"}
    assert_faithful(conversion, FIXTURES / "anaphor_gender_agreement.jsonl")


def test_word_diff_gives_prefix_difference_next_word_and_rest() -> None:
    conversion = convert_file(FIXTURES / "causative.jsonl")
    assert regions(conversion, 0, "good") == ("Aaron", "breaks", "the", "glass.")
    assert regions(conversion, 0, "bad") == ("Aaron", "appeared", "the", "glass.")
    assert formulas(conversion) == [WHOLE_SENTENCE]  # neither prefix method is flagged
    assert conversion.rules == Counter({("word_diff", "one_span"): 2})
    assert_faithful(conversion, FIXTURES / "causative.jsonl")


def test_two_prefix_fields_put_blimps_critical_word_in_next_word() -> None:
    conversion = convert_file(FIXTURES / "determiner_noun_agreement_with_adj_2.jsonl")
    # BLiMP's word is "books", not "hard" (the first word after the difference).
    assert regions(conversion, 0, "good") == ("Cynthia scans", "these hard", "books.", "")
    assert regions(conversion, 0, "bad") == ("Cynthia scans", "this hard", "books.", "")
    assert formulas(conversion) == [WHOLE_SENTENCE, TWO_PREFIX]
    assert_faithful(conversion, FIXTURES / "determiner_noun_agreement_with_adj_2.jsonl")


def test_two_prefix_reordering_whose_ends_differ() -> None:
    conversion = convert_file(FIXTURES / "matrix_question_npi_licensor_present.jsonl")
    assert regions(conversion, 0, "good") == ("", "Had Bruce", "ever", "played?")
    assert regions(conversion, 0, "bad") == ("", "Bruce had", "ever", "played.")
    assert conversion.rules == Counter({("two_prefix", "reordering"): 2})
    assert formulas(conversion) == [WHOLE_SENTENCE, TWO_PREFIX]
    assert_faithful(conversion, FIXTURES / "matrix_question_npi_licensor_present.jsonl")


def test_a_reordering_is_one_critical_region_from_first_to_last_difference() -> None:
    conversion = convert_file(FIXTURES / "adjunct_island.jsonl")
    assert regions(conversion, 0, "good") == ("Who should Derek hug", "after shocking Richard?",
                                               "", "")
    assert regions(conversion, 0, "bad") == ("Who should Derek hug", "Richard after shocking?",
                                              "", "")
    assert conversion.rules == Counter({("word_diff", "reordering"): 2})
    assert_faithful(conversion, FIXTURES / "adjunct_island.jsonl")


def test_several_places_are_merged_with_the_shared_words_between() -> None:
    conversion = convert_file(FIXTURES / "wh_questions_object_gap.jsonl")
    assert regions(conversion, 0, "good") == (
        "Joel discovered", "the vase that Patricia might take.", "", "")
    assert regions(conversion, 0, "bad") == (
        "Joel discovered", "what Patricia might take the vase.", "", "")
    assert conversion.rules == Counter({("word_diff", "several_spans"): 2})
    assert_faithful(conversion, FIXTURES / "wh_questions_object_gap.jsonl")


def test_identical_pairs_are_reported_with_pair_id_and_an_insertion_converts() -> None:
    conversion = convert_file(FIXTURES / "passive_1.jsonl")
    assert [(p.line, p.pair_id) for p in conversion.problems] == [(2, "324")]
    assert "same sentence" in conversion.problems[0].reason
    assert "passive_1.jsonl line 2 (pairID 324)" in str(conversion.problems[0])
    assert conversion.suite["meta"]["blimp_conversion"]["skipped"] == [
        {"line": 2, "pairID": "324", "reason": conversion.problems[0].reason}]
    # pairID 403 lacks one word: its critical region is empty in the bad sentence.
    assert [item["item_number"] for item in conversion.suite["items"]] == [323, 403]
    assert regions(conversion, 1, "bad")[1] == ""
    assert regions(conversion, 1, "good")[1] == "about"
    assert_faithful(conversion, FIXTURES / "passive_1.jsonl")
    one_prefix = convert_file(FIXTURES / "principle_A_case_2.jsonl")
    assert [p.pair_id for p in one_prefix.problems] == ["105"]
    assert_faithful(one_prefix, FIXTURES / "principle_A_case_2.jsonl")


# --- what goes wrong is reported where it is ---------------------------------------------------

def causative_record(pair_id: str, **changes: Any) -> dict[str, Any]:
    record = records(FIXTURES / "causative.jsonl")[0]
    record.update(pairID=pair_id, **changes)
    return record


def test_malformed_records_are_reported_with_line_pair_id_and_reason() -> None:
    good = json.dumps(causative_record("0"))
    lines = [
        good,
        "{not json",
        json.dumps([1, 2]),
        json.dumps({k: v for k, v in causative_record("3").items() if k != "sentence_bad"}),
        json.dumps(causative_record("four")),
        json.dumps(causative_record("0", sentence_good="A different sentence.")),
        json.dumps(causative_record("6", UID="inchoative")),
        json.dumps(causative_record("7", field="semantics")),
        json.dumps(causative_record("8", sentence_bad="   ")),
        json.dumps(causative_record("9", one_prefix_method="yes")),
        "",
        json.dumps(causative_record("10")),
    ]
    conversion = convert_lines(lines, "causative", "causative.jsonl")
    found = {(p.line, p.pair_id): p.reason for p in conversion.problems}
    assert [item["item_number"] for item in conversion.suite["items"]] == [0, 10]
    expected = {
        (2, None): "not valid JSON",
        (3, None): "one JSON object",
        (4, "3"): "'sentence_bad' is missing",
        (5, "four"): "not a whole number",
        (6, "0"): "already used on line 1",
        (7, "6"): "not the file's paradigm 'causative'",
        (8, "7"): "its field 'semantics' differs from the paradigm's 'syntax'",
        (9, "8"): "sentence_bad is empty",
        (10, "9"): "must be a JSON boolean",
    }
    assert set(found) == set(expected)
    for key, text in expected.items():
        assert text in found[key], (key, found[key])


def test_a_file_with_no_convertible_pair_is_an_error() -> None:
    record = causative_record("0", sentence_bad=causative_record("0")["sentence_good"])
    with pytest.raises(BlimpError, match=r"x\.jsonl: no pair could be converted.*same sentence"):
        convert_lines([json.dumps(record)], "causative", "x.jsonl")
    with pytest.raises(BlimpError, match="has no records"):
        convert_lines([], "causative", "x.jsonl")


def test_prefix_fields_that_do_not_fit_fall_back_to_the_word_diff() -> None:
    record = records(FIXTURES / "anaphor_gender_agreement.jsonl")[0]
    record["one_prefix_prefix"] = "Katherine cannot help"
    conversion = convert_lines([json.dumps(record)], "anaphor_gender_agreement", "f.jsonl")
    assert conversion.fallbacks == 1
    assert conversion.rules == Counter({("word_diff", "one_span"): 1})
    assert regions(conversion, 0, "good") == ("Katherine can't help", "herself.", "", "")
    assert formulas(conversion) == [WHOLE_SENTENCE, ONE_PREFIX]  # the shape still fits


def test_prefix_fields_may_have_an_empty_prefix_and_a_mismatch_says_why() -> None:
    record = {"sentence_good": "Only Bill would ever complain.",
              "sentence_bad": "Even Bill would ever complain.", "one_prefix_prefix": "",
              "one_prefix_word_good": "Only", "one_prefix_word_bad": "Even"}
    pair = split_pair(record)
    assert (pair.split, pair.fallback) == ("one_prefix", "")
    assert pair.good == ("", "Only", "Bill", "would ever complain.")
    pair = split_pair({**record, "one_prefix_word_bad": "Odd"})
    assert pair.split == "word_diff"
    assert pair.fallback == ("BLiMP's one_prefix fields do not fit: one_prefix_word_bad 'Odd' is "
                             "not word 1 of sentence_bad")


def test_a_prefix_prediction_is_omitted_when_a_pair_lacks_its_region() -> None:
    lines = [json.dumps(causative_record("0", one_prefix_method=True)),
             json.dumps(causative_record("1", one_prefix_method=True,
                                         sentence_good="Kendra won't talk to Tiffany.",
                                         sentence_bad="Kendra won't talk Tiffany."))]
    conversion = convert_lines(lines, "causative", "causative.jsonl")
    assert formulas(conversion) == [WHOLE_SENTENCE]
    omitted = conversion.suite["meta"]["blimp_conversion"]["omitted_predictions"]
    assert len(omitted) == 1 and ONE_PREFIX in omitted[0] and "pairID 1" in omitted[0]
    assert check_suite(conversion.suite).ok


# --- all 67 paradigms ---------------------------------------------------------------------------

#: The rule counts docs/blimp.md gives (split/shape: pairs).
DOCUMENTED_RULES = {("one_prefix", "one_span"): 19995, ("two_prefix", "one_span"): 14000,
                    ("two_prefix", "reordering"): 6000, ("word_diff", "one_span"): 15852,
                    ("word_diff", "reordering"): 6302, ("word_diff", "several_spans"): 4844}


def test_all_67000_pairs_convert_or_are_reported_and_every_suite_validates() -> None:
    started = time.monotonic()
    rules: Counter[tuple[str, str]] = Counter()
    skipped: list[tuple[str, str | None]] = []
    prediction_counts: Counter[int] = Counter()
    files = sorted((BLIMP / "data").glob("*.jsonl"))
    assert [path.stem for path in files] == sorted(PARADIGMS)
    for path in files:
        paradigm = PARADIGMS[path.stem]
        assert hashlib.sha256(path.read_bytes()).hexdigest() == paradigm.sha256
        conversion = convert_file(path)
        suite = parse_suite(conversion.suite, conversion.name)
        assert len(suite.items) + len(conversion.problems) == 1000
        meta = conversion.suite["meta"]
        assert (meta["field"], meta["linguistics_term"]) == (paradigm.field,
                                                            paradigm.linguistics_term)
        assert meta["source_sha256"] == paradigm.sha256
        assert not meta["blimp_conversion"]["omitted_predictions"]
        flags = records(path)[0]
        assert formulas(conversion) == [WHOLE_SENTENCE] + (
            [ONE_PREFIX] if flags["one_prefix_method"] else []) + (
            [TWO_PREFIX] if flags["two_prefix_method"] else [])
        prediction_counts[len(suite.predictions)] += 1
        by_number = {int(r["pairID"]): r for r in records(path)}
        for item in suite.items:
            assert item.condition("good").sentence == by_number[item.item_number]["sentence_good"]
            assert item.condition("bad").sentence == by_number[item.item_number]["sentence_bad"]
            assert item.condition("good").regions[2] == item.condition("bad").regions[2]
        rules.update(conversion.rules)
        skipped += [(path.stem, problem.pair_id) for problem in conversion.problems]
        assert conversion.fallbacks == 0
    assert dict(rules) == DOCUMENTED_RULES and sum(rules.values()) == 66993
    assert skipped == [("passive_1", "324"), ("passive_1", "810"),
                       ("principle_A_case_2", "105"), ("principle_A_case_2", "287"),
                       ("principle_A_case_2", "372"), ("principle_A_case_2", "816"),
                       ("principle_A_case_2", "967")]
    assert prediction_counts == Counter({1: 27, 2: 40})
    print(f"67 paradigms converted and validated in {time.monotonic() - started:.1f} s")


# --- sources and fetching -----------------------------------------------------------------------

def test_sources_name_67_paradigms_at_the_pinned_commit() -> None:
    assert len(PARADIGMS) == 67 and len({p.suite_name for p in PARADIGMS.values()}) == 67
    assert all(len(p.sha256) == 64 for p in PARADIGMS.values())
    paradigm = paradigm_of_suite("blimp_wh_island")
    assert paradigm is not None and paradigm.url == (
        "https://raw.githubusercontent.com/alexwarstadt/blimp/"
        f"{BLIMP_COMMIT}/data/wh_island.jsonl")
    assert paradigm_of_suite("wh_island") is None and paradigm_of_suite("blimp_nope") is None
    assert len(REGION_NAMES) == 4


def test_an_offline_folder_stands_in_for_the_download(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(BLIMP_DIR_ENV, raising=False)
    path = resolve_blimp_suite("blimp_wh_island", tmp_path, BLIMP)  # finds BLIMP/data/
    assert path == tmp_path / "blimp_wh_island.json"
    suite = load_suite(path)
    assert suite.name == "blimp_wh_island" and len(suite.items) == 1000
    monkeypatch.setenv(BLIMP_DIR_ENV, str(BLIMP / "data"))
    assert load_suite(resolve_blimp_suite("blimp_causative", tmp_path)).name == "blimp_causative"


def test_a_modified_offline_copy_is_refused(tmp_path: Path) -> None:
    local = tmp_path / "local"
    local.mkdir()
    text = (BLIMP / "data" / "causative.jsonl").read_text().replace("Aaron", "Erin", 1)
    (local / "causative.jsonl").write_text(text)
    with pytest.raises(BlimpError, match="causative.jsonl is not BLiMP's causative.*convert_file"):
        resolve_blimp_suite("blimp_causative", tmp_path / "cache", local)
    assert not (tmp_path / "cache" / "blimp_causative.json").exists()


def test_an_unknown_name_suggests_close_ones(tmp_path: Path) -> None:
    with pytest.raises(BlimpError, match="unknown BLiMP suite 'blimp_wh_islands'.*blimp_wh_island"):
        resolve_blimp_suite("blimp_wh_islands", tmp_path)


@pytest.fixture
def served_blimp(tmp_path: Path) -> Iterator[str]:
    """A real HTTP server on loopback serving two of the BLiMP files."""
    root = tmp_path / "www"
    (root / "data").mkdir(parents=True)
    for uid in ("causative", "wh_island"):
        shutil.copy(BLIMP / "data" / f"{uid}.jsonl", root / "data")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}" + "/{path}"
    server.shutdown()


def test_download_is_checked_and_cached(tmp_path: Path, served_blimp: str,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(BLIMP_DIR_ENV, raising=False)
    cache = tmp_path / "cache"
    path = resolve_blimp_suite("blimp_causative", cache, url=served_blimp)
    assert load_suite(path).name == "blimp_causative"
    assert (cache / "blimp" / "causative.jsonl").read_bytes() == (
        BLIMP / "data" / "causative.jsonl").read_bytes()
    (tmp_path / "www" / "data" / "causative.jsonl").write_text("changed\n")  # the cache is used now
    assert load_suite(resolve_blimp_suite("blimp_causative", cache, url=served_blimp))
    (tmp_path / "www" / "data" / "wh_island.jsonl").write_text("{}\n")
    with pytest.raises(BlimpError, match="does not match its recorded SHA-256"):
        resolve_blimp_suite("blimp_wh_island", cache, url=served_blimp)
    assert not (cache / "blimp" / "wh_island.jsonl").exists()
    with pytest.raises(BlimpError, match=f"could not download.*404.*{BLIMP_DIR_ENV}"):
        resolve_blimp_suite("blimp_transitive", cache, url=served_blimp)


# --- the paper's figures and the leaderboard groups ---------------------------------------------

def test_leaderboard_groups_cover_every_paradigm_once_per_grouping() -> None:
    groups = blimp_groups()
    assert len(groups.overall) == 67
    assert sorted(groups.by_field) == ["morphology", "semantics", "syntax", "syntax_semantics"]
    assert len(groups.by_phenomenon) == 12
    for grouping in (groups.by_field, groups.by_phenomenon):
        assert sorted(n for names in grouping.values() for n in names) == sorted(groups.overall)
    assert "blimp_animate_subject_trans" in groups.by_phenomenon["argument_structure"]


def test_the_shipped_figures_cover_67_paradigms_and_give_the_papers_means() -> None:
    rows = paper_paradigms()
    assert sorted(rows) == sorted(PARADIGMS)
    assert rows["adjunct_island"].accuracy == {"gpt2": 0.894, "txl": 0.645, "lstm": 0.674,
                                               "ngram": 0.479, "human": 0.94}
    assert paper_means()["overall"]["gpt2"] == pytest.approx(0.830238806)
    assert set(PAPER_COLUMNS) == {"gpt2", "txl", "lstm", "ngram", "human"}


def test_the_shipped_figures_are_the_papers_files() -> None:
    published = [json.loads(line) for line in (BLIMP / "models_summary.jsonl").open()]
    with (BLIMP / "human_validation_summary.csv").open() as handle:
        human = {row["Condition"]: float(row["total_mean"]) for row in csv.DictReader(handle)}
    rows = paper_paradigms()
    means = paper_means()
    for entry in published:
        models = {key: entry[key] for key in ("gpt2", "txl", "lstm", "ngram")}
        if entry["UID"] == "overall":  # the paper's unweighted means
            for key, value in models.items():
                assert means[entry["linguistics_term"]][key] == pytest.approx(value, abs=1e-9)
        else:
            row = rows[entry["UID"]]
            assert row.phenomenon == entry["linguistics_term"]
            assert {k: row.accuracy[k] for k in models} == models
            assert row.accuracy["human"] == human[entry["UID"]]


# --- a real model -------------------------------------------------------------------------------

@pytest.mark.slow
def test_a_real_model_scores_every_kind_of_item_and_the_regions_cover_the_sentence() -> None:
    """SmolLM2-135M (the embedded default model) scores pairs of every split and shape, empty
    regions included: every item is scorable, every token after the beginning-of-text token
    counts for a region, and the four region sums add up to the whole-sentence sum."""
    from syntaxgym_helm.clients.embedded.catalogue import embedded_model
    from syntaxgym_helm.clients.local.logprob_engine import LogprobEngine
    from syntaxgym_helm.clients.local.model_loading import load_model_and_tokenizer
    from syntaxgym_helm.core.item_evaluation import TokenScore, evaluate_item

    model_info = embedded_model("smollm2-135m-instruct-q4_1")
    if not model_info.installed():
        pytest.skip(f"SmolLM2 is not installed ({model_info.pip_install})")
    gguf = model_info.gguf_path()
    model, tokenizer = load_model_and_tokenizer(str(gguf.parent), gguf_file=gguf.name,
                                                device="cpu")
    engine = LogprobEngine(model, tokenizer)
    # pairIDs: each split and shape; 156, 509, 403 and 868 have an empty critical region.
    chosen = {"anaphor_gender_agreement": {0, 1, 2},
              "determiner_noun_agreement_with_adj_2": {0, 1},
              "matrix_question_npi_licensor_present": {0, 1}, "adjunct_island": {0, 1},
              "wh_questions_object_gap": {0, 1}, "transitive": {156, 509}, "passive_1": {403},
              "passive_2": {868}}
    for uid, numbers in chosen.items():
        suite = parse_suite(convert_file(BLIMP / "data" / f"{uid}.jsonl").suite)
        items = [item for item in suite.items if item.item_number in numbers]
        assert len(items) == len(numbers)
        sentences = [c.sentence for item in items for c in item.conditions]
        scored = {s.prompt: s for s in engine.prompt_logprobs(sentences)}
        for item in items:
            results = {
                c.condition_name: [
                    TokenScore(text, logprob)
                    for text, logprob in zip(
                        scored[c.sentence].texts, scored[c.sentence].logprobs, strict=False
                    )
                ]
                for c in item.conditions
            }
            evaluation = evaluate_item(suite, item, results, prefix=engine.bos_text)
            assert evaluation.scorable, (uid, item.item_number, evaluation.problems)
            assert all(outcome.holds is not None for outcome in evaluation.predictions)
            for values in evaluation.conditions:
                assert values.regions[0] is None and None not in values.regions[1:]
                whole = values.value("sum", None)
                assert whole > 0
                parts = sum(values.value("sum", region) for region in (1, 2, 3, 4))
                assert parts == pytest.approx(whole, abs=1e-9)
