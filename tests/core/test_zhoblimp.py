"""ZhoBLiMP as suites: its JSON records, read from the archive the authors publish (offline,
downloaded and checked whole, cached), its characters as region units, and its human agreement
read with the data into each suite's meta.

The repository states no licence, so the fast tests read sentences this project wrote in
ZhoBLiMP's format (``tests/fixtures/multilingual/excerpts/zhoblimp``) and archives built from
them; the checks of every one of its 35,400 pairs read the project's shared copy
(``SYNTAXGYM_ZHOBLIMP_DIR``, else ``../shared/zhoblimp``) and skip where there is none.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import http.server
import json
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from fixtures import MULTILINGUAL_EXCERPTS_DIR, SHARED_ZHOBLIMP_DIR, tar_gz
from syntaxgym_helm.core.minimal_pairs.catalogue import DATASETS, convert_file
from syntaxgym_helm.core.minimal_pairs.convert import decode_lines
from syntaxgym_helm.core.minimal_pairs.dataset import (
    Archive,
    DataSet,
    MinimalPair,
    PairDataError,
    SourceFile,
)
from syntaxgym_helm.core.minimal_pairs.fetch import (
    companion_figures,
    convert_named,
    source_bytes,
)
from syntaxgym_helm.core.registry import load_named_suite
from syntaxgym_helm.core.suite import Suite, parse_suite
from syntaxgym_helm.core.validation import check_suite

ZHOBLIMP = DATASETS["zhoblimp"]
EXCERPTS = MULTILINGUAL_EXCERPTS_DIR / "zhoblimp"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _sentences(suite: dict) -> dict[int, tuple[str, str]]:
    parsed = parse_suite(suite, suite["meta"]["name"])
    return {item.item_number: (item.condition("good").sentence, item.condition("bad").sentence)
            for item in parsed.items}


def test_records_become_items_cut_between_characters() -> None:
    conversion = convert_file(ZHOBLIMP, EXCERPTS / "ZhoBLiMP" / "classifier_noun_agreement.jsonl")
    meta = conversion.suite["meta"]
    # The group, by path too: the phenomenon its records give (there was none).
    assert (conversion.name, meta["group"], meta["region_separator"]) == (
        "zhoblimp_classifier_noun_agreement", "classifier", "")
    item = conversion.suite["items"][0]
    bad = item["conditions"][1]["regions"]
    assert [r["content"] for r in bad] == ["我买了一", "匹", "书", "。"]
    records = [json.loads(line) for line in (EXCERPTS / "ZhoBLiMP" /
                                             "classifier_noun_agreement.jsonl").read_text().split(
        "\n") if line]
    assert _sentences(conversion.suite) == {
        r["pairID"]: (r["sentence_good"], r["sentence_bad"]) for r in records}
    assert check_suite(conversion.suite, conversion.name).ok


def test_identical_and_malformed_records_are_reported_by_line_and_pair_id(tmp_path: Path) -> None:
    conversion = convert_file(ZHOBLIMP, EXCERPTS / "ZhoBLiMP" / "BA_deletion.jsonl")
    assert [str(p).rsplit(": ", 1)[-1] for p in conversion.problems] == [
        "sentence_good and sentence_bad are the same sentence"]
    assert conversion.suite["meta"]["zhoblimp_conversion"]["skipped"] == [
        {"line": 3, "pairID": "2",
         "reason": "sentence_good and sentence_bad are the same sentence"}]
    good = {"UID": "BA_deletion", "phenomenon": "BA", "sentence_good": "我把书放下了。",
            "sentence_bad": "我放下了书把。", "pairID": 0}
    lines = [good, {**good, "pairID": "x"}, {**good, "UID": "ya_insertion", "pairID": 2},
             {**good, "phenomenon": "passive", "pairID": 3}, {**good, "pairID": 0},
             {key: value for key, value in good.items() if key != "sentence_bad"}, [1, 2]]
    path = tmp_path / "ZhoBLiMP" / "BA_deletion.jsonl"
    path.parent.mkdir()
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in lines) + "\n{oops\n",
                    encoding="utf-8")
    problems = [str(p).split(": ", 1)[1] for p in convert_file(ZHOBLIMP, path).problems]
    assert problems == [
        "pairID 'x' is not a whole number",
        "its UID 'ya_insertion' is not the file's paradigm 'BA_deletion'",
        "its phenomenon 'passive' differs from the file's 'BA' (from its first record)",
        "pairID 0 was already used on line 1",
        "the field(s) 'sentence_bad' are missing",
        "a line must hold one JSON object",
        "not valid JSON: Expecting property name enclosed in double quotes at column 2"]


# --- the archive, as published ----------------------------------------------------------------



@pytest.fixture
def packed(tmp_path: Path) -> tuple[DataSet, SourceFile, Path]:
    """ZhoBLiMP's declaration pinned to an archive built from the fixture files (and the
    fixture's human validation file), the file of one paradigm, and the folder serving them
    laid out as the repository (``data/ZhoBLiMP.tar.gz``)."""
    members = {f"ZhoBLiMP/{path.name}": path.read_bytes()
               for path in sorted((EXCERPTS / "ZhoBLiMP").glob("*.jsonl"))}
    archive = tar_gz(members)
    human = (EXCERPTS / "human_validation_result.csv").read_bytes()
    www = tmp_path / "www" / "data"
    www.mkdir(parents=True)
    (www / "ZhoBLiMP.tar.gz").write_bytes(archive)
    (www / "human_validation_result.csv").write_bytes(human)
    assert ZHOBLIMP.archive is not None and ZHOBLIMP.companion is not None
    dataset = dataclasses.replace(
        ZHOBLIMP, archive=Archive(source_path="data/ZhoBLiMP.tar.gz", sha256=_sha(archive)),
        companion=dataclasses.replace(ZHOBLIMP.companion, sha256=_sha(human)))
    file = dataclasses.replace(
        ZHOBLIMP.describe("ZhoBLiMP/classifier_noun_agreement.jsonl"),
        sha256=_sha(members["ZhoBLiMP/classifier_noun_agreement.jsonl"]))
    return dataset, file, www.parent


@pytest.fixture
def served(packed: tuple[DataSet, SourceFile, Path]) -> Iterator[str]:
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(packed[2]))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}" + "/{path}"
    server.shutdown()


def test_a_file_is_read_from_the_archive_in_an_offline_folder(
        packed: tuple[DataSet, SourceFile, Path], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    dataset, file, repository = packed
    monkeypatch.delenv(dataset.env_var, raising=False)
    expected = (EXCERPTS / "ZhoBLiMP" / "classifier_noun_agreement.jsonl").read_bytes()
    # A checkout (data/ZhoBLiMP.tar.gz), and the shared copy's layout (the archive at the top).
    for folder in (repository, repository / "data"):
        assert source_bytes(dataset, file, tmp_path / "cache", folder, "") == expected
    # A member that is not the pinned one is refused, naming the archive.
    changed = tmp_path / "changed"
    changed.mkdir()
    (changed / "ZhoBLiMP.tar.gz").write_bytes(tar_gz({file.path: expected.replace(
        "一本书".encode(), "两本书".encode())}))
    with pytest.raises(PairDataError, match=r"changed/ZhoBLiMP.tar.gz is not ZhoBLiMP's "
                                            r"classifier_noun_agreement at the pinned commit"):
        source_bytes(dataset, file, tmp_path / "cache", changed, "")


def test_the_archive_is_downloaded_checked_and_cached_with_the_human_agreement(
        packed: tuple[DataSet, SourceFile, Path], served: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    dataset, file, repository = packed
    monkeypatch.delenv(dataset.env_var, raising=False)
    cache = tmp_path / "cache"
    data = source_bytes(dataset, file, cache, None, served)
    assert data == (EXCERPTS / "ZhoBLiMP" / "classifier_noun_agreement.jsonl").read_bytes()
    assert (cache / "zhoblimp" / "ZhoBLiMP.tar.gz").read_bytes() == (
        repository / "data" / "ZhoBLiMP.tar.gz").read_bytes()
    assert (cache / "zhoblimp" / file.path).read_bytes() == data
    figures = companion_figures(dataset, file, cache, None, served)
    assert {key: figures[key] for key in ("accuracy", "correct", "total")} == {
        "accuracy": 0.8, "correct": 20, "total": 25}
    (repository / "data" / "ZhoBLiMP.tar.gz").write_bytes(b"not the archive")
    (cache / "zhoblimp" / file.path).unlink()  # the cached archive still serves
    assert source_bytes(dataset, file, cache, None, served) == data
    (cache / "zhoblimp" / "ZhoBLiMP.tar.gz").unlink()
    (cache / "zhoblimp" / file.path).unlink()
    with pytest.raises(PairDataError, match="does not match its recorded SHA-256"):
        source_bytes(dataset, file, cache, None, served)
    other = dataclasses.replace(file, paradigm="ya_insertion")
    assert companion_figures(dataset, other, cache, None, served) == {
        "unavailable": "human_validation_result.csv has no row for ya_insertion"}


def test_without_the_data_a_run_is_told_where_to_put_it(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ZHOBLIMP.env_var, raising=False)
    dataset = dataclasses.replace(ZHOBLIMP, download="http://127.0.0.1:9/{repository}/{path}")
    with pytest.raises(PairDataError, match="could not download.*SYNTAXGYM_ZHOBLIMP_DIR"):
        convert_named(dataset, "zhoblimp_BA_deletion", tmp_path, tmp_path / "empty")


# --- every pair of the shared copy ---------------------------------------------------------------

_SHARED = pytest.mark.skipif(not (SHARED_ZHOBLIMP_DIR / "ZhoBLiMP.tar.gz").is_file(),
                             reason="no copy of ZhoBLiMP (SYNTAXGYM_ZHOBLIMP_DIR or ../shared)")


@_SHARED
@pytest.mark.slow  # a minute or two: 35,400 pairs, and their archive read 118 times
def test_every_zhoblimp_pair_converts_and_sends_its_source_sentences(tmp_path: Path) -> None:
    """The 118 paradigms from the archive as published: every pair converts (the rule counts
    docs/multilingual.md gives), each suite validates, carries its human agreement, and sends
    the source's sentences."""
    rules: Counter[tuple[str, str]] = Counter()
    for file in ZHOBLIMP.files():
        conversion = convert_named(ZHOBLIMP, file.suite, tmp_path, SHARED_ZHOBLIMP_DIR)
        record = conversion.suite["meta"]["zhoblimp_conversion"]
        assert record["pairs"] == record["items"] == file.pairs == 300, file.suite
        rules.update(conversion.rules)
        assert check_suite(conversion.suite, conversion.name).ok
        human = conversion.suite["meta"]["human_agreement"]
        assert 0.5 < human["accuracy"] <= 1 and human["correct"] <= human["total"]
        data = source_bytes(ZHOBLIMP, file, tmp_path, SHARED_ZHOBLIMP_DIR, "")
        lines, _ = decode_lines(data, file.path)
        pairs = {p.number: p for p in ZHOBLIMP.read(lines, file, file.path)
                 if isinstance(p, MinimalPair)}
        for item in Suite.from_trusted_json(conversion.suite).items:
            pair = pairs[item.item_number]
            assert (item.condition("good").sentence, item.condition("bad").sentence) == (
                pair.good, pair.bad)
    assert dict(rules) == {("char_diff", "one_span"): 19_744, ("char_diff", "reordering"): 10_599,
                           ("char_diff", "several_spans"): 5_057}


@_SHARED
def test_the_registry_loads_a_zhoblimp_suite_by_name(tmp_path: Path) -> None:
    suite = load_named_suite("zhoblimp_BA_deletion", tmp_path, SHARED_ZHOBLIMP_DIR)
    assert (suite.name, len(suite.items)) == ("zhoblimp_BA_deletion", 300)
    assert suite.meta.extra["human_agreement"]["total"] == 28
    assert suite.meta.region_separator == ""
