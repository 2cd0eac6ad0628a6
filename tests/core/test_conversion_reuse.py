"""A converted suite is reused from the cache only while its checked source, companion figures
and converter are unchanged; a source changed on disk is refused (pinned data sets) or converted
again (unpinned ones), never served from the old conversion. An archive's members are read once
per process, keyed by the archive's bytes."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from fixtures import MULTILINGUAL_DIR, MULTILINGUAL_EXCERPTS_DIR, tar_gz
from syntaxgym_helm.core.minimal_pairs import fetch, reuse
from syntaxgym_helm.core.minimal_pairs.catalogue import DATASETS
from syntaxgym_helm.core.minimal_pairs.dataset import PairDataError
from syntaxgym_helm.core.registry import RegistryError, load_named_suite
from syntaxgym_helm.core.suite import load_suite

CLAMS_SUITE = "clams_en_simple_agrmt"
NL_SUITE = "blimp_nl_passive__impersonal"


def _no_conversion(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("converted again")

    monkeypatch.setattr(fetch, "convert_data", refuse)


def test_an_unchanged_source_reuses_its_conversion_and_a_changed_one_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SYNTAXGYM_CLAMS_DIR", raising=False)
    local = tmp_path / "local"
    shutil.copytree(MULTILINGUAL_DIR / "clams", local)
    cache = tmp_path / "cache"
    first = load_named_suite(CLAMS_SUITE, cache, local)
    assert reuse.record_path(cache / f"{CLAMS_SUITE}.json").is_file()
    with monkeypatch.context() as patched:
        _no_conversion(patched)
        again = load_named_suite(CLAMS_SUITE, cache, local)
    assert again == first == load_suite(cache / f"{CLAMS_SUITE}.json")
    # The same file changed on disk: refused as before, whatever the cache holds.
    source = local / "en_evalset" / "simple_agrmt.txt"
    source.write_text(source.read_text().replace("author", "writer", 1))
    with pytest.raises(RegistryError, match="is not CLAMS's simple_agrmt at the pinned commit"):
        load_named_suite(CLAMS_SUITE, cache, local)


def test_a_changed_unpinned_source_is_converted_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SYNTAXGYM_BLIMP_NL_DIR", raising=False)
    local = tmp_path / "local"
    shutil.copytree(MULTILINGUAL_EXCERPTS_DIR / "blimp_nl", local)
    cache = tmp_path / "cache"
    before = load_named_suite(NL_SUITE, cache, local)
    assert before.items[0].condition("good").sentence == "Er wordt in de zaal gedanst."
    source = local / "passive__impersonal.jsonl"
    source.write_text(source.read_text().replace("in de zaal", "in de kerk", 1))
    after = load_named_suite(NL_SUITE, cache, local)  # not the old conversion
    assert after.items[0].condition("good").sentence == "Er wordt in de kerk gedanst."
    assert after.meta.extra["source_sha256"] != before.meta.extra["source_sha256"]
    assert load_suite(cache / f"{NL_SUITE}.json") == after


def test_an_edited_cached_suite_is_converted_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SYNTAXGYM_CLAMS_DIR", raising=False)
    cache = tmp_path / "cache"
    first = load_named_suite(CLAMS_SUITE, cache, MULTILINGUAL_DIR / "clams")
    written = cache / f"{CLAMS_SUITE}.json"
    suite = json.loads(written.read_text())
    suite["items"][0]["conditions"][0]["regions"][0]["content"] = "Edited"
    written.write_text(json.dumps(suite))
    assert load_named_suite(CLAMS_SUITE, cache, MULTILINGUAL_DIR / "clams") == first
    assert load_suite(written) == first
    reuse.record_path(written).write_text("not a record")  # an unreadable record: converted
    assert load_named_suite(CLAMS_SUITE, cache, MULTILINGUAL_DIR / "clams") == first


def test_the_key_covers_the_source_the_companion_and_the_data_set() -> None:
    clams = DATASETS["clams"]
    file = clams.by_suite()[CLAMS_SUITE]
    key = reuse.conversion_key(clams, file, "a" * 64, None)
    assert key is not None and key == reuse.conversion_key(clams, file, "a" * 64, None)
    assert key != reuse.conversion_key(clams, file, "b" * 64, None)
    assert key != reuse.conversion_key(clams, file, "a" * 64, {"accuracy": 0.9})
    other = clams.by_suite()["clams_en_vp_coord"]
    assert key != reuse.conversion_key(clams, other, "a" * 64, None)
    assert key != reuse.conversion_key(clams, dataclasses.replace(file, group="other"), "a" * 64,
                                       None)


def test_only_the_registry_reuses_a_conversion(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A data set passed to fetch's functions directly (tests declare their own) converts each
    time, and leaves no record to reuse."""
    monkeypatch.delenv("SYNTAXGYM_CLAMS_DIR", raising=False)
    cache = tmp_path / "cache"
    path = fetch.resolve_named(DATASETS["clams"], CLAMS_SUITE, cache, MULTILINGUAL_DIR / "clams")
    assert path.is_file() and not reuse.record_path(path).exists()
    fetch.resolve_named(DATASETS["clams"], CLAMS_SUITE, cache, MULTILINGUAL_DIR / "clams",
                        reuse_conversion=True)
    assert reuse.record_path(path).is_file()
    with monkeypatch.context() as patched:
        _no_conversion(patched)
        with pytest.raises(AssertionError, match="converted again"):
            fetch.resolve_named(DATASETS["clams"], CLAMS_SUITE, cache, MULTILINGUAL_DIR / "clams")




def test_archive_members_are_kept_by_the_archives_bytes(tmp_path: Path) -> None:
    first = tar_gz({"d/a.jsonl": b"one\n", "d/b.jsonl": b"two\n"})
    assert fetch.archive_members(first, "d/a.jsonl", "first") == {
        "d/a.jsonl": b"one\n", "d/b.jsonl": b"two\n"}
    # Other bytes (the same file rewritten): read again, never the kept members.
    second = tar_gz({"d/a.jsonl": b"changed\n"})
    assert fetch.archive_members(second, "d/a.jsonl", "second") == {"d/a.jsonl": b"changed\n"}
    with pytest.raises(PairDataError, match="broken is not a readable .tar.gz archive"):
        fetch.archive_members(b"not an archive", "d/a.jsonl", "broken")


def test_beyond_the_memory_bound_only_the_wanted_member_is_read(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fetch, "MAX_KEPT_MEMBER_BYTES", 5)
    archive = tar_gz({"d/a.jsonl": b"one\n", "d/b.jsonl": b"two\n"})
    assert fetch.archive_members(archive, "d/b.jsonl", "big") == {"d/b.jsonl": b"two\n"}
    assert fetch.archive_members(archive, "d/a.jsonl", "big") == {"d/a.jsonl": b"one\n"}
