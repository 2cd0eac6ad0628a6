"""syntaxgym_helm.supported_versions: the ranges of torch, transformers and gguf are the ones
pyproject.toml declares, and an environment outside them is refused with one line naming what is
installed and what is supported: by the check itself, by a scoring client, and for real by the
``syntaxgym-helm`` and ``helm-run`` processes, which stop before anything is scored (the
installed release seen through package metadata put first on the path; ``make test-compat`` also
installs a transformers release below the range and runs both)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from syntaxgym_helm import supported_versions
from syntaxgym_helm.supported_versions import (
    SUPPORTED,
    UnsupportedVersionError,
    problems,
    require_supported,
)

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _declared() -> dict[str, SpecifierSet]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = project["dependencies"] + project["optional-dependencies"]["models"]
    return {r.name: r.specifier for r in map(Requirement, requirements) if r.name in SUPPORTED}


def test_the_ranges_are_the_ones_pyproject_declares() -> None:
    assert _declared() == {package: SpecifierSet(spec) for package, spec in SUPPORTED.items()}


def test_constraints_and_install_page_pin_a_torch_in_the_range() -> None:
    pins = [Requirement(line) for line in (ROOT / "constraints.txt").read_text().splitlines()
            if line.strip() and not line.startswith("#")]
    (torch,) = [pin for pin in pins if pin.name == "torch"]
    (pinned,) = [spec.version for spec in torch.specifier]
    assert pinned in SpecifierSet(SUPPORTED["torch"])
    install = (ROOT / "docs" / "install.md").read_text()
    assert f"torch=={pinned}" in install
    for package, spec in SUPPORTED.items():
        assert f"{package}{spec}" in install  # the page states the ranges as declared


def _installed(**versions: str | None):
    return lambda package: versions.get(package)


def test_the_installed_environment_is_supported() -> None:
    assert problems() == []
    require_supported()


@pytest.mark.parametrize(("versions", "named"), [
    (dict(torch="2.7.1"), "torch 2.7.1 (supported: >=2.8,<2.16)"),
    (dict(torch="2.16.0"), "torch 2.16.0 (supported: >=2.8,<2.16)"),
    (dict(torch="2.16.0.dev20261101+cpu"), "torch 2.16.0.dev20261101+cpu"),
    (dict(transformers="5.22.2"), "transformers 5.22.2 (supported: >=5.23,<5.25)"),
    (dict(transformers="5.25.0"), "transformers 5.25.0"),
    (dict(transformers="4.57.6"), "transformers 4.57.6"),
    (dict(transformers=None), "transformers not installed"),
    (dict(gguf="0.16.0"), "gguf 0.16.0 (supported: >=0.16.2,<0.20)"),
    (dict(gguf="0.20.0"), "gguf 0.20.0"),
    (dict(torch="not-a-version"), "torch not-a-version"),
])
def test_a_release_outside_its_range_is_named_with_the_range(versions, named) -> None:
    inside = dict(torch="2.13.0+cpu", transformers="5.24.0", gguf="0.19.0")
    found = problems(_installed(**{**inside, **versions}))
    assert len(found) == 1 and found[0].startswith(named)
    with pytest.raises(UnsupportedVersionError) as raised:
        require_supported(_installed(**{**inside, **versions}))
    text = str(raised.value)
    assert "\n" not in text and named in text and "pip install 'torch>=2.8,<2.16'" in text


@pytest.mark.parametrize("versions", [
    dict(torch="2.8.0", transformers="5.23.0", gguf="0.16.2"),
    dict(torch="2.15.2+cpu", transformers="5.24.1", gguf="0.19.0"),
    dict(torch="2.13.0", transformers="5.24.0", gguf=None),  # gguf is optional (models extra)
])
def test_releases_within_the_ranges_pass(versions) -> None:
    assert problems(_installed(**versions)) == []


def test_a_scoring_client_is_refused_before_it_loads_anything(monkeypatch, tmp_path) -> None:
    from helm.common.cache_backend_config import BlackHoleCacheBackendConfig

    from syntaxgym_helm.clients.local.client import SyntaxGymClient

    monkeypatch.setattr(supported_versions, "installed_version",
                        _installed(torch="2.16.0", transformers="5.24.0"))
    config = BlackHoleCacheBackendConfig().get_cache_config("refused")
    with pytest.raises(UnsupportedVersionError, match=r"torch 2\.16\.0 \(supported"):
        SyntaxGymClient(config, str(tmp_path / "never-read"))


def _outside_environment(tmp_path: Path) -> dict[str, str]:
    """An environment whose first path entry holds the metadata of torch 2.7.1 (what
    ``importlib.metadata`` finds first), torch's code staying the installed one."""
    shadow = tmp_path / "shadow"
    info = shadow / "torch-2.7.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.7.1\n")
    return {**os.environ, "PYTHONPATH": str(shadow)}


REFUSAL = "syntaxgym-helm does not run with torch 2.7.1 (supported: >=2.8,<2.16)"


def test_the_command_line_refuses_at_start_with_one_line(tmp_path: Path) -> None:
    done = subprocess.run([BIN / "syntaxgym-helm", "validate", "number_prep"], cwd=tmp_path,
                          env=_outside_environment(tmp_path), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines() == [done.stderr.strip()]
    assert done.stderr.startswith(REFUSAL)


@pytest.mark.slow
def test_helm_run_stops_where_it_loads_the_plugin_and_scores_nothing(tmp_path: Path) -> None:
    done = subprocess.run(
        [BIN / "helm-run", "--run-entries",
         "syntaxgym:suite=number_prep,model=syntaxgym/smollm2-135m-instruct-q4_1",
         "--suite", "refused", "--max-eval-instances", "1"],
        cwd=tmp_path, env=_outside_environment(tmp_path), capture_output=True, text=True,
        timeout=600)
    assert done.returncode == 1
    refusals = [line for line in done.stderr.splitlines() if "does not run with" in line]
    assert len(refusals) == 1 and refusals[0].startswith(REFUSAL), done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "benchmark_output" / "runs" / "refused").exists()
