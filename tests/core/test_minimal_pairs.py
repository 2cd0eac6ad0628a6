"""CLAMS, RuBLiMP, TurBLiMP and SLING as suites: regions from each pair (by the data set's marks
where it has them), every pair converted or reported, bad input located, checked sources, names.

Fast tests read ``tests/fixtures/multilingual`` (excerpts of every file, and one whole file per
data set); the checks of every file of the four data sets (439,226 pairs) read the project's
shared copy and skip where it is absent.
"""

from __future__ import annotations

import functools
import gzip
import http.server
import re
import shutil
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fixtures import FULL_MULTILINGUAL_DIR, MULTILINGUAL_DIR, MULTILINGUAL_EXCERPTS_DIR
from syntaxgym_helm.cli.main import main
from syntaxgym_helm.core.minimal_pairs.catalogue import (
    DATASETS,
    convert_file,
    pair_groups,
    source_file,
)
from syntaxgym_helm.core.minimal_pairs.convert import WHOLE_SENTENCE, Conversion, decode_lines
from syntaxgym_helm.core.minimal_pairs.dataset import MinimalPair, PairDataError
from syntaxgym_helm.core.minimal_pairs.fetch import convert_named, resolve_named, source_bytes
from syntaxgym_helm.core.minimal_pairs.turblimp import turkish_fold
from syntaxgym_helm.core.registry import RegistryError, load_named_suite
from syntaxgym_helm.core.suite import Suite, load_suite, parse_suite
from syntaxgym_helm.core.validation import check_suite

EXCERPTS = MULTILINGUAL_EXCERPTS_DIR


def convert(dataset: str, path: str) -> Conversion:
    return convert_file(DATASETS[dataset], EXCERPTS / dataset / path)


def regions(conversion: Conversion, number: int, condition: str) -> tuple[str, ...]:
    item = next(i for i in conversion.suite["items"] if i["item_number"] == number)
    found = next(c for c in item["conditions"] if c["condition_name"] == condition)
    assert [r["region_number"] for r in found["regions"]] == [1, 2, 3, 4]
    return tuple(r["content"] for r in found["regions"])


def sentences(conversion: Conversion) -> dict[int, tuple[str, str]]:
    """Each item's (good, bad) sentence as the scenario sends it (its regions joined by the
    suite's ``meta.region_separator``), from the suite validated as a suite file would be."""
    suite = parse_suite(conversion.suite, conversion.name)
    return {item.item_number: (item.condition("good").sentence, item.condition("bad").sentence)
            for item in suite.items}


# --- one data set at a time, on excerpts of the real files --------------------------------------

def test_clams_pairs_are_true_then_false_lines_numbered_by_the_true_line() -> None:
    conversion = convert("clams", "en_evalset/simple_agrmt.txt")
    assert conversion.name == "clams_en_simple_agrmt"
    assert regions(conversion, 1, "good") == ("the author", "laughs", "", "")
    assert regions(conversion, 1, "bad") == ("the author", "laugh", "", "")
    meta = conversion.suite["meta"]
    assert (meta["dataset"], meta["language"], meta["paradigm"]) == ("clams", "en", "simple_agrmt")
    # (an excerpt: not the file at the pinned commit, so it names the file it was cut from)
    assert meta["source_commit"] == "" and meta["modified_from"] == (
        "https://raw.githubusercontent.com/aaronmueller/clams/"
        "36b5c9a56ecc51d3eedb6c1a85b805085d631c71/en_evalset/simple_agrmt.txt")
    assert [p["formula"] for p in conversion.suite["predictions"]] == [WHOLE_SENTENCE]
    # French agreement of verb and adjective: two adjacent words, one critical region.
    french = convert("clams", "fr_evalset/simple_agrmt.txt")
    assert regions(french, 3, "bad") == ("les auteurs", "est jeune", "", "")
    # "no" moves from one noun phrase to the other: a reordering.
    npi = convert("clams", "en_evalset/npi_across_anim.txt")
    assert npi.rules == Counter({("word_diff", "reordering"): 2})
    assert regions(npi, 1, "good")[1] == "no authors that the"
    # One grammatical sentence paired with two wrong pronouns: two items, by position.
    reflexives = convert("clams", "en_evalset/reflexives_across.txt")
    assert [regions(reflexives, n, "bad")[1] for n in (1, 3)] == ["himself", "herself"]
    assert regions(reflexives, 1, "good") == regions(reflexives, 3, "good")


def test_rublimp_uses_the_edited_words_where_they_are_the_difference() -> None:
    conversion = convert("rublimp", "change_declension_ending.csv")
    assert conversion.rules == Counter({("marked", "one_span"): 4})
    assert conversion.marks == Counter({"exact": 4})
    # Soft hyphens in the word columns (not in the sentences) do not stop the match.
    assert regions(conversion, 77846, "bad")[:3] == ("В", "основи", "хозяйства")
    # The particle moves: the marked word lies inside a larger difference, cut by the difference.
    concord = convert("rublimp", "negative_concord.csv")
    assert concord.marks == Counter({"inside": 3})
    assert regions(concord, 4002, "bad") == ("Уюк", "станет мужем не", "Росы", "никогда!")
    assert concord.suite["meta"]["rublimp_conversion"]["marked"] == {"inside": 3}
    # A word glued to a quote is not found as a word: reported as missing, cut by the difference.
    suffix = convert("rublimp", "add_new_suffix.csv")
    assert suffix.marks == Counter({"exact": 3, "missing": 1})
    assert regions(suffix, 122192, "bad")[1] == 'мастерствов"(его'


def test_turblimp_cues_and_critical_region() -> None:
    determiners = convert("turblimp", "base/augmented_determiners.csv")
    # The bad side's cue is ∅: its critical region is empty; the noun after it is the region
    # TurBLiMP marks as critical, right after the difference: next_word.
    assert regions(determiners, 2, "good") == ("Sadece deniz kenarında serinleten", "bir",
                                               "rüzgar", "hissettik.")
    assert regions(determiners, 2, "bad")[1] == ""
    assert determiners.marks_after == Counter({"next_word": 3})
    # A cue of two words where one differs: the critical region is the whole cue.
    transitive = convert("turblimp", "base/augmented_argument_structure_transitive.csv")
    assert regions(transitive, 5, "good") == ("İki arkadaşımın", "doğum gününü", "unuttum.", "")
    assert transitive.marks == Counter({"exact": 3, "covers": 1})
    # Verb-initial order: the capitalised verb is TurBLiMP's lower-case critical region.
    vos = convert("turblimp", "experimental/argument_structure_transitive_VOS.csv")
    assert vos.name == "turblimp_exp_transitive_VOS"
    assert vos.marks_after == Counter({"prefix": 3})
    assert turkish_fold("Işık İzmir") == "ışık izmir" and "I".lower() == "i"
    # Two spaces between two words stay, inside a region: the sentence is given back exactly.
    relative = convert("turblimp", "base/augmented_relative_clauses.csv")
    assert "taşıyan  kardeşi" in regions(relative, 5, "good")[3]


def test_identical_pairs_are_reported_by_line_and_not_scored() -> None:
    turkish = convert("turblimp", "base/augmented_anaphor_agreement.csv")
    assert [(p.line, p.reason) for p in turkish.problems] == [
        (2, "good_sentence and bad_sentence are the same sentence")]
    assert [item["item_number"] for item in turkish.suite["items"]] == [3, 4]
    assert turkish.suite["meta"]["turblimp_conversion"]["skipped"] == [
        {"line": 2, "reason": turkish.problems[0].reason}]
    mandarin = convert("sling", "Aspect/zai_le.txt")
    assert [p.line for p in mandarin.problems] == [8]
    assert str(mandarin.problems[0]).endswith(
        "zai_le.txt line 8: the sentence before @@@ and the sentence after @@@ are the same "
        "sentence")


def test_every_sling_prompt_is_its_source_sentence() -> None:
    """Every line of the 54 excerpts: the sentence the scenario sends (regions joined by the
    suite's separator, none) is the text before and after @@@ exactly, character for character."""
    files = sorted((EXCERPTS / "sling").rglob("*.txt"))
    assert len(files) == 54
    for path in files:
        conversion = convert_file(DATASETS["sling"], path)
        assert conversion.suite["meta"]["region_separator"] == ""
        sent = sentences(conversion)
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            good, bad = line.split("@@@")
            if good != bad:
                assert sent[number] == (good, bad), (path, number)
    classifier = convert("sling", "Classifier-Noun/cl_simple_noun.txt")
    assert regions(classifier, 1, "good") == ("约５万", "名", "保", "安人员。")


def test_every_excerpt_converts_and_validates_and_reads_back_its_sentences() -> None:
    for name in ("clams", "rublimp", "turblimp"):
        for path in sorted(p for p in (EXCERPTS / name).rglob("*") if p.is_file()):
            conversion = convert_file(DATASETS[name], path)
            report = check_suite(conversion.suite, conversion.name)
            assert report.ok, (path, [str(e) for e in report.errors[:2]])
            known = DATASETS[name].by_suite()[conversion.name]  # the path names a known suite
            assert known.language == conversion.suite["meta"]["language"]
            for good, bad in sentences(conversion).values():
                assert good != bad


# --- bad input: located, and nothing else lost --------------------------------------------------

def test_bad_lines_are_listed_by_file_and_line_and_the_others_convert(tmp_path: Path) -> None:
    folder = tmp_path / "en_evalset"
    folder.mkdir()
    path = folder / "simple_agrmt.txt"
    path.write_bytes(b"True\tthe author laughs\nFalse\tthe author laugh\n"
                     b"True\tthe dog\xff barks\nFalse\tthe dog bark\n"  # an undecodable byte
                     b"True the pilot smiles\n"  # no TAB
                     b"True\tthe pilots smile\nFalse\tthe pilots smiles\n")
    conversion = convert_file(DATASETS["clams"], path)
    found = {p.line: p.reason for p in conversion.problems}
    assert [item["item_number"] for item in conversion.suite["items"]] == [1, 6]
    assert "not UTF-8 text: byte 0xff at column 13" in found[3]
    assert "without its True line" in found[4]
    assert "expected True or False, a TAB and a sentence" in found[5]
    assert str(conversion.problems[0]).startswith(f"{path} line 3: ")
    # A wrong language code (from the folder) would fail every pair: one error naming the file,
    # where the language comes from and the layout to use.
    wrong = tmp_path / "xx_evalset"
    wrong.mkdir()
    shutil.copy(path, wrong / "simple_agrmt.txt")
    with pytest.raises(PairDataError, match=r"xx_evalset/simple_agrmt.txt: its language 'xx', "
                                            r"read from where the file lies, is not one of "
                                            r"CLAMS's \(en, fr, de, he, ru\): lay it out as the "
                                            r"data set does \(\w+_evalset/"):
        convert_file(DATASETS["clams"], wrong / "simple_agrmt.txt")


def test_a_csv_header_with_an_unknown_column_is_an_error_naming_the_line(tmp_path: Path) -> None:
    source = (EXCERPTS / "rublimp" / "verb_gen_object.csv").read_text(encoding="utf-8")
    header, *rows = source.splitlines()
    path = tmp_path / "verb_gen_object.csv"
    path.write_text("\n".join([header + ",note", *rows]) + "\n", encoding="utf-8")
    with pytest.raises(PairDataError, match=r"verb_gen_object.csv line 1: the header .* unknown "
                                            r"column\(s\) 'note'"):
        convert_file(DATASETS["rublimp"], path)
    # A row with a field too many, or an id that is not a number: that row only.
    broken = [rows[0] + ",extra", rows[1].replace(rows[1].split(",")[0], "x7", 1), rows[2]]
    path.write_text("\n".join([header, *broken]) + "\n", encoding="utf-8")
    conversion = convert_file(DATASETS["rublimp"], path)
    found = {p.line: p.reason for p in conversion.problems}
    assert "12 fields separated by ','" in found[2] and "id 'x7'" in found[3]
    assert len(conversion.suite["items"]) == 1
    sling = tmp_path / "sling.txt"
    sling.write_text("好@@@坏@@@丑\n他来了。@@@他来了了。\n", encoding="utf-8")
    conversion = convert_file(DATASETS["sling"], sling)
    assert [(p.line, "has 2 @@@" in p.reason) for p in conversion.problems] == [(1, True)]


def test_a_csv_header_that_cannot_be_read_is_an_error_naming_line_1(tmp_path: Path) -> None:
    """A header with a carriage return inside (a file with CR line ends is all one line) or not
    in UTF-8: one error naming line 1 and what to do (before: a traceback from the csv module,
    and a header blamed on line 2, the first data row)."""
    data = (EXCERPTS / "multiblimp" / "heb" / "data.tsv").read_bytes()
    folder = tmp_path / "heb"
    folder.mkdir()
    path = folder / "data.tsv"
    for damaged, said in ((data.replace(b"\n", b"\r"), "holds a carriage return"),
                          (data.replace(b"\t", b"\r\t", 1), "holds a carriage return"),
                          (b"\xe9" + data, "is not UTF-8 text"),
                          (data.decode("utf-8").encode("utf-16"), "is not UTF-8 text")):
        path.write_bytes(damaged)
        with pytest.raises(PairDataError, match=rf"heb/data.tsv line 1: the header {said}"):
            convert_file(DATASETS["multiblimp"], path)


# --- names, sources, the registry ----------------------------------------------------------------

def test_suite_names_are_unique_stable_and_made_from_the_paths() -> None:
    names = [f.suite for d in DATASETS.values() for f in d.files()]
    assert len(names) == len(set(names)) == 67 + 50 + 45 + 38 + 54 + 118 + 101 + 84
    for dataset in DATASETS.values():
        assert all(f.suite.startswith(dataset.prefix) for f in dataset.files())
        for file in dataset.files():
            described = dataset.describe(file.path)
            assert (described.suite, described.language, described.paradigm) == (
                file.suite, file.language, file.paradigm)
            assert source_file(file.suite) == (dataset, file)
    assert {f.suite for f in DATASETS["sling"].files()} >= {
        "sling_classifier_noun_cl_simple_noun", "sling_anaphor_plural_cl_self_male",
        "sling_anaphor_reflexive_auto_subj_orientation"}
    assert "turblimp_exp_ditransitive_dik" in DATASETS["turblimp"].by_suite()
    assert sum(f.pairs for f in DATASETS["clams"].files() if f.language == "en") == 157_346
    assert [sum(f.pairs for f in DATASETS[n].files()) for n in ("rublimp", "turblimp", "sling")] \
        == [45_000, 18_200, 40_560]
    groups = {g.label: len(g.suites) for g in pair_groups(DATASETS["clams"])}
    assert groups["language: French"] == 7 and groups["reflexive_anaphora"] == 3


def test_the_registry_loads_each_data_sets_suite_from_an_offline_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, suite, items in (("clams", "clams_en_simple_agrmt", 140),
                               ("rublimp", "rublimp_verb_gen_object", 1000),
                               ("turblimp", "turblimp_exp_transitive_VOS", 100),
                               ("sling", "sling_anaphor_reflexive_auto_subj_orientation", 40)):
        monkeypatch.delenv(DATASETS[name].env_var, raising=False)
        loaded = load_named_suite(suite, tmp_path / "cache", MULTILINGUAL_DIR / name)
        assert loaded.name == suite and len(loaded.items) == items
        written = load_suite(tmp_path / "cache" / f"{suite}.json")  # the file, validated
        assert written == loaded
    # The data set's variable stands in for suites_dir; a .gz copy is read unpacked.
    packed = tmp_path / "packed" / "en_evalset"
    packed.mkdir(parents=True)
    data = (MULTILINGUAL_DIR / "clams" / "en_evalset" / "simple_agrmt.txt").read_bytes()
    (packed / "simple_agrmt.txt.gz").write_bytes(gzip.compress(data))
    monkeypatch.setenv("SYNTAXGYM_CLAMS_DIR", str(packed.parent))
    assert len(load_named_suite("clams_en_simple_agrmt", tmp_path / "c2").items) == 140


def test_a_modified_copy_is_refused_and_a_wrong_name_gets_suggestions(tmp_path: Path) -> None:
    local = tmp_path / "local" / "en_evalset"
    local.mkdir(parents=True)
    text = (MULTILINGUAL_DIR / "clams" / "en_evalset" / "simple_agrmt.txt").read_text()
    (local / "simple_agrmt.txt").write_text(text.replace("author", "writer", 1))
    with pytest.raises(RegistryError, match="is not CLAMS's simple_agrmt at the pinned commit.*"
                                            "syntaxgym-helm convert clams FILE"):
        load_named_suite("clams_en_simple_agrmt", tmp_path / "cache", local.parent)
    # Converted by path, as the message says, it no longer claims the pinned commit (it did).
    clams = DATASETS["clams"]
    modified = convert_file(clams, local / "simple_agrmt.txt").suite
    assert check_suite(modified, "modified").ok
    pinned = convert_file(clams, MULTILINGUAL_DIR / "clams" / "en_evalset" / "simple_agrmt.txt")
    assert pinned.suite["meta"]["source_commit"] == clams.commit != ""
    assert modified["meta"]["source_commit"] == "" and "source_url" not in modified["meta"]
    assert modified["meta"]["modified_from"] == pinned.suite["meta"]["source_url"]
    with pytest.raises(RegistryError, match="unknown SLING suite 'sling_aspect_zai_lee'.*"
                                            "did you mean sling_aspect_zai_le"):
        load_named_suite("sling_aspect_zai_lee", tmp_path / "cache")
    # Case, and a language named in words, are found too (before: multiblimp_yrl, ... for
    # multiblimp_NLD, and multiblimp_ttc, ... for multiblimp_dutch).
    for name in ("multiblimp_NLD", "multiblimp_dutch", "multiblimp_Dutc"):
        with pytest.raises(RegistryError, match="did you mean multiblimp_nld,"):
            load_named_suite(name, tmp_path / "cache")
    with pytest.raises(RegistryError, match=r"unknown suite 'mandarin_classifer_adj' \(did you "
                                            "mean mandarin_classifier_adj,"):
        load_named_suite("mandarin_classifer_adj", tmp_path / "cache")


def test_an_offline_copys_errors_name_the_file_read(tmp_path: Path) -> None:
    """Where the data set's folder is given (suites_dir, or its variable), the messages name
    the file read there, not the data set's relative path (which of two copies was it?)."""
    folder = tmp_path / "offline" / "heb"
    folder.mkdir(parents=True)
    data = (EXCERPTS / "multiblimp" / "heb" / "data.tsv").read_text(encoding="utf-8")
    header, *rows = data.splitlines()
    (folder / "data.tsv").write_text("\n".join([header.replace("\tsen\t", "\tsentence\t"),
                                                *rows]) + "\n", encoding="utf-8")
    with pytest.raises(RegistryError, match=re.escape(f"{folder / 'data.tsv'} line 1: the header")):
        load_named_suite("multiblimp_heb", tmp_path / "cache", folder.parent)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    """A real HTTP server on loopback serving the whole RuBLiMP file at its source path."""
    root = tmp_path / "www" / "datasets"
    root.mkdir(parents=True)
    shutil.copy(MULTILINGUAL_DIR / "rublimp" / "verb_gen_object.csv", root)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler,
                                directory=str(tmp_path / "www"))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}" + "/{path}"
    server.shutdown()


def test_a_download_is_checked_and_cached(tmp_path: Path, served: str,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    dataset = DATASETS["rublimp"]
    monkeypatch.delenv(dataset.env_var, raising=False)
    cache = tmp_path / "cache"
    path = resolve_named(dataset, "rublimp_verb_gen_object", cache, url=served)
    assert load_suite(path).name == "rublimp_verb_gen_object"
    assert (cache / "rublimp" / "verb_gen_object.csv").read_bytes() == (
        MULTILINGUAL_DIR / "rublimp" / "verb_gen_object.csv").read_bytes()
    (tmp_path / "www" / "datasets" / "verb_gen_object.csv").write_text("changed\n")
    assert convert_named(dataset, "rublimp_verb_gen_object", cache, url=served)  # from the cache
    shutil.rmtree(cache)
    with pytest.raises(PairDataError, match="does not match its recorded SHA-256"):
        convert_named(dataset, "rublimp_verb_gen_object", cache, url=served)
    with pytest.raises(PairDataError, match="could not download.*404.*SYNTAXGYM_RUBLIMP_DIR"):
        convert_named(dataset, "rublimp_verb_acc_object", cache, url=served)


def test_list_and_convert_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"clams +CLAMS +en, fr, de, he, ru +50 +335,466 +SYNTAXGYM_CLAMS_DIR", out)
    assert main(["list", "turblimp"]) == 0
    out = capsys.readouterr().out
    assert "turblimp_exp_transitive_VOS" in out and out.rstrip().endswith(
        "38 suites, 18,200 pairs")
    target = tmp_path / "suite.json"
    path = EXCERPTS / "turblimp" / "base" / "augmented_anaphor_agreement.csv"
    assert main(["convert", "turblimp", str(path), "-o", str(target)]) == 0
    out = capsys.readouterr().out
    assert "2 of 3 pairs converted" in out and "line 2: good_sentence and bad_sentence" in out
    assert load_suite(target).name == "turblimp_anaphor_agreement"


# --- every file of the four data sets ---------------------------------------------------------

#: The region rules over every pair (docs/multilingual.md gives these counts).
DOCUMENTED = {
    "clams": {"rules": {("word_diff", "one_span"): 325_626, ("word_diff", "reordering"): 9_840},
              "marks": {}, "after": {}, "skipped": 0},
    "rublimp": {"rules": {("marked", "one_span"): 42_472, ("word_diff", "one_span"): 448,
                          ("word_diff", "reordering"): 1_009,
                          ("word_diff", "several_spans"): 1_071},
                "marks": {"exact": 42_472, "inside": 2_527, "missing": 1}, "after": {},
                "skipped": 0},
    "turblimp": {"rules": {("marked", "one_span"): 16_001, ("marked", "reordering"): 1_910,
                           ("marked", "several_spans"): 60, ("word_diff", "one_span"): 158,
                           ("word_diff", "reordering"): 30, ("word_diff", "several_spans"): 11},
                 "marks": {"exact": 17_769, "covers": 202, "inside": 133, "apart": 10,
                           "missing": 56},
                 "after": {"next_word": 3_864, "rest": 10_627, "prefix": 589, "critical": 21,
                           "missing": 69}, "skipped": 30},
    "sling": {"rules": {("char_diff", "one_span"): 35_496, ("char_diff", "reordering"): 3_984,
                        ("char_diff", "several_spans"): 1_056},
              "marks": {}, "after": {}, "skipped": 24},
}


#: CLAMS's 50 files (335,466 pairs) take most of a minute: left out of ``make test-fast``.
_EVERY_FILE = [pytest.param(name, marks=pytest.mark.slow) if name == "clams" else name
               for name in DOCUMENTED]


@pytest.mark.parametrize("name", _EVERY_FILE)
def test_every_file_converts_validates_and_sends_its_source_sentences(name: str,
                                                                       tmp_path: Path) -> None:
    """Every file of the data set, each converted once: every pair converts or is reported (the
    rule counts are those docs/multilingual.md gives), the project's validation accepts each
    suite as converted (with no warning but the two TurBLiMP pairs whose double space validation
    would normalise), and each item's sentences, as the scenario sends them, are the source's."""
    dataset = DATASETS[name]
    totals: dict[str, Any] = {"rules": Counter(), "marks": Counter(), "after": Counter(),
                              "skipped": 0}
    for file in dataset.files():
        conversion = convert_named(dataset, file.suite, tmp_path, FULL_MULTILINGUAL_DIR / name)
        record = conversion.suite["meta"][f"{name}_conversion"]
        assert record["pairs"] == file.pairs and record["items"] + len(record["skipped"]) == \
            file.pairs
        assert all("same sentence" in entry["reason"] for entry in record["skipped"])
        totals["rules"].update(conversion.rules)
        totals["marks"].update(conversion.marks)
        totals["after"].update(conversion.marks_after)
        totals["skipped"] += len(conversion.problems)
        report = check_suite(conversion.suite, conversion.name)
        assert report.ok and len(report.warnings) <= 2, (file.suite, report.warnings[:2])
        data = source_bytes(dataset, file, tmp_path, FULL_MULTILINGUAL_DIR / name, "")
        lines, _ = decode_lines(data, file.path)
        pairs = {p.number: p for p in dataset.read(lines, file, file.path)
                 if isinstance(p, MinimalPair)}
        suite = Suite.from_trusted_json(conversion.suite)  # as the registry loads it
        for item in suite.items:
            pair = pairs[item.item_number]
            assert (item.condition("good").sentence, item.condition("bad").sentence) == (
                pair.good, pair.bad), (file.suite, item.item_number)
    assert {key: dict(value) if isinstance(value, Counter) else value
            for key, value in totals.items()} == DOCUMENTED[name]
