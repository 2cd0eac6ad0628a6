"""``syntaxgym-helm sweep``: the command over the Python API's sweep, on checkpoints a real training
loop wrote (the session fixture ``training_run``)."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from fixtures import FULL_BLIMP_DIR
from syntaxgym_helm.cli import main as cli
from training_runs import PARADIGMS

SUITE = f"blimp_{PARADIGMS[0]}"


@pytest.mark.slow
def test_a_sweep_from_the_shell_prints_its_table_and_writes_its_files(
        training_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYNTAXGYM_BLIMP_DIR", str(FULL_BLIMP_DIR))
    status = cli.main(["sweep", str(training_run / "checkpoint-[24]"), "--suites", SUITE,
                       "--pairs-per-paradigm", "2", "--ties", "pass", "--name", "shell",
                       "--x-values", "checkpoint-2=20,checkpoint-4=40", "--x", "words",
                       "--output-path", str(tmp_path / "out"), "--local-path",
                       str(tmp_path / "prod_env"), "--no-plots", "--num-threads", "1"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "| checkpoint | words | mean accuracy | items scored | ties |" in out
    assert "| checkpoint-2 | 20 |" in out and "| checkpoint-4 | 40 |" in out
    runs = sorted(p.name for p in (tmp_path / "out" / "runs" / "sweep").iterdir()
                  if p.name.startswith("syntaxgym:"))
    assert runs == [f"syntaxgym:suite={SUITE},ties=pass,model=local_shell@checkpoint-{s}"
                    for s in (2, 4)]
    with open(tmp_path / "out" / "sweeps" / "sweep" / "shell" / "curves.csv",
              encoding="utf-8") as stream:
        rows = list(csv.DictReader(stream))
    assert [(r["revision"], r["x"], r["unit"]) for r in rows] == [
        ("checkpoint-2", "20", "words"), ("checkpoint-4", "40", "words")]
    assert "fast_eval_results: " in out and "learning_curves.png" not in out


def test_a_sweep_that_cannot_start_says_why(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["sweep", str(tmp_path / "checkpoint-*"), "--suites", SUITE]) == 2
    assert "matches no folder" in capsys.readouterr().err
    assert cli.main(["sweep", str(tmp_path), "--suites", SUITE, "--x-values", "a=1,b"]) == 2
    assert "x value 2 ('b') is not NAME=NUMBER" in capsys.readouterr().err


def test_x_values_that_cannot_be_used_stop_the_sweep_naming_them(
        training_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Each was once dropped unseen (x then read from the names) or taken as it came (NaN, inf).
    glob = str(training_run / "checkpoint-[24]")
    refused = {
        "checkpoint-2:20,checkpoint-4:40": "x value 1 ('checkpoint-2:20') is not NAME=NUMBER",
        str(tmp_path / "xvals_typo.csv"): "xvals_typo.csv': no such file, and not NAME=X pairs",
        "checkpoint-2=nan,checkpoint-4=1": "the x given for checkpoint-2 is nan: give a finite "
                                           "number, 0 or more",
        "checkpoint-2=-5,checkpoint-4=inf": "the x given for checkpoint-2 is -5.0",
        "checkpoint-2=1,checkpoint-4=2,checkpoint-2=3": "x value 3 ('checkpoint-2=3') gives "
                                                        "checkpoint-2 an x again",
        "checkpoint-2=1,checkpoint-4=2,checkpont-6=3": "'checkpont-6', not a checkpoint of this "
                                                       "sweep (did you mean 'checkpoint-4'?)",
    }
    for given, message in refused.items():
        status = cli.main(["sweep", glob, "--suites", SUITE, "--x-values", given,
                           "--output-path", str(tmp_path / "out")])
        err = capsys.readouterr().err
        assert status == 2 and message in err and err.count("\n") == 1, (given, err)
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_a_trainer_s_output_folder_sweeps_its_checkpoints_and_its_final_model(
        training_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # As a Trainer leaves its output_dir: checkpoint-N below, the final model (step 8) on top.
    out = tmp_path / "trainer_out"
    for step in (2, 4, 6):
        shutil.copytree(training_run / f"checkpoint-{step}", out / f"checkpoint-{step}")
    for file in (training_run / "checkpoint-8").iterdir():
        shutil.copy(file, out / file.name)
    monkeypatch.setenv("SYNTAXGYM_BLIMP_DIR", str(FULL_BLIMP_DIR))
    options = ["--suites", SUITE, "--pairs-per-paradigm", "2", "--name", "trainer",
               "--output-path", str(tmp_path / "out"), "--local-path",
               str(tmp_path / "prod_env"), "--no-plots", "--num-threads", "1", "--in-process"]
    assert cli.main(["sweep", str(out), *options]) == 2  # the final model's name says no step
    assert ("name of trainer_out (names read: chck_10M, step1000, step1000-tokens4B, "
            "checkpoint-500): rename the checkpoints, or give their x (--x-values "
            "trainer_out=X") in capsys.readouterr().err
    assert cli.main(["sweep", str(out), "--x-values", "trainer_out=8", *options]) == 0
    printed = capsys.readouterr().out
    assert "4 checkpoints by steps (checkpoint-2, checkpoint-4, checkpoint-6, trainer_out)" \
        in printed
    with open(tmp_path / "out" / "sweeps" / "sweep" / "trainer" / "curves.csv",
              encoding="utf-8") as stream:
        rows = list(csv.DictReader(stream))
    assert [(r["revision"], r["x"]) for r in rows] == [
        ("checkpoint-2", "2"), ("checkpoint-4", "4"), ("checkpoint-6", "6"), ("trainer_out", "8")]


@pytest.mark.slow
@pytest.mark.limit(120)
def test_a_sweep_on_ray_with_no_cluster_there_ends_in_one_line(
        training_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``--runner ray`` is the short name docs/scaling.md gives (sweep refused it: "no such
    class"); a cluster that is not there ends the command in one line, status 2 (a traceback)."""
    import socket

    pytest.importorskip("ray")
    with socket.socket() as free:  # a port nothing listens on
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{port}")
    monkeypatch.setenv("SYNTAXGYM_BLIMP_DIR", str(FULL_BLIMP_DIR))
    status = cli.main(["sweep", str(training_run / "checkpoint-2"), "--suites", SUITE,
                       "--pairs-per-paradigm", "2", "--runner", "ray", "--output-path",
                       str(tmp_path / "out"), "--local-path", str(tmp_path / "prod_env"),
                       "--no-plots"])
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err, err
    assert err.strip().splitlines()[-1].startswith(
        f"syntaxgym-helm sweep: no Ray cluster at 127.0.0.1:{port} ($RAY_ADDRESS)"), err
