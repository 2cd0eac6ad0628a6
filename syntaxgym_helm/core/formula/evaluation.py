"""Evaluation of prediction formulas: approximate equality, region values and arithmetic.

:func:`approx_equal` is the formula language's ``=`` (``numpy.isclose`` with
:data:`EQUALITY_RTOL` and :data:`EQUALITY_ATOL`).  :class:`_ValueLookup` fetches each region's
value once from the caller's mapping or function and rejects missing, non-numeric and NaN values;
:func:`_apply` computes one node from its children's results (the explicit-stack walk that calls
it is :meth:`Formula.evaluate`), raising :class:`EvaluationError` on division by zero or an
undefined result.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import SupportsFloat, SupportsIndex

from syntaxgym_helm.core.errors import EvaluationError
from syntaxgym_helm.core.formula.lexer import _quote
from syntaxgym_helm.core.formula.nodes import (
    And,
    Binary,
    Call,
    Comparison,
    Node,
    Not,
    Number,
    Or,
    RegionRef,
    Unary,
    _walk,
    render,
)

EQUALITY_RTOL = 1e-5
EQUALITY_ATOL = 1e-3


def approx_equal(a: float, b: float) -> bool:
    """``numpy.isclose(a, b, rtol=EQUALITY_RTOL, atol=EQUALITY_ATOL)`` without numpy.

    True when ``abs(a - b) <= EQUALITY_ATOL + EQUALITY_RTOL * abs(b)``; the tolerance scales with
    ``b`` only, so the relation is not quite symmetric.  Infinities are equal only to the same
    infinity and NaN to nothing, as in numpy.
    """
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= EQUALITY_ATOL + EQUALITY_RTOL * abs(b)


_COMPARATORS: dict[str, Callable[[float, float], bool]] = {
    "<": lambda a, b: a < b,
    ">": lambda a, b: a > b,
    "<=": lambda a, b: a <= b,
    ">=": lambda a, b: a >= b,
    "=": approx_equal,
}

Values = Callable[[RegionRef], float] | Mapping[RegionRef, float]


class _ValueLookup:
    """Fetches and checks region values once each per evaluation."""

    def __init__(self, values: Values) -> None:
        if not isinstance(values, Mapping) and not callable(values):
            raise TypeError(
                f"values must be a mapping or a function of RegionRef, not {type(values).__name__}"
            )
        self.values = values
        self.cache: dict[RegionRef, float] = {}

    def __call__(self, ref: RegionRef) -> float:
        if ref not in self.cache:
            self.cache[ref] = self.fetch(ref)
        return self.cache[ref]

    def fetch(self, ref: RegionRef) -> float:
        where = "the whole sentence" if ref.region is None else f"region {ref.region}"
        try:
            raw = self.values[ref] if isinstance(self.values, Mapping) else self.values(ref)
        except KeyError:
            raise EvaluationError(
                f"no value for {ref} ({where} of condition `{ref.condition}`)"
            ) from None
        value = _as_float(raw)
        if value is None:
            raise EvaluationError(f"the value of {ref} is not a number: {raw!r}")
        if math.isnan(value):
            raise EvaluationError(
                f"the value of {ref} is undefined (NaN): the metric has no value for {where} of "
                f"condition `{ref.condition}` (e.g. the mean of an empty region), so the "
                "prediction cannot be decided"
            )
        if math.isinf(value):
            raise EvaluationError(
                f"the value of {ref} is infinite ({value!r}): a token of {where} of condition "
                f"`{ref.condition}` got probability 0, so the prediction cannot be decided"
            )
        return value


def _as_float(raw: object) -> float | None:
    if type(raw) is float:  # what the metric's values are: no protocol check (tens of us each)
        return raw
    # bool is an int, and a str may parse as a float, but neither is a region value.
    if isinstance(raw, (bool, str, bytes)) or not isinstance(raw, (SupportsFloat, SupportsIndex)):
        return None
    try:
        return float(raw)
    except (TypeError, ValueError, OverflowError):
        return None


def _apply(node: Node, arguments: list[float], lookup: _ValueLookup) -> float | bool:
    if isinstance(node, Number):
        return node.value
    if isinstance(node, RegionRef):
        return lookup(node)
    if isinstance(node, Unary):
        return -arguments[0] if node.op == "-" else arguments[0]
    if isinstance(node, Binary):
        return _arithmetic(node, *arguments)
    if isinstance(node, Call):
        return abs(arguments[0])
    if isinstance(node, Comparison):
        pairs = zip(node.ops, arguments, arguments[1:], strict=False)
        return all([_COMPARATORS[op](a, b) for op, a, b in pairs])
    if isinstance(node, Not):
        return not arguments[0]
    if isinstance(node, And):
        return all(arguments)
    if isinstance(node, Or):
        return any(arguments)
    raise TypeError(f"not a formula node: {node!r}")


def _arithmetic(node: Binary, a: float, b: float) -> float:
    if node.op == "/" and b == 0:
        raise EvaluationError(f"division by zero in {_quote(render(node), limit=80)}")
    if node.op == "+":
        result = a + b
    elif node.op == "-":
        result = a - b
    elif node.op == "*":
        result = a * b
    else:
        result = a / b
    problem = _rounding_problem(node, a, b, result)
    if problem:
        raise EvaluationError(f"{_quote(render(node), limit=80)} {problem} ({a!r} {node.op} {b!r} "
                              f"gives {result!r}), so the prediction cannot be decided")
    return result


def _rounding_problem(node: Binary, a: float, b: float, result: float) -> str | None:
    """Why ``result`` is not (the nearest double to) ``a op b``; None when it is. Operands are
    finite: region values are checked, numbers are finite and every result is checked here."""
    if math.isnan(result):
        return "is undefined"
    if math.isinf(result):
        return "overflows"
    if node.op in "*/" and result == 0 and a != 0 and b != 0:
        return "underflows to 0"
    if node.op in "+-":
        # A constant so large that it swallows a region value: the sum no longer depends on it.
        constant_alone = b if node.op == "+" else -b
        if a != 0 and _is_constant(node.right) and not _is_constant(node.left) \
                and result == constant_alone:
            return "loses a region value to rounding (the constant beside it is too large)"
        if b != 0 and _is_constant(node.left) and not _is_constant(node.right) and result == a:
            return "loses a region value to rounding (the constant beside it is too large)"
    return None


@lru_cache(maxsize=4096)
def _is_constant(node: Node) -> bool:
    """Whether ``node`` holds no region reference (a number, or arithmetic on numbers)."""
    return not any(isinstance(part, RegionRef) for part in _walk(node))
