"""What the minimal-pair layer knows of a data set: where its files come from, how one reads.

A :class:`DataSet` names its pinned source (repository and commit: every file is downloaded from
``raw.githubusercontent.com/<repository>/<commit>/<source path>``), the offline folder variable,
its languages, how its sentences split into units, and its reader: a function from a file's
lines to :class:`MinimalPair`\\ s and :class:`PairProblem`\\ s. Each file is a :class:`SourceFile`,
one suite: its suite name, paths, SHA-256 and pair count. The four data sets beyond BLiMP list
their files in ``syntaxgym_helm/data/pairs_<name>.tsv`` (:func:`read_files`); BLiMP's are in
:mod:`syntaxgym_helm.core.blimp.sources`.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from importlib import resources
from pathlib import PurePosixPath
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from syntaxgym_helm.core.errors import SyntaxGymError
from syntaxgym_helm.core.minimal_pairs.regions import Cut, Fold, Sentence


class PairDataError(SyntaxGymError):
    """A data set's file cannot become a suite at all (unreadable, unknown, or no pair
    converts), or a suite name is unknown."""


@dataclass(frozen=True)
class MinimalPair:
    """One pair as a data set gives it: the grammatical and the ungrammatical sentence, its
    number (the item number: the data set's id, else the line the pair starts on), paradigm and
    language (ISO 639-1), and where the data set marks them, the critical words of each sentence
    (``""``: nothing on that side) and a later word where the violation shows."""

    number: int
    good: str
    bad: str
    line: int
    paradigm: str
    language: str
    pair_id: str = ""  # the id as the data writes it (default: the number)
    marked_good: str | None = None
    marked_bad: str | None = None
    marked_after: str | None = None
    #: The record's other fields, for a data set's own cut (BLiMP's prefix fields).
    fields: Mapping[str, Any] = field(default_factory=dict)

    @property
    def id_text(self) -> str:
        return self.pair_id or str(self.number)


@dataclass(frozen=True)
class PairProblem:
    """A record that did not become an item: where it is (1-based line), its id and why."""

    source: str
    line: int
    pair_id: str | None
    reason: str
    id_label: str = "pair"  # how the data set names its ids (BLiMP: pairID; "line": no ids)

    def __str__(self) -> str:
        pair = (f" ({self.id_label} {self.pair_id})"
                if self.pair_id is not None and self.id_label != "line" else "")
        return f"{self.source} line {self.line}{pair}: {self.reason}"


@dataclass(frozen=True)
class SourceFile:
    """One file of a data set, one suite."""

    suite: str  # e.g. clams_en_simple_agrmt
    path: str  # in an offline folder laid out as the project's shared copy, e.g. en_evalset/simple_agrmt.txt
    source_path: str  # in the source repository, e.g. en_evalset/simple_agrmt.txt
    sha256: str | None  # of the uncompressed file at the pinned commit; None: a user's file
    pairs: int | None  # pairs in the file (lines, not only the convertible ones)
    language: str
    paradigm: str
    group: str  # the data set's grouping below the language (phenomenon, level, folder)


Line = tuple[int, str]  # (1-based line number, text without its line end)
Reader = Callable[[Iterable[Line], SourceFile, str], Iterator["MinimalPair | PairProblem"]]
#: A data set's own cut of a pair: (cut, split name, why it fell back) or None to use the default.
OwnCut = Callable[[MinimalPair, Sentence, Sentence], "tuple[Cut | None, str, str] | None"]
#: Extra predictions after the whole-sentence one: (formulas, notes on those left out).
MetaHead = Callable[["DataSet", SourceFile, MinimalPair], "dict[str, Any]"]
ExtraPredictions = Callable[[Sequence[tuple[MinimalPair, Any]], SourceFile],
                            "tuple[list[str], list[str]]"]


@dataclass(frozen=True)
class DataSet:
    """A minimal-pair data set: its source, naming, languages and reader."""

    name: str  # suite names start with name + "_"
    title: str
    citation: str
    short_citation: str  # e.g. "Mueller et al., 2020"
    paper_url: str
    licence: str
    repository: str  # owner/name on GitHub
    commit: str
    languages: tuple[str, ...]
    read: Reader
    describe: Callable[[str], SourceFile]  # a path (in the offline layout) to its file's facts
    files: Callable[[], tuple[SourceFile, ...]]
    good_label: str = "the good sentence"
    bad_label: str = "the bad sentence"
    #: What the data calls a pair's id; ``line`` where pairs are numbered by their line.
    id_label: str = "line"
    separator: str = " "
    fold: Fold = str.casefold
    own_cut: OwnCut | None = None
    extra_predictions: ExtraPredictions | None = None
    #: The suite's meta before its conversion record (default: convert.default_meta_head).
    meta_head: MetaHead | None = None
    error: type[PairDataError] = PairDataError

    @property
    def env_var(self) -> str:
        return f"SYNTAXGYM_{self.name.upper()}_DIR"

    @property
    def prefix(self) -> str:
        return f"{self.name}_"

    @property
    def url(self) -> str:
        """The download address pattern: ``{path}`` is a file's source path."""
        return f"https://raw.githubusercontent.com/{self.repository}/{self.commit}/{{path}}"

    def by_suite(self) -> dict[str, SourceFile]:
        return {file.suite: file for file in self.files()}


def read_files(table: str) -> tuple[SourceFile, ...]:
    """The files listed in the package's ``data/<table>`` (tab-separated, ``#`` comments)."""
    text = resources.files("syntaxgym_helm").joinpath("data", table).read_text("utf-8")
    rows = csv.DictReader((line for line in text.splitlines()
                           if line and not line.startswith("#")), delimiter="\t")
    return tuple(SourceFile(row["suite"], row["path"], row["source_path"], row["sha256"],
                            int(row["pairs"]), row["language"], row["paradigm"], row["group"])
                 for row in rows)


def snake(name: str) -> str:
    """``Classifier-Noun`` -> ``classifier_noun``, ``WhFronting`` -> ``wh_fronting``."""
    out = "".join(f"_{c.lower()}" if c.isupper() and i and name[i - 1].islower() else c.lower()
                  for i, c in enumerate(name))
    return out.replace("-", "_")


def stem(path: str) -> str:
    """A file's name without ``.txt``/``.csv``/``.jsonl`` and any ``.gz``."""
    name = PurePosixPath(path).name.removesuffix(".gz")
    return name.rsplit(".", 1)[0]


def csv_pairs(lines: Iterable[Line], source: str, columns: Sequence[str],
              make: Callable[[int, dict[str, str]], "MinimalPair | PairProblem"],
              optional: Sequence[str] = (), delimiter: str = ",",
              quoting: int = csv.QUOTE_MINIMAL) -> Iterator[MinimalPair | PairProblem]:
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
    header = next(csv.reader([text], delimiter=delimiter, quoting=quoting))
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
            yield PairProblem(source, number, None, f"not a CSV row: {exc}")
            continue
        if len(row) != len(header):
            yield PairProblem(source, number, None, (
                f"{len(row)} fields separated by {delimiter!r}, where the header has "
                f"{len(header)}"))
            continue
        yield make(number, dict(zip(header, row)))
