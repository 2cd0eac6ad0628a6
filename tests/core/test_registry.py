"""The suite registry: names, local stand-in folders, checksums, downloads and clear failures."""

from __future__ import annotations

import functools
import http.server
import shutil
import threading
from pathlib import Path
from typing import Iterator

import pytest

from fixtures import HU2020_DIR as HU2020
from syntaxgym_helm.core.registry import (
    HU2020_SUITES,
    SUITES_DIR_ENV,
    RegistryError,
    circuit_of,
    resolve_suite,
    sg_score_suites,
)
from syntaxgym_helm.core.suite import load_suite


def test_registry_lists_the_34_suites_and_31_for_the_sg_score() -> None:
    assert len(HU2020_SUITES) == 34
    score_suites = sg_score_suites()
    assert len(score_suites) == 31
    assert {"fgd-embed3", "fgd-embed4", "nn-nv-rpl"} == set(HU2020_SUITES) - set(score_suites)
    assert circuit_of("number_prep") == "Agreement"
    assert circuit_of("nn-nv-rpl") is None


def test_every_registered_checksum_matches_the_shared_copy(tmp_path: Path) -> None:
    for name in HU2020_SUITES:
        path = resolve_suite(name, tmp_path, HU2020)
        assert path == HU2020 / f"{name}.json"
        assert load_suite(path).name == name


def test_environment_variable_stands_in_for_the_download(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SUITES_DIR_ENV, str(HU2020))
    assert resolve_suite("mvrr", tmp_path) == HU2020 / "mvrr.json"


def test_a_modified_local_copy_is_refused(tmp_path: Path) -> None:
    local = tmp_path / "local"
    local.mkdir()
    text = (HU2020 / "mvrr.json").read_text().replace("The", "A", 1)
    (local / "mvrr.json").write_text(text)
    with pytest.raises(RegistryError, match="not the registered version.*suite=") as info:
        resolve_suite("mvrr", tmp_path / "cache", local)
    assert "mvrr.json" in str(info.value)


def test_unknown_name_lists_the_registered_ones(tmp_path: Path) -> None:
    with pytest.raises(RegistryError, match="unknown suite 'number_prepp'.*number_prep"):
        resolve_suite("number_prepp", tmp_path)


def test_a_failed_download_says_how_to_work_offline(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SUITES_DIR_ENV, raising=False)
    monkeypatch.setattr("syntaxgym_helm.core.registry.HU2020_URL", "http://127.0.0.1:9/{name}.json")
    with pytest.raises(RegistryError, match=f"could not download.*{SUITES_DIR_ENV}"):
        resolve_suite("cleft", tmp_path)
    assert not (tmp_path / "cleft.json").exists()


@pytest.fixture
def served_suites(tmp_path: Path) -> Iterator[str]:
    """A real HTTP server on loopback serving the shared suites."""
    root = tmp_path / "www"
    shutil.copytree(HU2020, root)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_download_checks_and_caches(tmp_path: Path, served_suites: str,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SUITES_DIR_ENV, raising=False)
    monkeypatch.setattr("syntaxgym_helm.core.registry.HU2020_URL", served_suites + "/{name}.json")
    cache = tmp_path / "cache"
    path = resolve_suite("cleft", cache)
    assert path == cache / "cleft.json" and load_suite(path).name == "cleft"
    # A URL is cached too, under a name derived from the URL.
    by_url = resolve_suite(served_suites + "/mvrr.json", cache)
    assert by_url.parent == cache and load_suite(by_url).name == "mvrr"
    # A corrupted download is refused and leaves nothing behind.
    (tmp_path / "www" / "npz_obj.json").write_text('{"meta": {}}')
    with pytest.raises(RegistryError, match="SHA-256"):
        resolve_suite("npz_obj", cache)
    assert not (cache / "npz_obj.json").exists()
