"""A data set whose files are rows with columns, declared: which column holds what.

A :class:`Columns` is the reader of such a data set (as lm-evaluation-harness's task YAML names
the columns of a data set): every file has a header, one pair per row, each row one line; the
declaration names the columns holding the good and the bad sentence and, where the data has them,
the pair's id, its paradigm, the critical words of each side and a later word where the violation
shows. Its :meth:`Columns.read` is the data set's ``read`` (:class:`~.dataset.DataSet`).
:class:`Records` does the same for files of JSON records, one a line.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from syntaxgym_helm.core.minimal_pairs.dataset import (
    Line,
    MinimalPair,
    PairDataError,
    PairProblem,
    SourceFile,
)


@dataclass(frozen=True, kw_only=True)
class Columns:
    """The columns of a data set's CSV files and what each holds."""

    #: Columns every header must have, and those it may have besides (any other is an error).
    required: tuple[str, ...]
    optional: tuple[str, ...] = ()
    good: str  # the grammatical sentence
    bad: str  # the ungrammatical one
    #: The pair's id, a whole number (the item number); None: pairs are numbered by their line.
    pair_id: str | None = None
    #: The pair's paradigm, which must be the file's; None: the file's paradigm.
    paradigm: str | None = None
    #: The critical words of the good and the bad sentence (the layer's marks), and the value
    #: meaning "no word on this side".
    marked: tuple[str, str] | None = None
    nothing: str | None = None
    #: A later word where the violation shows, and the value meaning "none".
    after: str | None = None
    no_after: str | None = None
    #: The column separator: the first of these found in the header line (else the last one).
    delimiters: tuple[str, ...] = (",",)
    #: Whether fields may be quoted (``"a, b"``); False: quotes are text.
    quoted: bool = True

    def read(self, lines: Iterable[Line], file: SourceFile,
             source: str) -> Iterator[MinimalPair | PairProblem]:
        """The file's pairs and problems (a :data:`~.dataset.Reader`)."""
        lines = list(lines)
        header = lines[0][1] if lines else ""
        delimiter = next((d for d in self.delimiters if d in header), self.delimiters[-1])

        def pair(number: int, row: dict[str, str]) -> MinimalPair | PairProblem:
            pair_id = str(number)
            if self.pair_id is not None:
                pair_id = row[self.pair_id]
                if not (pair_id.isascii() and pair_id.isdigit()):
                    return PairProblem(source=source, line=number, pair_id=pair_id,
                                       reason=f"{self.pair_id} {pair_id!r} is not a whole number")
            marks = ((None, None) if self.marked is None else
                     tuple("" if row[key].strip() == self.nothing else row[key]
                           for key in self.marked))
            after = row[self.after].strip() if self.after is not None else None
            return MinimalPair(
                number=int(pair_id), good=row[self.good], bad=row[self.bad], line=number,
                paradigm=row[self.paradigm] if self.paradigm else file.paradigm,
                language=file.language, pair_id=pair_id, marked_good=marks[0],
                marked_bad=marks[1], marked_after=None if after == self.no_after else after)

        return csv_pairs(lines, source, self.required, pair, self.optional, delimiter,
                         csv.QUOTE_MINIMAL if self.quoted else csv.QUOTE_NONE)


def csv_pairs(lines: Iterable[Line], source: str, columns: Sequence[str],
              make: Callable[[int, dict[str, str]], MinimalPair | PairProblem],
              optional: Sequence[str] = (), delimiter: str = ",",
              quoting: Literal[0, 3] = csv.QUOTE_MINIMAL,
              ) -> Iterator[MinimalPair | PairProblem]:
    """``make(line, {column: value})`` of each row of a CSV file with a header (every row one
    line), or a :class:`PairProblem` for a row that does not parse or has another number of
    fields. The header must hold ``columns`` and may hold ``optional`` ones: any other column, or
    a missing one, is a :class:`PairDataError` naming the file and line, since no row can be read
    then."""
    lines = iter(lines)
    first = next(lines, None)
    if first is None:
        return
    number, text = first
    if number != 1:  # (decode_lines leaves out a line that is not UTF-8, and says so)
        raise PairDataError(f"{source} line 1: the header is not UTF-8 text: save the file as "
                            "UTF-8 (a spreadsheet's UTF-16 or Latin-1 export must be converted)")
    try:
        header = next(csv.reader([text], delimiter=delimiter, quoting=quoting))
    except csv.Error:
        raise PairDataError(
            f"{source} line 1: the header holds a carriage return (\\r) inside it: lines must "
            "end in LF or CRLF, not in CR alone (convert the file's line ends)") from None
    missing = [name for name in columns if name not in header]
    unknown = [name for name in header if name not in columns and name not in optional]
    if missing or unknown or len(set(header)) != len(header):
        said = "; ".join(part for part in (
            missing and f"the column(s) {', '.join(map(repr, missing))} are missing",
            unknown and f"unknown column(s) {', '.join(map(repr, unknown))}",
            len(set(header)) != len(header) and "a column is named twice") if part)
        raise PairDataError(f"{source} line {number}: the header {text!r} does not fit: {said} "
                            f"(expected {delimiter.join(columns)}"
                            + (f", optionally {', '.join(optional)})" if optional else ")"))
    for number, text in lines:
        if not text.strip():
            continue
        try:
            row = next(csv.reader([text], delimiter=delimiter, quoting=quoting, strict=True))
        except csv.Error as exc:
            yield PairProblem(source=source, line=number, pair_id=None,
                              reason=f"not a CSV row: {exc}")
            continue
        if len(row) != len(header):
            yield PairProblem(source=source, line=number, pair_id=None, reason=(
                f"{len(row)} fields separated by {delimiter!r}, where the header has "
                f"{len(header)}"))
            continue
        yield make(number, dict(zip(header, row, strict=True)))


@dataclass(frozen=True, kw_only=True)
class Records:
    """The fields of a data set's JSON-lines files (one JSON object a line) and what each holds:
    the declared reader of ZhoBLiMP and BLiMP-NL, as :class:`Columns` is of CSV files."""

    #: Fields every record must have; others are kept in ``MinimalPair.fields``.
    required: tuple[str, ...]
    good: str
    bad: str
    #: The pair's id, a whole number (a JSON number or a string of digits); None: the line.
    pair_id: str | None = None
    #: The pair's paradigm, which must be the file's; None: the file's paradigm.
    paradigm: str | None = None
    #: Fields that must hold the same value on every line of a file (its phenomenon).
    constant: tuple[str, ...] = ()

    def read(self, lines: Iterable[Line], file: SourceFile,
             source: str) -> Iterator[MinimalPair | PairProblem]:
        """The file's pairs and problems (a :data:`~.dataset.Reader`)."""
        first: dict[str, object] = {}
        for number, text in lines:
            if not text.strip():
                continue
            record, reason = self._record(text, file, first)
            if record is None:
                yield PairProblem(source=source, line=number, pair_id=None, reason=reason)
                continue
            first = first or {key: record[key] for key in self.constant}
            pair_id = str(record[self.pair_id]) if self.pair_id else str(number)
            yield MinimalPair(number=int(pair_id), good=str(record[self.good]),
                              bad=str(record[self.bad]), line=number,
                              paradigm=file.paradigm, language=file.language,
                              pair_id=pair_id, fields=record)

    def _record(self, text: str, file: SourceFile,
                first: dict[str, object]) -> tuple[dict[str, Any] | None, str]:
        """The line's record, or None and why it cannot be read."""
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            return None, f"not valid JSON: {exc.msg} at column {exc.colno}"
        if not isinstance(record, dict):
            return None, "a line must hold one JSON object"
        missing = [key for key in self.required if key not in record]
        if missing:
            return None, f"the field(s) {', '.join(map(repr, missing))} are missing"
        for key in (self.good, self.bad):
            if not isinstance(record[key], str):
                return None, f"the field {key!r} must be a JSON string"
        if self.pair_id is not None:
            value = record[self.pair_id]
            if isinstance(value, bool) or not (
                    (isinstance(value, int) and value >= 0)
                    or (isinstance(value, str) and value.isascii() and value.isdigit())):
                return None, f"{self.pair_id} {value!r} is not a whole number"
        if self.paradigm is not None and record[self.paradigm] != file.paradigm:
            return None, (f"its {self.paradigm} {record[self.paradigm]!r} is not the file's "
                          f"paradigm {file.paradigm!r}")
        for key in self.constant:
            if first and record[key] != first[key]:
                return None, (f"its {key} {record[key]!r} differs from the file's "
                              f"{first[key]!r} (from its first record)")
        return record, ""
