"""The suite registry: names, local stand-in folders, checksums, downloads and clear failures."""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from deadline import time_limit
from fixtures import HU2020_DIR as HU2020
from syntaxgym_helm.core.errors import SuiteError, SuiteFileError
from syntaxgym_helm.core.registry import (
    HU2020_SUITES,
    SUITES_DIR_ENV,
    RegistryError,
    circuit_of,
    load_named_suite,
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
    assert str(info.value).startswith(f"suite 'mvrr': {local / 'mvrr.json'} is not")


def test_unknown_name_lists_the_registered_ones(tmp_path: Path) -> None:
    with pytest.raises(RegistryError, match="unknown suite 'number_prepp'.*number_prep"):
        resolve_suite("number_prepp", tmp_path)


def test_a_failed_download_says_how_to_work_offline(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SUITES_DIR_ENV, raising=False)
    monkeypatch.setattr("syntaxgym_helm.core.registry.HU2020_URL", "http://127.0.0.1:9/{name}.json")
    expected = f"^suite 'cleft': could not download.*{SUITES_DIR_ENV}"
    with pytest.raises(RegistryError, match=expected):
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


def write_www(tmp_path: Path, name: str, content: str) -> None:
    www = tmp_path / "www"
    www.mkdir(exist_ok=True)
    (www / name).write_text(content, encoding="utf-8")


HTML = "<!DOCTYPE html>\n<html><head><title>number_prep.json</title></head><body></body></html>"


def test_a_url_serving_a_web_page_is_named_and_never_cached(tmp_path: Path) -> None:
    write_www(tmp_path, "number_prep.html", HTML)  # e.g. a github.com page instead of the raw file
    with serve(tmp_path / "www") as base, time_limit(30):
        url = f"{base}/number_prep.html"
        cache = tmp_path / "cache"
        for _ in range(2):  # the second time too: nothing was cached
            with pytest.raises(RegistryError) as caught:
                load_named_suite(url, cache)
            message = str(caught.value)
            assert message.startswith(f"{url} did not send JSON: it sent text/html beginning "
                                      "'<!DOCTYPE html>")
            assert "raw.githubusercontent.com" in message and str(cache) not in message
    assert not cache.exists() or not any(cache.iterdir())


def test_errors_name_the_suite_as_given_before_the_file_read(tmp_path: Path) -> None:
    write_www(tmp_path, "mine.json", '{"meta": {}, "region_meta": {}, "items": []}')
    cache = tmp_path / "cache"
    with serve(tmp_path / "www") as base, time_limit(30):
        url = f"{base}/mine.json"
        with pytest.raises(SuiteError) as caught:
            load_named_suite(url, cache)
    (cached,) = cache.iterdir()
    assert caught.value.file == f"{url} ({cached})"
    assert str(caught.value).startswith(f"{url} ({cached}):")
    local = tmp_path / "www" / "mine.json"
    with pytest.raises(SuiteError) as caught:
        load_named_suite(str(local), cache)
    assert caught.value.file == str(local)  # a path is the file itself: named once


def test_a_suite_without_a_name_is_named_after_its_url_or_path(tmp_path: Path) -> None:
    data = json.loads((Path(__file__).resolve().parents[2] / "syntaxgym_helm" / "suites"
                       / "sgh_agreement_pp.json").read_text(encoding="utf-8"))
    del data["meta"]["name"]
    write_www(tmp_path, "my_agreement.json", json.dumps(data))
    with serve(tmp_path / "www") as base, time_limit(30):
        assert load_named_suite(f"{base}/my_agreement.json", tmp_path / "c").name == "my_agreement"
    assert load_named_suite(str(tmp_path / "www" / "my_agreement.json"), tmp_path / "c").name \
        == "my_agreement"


def test_a_built_in_name_is_read_and_named(tmp_path: Path) -> None:
    suite = load_named_suite("sgh_agreement_pp", tmp_path)
    assert suite.name == "sgh_agreement_pp" and suite.source.startswith("sgh_agreement_pp (")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_given_as_a_suite_is_refused_at_once(tmp_path: Path) -> None:
    pipe = tmp_path / "suite.json"
    os.mkfifo(pipe)
    with time_limit(10), pytest.raises(SuiteFileError) as caught:
        load_named_suite(str(pipe), tmp_path / "cache")
    assert caught.value.file == str(pipe)
    assert caught.value.reason == "it is a named pipe (FIFO), not a regular file"


class _Drip(http.server.BaseHTTPRequestHandler):
    """Sends a 100-byte body one byte every 0.2 s: each read is quick, the whole is not."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "100")
        self.end_headers()
        try:
            for _ in range(100):
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(0.2)
        except OSError:
            pass  # the client gave up, as it should

    def log_message(self, *args: Any) -> None:
        pass


def test_a_download_has_a_deadline_in_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("syntaxgym_helm.core.download.DOWNLOAD_TIMEOUT_S", 1)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Drip)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/slow.json"
        start = time.monotonic()
        with time_limit(15), pytest.raises(RegistryError, match="took more than 1 s"):
            resolve_suite(url, tmp_path)
        assert time.monotonic() - start < 5
    finally:
        server.shutdown()
        server.server_close()


def test_a_download_over_the_size_cap_is_refused(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("syntaxgym_helm.core.files.MAX_FILE_BYTES", 1000)
    write_www(tmp_path, "big.json", json.dumps({"meta": {"comment": "x" * 5000}}))
    with serve(tmp_path / "www") as base, time_limit(30):
        with pytest.raises(RegistryError, match="big.json sends more than 1,000 bytes"):
            resolve_suite(f"{base}/big.json", tmp_path / "cache")
    assert not (tmp_path / "cache").exists()


@contextlib.contextmanager
def serve(root: Path) -> Iterator[str]:
    """A real HTTP server on loopback serving ``root``; its base URL."""
    handler = functools.partial(_QuietFiles, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _QuietFiles(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass
