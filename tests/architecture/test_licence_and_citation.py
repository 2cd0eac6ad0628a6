"""The licence, the citation and the references agree with the package and its data.

``CITATION.cff`` was validated against the CFF 1.2.0 schema with ``cffconvert --validate`` (not a
dependency of the project); these tests keep it, ``LICENSE`` and docs/references.md in step with
what the code ships and downloads.
"""

from __future__ import annotations

import re
from pathlib import Path

import tomllib
import yaml

import syntaxgym_helm

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
LICENSE = (ROOT / "LICENSE").read_text()
REFERENCES = " ".join((ROOT / "docs" / "references.md").read_text().split())  # lines joined


def test_the_licence_file_is_the_licence_pyproject_declares() -> None:
    assert PYPROJECT["license"] == "MIT" and LICENSE.startswith("MIT License\n")
    assert "Permission is hereby granted, free of charge" in LICENSE


def test_the_licence_names_every_shipped_data_file_and_copied_licence() -> None:
    shipped = sorted(p.name for p in (ROOT / "syntaxgym_helm" / "data").iterdir()
                     if p.is_file() and not p.name.startswith("."))
    assert shipped and all(name in LICENSE for name in shipped), shipped
    copied = sorted(p.name for p in (ROOT / "tests" / "fixtures" / "licenses").iterdir())
    assert copied and all(name in LICENSE for name in copied), copied
    for licence in ("CC BY 4.0", "Apache License 2.0", "Public domain"):
        assert licence in LICENSE


def test_the_citation_cites_this_version_and_the_four_papers() -> None:
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert citation["cff-version"] == "1.2.0" and citation["type"] == "software"
    assert citation["version"] == PYPROJECT["version"] == syntaxgym_helm.__version__
    assert citation["license"] == PYPROJECT["license"]
    titles = [reference["title"] for reference in citation["references"]]
    assert [title.split(":")[0] for title in titles] == [
        "SyntaxGym", "A Systematic Assessment of Syntactic Generalization in Neural Language "
        "Models", "Holistic Evaluation of Language Models", "BLiMP"]
    # Each paper of the citation is in the references, by its title.
    assert all(title in REFERENCES for title in titles)


def test_every_pinned_source_commit_is_in_the_references() -> None:
    pinned = {}
    for path in (ROOT / "syntaxgym_helm").rglob("*.py"):
        for name, commit in re.findall(r'(\w+_COMMIT)\s*=\s*"([0-9a-f]{40})"', path.read_text()):
            pinned[name] = commit
    assert len(pinned) >= 2, pinned  # the Hu et al. suites and BLiMP at least
    missing = {name: commit for name, commit in pinned.items() if commit not in REFERENCES}
    assert not missing, f"docs/references.md does not name these pinned commits: {missing}"
