"""Words in contexts, for a word's age of acquisition (Chang and Bergen 2022): each word's surprisal
after each of its contexts, at every checkpoint of a sweep.

The file is CSV or TSV (by its extension, ``.tsv`` or ``.csv``) with a header and the columns
``word`` and ``context`` (the text before the word: ``I raised a`` for ``dog``; empty for a word
that begins its text), and optionally ``child_aoa`` (the age in months at which children produce
the word, as CDI norms give it; its Pearson correlation with the words' ages of acquisition is
reported). Each row becomes an item of a suite (:func:`word_suite`) with one condition,
``word``, whose region 1 is the context and region 2 the word: the word's region surprisal is its
surprisal after the context, in bits, as every suite's regions are scored.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from syntaxgym_helm.core.files import read_regular_file
from syntaxgym_helm.core.suite_data import (
    Condition,
    Item,
    Prediction,
    Region,
    Suite,
    SuiteMeta,
    region_text,
)

SUITE_NAME = "word_contexts"
CONDITION = "word"
WORD_REGION = 2
#: Every item needs a prediction; this one always holds (a surprisal is never negative): the
#: suite is read for its region values, not its accuracy.
PREDICTION = f"(2;%{CONDITION}%) >= 0"


class WordContextError(ValueError):
    """A words-in-contexts file that cannot be read (the message names the file and line)."""


@dataclass(frozen=True)
class WordContext:
    """One row: the word, its context, the children's age for the word (None: not given)."""

    word: str
    context: str
    child_aoa: float | None = None


def read_word_contexts(path: str | Path) -> list[WordContext]:
    """The rows of a words-in-contexts file (see the module doc)."""
    path = Path(path)
    try:
        text = read_regular_file(path).decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise WordContextError(f"{path}: cannot be read ({error})") from None
    reader = csv.DictReader(io.StringIO(text),
                            delimiter="\t" if path.suffix.lower() == ".tsv" else ",")
    missing = {"word", "context"} - set(reader.fieldnames or ())
    if missing:
        raise WordContextError(f"{path}, line 1: the header lacks the column(s) "
                               f"{', '.join(sorted(missing))} (it has "
                               f"{', '.join(reader.fieldnames or ()) or 'none'}); the columns "
                               "are word, context and optionally child_aoa")
    rows = []
    for line, row in enumerate(reader, start=2):
        word = region_text(row.get("word") or "")
        if not word:
            raise WordContextError(f"{path}, line {line}: the word is empty")
        age = (row.get("child_aoa") or "").strip()
        try:
            child_aoa = float(age) if age else None
        except ValueError:
            raise WordContextError(f"{path}, line {line}: child_aoa {age!r} is not a number "
                                   "(months; leave it empty where unknown)") from None
        rows.append(WordContext(word, region_text(row.get("context") or ""), child_aoa))
    if not rows:
        raise WordContextError(f"{path}: no rows after the header")
    return rows


def word_suite(rows: list[WordContext]) -> Suite:
    """The suite of ``rows``: item ``n`` is row ``n`` (from 1)."""
    from syntaxgym_helm.core.formula import parse_formula

    items = tuple(Item(number, (Condition(CONDITION, (Region(1, row.context),
                                                      Region(WORD_REGION, row.word))),))
                  for number, row in enumerate(rows, start=1))
    return Suite(SuiteMeta(SUITE_NAME, description="words in contexts (age of acquisition)"),
                 {1: "context", WORD_REGION: "word"},
                 (Prediction(0, parse_formula(PREDICTION)),), items)
