"""Documentation that names tests or files stays true when they are renamed or moved."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEST_REFERENCE = re.compile(r"(tests/[\w/]+\.py)::(\w+)")
DOCUMENTS = sorted([ROOT / "README.md", ROOT / "BENCHMARKS.md", *(ROOT / "docs").glob("*.md")])


def functions_in(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {node.name for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_every_cited_test_exists(document: Path) -> None:
    missing = []
    for path, name in TEST_REFERENCE.findall(document.read_text()):
        test_file = ROOT / path
        if not test_file.is_file() or name not in functions_in(test_file):
            missing.append(f"{path}::{name}")
    assert not missing, f"{document.name} cites tests that do not exist: {', '.join(missing)}"


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_every_cited_package_path_exists(document: Path) -> None:
    paths = re.findall(r"`(syntaxgym_helm/[\w/.]+)`", document.read_text())
    missing = sorted({path for path in paths if not (ROOT / path).exists()})
    assert not missing, f"{document.name} names paths that do not exist: {', '.join(missing)}"
