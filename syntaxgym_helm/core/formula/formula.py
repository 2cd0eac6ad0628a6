"""The :class:`Formula` class and the entry points that make one.

:func:`parse_formula` checks a formula's length and parses it into a :class:`Formula` (its source
text and syntax tree), which renders canonically, lists its region references, checks them
against a suite's conditions and regions, and evaluates the prediction given region values.
:func:`legacy_to_formula` writes the formula for an old-style prediction dict.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field

from syntaxgym_helm.core.errors import FormulaError
from syntaxgym_helm.core.formula.evaluation import Values, _apply, _ValueLookup
from syntaxgym_helm.core.formula.lexer import _CONDITION_RE, _quote, _tokenize
from syntaxgym_helm.core.formula.nodes import Node, RegionRef, _children, _is_boolean, _walk, render
from syntaxgym_helm.core.formula.parser import _Parser

#: Longest formula accepted, in characters (real ones are under 300).
MAX_FORMULA_LENGTH = 10_000

_LEGACY_RELATIONS = {"lessthan": "<", "equals": "=", "greaterthan": ">"}


@dataclass(frozen=True)
class Formula:
    """A parsed prediction.  Equality compares the syntax tree, not the source's spelling."""

    source: str = field(compare=False)
    root: Node

    def __post_init__(self) -> None:
        if not _is_boolean(self.root):
            raise FormulaError(
                f"the formula {_quote(self.source)} is a number, not a prediction", column=1
            )

    def __str__(self) -> str:
        """Canonical text: single spaces around binary operators, the fewest ``( )`` that
        keep arithmetic's shape, and ``[ ]`` around every operand of ``&``, ``|`` and ``~``
        except a negation, e.g. ``[(6;%a%) < (6;%b%)] & ~[(6;%c%) = 0]``.  It parses back to
        an equal formula."""
        return render(self.root)

    @property
    def region_refs(self) -> frozenset[RegionRef]:
        return frozenset(node for node in _walk(self.root) if isinstance(node, RegionRef))

    @property
    def conditions(self) -> frozenset[str]:
        return frozenset(ref.condition for ref in self.region_refs)

    @property
    def regions(self) -> frozenset[int | None]:
        return frozenset(ref.region for ref in self.region_refs)

    def evaluate(self, values: Values) -> bool:
        """Decide the prediction, given each region's value by a mapping or a function.

        ``values`` maps a :class:`RegionRef` to its value (``RegionRef(None, c)`` asks for the
        whole sentence of condition ``c``); each is fetched once.  Every operand is evaluated,
        without short circuits, so a missing or undefined value is reported whatever the other
        values are.  Raises :class:`EvaluationError` when a value is missing (a ``KeyError``
        from the mapping or function), not a number or NaN, or when arithmetic divides by zero
        or is undefined (``inf - inf``).
        """
        lookup = _ValueLookup(values)
        results: list[float | bool] = []
        work: list[tuple[Node, bool]] = [(self.root, False)]
        # Post-order over an explicit stack: children's results land on `results` in order.
        while work:
            node, expanded = work.pop()
            children = _children(node)
            if children and not expanded:
                work.append((node, True))
                work.extend((child, False) for child in reversed(children))
                continue
            arguments = results[len(results) - len(children) :]
            del results[len(results) - len(children) :]
            results.append(_apply(node, arguments, lookup))
        return bool(results[0])

    def check_references(
        self, conditions: Iterable[str], regions: Mapping[str, Collection[int]] | None = None
    ) -> None:
        """Raise :class:`FormulaError` at the leftmost reference to a condition not in
        ``conditions`` or, given ``regions`` (condition name -> its region numbers), to a
        region that condition lacks."""
        known = sorted(set(conditions))
        columns = self._columns()
        for ref in sorted(
            self.region_refs, key=lambda r: (columns.get(r, 0), r.condition, r.region or 0)
        ):
            if ref.condition not in known:
                close = difflib.get_close_matches(ref.condition, known, n=1)
                guess = f"; did you mean `{close[0]}`?" if close else ""
                raise FormulaError(
                    f"unknown condition {_quote(ref.condition)} in {ref}",
                    column=columns.get(ref),
                    hint=(
                        "the suite's conditions are "
                        f"{', '.join(map(_quote, known)) or 'none'}{guess}"
                    ),
                )
            numbers = None if regions is None else regions.get(ref.condition, ())
            if numbers is not None and ref.region is not None and ref.region not in numbers:
                raise FormulaError(
                    f"condition {_quote(ref.condition)} has no region {ref.region}",
                    column=columns.get(ref),
                    hint=f"its regions are {', '.join(map(str, sorted(numbers))) or 'none'}",
                )

    def _columns(self) -> dict[RegionRef, int]:
        """The column of each region reference's first occurrence in :attr:`source`."""
        try:
            tokens = _tokenize(self.source)
        except FormulaError:  # a Formula built by hand from text that does not parse
            return {}
        columns: dict[RegionRef, int] = {}
        for token in tokens:
            if isinstance(token.value, RegionRef):  # the value of every region token
                columns.setdefault(token.value, token.column)
        return columns


def parse_formula(text: str) -> Formula:
    """Parse a prediction formula; raise :class:`FormulaError` (with a 1-based column) if it is
    malformed."""
    if not isinstance(text, str):
        raise FormulaError(f"a formula must be a string, not {type(text).__name__}")
    if len(text) > MAX_FORMULA_LENGTH:
        raise FormulaError(
            f"formula is too long ({len(text)} characters)",
            column=MAX_FORMULA_LENGTH + 1,
            hint=f"at most {MAX_FORMULA_LENGTH} characters are allowed",
        )
    try:
        return Formula(text, _Parser(text).parse())
    except RecursionError:
        # Only reachable when the caller's own stack is already nearly full; MAX_DEPTH keeps
        # the parser's share small.
        raise FormulaError(
            "formula is nested too deeply for the remaining stack", column=1
        ) from None


def legacy_to_formula(region_number: int, l_operand: str, relation: str, r_operand: str) -> str:
    """The formula for a legacy prediction dict, e.g. ``(3;%that%) > (3;%what%)`` for
    ``{"region_number": 3, "l_operand": "that", "relation": "greaterthan", "r_operand":
    "what"}``."""
    if relation not in _LEGACY_RELATIONS:
        raise FormulaError(
            f"unknown relation {_quote(str(relation))}",
            hint=f"use one of {', '.join(map(_quote, _LEGACY_RELATIONS))}",
        )
    if isinstance(region_number, bool) or not isinstance(region_number, int) or region_number < 1:
        raise FormulaError(
            f"bad region number {region_number!r}", hint="regions are numbered from 1"
        )
    for operand in (l_operand, r_operand):
        if not isinstance(operand, str) or not _CONDITION_RE.fullmatch(operand):
            raise FormulaError(
                f"bad condition name {operand!r}",
                hint="condition names may contain only letters, digits, `_` and `-`",
            )
    op = _LEGACY_RELATIONS[relation]
    return f"({region_number};%{l_operand}%) {op} ({region_number};%{r_operand}%)"
