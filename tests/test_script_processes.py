"""``tests/script_processes.py``, which starts the end-to-end tests' console scripts from a
preloaded forkserver: what a script started so prints and ends with is what the installed
executable gives, run by :mod:`subprocess` in the same folder; and its deadline holds."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fixtures import HU2020_DIR
from script_processes import libyaml_safe_load, run_script

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.limit(120)  # the first script of a worker waits for the forkserver's imports
@pytest.mark.parametrize("args", [
    ["validate", "suite.json"],  # a file of the working folder that is no suite: status 1
    ["validate", "--no-such-option"],  # argparse's error: status 2
    ["--help"],  # argparse's SystemExit(0)
], ids=["invalid-suite", "bad-option", "help"])
def test_output_and_status_equal_the_installed_scripts(tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "suite.json").write_text('{"meta": {"name": "x"}, "items": []}')
    command = [BIN / "syntaxgym-helm", *args]
    real = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    forked = run_script(command, cwd=tmp_path, timeout=120)
    assert real.returncode == {"validate": 1 if "suite.json" in args else 2}.get(args[0], 0)
    assert (forked.returncode, forked.stdout, forked.stderr) == (
        real.returncode, real.stdout, real.stderr)


@pytest.mark.limit(60)
def test_a_script_past_its_deadline_is_killed_and_the_timeout_raised(tmp_path: Path) -> None:
    # A helm-run takes seconds before its first request (its model's load alone); this one is
    # stopped after a second.
    command = [
        BIN / "helm-run",
        "--run-entries",
        "syntaxgym:suite=number_prep,model=syntaxgym/smollm2-135m-instruct-q4_1",
        "--suite",
        "cut",
        "--max-eval-instances",
        "1",
    ]
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        run_script(command, cwd=tmp_path, timeout=1,
                   env={**os.environ, "SYNTAXGYM_SUITES_DIR": str(HU2020_DIR)})
    assert time.monotonic() - started < 30
    assert not list(tmp_path.glob("benchmark_output/runs/cut/*/stats.json"))  # not finished


def test_other_programs_are_refused() -> None:
    with pytest.raises(ValueError, match="start it with subprocess"):
        run_script([sys.executable, "-c", "pass"], timeout=10)


def test_the_forked_scripts_yaml_loader_gives_the_values_of_pyyamls_own() -> None:
    """The forked scripts read YAML with libyaml's parser: HELM's configuration files and ours
    give the same values as ``yaml.safe_load``'s pure-Python parser."""
    from importlib import resources

    import yaml

    if not yaml.__with_libyaml__:
        pytest.skip("this PyYAML has no libyaml: the forked scripts use yaml.safe_load as it is")
    helm_files = sorted(Path(str(resources.files("helm.config"))).glob("*.yaml"))
    files = helm_files + sorted((ROOT / "configs").rglob("*.yaml"))
    assert len(helm_files) >= 3 and len(files) > len(helm_files)
    for path in files:
        with path.open() as plain, path.open() as fast:
            assert libyaml_safe_load(fast) == yaml.safe_load(plain), path
