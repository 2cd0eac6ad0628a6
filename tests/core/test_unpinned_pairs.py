"""MultiBLiMP 1.0 and BLiMP-NL: read from offline copies in their published formats (they are
not pinned: their files could not be fetched where the package was built), named as
lm-evaluation-harness names their tasks, and every script of MultiBLiMP cut at its words.

The files are written by this project in the data sets' formats
(``tests/fixtures/multilingual/excerpts/multiblimp/<code>/data.tsv``: the published columns,
pandas' quoting; ``blimp_nl/<phenomenon>__<paradigm>.jsonl``), with sentences in 13 scripts
(four of them also as ancient languages' treebanks write them).
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from fixtures import MULTILINGUAL_EXCERPTS_DIR
from syntaxgym_helm.core.minimal_pairs.catalogue import (
    DATASETS,
    LANGUAGE_NAMES,
    convert_file,
    dataset_of_suite,
    pair_groups,
)
from syntaxgym_helm.core.minimal_pairs.dataset import PairDataError
from syntaxgym_helm.core.registry import RegistryError, load_named_suite
from syntaxgym_helm.core.suite import parse_suite
from syntaxgym_helm.core.validation import check_suite

EXCERPTS = MULTILINGUAL_EXCERPTS_DIR
MULTIBLIMP, BLIMP_NL = DATASETS["multiblimp"], DATASETS["blimp_nl"]


def _rows(path: Path) -> list[list[str]]:
    import csv

    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.reader(handle, delimiter="\t"))


def test_the_tables_name_the_tasks_of_lm_evaluation_harness() -> None:
    assert (len(MULTIBLIMP.files()), sum(f.pairs for f in MULTIBLIMP.files())) == (101, 121_305)
    assert (len(BLIMP_NL.files()), sum(f.pairs for f in BLIMP_NL.files())) == (84, 8_400)
    assert not MULTIBLIMP.pinned and not BLIMP_NL.pinned
    assert {f.sha256 for f in [*MULTIBLIMP.files(), *BLIMP_NL.files()]} == {""}
    assert LANGUAGE_NAMES["nld"] == "Dutch" and LANGUAGE_NAMES["grc"] == "Ancient Greek"
    assert dataset_of_suite("blimp_nl_passive__impersonal") is BLIMP_NL
    assert dataset_of_suite("blimp_passive_1") is DATASETS["blimp"]
    groups = {g.label: len(g.suites) for g in pair_groups(BLIMP_NL)}
    assert len(groups) == 22 and groups["wh_movement"] == 6
    assert pair_groups(MULTIBLIMP) == []


def test_every_script_is_cut_at_the_agreeing_word() -> None:
    """Each fixture language's pairs: the marks (``head``/``swap_head``) sit exactly on the
    difference, punctuation glued to them (a danda, an Ethiopic or Armenian full stop) left
    aside, and every prompt is the file's sentence."""
    files = sorted((EXCERPTS / "multiblimp").glob("*/data.tsv"))
    assert len(files) == 18
    for path in files:
        conversion = convert_file(MULTIBLIMP, path)
        assert not conversion.problems, conversion.problems
        assert dict(conversion.marks) == {"exact": len(conversion.suite["items"])}, path
        assert check_suite(conversion.suite, conversion.name).ok
        suite = parse_suite(conversion.suite, conversion.name)
        rows = _rows(path)
        header = rows[0]
        for item, row in zip(suite.items, rows[1:], strict=True):
            record = dict(zip(header, row, strict=True))
            assert (item.condition("good").sentence, item.condition("bad").sentence) == (
                record["sen"], record["wrong_sen"])
            critical = item.condition("good").regions[1].content
            assert record["head"] in critical and len(critical) <= len(record["head"]) + 1


def test_a_language_that_is_not_the_files_is_reported(tmp_path: Path) -> None:
    source = EXCERPTS / "multiblimp" / "rus" / "data.tsv"
    target = tmp_path / "ukr" / "data.tsv"
    target.parent.mkdir()
    target.write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(PairDataError, match=r"ukr/data.tsv: no pair could be converted \(.*line 2: "
                                            r"its paradigm 'rus' is not the file's 'ukr'"):
        convert_file(MULTIBLIMP, target)


def test_blimp_nl_records_convert_with_their_phenomenon_as_group() -> None:
    conversion = convert_file(BLIMP_NL, EXCERPTS / "blimp_nl" / "verb_second__order_main.jsonl")
    meta = conversion.suite["meta"]
    assert (conversion.name, meta["group"], meta["language"]) == (
        "blimp_nl_verb_second__order_main", "verb_second", "nl")
    assert dict(conversion.rules) == {("word_diff", "reordering"): 2}
    assert [i["item_number"] for i in conversion.suite["items"]] == [1, 2]


@pytest.mark.parametrize("name, suite, folder", [
    ("multiblimp", "multiblimp_heb", EXCERPTS / "multiblimp"),
    ("blimp_nl", "blimp_nl_passive__impersonal", EXCERPTS / "blimp_nl")])
def test_unpinned_suites_run_from_an_offline_copy_only(name: str, suite: str, folder: Path,
                                                       tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    dataset = DATASETS[name]
    monkeypatch.delenv(dataset.env_var, raising=False)
    with pytest.raises(RegistryError, match=rf"not pinned in this package.*{dataset.env_var}"):
        load_named_suite(suite, tmp_path / "cache")
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    monkeypatch.setenv(dataset.env_var, str(copy))
    loaded = load_named_suite(suite, tmp_path / "cache")
    path = copy / dataset.by_suite()[suite].path
    assert loaded.name == suite and len(loaded.items) == 2
    assert loaded.meta.extra["source_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert loaded.meta.extra["source_commit"] == ""
