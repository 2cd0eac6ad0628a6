"""The package's layers, checked from its source: the tree is the architecture.

Layers, lowest first; a module may import from its own layer and the ones below, never above:

    core  <  clients  <  harness  <  generate, report, api, runners  <  cli, plugin

``core`` is the SyntaxGym domain and must import with neither HELM nor torch. ``runners`` (HELM
runners: the Ray runner) runs whole HELM runs, as ``api`` runs requests: both use the clients'
run hooks, both are named by ``cli`` and ``plugin``, and the Python API may hand a runner's actors
its requests (same layer).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "syntaxgym_helm"
LAYERS = {"core": 0, "clients": 1, "harness": 2, "generate": 3, "report": 3, "api": 3,
          "runners": 3, "cli": 4, "plugin": 4}
MAX_MODULE_LINES = 400
MAX_CLASS_LINES = 250


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imported_modules(path: Path, known: set[str]) -> set[str]:
    """The package's modules ``path`` imports, at any depth of its code (function-level too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        found.update(name for name in names if name in known)
    return found


def layer(module: str) -> int | None:
    parts = module.split(".")
    return LAYERS.get(parts[1]) if len(parts) > 1 else None


def test_no_module_imports_from_a_higher_layer() -> None:
    mods = modules()
    upward = [
        f"{module} (layer {layer(module)}) imports {target} (layer {layer(target)})"
        for module, path in mods.items()
        for target in imported_modules(path, set(mods))
        if layer(module) is not None and layer(target) is not None
        and layer(target) > layer(module)
    ]
    assert not upward, "\n".join(upward)


def test_no_import_cycles() -> None:
    mods = modules()
    # A package's own __init__ importing its submodules is not a cycle of concern; edges to a
    # package stand for its __init__ only.
    graph = {module: {target for target in imported_modules(path, set(mods)) if target != module}
             for module, path in mods.items()}
    cycles: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(module: str) -> None:
        state[module] = 1
        stack.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                cycles.append(stack[stack.index(target):] + [target])
            elif target not in state:
                visit(target)
        stack.pop()
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module)
    assert not cycles, "\n".join(" -> ".join(cycle) for cycle in cycles)


def test_core_imports_without_helm_or_torch() -> None:
    code = ("import sys, pkgutil, importlib, syntaxgym_helm.core as core\n"
            "for info in pkgutil.walk_packages(core.__path__, 'syntaxgym_helm.core.'):\n"
            "    importlib.import_module(info.name)\n"
            "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('helm', 'torch'))\n"
            "print(' '.join(heavy))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120, check=True)
    assert result.stdout.strip() == "", f"core pulled in: {result.stdout.strip()}"


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: module_name(p))
def test_modules_and_classes_are_short(path: Path) -> None:
    lines = path.read_text().count("\n")
    assert lines <= MAX_MODULE_LINES, f"{path.name} has {lines} lines (at most {MAX_MODULE_LINES})"
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ClassDef):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            assert length <= MAX_CLASS_LINES, (
                f"class {node.name} in {path.name} has {length} lines (at most {MAX_CLASS_LINES})")


def test_class_paths_name_their_classes() -> None:
    from helm.common.object_spec import get_class_by_name

    from syntaxgym_helm.clients import class_paths

    for dotted in class_paths.ALL:
        cls = get_class_by_name(dotted)
        assert f"{cls.__module__}.{cls.__qualname__}" == dotted
