"""The parser of prediction formulas: precedence climbing over the tokens, with type checks.

:class:`_Parser` turns the tokens of one formula into a syntax tree, checking types as it goes
(``&``, ``|`` and ``~`` need truth values; arithmetic, ``abs`` and comparisons need numbers) and
raising :class:`FormulaError` with a column and a hint at the first problem.  Precedence climbing
costs a few Python frames per nesting level, bounded by :data:`MAX_DEPTH`, which also bounds the
height of the syntax tree.
"""

from __future__ import annotations

from dataclasses import dataclass

from syntaxgym_helm.core.errors import FormulaError
from syntaxgym_helm.core.formula.lexer import _REGION_SHAPE, _quote, _Token, _tokenize
from syntaxgym_helm.core.formula.nodes import (
    _BINARY_LEVEL,
    _COMPARE,
    _LOGIC,
    _NOT,
    _SUM,
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
    _is_boolean,
)

#: Deepest nesting accepted: of brackets, prefix operators and calls, and of the syntax tree.
MAX_DEPTH = 100


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
                hint=f"its syntax tree may be at most {MAX_DEPTH} levels deep; "
                     "split long chains with brackets",
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
            raise FormulaError("empty formula", column=1,
                               hint="write a prediction such as `(6;%a%) < (6;%b%)`")
        result = self.expression(_LOGIC)
        token = self.peek()
        if token.kind == "close":
            raise FormulaError(f"unmatched {_quote(token.text)}", column=token.column,
                               hint="remove it or add the opening bracket")
        if token.kind != "end":
            raise FormulaError(
                f"expected an operator or the end of the formula, found {self.describe(token)}",
                column=token.column,
                hint=f"is an operator missing between {self.snippet(result)} and "
                     f"{self.describe(token)}?",
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
                hint=f"write {self.bracketed(operands, ops, '&')} or "
                     f"{self.bracketed(operands, ops, '|')}",
            )
        for index, operand in enumerate(operands):
            self.require(operand, True, f"`{ops[max(index - 1, 0)].text}`")
        kind = And if ops[0].text == "&" else Or
        return self.make(kind(tuple(o.node for o in operands)), first.start, operands[-1].end,
                         *operands)

    def bracketed(self, operands: list[_Parsed], ops: list[_Token], tight: str) -> str:
        """The level written with every run of ``tight`` operators in brackets."""
        runs: list[list[_Parsed]] = [[operands[0]]]
        for op, operand in zip(ops, operands[1:], strict=False):
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
        if token.kind == "number" and isinstance(token.value, float):  # always a float
            return _Parsed(Number(token.value), token.pos, token.end, 1)
        if token.kind == "region" and isinstance(token.value, RegionRef):  # always a RegionRef
            return _Parsed(token.value, token.pos, token.end, 1)
        position = self.index if token.kind == "end" else self.index - 1  # `end` is never consumed
        before = self.tokens[position - 1] if position > 0 else None
        after = f" after {_quote(before.text)}" if before is not None else ""
        raise FormulaError(
            f"expected a value{after}, found {self.describe(token)}",
            column=token.column,
            hint="an operand is missing: a region reference such as `(6;%a%)`, a number or a "
                 "bracketed expression",
        )

    def expect_close(self, opener: _Token, what: str) -> _Token:
        wanted = _CLOSER[opener.text]
        token = self.advance()
        if token.kind == "close" and token.text == wanted:
            return token
        if token.kind == "close":
            raise FormulaError(
                f"{_quote(token.text)} does not match the {_quote(opener.text)} at column "
                f"{opener.column}",
                column=token.column,
                hint=f"close `{opener.text}` with `{wanted}`",
            )
        raise FormulaError(
            f"expected `{wanted}` to close the {what} opened at column {opener.column}, "
            f"found {self.describe(token)}",
            column=token.column,
            hint="brackets must be balanced" if token.kind == "end" else "is an operator missing?",
        )

    def call_opener(self, name: _Token) -> _Token:
        """Check that ``name`` is ``abs`` followed by ``(`` or a region reference, and take that."""
        following = self.peek()
        if name.text != "abs":
            if following.kind in ("open", "region"):
                message = f"unknown function {_quote(name.text)}"
                hint = "the only function is `abs(...)`"
            else:
                message = f"unexpected name {_quote(name.text)}"
                hint = f"condition names go inside region references: {_REGION_SHAPE}"
            raise FormulaError(message, column=name.column, hint=hint)
        if following.kind == "region" or following.text == "(":
            return self.advance()
        raise FormulaError(f"expected `(` after `abs`, found {self.describe(following)}",
                           column=following.column, hint="write `abs(...)`")

    def called(self, name: _Token, argument: _Parsed, close: _Token) -> _Parsed:
        self.require(argument, False, "`abs`")
        return self.make(Call(name.text, argument.node), name.pos, close.end, argument)
