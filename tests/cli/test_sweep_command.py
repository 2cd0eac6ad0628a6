"""``syntaxgym-helm sweep``: the command over the Python API's sweep, on checkpoints a real training
loop wrote (the session fixture ``training_run``)."""

from __future__ import annotations

import csv
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
