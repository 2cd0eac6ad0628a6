"""docs/environment.md lists every environment variable the code reads, and only those.

Reads are found in the source: ``os.environ.get(X)``, ``os.environ.setdefault(X, ...)`` (read,
and set where unset), ``os.environ[X]``, ``os.getenv(X)`` and
``env.get(X)`` (a benchmark's copy of the environment), with ``X`` a string or a module constant
holding one, in the package, the tests, the benchmarks and the scripts; and in the Makefile, its
``?=`` variables and the ``$${X...}`` the shell reads.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "environment.md"
SOURCES = ("syntaxgym_helm", "tests", "benchmarks", "scripts")


def documented() -> set[str]:
    """The first-column names of the document's tables."""
    return set(re.findall(r"^\| `([A-Z][A-Z0-9_]+)` \|", DOC.read_text(), re.MULTILINE))


def _constants(tree: ast.Module) -> dict[str, str]:
    return {target.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
            for target in node.targets if isinstance(target, ast.Name)}


def _is_environment(node: ast.expr) -> bool:
    """``os.environ``, ``environ``, or a name ``env`` (a copy of the environment)."""
    return ((isinstance(node, ast.Attribute) and node.attr == "environ")
            or (isinstance(node, ast.Name) and node.id in ("environ", "env")))


def python_reads(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    constants = _constants(tree)

    def name_of(node: ast.expr) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return constants.get(node.id)
        return None

    found: set[str] = set()
    for node in ast.walk(tree):
        key = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            if node.func.attr in ("get", "setdefault") and _is_environment(node.func.value):
                key = node.args[0]
            elif node.func.attr == "getenv":
                key = node.args[0]
        elif isinstance(node, ast.Subscript) and _is_environment(node.value) and isinstance(
                node.ctx, ast.Load):
            key = node.slice
        name = name_of(key) if key is not None else None
        if name:
            found.add(name)
    return found


def makefile_reads() -> set[str]:
    text = (ROOT / "Makefile").read_text()
    return (set(re.findall(r"^([A-Z][A-Z0-9_]*)\s*\?=", text, re.MULTILINE))
            | set(re.findall(r"\$\$\{([A-Z][A-Z0-9_]*)", text)))


def all_reads() -> dict[str, set[str]]:
    """variable -> the files that read it."""
    found: dict[str, set[str]] = {}
    for source in SOURCES:
        for path in sorted((ROOT / source).rglob("*.py")):
            for name in python_reads(path):
                found.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    for name in makefile_reads():
        found.setdefault(name, set()).add("Makefile")
    # Each minimal-pair data set's offline folder: the variable's name comes from the data set's
    # declaration (SYNTAXGYM_<SET>_DIR), read by one function for all of them.
    from syntaxgym_helm.core.minimal_pairs.catalogue import DATASETS

    for dataset in DATASETS.values():
        found.setdefault(dataset.env_var, set()).add("syntaxgym_helm/core/minimal_pairs/fetch.py")
    return found


def test_every_variable_the_code_reads_is_documented() -> None:
    reads = all_reads()
    missing = {name: sorted(files) for name, files in reads.items() if name not in documented()}
    assert not missing, f"read but not in docs/environment.md: {missing}"


def test_every_documented_variable_is_read() -> None:
    reads = all_reads()
    stale = documented() - set(reads)
    assert not stale, f"docs/environment.md lists variables nothing reads: {sorted(stale)}"


def test_the_finder_finds_the_known_reads() -> None:
    """The search itself: a read through a module constant, a plain one, a benchmark's copy."""
    reads = all_reads()
    assert "syntaxgym_helm/core/registry.py" in reads["SYNTAXGYM_SUITES_DIR"]  # SUITES_DIR_ENV
    assert "syntaxgym_helm/clients/cache_dirs.py" in reads["XDG_CACHE_HOME"]
    assert "benchmarks/bench_context.py" in reads["BENCH_CONTEXT_REUSE"]
    assert reads["CMAKE_BUILD_PARALLEL_LEVEL"] == {"Makefile"}
