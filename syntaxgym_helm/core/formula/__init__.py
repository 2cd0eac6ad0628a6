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
    number     = ( digits , [ "." , [ digits ] ] | "." , digits ) ,
                 [ ( "e" | "E" ) , [ "+" | "-" ] , digits ] ;

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

Deliberate differences from the reference implementation (syntaxgym-core, pyparsing); all of
them, with the tests that pin them, are in docs/differences_from_syntaxgym_core.md:

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

Modules: :mod:`.nodes` (the syntax tree and :func:`render`), :mod:`.lexer` (tokens and the
messages for malformed region references), :mod:`.parser` (precedence climbing and type
checks), :mod:`.evaluation` (:func:`approx_equal`, region values, arithmetic) and
:mod:`.formula` (:class:`Formula`, :func:`parse_formula`, :func:`legacy_to_formula`).
"""

from __future__ import annotations

# Not in __all__, but imported from here by callers (and attributes of the former module).
from syntaxgym_helm.core.errors import (
    EvaluationError as EvaluationError,
    FormulaError as FormulaError,
)
from syntaxgym_helm.core.formula.evaluation import (
    EQUALITY_ATOL,
    EQUALITY_RTOL,
    Values as Values,
    approx_equal,
)
from syntaxgym_helm.core.formula.formula import (
    MAX_FORMULA_LENGTH,
    Formula,
    legacy_to_formula,
    parse_formula,
)
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
    render,
)
from syntaxgym_helm.core.formula.parser import MAX_DEPTH

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
