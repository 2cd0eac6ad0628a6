"""Documentation that names tests or files stays true when they are renamed or moved."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEST_REFERENCE = re.compile(r"(tests/[\w/]+\.py)::(\w+)")
DOCUMENTS = sorted([ROOT / "README.md", ROOT / "BENCHMARKS.md", *(ROOT / "docs").glob("*.md")])


def collected_tests(path: Path) -> set[str]:
    """The tests pytest collects from ``path``: module-level ``test_*`` functions and the
    ``test_*`` methods of ``Test*`` classes (a helper function cited as a test is no test)."""
    tree = ast.parse(path.read_text())
    found = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.add(node.name)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            found.update(item.name for item in node.body
                         if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)))
    return {name for name in found if name.startswith("test_")}


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_every_cited_test_exists(document: Path) -> None:
    text = document.read_text()
    cited = TEST_REFERENCE.findall(text)
    # Every citation written ``path::name`` is read (none in a form the pattern misses).
    assert len(cited) == text.count(".py::"), (
        f"{document.name}: {text.count('.py::')} citations, {len(cited)} readable as "
        "tests/<path>.py::<test name>")
    missing = [f"{path}::{name}" for path, name in cited
               if not (ROOT / path).is_file() or name not in collected_tests(ROOT / path)]
    assert not missing, f"{document.name} cites tests that do not exist: {', '.join(missing)}"
    named = set(re.findall(r"(tests/[\w/]+\.py)", text))
    absent = sorted(path for path in named if not (ROOT / path).is_file())
    assert not absent, f"{document.name} names test files that do not exist: {', '.join(absent)}"


def test_a_helper_is_not_a_test() -> None:
    own = collected_tests(Path(__file__))
    assert "test_every_cited_test_exists" in own and "collected_tests" not in own


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_every_cited_package_path_exists(document: Path) -> None:
    paths = re.findall(r"`(syntaxgym_helm/[\w/.]+)`", document.read_text())
    missing = sorted({path for path in paths if not (ROOT / path).exists()})
    assert not missing, f"{document.name} names paths that do not exist: {', '.join(missing)}"
