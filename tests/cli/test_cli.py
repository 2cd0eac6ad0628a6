"""Tests of the ``syntaxgym-helm`` command line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from script_processes import run_script
from syntaxgym_helm.cli import main as cli

SAMPLE_LINE = ("Sample subject--verb suite: 1 items, 2 conditions, 3 regions, 1 predictions, "
               "metrics sum")


@pytest.fixture()
def mixed_dir(tmp_path: Path, syntaxgym_core_dir: Path) -> Path:
    """A folder with a valid suite, an invalid one and a file that is not JSON."""
    shutil.copy(syntaxgym_core_dir / "sample_suite.json", tmp_path)
    bad = json.loads((tmp_path / "sample_suite.json").read_text(encoding="utf-8"))
    bad["meta"]["metric"] = "average"
    bad["items"][0]["conditions"][1]["regions"][2]["region_number"] = 5
    (tmp_path / "bad.json").write_text(json.dumps(bad), encoding="utf-8")
    (tmp_path / "notes.json").write_text("not json\n", encoding="utf-8")
    (tmp_path / "readme.txt").write_text("ignored: not *.json\n", encoding="utf-8")
    return tmp_path


def test_valid_folder(hu2020_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = hu2020_dir
    assert cli.main(["validate", str(folder)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 34 + 1
    assert all(line.startswith(f"ok    {folder}/") for line in lines[:-1])
    assert f"ok    {folder / 'cleft.json'}: cleft: 40 items, 4 conditions, 6 regions, " \
           "1 predictions, metrics sum" in lines
    assert lines[-1] == "34 valid, 0 invalid"


def test_files_and_legacy_suites(
    syntaxgym_core_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    core = syntaxgym_core_dir
    assert cli.main(["validate", str(core / "test_in.json"), str(core / "sample_suite.json")]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"ok    {core / 'test_in.json'}: test: 2 items, 2 conditions, 6 regions, 1 predictions, "
        "metrics sum, mean, median, range, max, min",
        f"ok    {core / 'sample_suite.json'}: {SAMPLE_LINE}",
        "2 valid, 0 invalid",
    ]


def test_mixed_folder(mixed_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["validate", str(mixed_dir)]) == 1
    bad, notes = mixed_dir / "bad.json", mixed_dir / "notes.json"
    assert capsys.readouterr().out.splitlines() == [
        f"error {bad}: 2 problem(s)",
        f"  {bad}:meta.metric: unknown metric 'average'. use one of sum, mean, median, range, "
        "max, min, a list of them, or \"all\"",
        f"  {bad}:items[0].conditions[1].regions[2].region_number: region 5 is not declared in "
        "region_meta. declared regions are 1..3",
        f"error {notes}: 1 problem(s)",
        f"  {notes}: not valid JSON: Expecting value at line 1, column 1. a suite file is one "
        "JSON object",
        f"ok    {mixed_dir / 'sample_suite.json'}: {SAMPLE_LINE}",
        "1 valid, 2 invalid",
    ]


def test_non_json_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "suite.json"
    path.write_bytes(b"\x89PNG\r\n")
    assert cli.main(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"error {path}: 1 problem(s)" in out and "cannot read the file" in out
    assert out.endswith("0 valid, 1 invalid\n")


def test_missing_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["validate", str(tmp_path / "nope.json")]) == 1
    assert "No such file or directory" in capsys.readouterr().out


def test_empty_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["validate", str(tmp_path)]) == 1
    assert capsys.readouterr().err == f"no suite files found in {tmp_path}\n"


def test_warnings_and_quiet(tmp_path: Path, syntaxgym_core_dir: Path,
                            capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads((syntaxgym_core_dir / "sample_suite.json")
                      .read_text(encoding="utf-8"))
    data["items"][0]["conditions"][0]["regions"][0]["content"] = "The  woman"
    path = tmp_path / "spaces.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert cli.main(["validate", str(path)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"ok    {path}: {SAMPLE_LINE}",
        f"  warning: {path}:items[0].conditions[0].regions[0].content: 'The  woman' is "
        "scored as 'The woman' (whitespace at its ends removed; tabs, line breaks and repeated "
        "spaces made one space)",
        "1 valid, 0 invalid",
    ]
    assert cli.main(["validate", "-q", str(path)]) == 0
    assert "  warning: " not in capsys.readouterr().out


def test_odd_text_is_escaped_not_a_crash(tmp_path: Path, syntaxgym_core_dir: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads((syntaxgym_core_dir / "sample_suite.json")
                      .read_text(encoding="utf-8"))
    data["meta"]["name"] = "odd\ud800name"
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(data), encoding="utf-8")  # ensure_ascii: the escape survives
    assert cli.main(["validate", str(path)]) == 0
    assert capsys.readouterr().out.startswith(f"ok    {path}: odd\\ud800name: 1 items")


def test_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in ([], ["validate"], ["frobnicate"]):
        with pytest.raises(SystemExit) as caught:
            cli.main(argv)
        assert caught.value.code == 2
    assert "usage: syntaxgym-helm" in capsys.readouterr().err


def test_console_script(mixed_dir: Path) -> None:
    script = Path(sys.executable).parent / "syntaxgym-helm"
    if not script.exists():
        pytest.skip(f"the console script is not installed next to {sys.executable}")
    done = subprocess.run([str(script), "validate", str(mixed_dir / "sample_suite.json"),
                           str(mixed_dir / "bad.json")], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[0] == f"ok    {mixed_dir / 'sample_suite.json'}: {SAMPLE_LINE}"
    assert done.stdout.splitlines()[-1] == "1 valid, 1 invalid"
    ok = subprocess.run([str(script), "validate", str(mixed_dir / "sample_suite.json")],
                        capture_output=True, text=True, timeout=120, check=False)
    assert ok.returncode == 0 and ok.stdout.endswith("1 valid, 0 invalid\n")


def test_an_error_of_the_package_ends_a_command_with_one_line(tmp_path: Path) -> None:
    """An error the package raises on purpose that the command does not handle itself (an
    unknown suite, for ``evaluate``) is one line and status 2, not a traceback; a reader that
    leaves early (``| head``) ends the command quietly."""
    script = Path(sys.executable).parent / "syntaxgym-helm"
    if not script.exists():
        pytest.skip(f"the console script is not installed next to {sys.executable}")
    done = subprocess.run([str(script), "evaluate", "multiblimp_NLD", "--model", "nobody/none"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines() == [
        "syntaxgym-helm evaluate: unknown MultiBLiMP suite 'multiblimp_NLD': did you mean "
        "multiblimp_nld, multiblimp_nds, multiblimp_yrl?"], done.stderr
    piped = subprocess.run(f"'{script}' list zhoblimp | head -1", shell=True, cwd=tmp_path,
                           capture_output=True, text=True, timeout=120, check=False)
    assert piped.stdout.startswith("suite") and piped.stderr == "", piped.stderr


# -- hostile files: each refused at once, with a clear line ---------------------------------------

def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command line in its own process (forked from the tests' preloaded forkserver:
    ``script_processes``), with a deadline: a regression that reads a pipe fails the test
    instead of hanging it."""
    return run_script([Path(sys.executable).parent / "syntaxgym-helm", *args], cwd=cwd,
                      timeout=60)


needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")


@needs_fifo
def test_validate_refuses_a_named_pipe_at_once(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "some.fifo")
    os.mkfifo(tmp_path / "piped.json")  # found by the folder's *.json glob
    done = run_cli("validate", "some.fifo", ".", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    reason = "cannot read the file: it is a named pipe (FIFO), not a regular file"
    assert done.stdout.splitlines()[:4] == [
        "error some.fifo: 1 problem(s)", f"  some.fifo: {reason}. give the path of a suite or "
        "config file (a pipe or a device is never read: reading one could wait forever)",
        "error piped.json: 1 problem(s)", f"  piped.json: {reason}. give the path of a suite or "
        "config file (a pipe or a device is never read: reading one could wait forever)"]
    assert done.stdout.endswith("0 valid, 2 invalid\n")


@needs_fifo
def test_generate_refuses_a_config_importing_a_named_pipe(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "lexicon.libsonnet")
    (tmp_path / "mine.jsonnet").write_text("local lexicon = import 'lexicon.libsonnet';\n"
                                           "{ version: 1, lexicon: lexicon }\n", encoding="utf-8")
    done = run_cli("generate", "mine.jsonnet", "-o", "mine.json", cwd=tmp_path)
    assert done.returncode != 0
    assert ("mine.jsonnet: cannot read import 'lexicon.libsonnet': it is a named pipe (FIFO), "
            "not a regular file") in done.stderr + done.stdout
    os.mkfifo(tmp_path / "config.jsonnet")  # the config itself
    done = run_cli("generate", "config.jsonnet", "-o", "mine.json", cwd=tmp_path)
    assert done.returncode != 0 and "config.jsonnet: cannot read the file: it is a named pipe" \
        in done.stderr + done.stdout
    assert not (tmp_path / "mine.json").exists()


def test_validate_names_a_repeated_key_and_reads_the_older_format(
        tmp_path: Path, syntaxgym_core_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sample = (syntaxgym_core_dir / "sample_suite.json").read_text(
        encoding="utf-8")
    data = json.loads(sample)
    twice = tmp_path / "twice.json"
    twice.write_text(sample.replace('"meta": {', '"meta": {\n"metric": "mean",', 1),
                     encoding="utf-8")
    formulas = [prediction["formula"] for prediction in data["predictions"]]
    data["meta"]["string_predictions"], data["predictions"] = formulas, []
    older = tmp_path / "older.json"
    older.write_text(json.dumps(data), encoding="utf-8")
    assert cli.main(["validate", str(twice), str(older)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"error {twice}: 1 problem(s)"
    assert lines[1].startswith(f'  {twice}:meta: the key "metric" appears twice in one object, '
                               "at line 3, column 1 and line ")
    assert lines[2:] == [
        f"ok    {older}: {SAMPLE_LINE}",
        f"  warning: {older}:meta.string_predictions: predictions read from "
        "meta.string_predictions (an older suite format, with an empty \"predictions\" list)",
        "1 valid, 1 invalid"]


def test_evaluate_has_a_flag_for_every_run_option(capsys: pytest.CaptureFixture[str]) -> None:
    import dataclasses

    from syntaxgym_helm.core.run_options import RunOptions

    with pytest.raises(SystemExit):
        cli.main(["evaluate", "--help"])
    text = capsys.readouterr().out
    for field in dataclasses.fields(RunOptions):
        assert "--" + field.name.replace("_", "-") in text, field.name
    assert "{error,exclude}" in text and "{fail,pass}" in text


def test_evaluate_refuses_a_bad_option_before_loading_anything(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["evaluate", "sgh_agreement_pp", "--model", "nobody/none",
                     "--context-sentences", "three"]) == 2
    assert "context_sentences='three' is not a whole number" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["evaluate", "sgh_agreement_pp", "--model", "m", "--ties", "half"])
    assert "invalid choice: 'half'" in capsys.readouterr().err
