"""Which conditions of a suite its predictions expect to read better, and which worse.

``context=acceptable`` puts sentences of a suite's other items before an item, in a condition the
suite's predictions expect to be *better* (lower surprisal); ``context=unacceptable`` in one they
expect to be *worse*. The suite does not label its conditions, so the predictions decide. The rule
(docs/context.md gives it with every suite's outcome):

1. **Comparisons.** Each prediction is read as comparisons ``lower < higher``: the operands of a
   comparison (``a < b``, ``a <= b``; ``a > b`` and ``a >= b`` the other way round; a chain
   ``a < b < c`` gives each adjacent pair), through ``&`` and ``~`` (a negation turns the
   comparisons under it round). Equalities (``=``) and everything under ``|`` say nothing.
2. **Two-condition comparisons first.** A comparison whose sides each name a single condition
   (any of its regions, added up: ``(6;%a%) + (7;%a%) < (6;%b%) + (7;%b%)``), two different ones,
   says the lower side's condition is better and the higher side's worse. When a suite's
   predictions have any such comparison, only those count: a difference of differences (an
   interaction, as in ``mvrr``'s third conjunct) compares effects, not sentences.
3. **Otherwise, signs.** With no two-condition comparison (``cleft``:
   ``((6;%np_mismatch%) - (6;%np_match%)) + ... > 0``), each comparison is written as
   ``higher - lower > 0``; a condition whose region terms add up to a positive coefficient is
   worse, a negative one better. A side that is not a sum of region terms times numbers (``abs``,
   a product or quotient of two region terms) makes its comparison say nothing.
4. **Verdict.** A condition is *acceptable* when some comparison calls it better and none worse,
   *unacceptable* when some call it worse and none better; any other condition is neither (it is
   never used as context).

"Better" is the suites' word, not always grammaticality: in a garden-path suite (``mvrr``,
``npz_*``, ``nn-nv-rpl``) every sentence is grammatical and the "unacceptable" one is the
ambiguous, harder one.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from syntaxgym_helm.core.formula import (
    And,
    Binary,
    Comparison,
    Node,
    Not,
    Number,
    RegionRef,
    Unary,
)
from syntaxgym_helm.core.suite import Suite

#: Rules 2 and 3 of the module doc, as :attr:`ConditionPolarity.rule` names them.
RULE_TWO_CONDITIONS = "two-condition comparisons"
RULE_SIGNS = "signs of the comparisons"

_LOWER_FIRST = {"<": True, "<=": True, ">": False, ">=": False}


@dataclass(frozen=True)
class ConditionPolarity:
    """A suite's conditions by what its predictions expect of them (in suite order)."""

    acceptable: tuple[str, ...]
    unacceptable: tuple[str, ...]
    rule: str  # which rule decided: RULE_TWO_CONDITIONS, RULE_SIGNS, or "" when none could

    def conditions(self, acceptable: bool) -> tuple[str, ...]:
        return self.acceptable if acceptable else self.unacceptable


def comparisons(node: Node, turned: bool = False) -> Iterator[tuple[Node, Node]]:
    """Every ``(lower, higher)`` pair a formula asserts (rule 1)."""
    if isinstance(node, And):
        for operand in node.operands:
            yield from comparisons(operand, turned)
    elif isinstance(node, Not):
        yield from comparisons(node.operand, not turned)
    elif isinstance(node, Comparison):
        for left, op, right in zip(node.operands, node.ops, node.operands[1:], strict=False):
            if op not in _LOWER_FIRST:
                continue  # "=": no direction
            lower, higher = (left, right) if _LOWER_FIRST[op] != turned else (right, left)
            yield lower, higher


def linear_terms(node: Node) -> dict[str, float] | None:
    """A numeric expression as a coefficient per condition (its region terms added up), or
    ``None`` when it is not a sum of region terms times numbers."""
    if isinstance(node, RegionRef):
        return {node.condition: 1.0}
    if isinstance(node, Number):
        return {}
    if isinstance(node, Unary):
        inner = linear_terms(node.operand)
        if inner is None:
            return None
        return {c: -v for c, v in inner.items()} if node.op == "-" else inner
    if isinstance(node, Binary):
        left, right = linear_terms(node.left), linear_terms(node.right)
        if left is None or right is None:
            return None
        if node.op in "+-":
            sign = 1.0 if node.op == "+" else -1.0
            merged = dict(left)
            for condition, value in right.items():
                merged[condition] = merged.get(condition, 0.0) + sign * value
            return merged
        if node.op == "*" and _constant(node.left) is not None:
            factor, terms = _constant(node.left), right
        elif node.op == "*":
            factor, terms = _constant(node.right), left
        else:  # "/": only a division by a non-zero number keeps the sum linear
            divisor = _constant(node.right)
            factor, terms = (1.0 / divisor if divisor else None), left
        if factor is None:
            return None  # a product or quotient of region terms
        return {c: v * factor for c, v in terms.items()}
    return None  # abs(...) or anything else


def _constant(node: Node) -> float | None:
    if isinstance(node, Number):
        return node.value
    if isinstance(node, Unary) and isinstance(node.operand, Number):
        return -node.operand.value if node.op == "-" else node.operand.value
    return None


def _single_condition(terms: dict[str, float] | None) -> str | None:
    """The condition a side names alone, with positive weight (rule 2), else None."""
    if not terms:
        return None
    named = [c for c, v in terms.items() if v != 0]
    if len(named) == 1 and terms[named[0]] > 0:
        return named[0]
    return None


def polarity(suite: Suite) -> ConditionPolarity:
    """The acceptable and unacceptable conditions of ``suite`` by the module's rule."""
    pairs = [pair for prediction in suite.predictions
             for pair in comparisons(prediction.formula.root)]
    better: set[str] = set()
    worse: set[str] = set()
    rule = ""
    for lower, higher in pairs:
        low = _single_condition(linear_terms(lower))
        high = _single_condition(linear_terms(higher))
        if low and high and low != high:
            better.add(low)
            worse.add(high)
            rule = RULE_TWO_CONDITIONS
    if not rule:
        for lower, higher in pairs:
            low_terms, high_terms = linear_terms(lower), linear_terms(higher)
            if low_terms is None or high_terms is None:
                continue
            for condition in set(low_terms) | set(high_terms):
                weight = high_terms.get(condition, 0.0) - low_terms.get(condition, 0.0)
                if weight:
                    (worse if weight > 0 else better).add(condition)
                    rule = RULE_SIGNS
    order = suite.condition_names
    return ConditionPolarity(
        acceptable=tuple(c for c in order if c in better and c not in worse),
        unacceptable=tuple(c for c in order if c in worse and c not in better),
        rule=rule,
    )
