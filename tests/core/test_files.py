"""Hostile suite files: anything but a regular file, files over the size cap, repeated JSON keys
and numbers too long to read. Each is refused at once, with the file and where in it.

A test that opens a pipe could hang if the check regressed, so each runs under ``time_limit``.
"""

from __future__ import annotations

import json
import os
import socket
import tempfile
from pathlib import Path
from typing import Any

import pytest

from deadline import time_limit
from syntaxgym_helm.core.errors import SuiteError, SuiteFileError
from syntaxgym_helm.core.files import MAX_FILE_BYTES, check_regular_file, read_regular_file
from syntaxgym_helm.core.strict_json import decode_json
from syntaxgym_helm.core.validation import check_suite, check_suite_file

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")


def small_suite_text() -> str:
    return json.dumps({
        "meta": {"name": "agreement", "metric": "sum"},
        "region_meta": {"1": "subject", "2": "verb"},
        "predictions": [{"type": "formula", "formula": "(2;%mismatch%) > (2;%match%)"}],
        "items": [{"item_number": 1, "conditions": [
            {"condition_name": "match", "regions": [
                {"region_number": 1, "content": "The woman"},
                {"region_number": 2, "content": "plays"}]},
            {"condition_name": "mismatch", "regions": [
                {"region_number": 1, "content": "The woman"},
                {"region_number": 2, "content": "play"}]}]}],
    }, indent=2)


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def all_offsets(text: str, word: str) -> list[int]:
    offsets, at = [], text.find(word)
    while at >= 0:
        offsets.append(at)
        at = text.find(word, at + 1)
    return offsets


# -- not a regular file ----------------------------------------------------------------------------

@needs_fifo
def test_a_named_pipe_is_refused_at_once(tmp_path: Path) -> None:
    pipe = tmp_path / "suite.json"
    os.mkfifo(pipe)
    with time_limit(10):
        report = check_suite_file(pipe)
        with pytest.raises(SuiteFileError, match="named pipe"):
            read_regular_file(pipe)
    (error,) = report.errors
    assert error.file == str(pipe)
    assert error.message == "cannot read the file: it is a named pipe (FIFO), not a regular file"
    assert "never read" in str(error)


def test_a_device_a_folder_and_a_socket_are_refused(tmp_path: Path) -> None:
    with tempfile.TemporaryDirectory() as short:  # a socket's path must be short
        sock_path = Path(short) / "s.json"
        with socket.socket(socket.AF_UNIX) as sock, time_limit(10):
            sock.bind(str(sock_path))
            cases = {Path(os.devnull): "a character device", tmp_path: "a folder",
                     sock_path: "a socket"}
            for path, kind in cases.items():
                (error,) = check_suite_file(path).errors
                assert error.message == f"cannot read the file: it is {kind}, not a regular file"
                assert error.file == str(path)


def test_a_symbolic_link_to_a_suite_is_read(tmp_path: Path) -> None:
    target = tmp_path / "suite.json"
    target.write_text(small_suite_text())
    (tmp_path / "link.json").symlink_to(target)
    assert check_suite_file(tmp_path / "link.json").ok


def test_a_file_over_the_size_cap_is_refused_unread(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    with big.open("wb") as file:
        file.truncate(MAX_FILE_BYTES + 1)  # sparse: no disk used, nothing worth reading
    with pytest.raises(SuiteFileError) as caught:
        check_regular_file(big)
    assert caught.value.reason == ("it has 100,000,001 bytes, over the limit of 100 MB "
                                   "(100,000,000 bytes) for suite and config files")
    (error,) = check_suite_file(big).errors
    assert "over the limit of 100 MB" in error.message and error.file == str(big)


def test_a_label_names_the_file_in_errors(tmp_path: Path) -> None:
    with pytest.raises(SuiteFileError) as caught:
        read_regular_file(tmp_path / "missing.json", label="my_suite")
    assert caught.value.file == "my_suite"
    assert caught.value.reason == "No such file or directory"


# -- repeated keys ---------------------------------------------------------------------------------

def test_a_repeated_top_level_key_is_refused_with_both_lines(tmp_path: Path) -> None:
    text = small_suite_text()
    # A second "predictions" key at the end, which json.loads would let win silently.
    repeated = text[:-2] + ',\n  "predictions": []\n}'
    path = tmp_path / "twice.json"
    path.write_text(repeated)
    (error,) = check_suite_file(path).errors
    assert error.file == str(path) and error.path is None
    first, second = (line_of(repeated, at) for at in all_offsets(repeated, '"predictions"'))
    assert error.message == (f'the key "predictions" appears twice in one object, at line '
                             f"{first}, column 3 and line {second}, column 3")
    assert "keep only the last" in str(error)


def test_a_repeated_key_deep_inside_is_located_by_its_json_path() -> None:
    text = small_suite_text().replace('"content": "play"',
                                      '"content": "play", "content": "plays"')
    with pytest.raises(SuiteError) as caught:
        decode_json(text, "case.json")
    assert caught.value.path == "items[0].conditions[1].regions[1]"
    assert caught.value.message.startswith('the key "content" appears twice in one object')


def test_keys_equal_only_after_decoding_escapes_are_repeated() -> None:
    with pytest.raises(SuiteError, match='the key "A" appears twice') as caught:
        decode_json('{"meta": {"\\u0041": 1, "A": 2}}', "case.json")
    assert caught.value.path == "meta"


def test_equal_keys_in_different_objects_are_fine() -> None:
    assert decode_json('[{"a": 1}, {"a": {"a": 2}}]', "x") == [{"a": 1}, {"a": {"a": 2}}]


# -- numbers too long ------------------------------------------------------------------------------

def test_an_integer_too_long_to_read_is_too_large_in_suite_terms(tmp_path: Path) -> None:
    text = small_suite_text().replace('"item_number": 1', '"item_number": ' + "7" * 5000)
    path = tmp_path / "huge.json"
    path.write_text(text)
    (error,) = check_suite_file(path).errors
    assert error.path == "items[0].item_number"
    line = line_of(text, text.index("7" * 5000))
    assert error.message.startswith(f"the number at line {line}, column 22 is too large: it has "
                                    "5000 digits")
    assert "set_int_max_str_digits" not in str(error) and "sys." not in str(error)


@pytest.mark.parametrize("where, path", [
    (lambda data: data["items"][0].__setitem__("item_number", 10 ** 5000),
     "items[0].item_number"),
    (lambda data: data["items"][0]["conditions"][0]["regions"][1].__setitem__(
        "region_number", -(10 ** 30)), "items[0].conditions[0].regions[1].region_number"),
    (lambda data: data.__setitem__("predictions", [{
        "region_number": 10 ** 5000, "l_operand": "mismatch", "relation": "greaterthan",
        "r_operand": "match"}]), "predictions[0].region_number"),
], ids=["item", "region", "legacy-prediction"])
def test_numbers_too_large_to_print_are_reported_not_printed(where: Any, path: str) -> None:
    data = json.loads(small_suite_text())
    where(data)
    (error,) = check_suite(data, "case.json").errors
    assert error.path == path
    assert "number is too large: it has more than 18 digits" in error.message
    str(error)  # printable: Python cannot print an integer of over 4,300 digits
