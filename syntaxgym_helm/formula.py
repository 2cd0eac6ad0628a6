"""SyntaxGym prediction formulas: a tokenizer, a parser to a typed syntax tree, and an evaluator.

A SyntaxGym suite states its predictions as formulas over *region values*: a region's
surprisal aggregated by a metric (sum, mean, ...), for one condition of an item::

    [(6;%match_sing%) < (6;%mismatch_sing%)] & [(6;%match_plural%) < (6;%mismatch_plural%)]

``(6;%match_sing%)`` is region 6 of condition ``match_sing``; ``(*;%match_sing%)`` is the whole
sentence of that condition.  Nothing here uses ``eval``: the text is tokenized, parsed by
precedence climbing into frozen dataclass nodes, type checked, and evaluated by an explicit
stack.

Grammar (EBNF; whitespace may appear between any two tokens, and inside a region reference)::

    formula    = logic ;                         (* must be a truth value *)
    logic      = negation , { "&" , negation }
               | negation , { "|" , negation } ;  (* "&" and "|" never mixed on one level *)
    negation   = "~" , negation | comparison ;
    comparison = sum , { ( "<" | ">" | "<=" | ">=" | "=" ) , sum } ;
    sum        = product , { ( "+" | "-" ) , product } ;
    product    = unary , { ( "*" | "/" ) , unary } ;
    unary      = ( "-" | "+" ) , unary | primary ;
    primary    = number | region
               | "abs" , "(" , logic , ")" | "abs" , region
               | "(" , logic , ")" | "[" , logic , "]" ;
    region     = "(" , ( digits | "*" ) , ";" , "%" , name , "%" , ")" ;   (* region >= 1 *)
    name       = ( letter | digit | "_" | "-" ) , { letter | digit | "_" | "-" } ;
    number     = ( digits , [ "." , [ digits ] ] | "." , digits ) , [ ( "e" | "E" ) , [ "+" | "-" ] , digits ] ;

Precedence, loosest to tightest: ``&`` and ``|`` < ``~`` < comparisons < ``+ -`` < ``* /`` <
unary ``-``/``+`` < atoms (numbers, region references, ``abs(...)``, bracketed groups).  So
``~ a < b & c`` means ``[~[a < b]] & c`` and ``-a * b`` means ``(-a) * b``.  Binary arithmetic
is left associative.  A ``(`` starts a region reference when what follows it looks like
``N;`` (a word then ``;``), otherwise it opens a group; ``(`` must be closed by ``)`` and ``[``
by ``]``.

Types are checked while parsing: ``&``, ``|`` and ``~`` need truth values, arithmetic,
``abs`` and comparisons need numbers, and the whole formula must be a truth value.

Equality: ``a = b`` is *approximate*, exactly ``numpy.isclose(a, b, rtol=EQUALITY_RTOL,
atol=EQUALITY_ATOL)``, i.e. ``abs(a - b) <= EQUALITY_ATOL + EQUALITY_RTOL * abs(b)`` (with
infinities equal only to themselves).  Like numpy's, it is asymmetric: the relative tolerance
scales with the *right* operand.  ``<``, ``>``, ``<=`` and ``>=`` are exact.

Deliberate differences from the reference implementation (syntaxgym-core, pyparsing):

* Chained comparisons ``a < b < c`` mean ``a < b and b < c`` as in Python; the reference
  silently drops the tail.
* ``&`` and ``|`` mixed on one level (``a & b | c``) are rejected with a hint showing both
  bracketings; the reference reads them left to right.  ``a & b & c`` is fine.
* Type errors (``(6;%a%) & (6;%b%)``, a formula that is only a number) are parse errors.
* A NaN region value (an undefined statistic, e.g. the mean of an empty region), a missing
  value or a division by zero raises :class:`EvaluationError` instead of silently comparing
  false.  All operands are evaluated (no short circuit), so such a problem is reported no
  matter what the other values are.
* ``(*;%cond%)`` is handed to the caller's value lookup as ``RegionRef(None, "cond")``; the
  caller decides what the whole sentence's value is (the reference sums the regions).
* Whitespace is allowed inside region references, ``(6 ; %a% )``.
* Signs are operators, not part of numbers: ``-5`` parses as ``Unary("-", Number(5))``, and
  ``-(6;%a%)`` works.
* Formulas longer than :data:`MAX_FORMULA_LENGTH` characters or nested deeper than
  :data:`MAX_DEPTH` levels are rejected with a :class:`FormulaError`, so a hostile formula
  cannot exhaust the stack or memory.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Union

from syntaxgym_helm.errors import EvaluationError, FormulaError

__all__ = [
    "EQUALITY_ATOL",
    "EQUALITY_RTOL",
    "MAX_DEPTH",
    "MAX_FORMULA_LENGTH",
    "And",
    "Binary",
    "Call",
    "Comparison",
    "Formula",
    "Node",
    "Not",
    "Number",
    "Or",
    "RegionRef",
    "Unary",
    "approx_equal",
    "legacy_to_formula",
    "parse_formula",
    "render",
]

EQUALITY_RTOL = 1e-5
EQUALITY_ATOL = 1e-3

#: Longest formula accepted, in characters (real ones are under 300).
MAX_FORMULA_LENGTH = 10_000
#: Deepest nesting accepted: of brackets, prefix operators and calls, and of the syntax tree.
MAX_DEPTH = 100
# Region numbers are small; the cap keeps int() away from its digit limit.
_MAX_REGION_DIGITS = 9

_LEGACY_RELATIONS = {"lessthan": "<", "equals": "=", "greaterthan": ">"}
_CONDITION_RE = re.compile(r"[A-Za-z0-9_-]+")
_REGION_SHAPE = "a region reference looks like `(6;%condition%)`, or `(*;%condition%)` for the whole sentence"


# --------------------------------------------------------------------------------------------
# Syntax tree
# --------------------------------------------------------------------------------------------


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


Node = Union[Number, RegionRef, Unary, Binary, Call, Comparison, Not, And, Or]
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
        for op, operand in zip(node.ops, node.operands[1:]):
            parts += [op, _numeric_operand(operand, _SUM)]
        return " ".join(parts)
    if isinstance(node, Not):
        return "~" + _boolean_operand(node.operand)
    if isinstance(node, (And, Or)):
        joiner = " & " if isinstance(node, And) else " | "
        return joiner.join(_boolean_operand(operand) for operand in node.operands)
    raise TypeError(f"not a formula node: {node!r}")


# --------------------------------------------------------------------------------------------
# Tokenizer
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # "number", "region", "name", "op", "open", "close", "comma" or "end"
    text: str
    pos: int  # 0-based offset into the formula
    value: float | RegionRef | None = None

    @property
    def column(self) -> int:
        return self.pos + 1

    @property
    def end(self) -> int:
        return self.pos + len(self.text)


_WS = r"[ \t\r\n\f\v]*"
_REGION_RE = re.compile(
    rf"\({_WS}([0-9]+|\*){_WS};{_WS}%{_WS}([A-Za-z0-9_-]+){_WS}%{_WS}\)"
)
# An opener followed by one word and `;` or `%` is meant as a region reference, even if
# malformed: `;` and `%` mean nothing anywhere else.
_REGION_INTENT_RE = re.compile(rf"[(\[]{_WS}[^ \t\r\n\f\v()\[\];%]*{_WS}[;%]")
_NUMBER_RE = re.compile(r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WS_RE = re.compile(r"[ \t\r\n\f\v]+")
_TWO_CHAR_OPS = ("<=", ">=")
_ONE_CHAR_OPS = "+-*/<>=&|~"
# Operators from other languages, with what to write instead.
_MISTAKES = {
    "==": "use `=` (approximate equality)",
    "!=": "write `~[a = b]` for 'not equal'",
    "<>": "write `~[a = b]` for 'not equal'",
    "=<": "write `<=`",
    "=>": "write `>=`",
    "&&": "use a single `&`",
    "||": "use a single `|`",
    "!": "use `~` for 'not'",
}


def _quote(text: str, limit: int = 40) -> str:
    """``text`` in backticks for an error message, shortened, and escaped if unprintable."""
    if len(text) > limit:
        text = text[: limit - 11] + "..." + text[-8:]
    if text.isprintable() and "`" not in text:
        return f"`{text}`"
    return repr(text)


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    pos = 0
    while pos < len(text):
        space = _WS_RE.match(text, pos)
        if space:
            pos = space.end()
            continue
        token = _next_token(text, pos)
        tokens.append(token)
        pos = token.end
    # The end sits just after the last token, so "missing operand" points past real text.
    tokens.append(_Token("end", "", tokens[-1].end if tokens else 0))
    return tokens


def _next_token(text: str, pos: int) -> _Token:
    char = text[pos]
    if char in "([":
        return _bracket_token(text, pos)
    if char in ")]":
        return _Token("close", char, pos)
    if char == ",":
        return _Token("comma", char, pos)
    number = _NUMBER_RE.match(text, pos)
    if number:
        return _number_token(number.group(), pos)
    name = _NAME_RE.match(text, pos)
    if name:
        return _Token("name", name.group(), pos)
    for mistake, advice in _MISTAKES.items():
        if text.startswith(mistake, pos):
            raise FormulaError(f"{_quote(mistake)} is not an operator", column=pos + 1, hint=advice)
    two = text[pos : pos + 2]
    if two in _TWO_CHAR_OPS:
        return _Token("op", two, pos)
    if char in _ONE_CHAR_OPS:
        return _Token("op", char, pos)
    hint = _REGION_SHAPE if char in ";%" else "formulas use region references, numbers, `abs`, `+ - * /`, `< > <= >= =`, `& | ~` and brackets"
    raise FormulaError(f"unexpected character {_quote(char)}", column=pos + 1, hint=hint)


def _number_token(text: str, pos: int) -> _Token:
    value = float(text)
    if not math.isfinite(value):
        raise FormulaError(f"number {_quote(text)} is too large", column=pos + 1)
    return _Token("number", text, pos, value)


def _bracket_token(text: str, pos: int) -> _Token:
    region = _REGION_RE.match(text, pos) if text[pos] == "(" else None
    if region:
        number, condition = region.groups()
        ref = RegionRef(_region_number(number, region.start(1)), condition)
        return _Token("region", region.group(), pos, ref)
    if _REGION_INTENT_RE.match(text, pos):
        raise _region_error(text, pos)
    return _Token("open", text[pos], pos)


def _region_number(digits: str, pos: int) -> int | None:
    if digits == "*":
        return None
    if len(digits) > _MAX_REGION_DIGITS:
        raise FormulaError(f"region number {_quote(digits)} is too large", column=pos + 1)
    number = int(digits)
    if number < 1:
        raise FormulaError(
            f"region number {_quote(digits)} is not allowed",
            column=pos + 1,
            hint="regions are numbered from 1; use `*` for the whole sentence",
        )
    return number


def _skip_space(text: str, pos: int) -> int:
    space = _WS_RE.match(text, pos)
    return space.end() if space else pos


def _found(text: str, pos: int) -> str:
    return _quote(text[pos]) if pos < len(text) else "the end of the formula"


def _region_error(text: str, start: int) -> FormulaError:
    """Say what is wrong with the region reference that seems to start at ``start``."""

    def fail(message: str, pos: int) -> FormulaError:
        return FormulaError(message, column=pos + 1, hint=_REGION_SHAPE)

    pos = _skip_space(text, start + 1)
    word = re.match(r"[^ \t\r\n\f\v()\[\];%]*", text[pos:]).group()  # type: ignore[union-attr]
    if not word:
        return fail("region reference is missing its region number", pos)
    if word != "*" and not re.fullmatch(r"[0-9]+", word):
        return fail(f"bad region number {_quote(word)}", pos)
    try:
        _region_number(word, pos)
    except FormulaError as error:
        return error
    pos = _skip_space(text, pos + len(word))
    if not text.startswith(";", pos):
        return fail(f"expected `;` after the region number, found {_found(text, pos)}", pos)
    pos = _skip_space(text, pos + 1)
    if not text.startswith("%", pos):
        return fail(f"expected `%` before the condition name, found {_found(text, pos)}", pos)
    pos = _skip_space(text, pos + 1)
    name = _CONDITION_RE.match(text, pos)
    if not name:
        if text.startswith("%", pos):
            return fail("empty condition name", pos)
        return fail(f"unexpected {_found(text, pos)} in a condition name (letters, digits, `_`, `-`)", pos)
    pos = name.end()
    if pos < len(text) and text[pos] not in "%) \t\r\n\f\v":
        return fail(
            f"unexpected {_found(text, pos)} in the condition name {_quote(text[name.start() : pos + 1])}"
            " (letters, digits, `_` and `-` only)",
            pos,
        )
    pos = _skip_space(text, pos)
    if not text.startswith("%", pos):
        return fail(
            f"expected `%` after the condition name {_quote(name.group())}, found {_found(text, pos)}", pos
        )
    pos = _skip_space(text, pos + 1)
    if text[start] == "[":
        return fail("a region reference is written with round brackets, not `[`", start)
    return fail(f"expected `)` to close the region reference, found {_found(text, pos)}", pos)


# --------------------------------------------------------------------------------------------
# Parser (precedence climbing: a few Python frames per nesting level, bounded by MAX_DEPTH)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Parsed:
    """A parsed subexpression with where it came from, for error messages."""

    node: Node
    start: int
    end: int
    height: int  # of the syntax tree, bounded by MAX_DEPTH


_CLOSER = {"(": ")", "[": "]"}


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.index = 0
        self.depth = 0

    # -- token stream ------------------------------------------------------------------------

    def peek(self) -> _Token:
        return self.tokens[self.index]

    def advance(self) -> _Token:
        token = self.tokens[self.index]
        if token.kind != "end":
            self.index += 1
        return token

    def describe(self, token: _Token) -> str:
        return "the end of the formula" if token.kind == "end" else _quote(token.text)

    def snippet(self, parsed: _Parsed) -> str:
        return _quote(self.text[parsed.start : parsed.end], limit=60)

    # -- limits and types -------------------------------------------------------------------

    def enter(self, token: _Token) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise FormulaError(
                f"formula is nested too deeply at {self.describe(token)}",
                column=token.column,
                hint=f"at most {MAX_DEPTH} levels of brackets, `-`, `~` and `abs` are allowed",
            )

    def leave(self) -> None:
        self.depth -= 1

    def make(self, node: Node, start: int, end: int, *children: _Parsed) -> _Parsed:
        height = 1 + max((child.height for child in children), default=0)
        if height > MAX_DEPTH:
            raise FormulaError(
                "formula is nested too deeply",
                column=start + 1,
                hint=f"its syntax tree may be at most {MAX_DEPTH} levels deep; split long chains with brackets",
            )
        return _Parsed(node, start, end, height)

    def require(self, parsed: _Parsed, boolean: bool, user: str) -> None:
        if _is_boolean(parsed.node) == boolean:
            return
        what = self.snippet(parsed)
        if boolean:
            message = f"{user} needs a truth value, but {what} is a number"
            example = _quote(self.text[parsed.start : parsed.end] + " > 0", limit=60)
            hint = f"compare it with something, e.g. {example}"
        else:
            message = f"{user} needs a number, but {what} is a truth value"
            hint = "comparisons give truth values; combine them only with `&`, `|` and `~`"
        raise FormulaError(message, column=parsed.start + 1, hint=hint)

    # -- grammar -----------------------------------------------------------------------------

    def parse(self) -> Node:
        if self.peek().kind == "end":
            raise FormulaError("empty formula", column=1, hint="write a prediction such as `(6;%a%) < (6;%b%)`")
        result = self.expression(_LOGIC)
        token = self.peek()
        if token.kind == "close":
            raise FormulaError(
                f"unmatched {_quote(token.text)}", column=token.column, hint="remove it or add the opening bracket"
            )
        if token.kind != "end":
            raise FormulaError(
                f"expected an operator or the end of the formula, found {self.describe(token)}",
                column=token.column,
                hint=f"is an operator missing between {self.snippet(result)} and {self.describe(token)}?",
            )
        if not _is_boolean(result.node):
            raise FormulaError(
                f"the formula {self.snippet(result)} is a number, not a prediction",
                column=1,
                hint="a prediction compares values, e.g. `(6;%a%) < (6;%b%)`",
            )
        return result.node

    def expression(self, min_level: int) -> _Parsed:
        """Parse operators binding at least as tightly as ``min_level``."""
        left = self.prefix()
        while True:
            token = self.peek()
            level = _BINARY_LEVEL.get(token.text) if token.kind == "op" else None
            if level is None or level < min_level:
                return left
            if level == _LOGIC:
                left = self.logic(left)
            elif level == _COMPARE:
                left = self.comparison(left)
            else:
                left = self.arithmetic(left, level)

    def arithmetic(self, left: _Parsed, level: int) -> _Parsed:
        op = self.advance()
        right = self.expression(level + 1)
        self.require(left, False, f"`{op.text}`")
        self.require(right, False, f"`{op.text}`")
        return self.make(Binary(op.text, left.node, right.node), left.start, right.end, left, right)

    def comparison(self, first: _Parsed) -> _Parsed:
        operands, ops = [first], []
        while self.peek().kind == "op" and _BINARY_LEVEL.get(self.peek().text) == _COMPARE:
            ops.append(self.advance())
            operands.append(self.expression(_SUM))
        for index, operand in enumerate(operands):
            self.require(operand, False, f"`{ops[max(index - 1, 0)].text}`")
        node = Comparison(tuple(o.node for o in operands), tuple(op.text for op in ops))
        return self.make(node, first.start, operands[-1].end, *operands)

    def logic(self, first: _Parsed) -> _Parsed:
        operands, ops = [first], []
        while self.peek().kind == "op" and self.peek().text in ("&", "|"):
            ops.append(self.advance())
            operands.append(self.expression(_NOT))
        mixed = next((op for op in ops if op.text != ops[0].text), None)
        if mixed is not None:
            raise FormulaError(
                "`&` and `|` cannot be mixed without brackets",
                column=mixed.column,
                hint=f"write {self.bracketed(operands, ops, '&')} or {self.bracketed(operands, ops, '|')}",
            )
        for index, operand in enumerate(operands):
            self.require(operand, True, f"`{ops[max(index - 1, 0)].text}`")
        kind = And if ops[0].text == "&" else Or
        return self.make(kind(tuple(o.node for o in operands)), first.start, operands[-1].end, *operands)

    def bracketed(self, operands: list[_Parsed], ops: list[_Token], tight: str) -> str:
        """The level written with every run of ``tight`` operators in brackets."""
        runs: list[list[_Parsed]] = [[operands[0]]]
        for op, operand in zip(ops, operands[1:]):
            if op.text == tight:
                runs[-1].append(operand)
            else:
                runs.append([operand])
        loose = " | " if tight == "&" else " & "
        parts = []
        for run in runs:
            source = self.text[run[0].start : run[-1].end]
            if len(source) > 60:
                source = source[:30] + " ... " + source[-20:]
            parts.append(f"[{source}]" if len(run) > 1 else source)
        return _quote(loose.join(parts), limit=400)

    def prefix(self) -> _Parsed:
        """A prefix operator, atom, group or call.

        The only recursion in the parser is between here and :meth:`expression`, two frames
        per nesting level, with the depth checked by :meth:`enter` before each step down.
        """
        token = self.advance()
        if token.kind == "op" and token.text in ("-", "+", "~"):
            self.enter(token)
            # `~` binds more loosely than comparisons (`~ a < b` is `~[a < b]`), `-` tightest.
            operand = self.expression(_COMPARE) if token.text == "~" else self.prefix()
            self.leave()
            return self.prefixed(token, operand)
        if token.kind == "open":
            self.enter(token)
            inner = self.expression(_LOGIC)
            self.leave()
            close = self.expect_close(token, "bracket")
            return _Parsed(inner.node, token.pos, close.end, inner.height)
        if token.kind == "name":
            opener = self.call_opener(token)
            if opener.kind == "region":
                # `abs(6;%a%)`: the region reference's brackets double as the call's.
                return self.called(token, self.atom(opener), opener)
            self.enter(opener)
            argument = self.expression(_LOGIC)
            self.leave()
            if self.peek().kind == "comma":
                raise FormulaError("`abs` takes exactly one argument", column=self.peek().column)
            return self.called(token, argument, self.expect_close(opener, "call of `abs`"))
        return self.atom(token)

    def prefixed(self, op: _Token, operand: _Parsed) -> _Parsed:
        if op.text == "~":
            self.require(operand, True, "`~`")
            node: Node = Not(operand.node)
        else:
            self.require(operand, False, f"unary `{op.text}`")
            node = Unary(op.text, operand.node)
        return self.make(node, op.pos, operand.end, operand)

    def atom(self, token: _Token) -> _Parsed:
        if token.kind == "number":
            return _Parsed(Number(token.value), token.pos, token.end, 1)  # type: ignore[arg-type]
        if token.kind == "region":
            return _Parsed(token.value, token.pos, token.end, 1)  # type: ignore[arg-type]
        position = self.index if token.kind == "end" else self.index - 1  # `end` is never consumed
        before = self.tokens[position - 1] if position > 0 else None
        after = f" after {_quote(before.text)}" if before is not None else ""
        raise FormulaError(
            f"expected a value{after}, found {self.describe(token)}",
            column=token.column,
            hint="an operand is missing: a region reference such as `(6;%a%)`, a number or a bracketed expression",
        )

    def expect_close(self, opener: _Token, what: str) -> _Token:
        wanted = _CLOSER[opener.text]
        token = self.advance()
        if token.kind == "close" and token.text == wanted:
            return token
        if token.kind == "close":
            raise FormulaError(
                f"{_quote(token.text)} does not match the {_quote(opener.text)} at column {opener.column}",
                column=token.column,
                hint=f"close `{opener.text}` with `{wanted}`",
            )
        raise FormulaError(
            f"expected `{wanted}` to close the {what} opened at column {opener.column}, found {self.describe(token)}",
            column=token.column,
            hint="brackets must be balanced" if token.kind == "end" else "is an operator missing?",
        )

    def call_opener(self, name: _Token) -> _Token:
        """Check that ``name`` is ``abs`` followed by ``(`` or a region reference, and take that."""
        following = self.peek()
        if name.text != "abs":
            if following.kind in ("open", "region"):
                message, hint = f"unknown function {_quote(name.text)}", "the only function is `abs(...)`"
            else:
                message = f"unexpected name {_quote(name.text)}"
                hint = f"condition names go inside region references: {_REGION_SHAPE}"
            raise FormulaError(message, column=name.column, hint=hint)
        if following.kind == "region" or following.text == "(":
            return self.advance()
        raise FormulaError(
            f"expected `(` after `abs`, found {self.describe(following)}", column=following.column, hint="write `abs(...)`"
        )

    def called(self, name: _Token, argument: _Parsed, close: _Token) -> _Parsed:
        self.require(argument, False, "`abs`")
        return self.make(Call(name.text, argument.node), name.pos, close.end, argument)


# --------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------


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

Values = Union[Callable[[RegionRef], float], Mapping[RegionRef, float]]


@dataclass(frozen=True)
class Formula:
    """A parsed prediction.  Equality compares the syntax tree, not the source's spelling."""

    source: str = field(compare=False)
    root: Node

    def __post_init__(self) -> None:
        if not _is_boolean(self.root):
            raise FormulaError(f"the formula {_quote(self.source)} is a number, not a prediction", column=1)

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
        for ref in sorted(self.region_refs, key=lambda r: (columns.get(r, 0), r.condition, r.region or 0)):
            if ref.condition not in known:
                close = difflib.get_close_matches(ref.condition, known, n=1)
                guess = f"; did you mean `{close[0]}`?" if close else ""
                raise FormulaError(
                    f"unknown condition {_quote(ref.condition)} in {ref}",
                    column=columns.get(ref),
                    hint=f"the suite's conditions are {', '.join(map(_quote, known)) or 'none'}{guess}",
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
            if token.kind == "region":
                columns.setdefault(token.value, token.column)  # type: ignore[arg-type]
        return columns


class _ValueLookup:
    """Fetches and checks region values once each per evaluation."""

    def __init__(self, values: Values) -> None:
        if not isinstance(values, Mapping) and not callable(values):
            raise TypeError(f"values must be a mapping or a function of RegionRef, not {type(values).__name__}")
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
            raise EvaluationError(f"no value for {ref} ({where} of condition `{ref.condition}`)") from None
        value = _as_float(raw)
        if value is None:
            raise EvaluationError(f"the value of {ref} is not a number: {raw!r}")
        if math.isnan(value):
            raise EvaluationError(
                f"the value of {ref} is undefined (NaN): the metric has no value for {where} of condition "
                f"`{ref.condition}` (e.g. the mean of an empty region), so the prediction cannot be decided"
            )
        return value


def _as_float(raw: object) -> float | None:
    # bool is an int, and a str may parse as a float, but neither is a region value.
    if isinstance(raw, (bool, str, bytes)):
        return None
    try:
        return float(raw)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return None


def _apply(node: Node, arguments: list, lookup: _ValueLookup) -> float | bool:
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
        pairs = zip(node.ops, arguments, arguments[1:])
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
    if math.isnan(result):
        raise EvaluationError(f"{_quote(render(node), limit=80)} is undefined ({a!r} {node.op} {b!r})")
    return result


def parse_formula(text: str) -> Formula:
    """Parse a prediction formula; raise :class:`FormulaError` (with a 1-based column) if it is malformed."""
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
        raise FormulaError("formula is nested too deeply for the remaining stack", column=1) from None


def legacy_to_formula(region_number: int, l_operand: str, relation: str, r_operand: str) -> str:
    """The formula for a legacy prediction dict, e.g. ``(3;%that%) > (3;%what%)`` for
    ``{"region_number": 3, "l_operand": "that", "relation": "greaterthan", "r_operand": "what"}``."""
    if relation not in _LEGACY_RELATIONS:
        raise FormulaError(
            f"unknown relation {_quote(str(relation))}",
            hint=f"use one of {', '.join(map(_quote, _LEGACY_RELATIONS))}",
        )
    if isinstance(region_number, bool) or not isinstance(region_number, int) or region_number < 1:
        raise FormulaError(f"bad region number {region_number!r}", hint="regions are numbered from 1")
    for operand in (l_operand, r_operand):
        if not isinstance(operand, str) or not _CONDITION_RE.fullmatch(operand):
            raise FormulaError(
                f"bad condition name {operand!r}",
                hint="condition names may contain only letters, digits, `_` and `-`",
            )
    op = _LEGACY_RELATIONS[relation]
    return f"({region_number};%{l_operand}%) {op} ({region_number};%{r_operand}%)"
