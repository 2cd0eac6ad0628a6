"""The syntax tree of a prediction formula, and its canonical rendering.

Frozen dataclass nodes (:class:`Number`, :class:`RegionRef`, :class:`Unary`, :class:`Binary`,
:class:`Call`, :class:`Comparison`, :class:`Not`, :class:`And`, :class:`Or`), helpers that walk
a tree without recursion, the binding strength of each construct (shared with the parser), and
:func:`render`, which writes a tree back as canonical text that parses to an equal tree.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Number:
    """A numeric literal (always non-negative when parsed: signs are :class:`Unary`)."""

    value: float

    def __str__(self) -> str:
        return render(self)


@dataclass(frozen=True, slots=True)
class RegionRef:
    """Region ``region`` (1-based; ``None`` for the whole sentence) of condition ``condition``."""

    region: int | None
    condition: str

    def __str__(self) -> str:
        return render(self)


@dataclass(frozen=True, slots=True)
class Unary:
    """``-operand`` or ``+operand``."""

    op: str
    operand: Node

    def __str__(self) -> str:
        return render(self)


@dataclass(frozen=True, slots=True)
class Binary:
    """Arithmetic ``left op right`` with ``op`` one of ``+ - * /``."""

    op: str
    left: Node
    right: Node

    def __str__(self) -> str:
        return render(self)


@dataclass(frozen=True, slots=True)
class Call:
    """``function(argument)``; ``abs`` is the only function."""

    function: str
    argument: Node

    def __str__(self) -> str:
        return render(self)


@dataclass(frozen=True, slots=True)
class Comparison:
    """``operands[0] ops[0] operands[1] ops[1] ...``, true when every adjacent pair holds."""

    operands: tuple[Node, ...]
    ops: tuple[str, ...]

    def __str__(self) -> str:
        return render(self)


@dataclass(frozen=True, slots=True)
class Not:
    """``~operand``."""

    operand: Node

    def __str__(self) -> str:
        return render(self)


@dataclass(frozen=True, slots=True)
class And:
    """True when all operands are (n-ary: ``a & b & c`` is one node)."""

    operands: tuple[Node, ...]

    def __str__(self) -> str:
        return render(self)


@dataclass(frozen=True, slots=True)
class Or:
    """True when any operand is (n-ary)."""

    operands: tuple[Node, ...]

    def __str__(self) -> str:
        return render(self)


Node = Number | RegionRef | Unary | Binary | Call | Comparison | Not | And | Or
_BOOLEAN_NODES = (Comparison, Not, And, Or)


def _is_boolean(node: Node) -> bool:
    return isinstance(node, _BOOLEAN_NODES)


def _children(node: Node) -> tuple[Node, ...]:
    if isinstance(node, (Unary, Not)):
        return (node.operand,)
    if isinstance(node, Binary):
        return (node.left, node.right)
    if isinstance(node, Call):
        return (node.argument,)
    if isinstance(node, (Comparison, And, Or)):
        return node.operands
    return ()


def _walk(root: Node) -> Iterator[Node]:
    """Every node under ``root``, without recursion."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(_children(node))



# --------------------------------------------------------------------------------------------
# Rendering
# --------------------------------------------------------------------------------------------

# Binding strength of each construct, loosest first; rendering brackets a child that binds
# more loosely than its context requires.
_LOGIC, _NOT, _COMPARE, _SUM, _PRODUCT, _UNARY, _ATOM = range(1, 8)
_BINARY_LEVEL = {
    "&": _LOGIC,
    "|": _LOGIC,
    "<": _COMPARE,
    ">": _COMPARE,
    "<=": _COMPARE,
    ">=": _COMPARE,
    "=": _COMPARE,
    "+": _SUM,
    "-": _SUM,
    "*": _PRODUCT,
    "/": _PRODUCT,
}


def _level(node: Node) -> int:
    if isinstance(node, (And, Or)):
        return _LOGIC
    if isinstance(node, Not):
        return _NOT
    if isinstance(node, Comparison):
        return _COMPARE
    if isinstance(node, Binary):
        return _BINARY_LEVEL[node.op]
    if isinstance(node, Unary):
        return _UNARY
    return _ATOM


def _format_number(value: float) -> str:
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def _boolean_operand(node: Node) -> str:
    # Operands of & | ~ are bracketed in the Hu et al. style, `[a < b] & [c < d]`, except a
    # negation, which already reads as one unit.
    text = render(node)
    return text if isinstance(node, Not) else f"[{text}]"


def _numeric_operand(node: Node, minimum: int) -> str:
    text = render(node)
    return text if _level(node) >= minimum else f"({text})"


def render(node: Node) -> str:
    """The canonical text of ``node``; parsing it gives back an equal tree.

    Recursive, but parsed trees are at most :data:`MAX_DEPTH` deep.
    """
    if isinstance(node, Number):
        return _format_number(node.value)
    if isinstance(node, RegionRef):
        region = "*" if node.region is None else str(node.region)
        return f"({region};%{node.condition}%)"
    if isinstance(node, Unary):
        return node.op + _numeric_operand(node.operand, _UNARY)
    if isinstance(node, Binary):
        level = _BINARY_LEVEL[node.op]
        # Left associative: a right operand on the same level needs brackets, a left one not.
        left = _numeric_operand(node.left, level)
        right = _numeric_operand(node.right, level + 1)
        return f"{left} {node.op} {right}"
    if isinstance(node, Call):
        return f"{node.function}({render(node.argument)})"
    if isinstance(node, Comparison):
        parts = [_numeric_operand(node.operands[0], _SUM)]
        for op, operand in zip(node.ops, node.operands[1:], strict=True):
            parts += [op, _numeric_operand(operand, _SUM)]
        return " ".join(parts)
    if isinstance(node, Not):
        return "~" + _boolean_operand(node.operand)
    if isinstance(node, (And, Or)):
        joiner = " & " if isinstance(node, And) else " | "
        return joiner.join(_boolean_operand(operand) for operand in node.operands)
    raise TypeError(f"not a formula node: {node!r}")
