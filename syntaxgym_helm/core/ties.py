"""Ties: a strict comparison (``<``, ``>``) between two exactly equal values.

``(*;%good%) < (*;%bad%)`` fails when the two sentences are exactly as surprising, though the
model prefers neither. Tools differ on such a tie: here it fails by default (``ties=fail``);
lm-evaluation-harness's BLiMP tasks take ``argmax`` of the two log-likelihoods, which on a tie
picks the first choice, the good sentence, so a tie counts right there. :func:`has_tie` says
whether a prediction met one (the metric's ``syntaxgym_tie`` stat counts the items that did),
and :func:`lenient` is the prediction with every ``<`` read as ``<=`` and ``>`` as ``>=``, which
``ties=pass`` scores: a tie then makes its comparison hold.
Exactness is meant: values a thousandth of a bit apart are no tie (``=`` is approximate, these
are not).
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from typing import Any

from syntaxgym_helm.core.formula import Formula
from syntaxgym_helm.core.formula.evaluation import Values
from syntaxgym_helm.core.formula.nodes import And, Comparison, Node

_LENIENT = {"<": "<=", ">": ">="}


@lru_cache(maxsize=256)
def _tie_checks(formula: Formula) -> tuple[Formula, ...]:
    """One formula per strict comparison of ``formula``, true when its two sides are equal
    (``a <= b & b <= a``, both exact)."""
    checks = []
    for node in _nodes(formula.root):
        if isinstance(node, Comparison):
            for op, left, right in zip(node.ops, node.operands, node.operands[1:], strict=False):
                if op in _LENIENT:
                    both = And((Comparison((left, right), ("<=",)),
                                Comparison((right, left), ("<=",))))
                    checks.append(Formula(f"{left} = {right}", both))
    return tuple(checks)


def has_tie(formula: Formula, values: Values) -> bool:
    """Whether a strict comparison of ``formula`` compares two exactly equal values."""
    return any(check.evaluate(values) for check in _tie_checks(formula))


@lru_cache(maxsize=256)
def lenient(formula: Formula) -> Formula:
    """``formula`` with ``<`` as ``<=`` and ``>`` as ``>=`` (so a tie holds)."""
    return Formula(formula.source, _relax(formula.root))


def _children(node: Node) -> dict[str, Node | tuple[Node, ...]]:
    """A node's fields that hold nodes (a formula's depth is bounded, so recursion is safe)."""
    found: dict[str, Node | tuple[Node, ...]] = {}
    for field in dataclasses.fields(node):
        value = getattr(node, field.name)
        holds_nodes = dataclasses.is_dataclass(value) or (
            isinstance(value, tuple) and value and dataclasses.is_dataclass(value[0]))
        if holds_nodes:
            found[field.name] = value
    return found


def _nodes(node: Node) -> list[Node]:
    out = [node]
    for value in _children(node).values():
        for child in value if isinstance(value, tuple) else (value,):
            out += _nodes(child)
    return out


def _relax(node: Node) -> Node:
    changes: dict[str, Any] = {
        name: tuple(map(_relax, value)) if isinstance(value, tuple) else _relax(value)
        for name, value in _children(node).items()}
    if isinstance(node, Comparison):
        changes["ops"] = tuple(_LENIENT.get(op, op) for op in node.ops)
    return dataclasses.replace(node, **changes) if changes else node
