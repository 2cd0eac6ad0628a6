"""What the minimal-pair layer knows of a data set: where its files come from, how one reads.

A :class:`DataSet` is a data set's whole declaration: its pinned source (repository and commit:
every file is downloaded from ``raw.githubusercontent.com/<repository>/<commit>/<source path>``),
the offline folder variable, its languages, how its sentences split into units, its reader (a
function from a file's lines to :class:`MinimalPair`\\ s and :class:`PairProblem`\\ s: for files of
rows with columns, a :class:`~.columns.Columns` declaration), and what the leaderboard and the
report show of it. Each file is a :class:`SourceFile`, one suite: its suite name, paths, SHA-256
and pair count, listed in ``syntaxgym_helm/data/pairs_<name>.tsv`` (:func:`read_files`).
:mod:`.catalogue` registers the data sets; docs/adding_a_dataset.md lists every step of adding one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import PurePosixPath
from typing import Any

from syntaxgym_helm.core.errors import SyntaxGymError
from syntaxgym_helm.core.files import packaged_table
from syntaxgym_helm.core.minimal_pairs.regions import Cut, Fold, Sentence


class PairDataError(SyntaxGymError):
    """A data set's file cannot become a suite at all (unreadable, unknown, or no pair
    converts), or a suite name is unknown."""


@dataclass(frozen=True, kw_only=True)
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


@dataclass(frozen=True, kw_only=True)
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


@dataclass(frozen=True, kw_only=True)
class SourceFile:
    """One file of a data set, one suite."""

    suite: str  # e.g. clams_en_simple_agrmt
    #: In an offline folder laid out as the project's shared copy, e.g. en_evalset/simple_agrmt.txt
    path: str
    source_path: str  # in the source repository, e.g. en_evalset/simple_agrmt.txt
    #: Of the uncompressed file at the pinned commit; None: a user's file; "": not recorded yet
    #: (a data set whose files could not be fetched where the package was built).
    sha256: str | None = None
    pairs: int | None = None  # pairs in the file (lines, not only the convertible ones)
    language: str
    paradigm: str
    group: str  # the data set's grouping below the language (phenomenon, level, folder)


@dataclass(frozen=True, kw_only=True)
class PairGroup:
    """A leaderboard group of a data set's suites: its run group name, label and members."""

    name: str
    label: str
    suites: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class PaperFigures:
    """A paper's columns (key: header) and each paradigm's figures (by the suite's name without
    the data set's prefix, e.g. ``en_simple_agrmt``); a missing figure is absent."""

    citation: str
    columns: Mapping[str, str]
    by_paradigm: Mapping[str, Mapping[str, float]]


@dataclass(frozen=True, kw_only=True)
class Archive:
    """A compressed archive (``.tar.gz``) that holds a data set's files as published: downloaded
    and checked whole, its members read from it (their paths are the files' ``path``)."""

    source_path: str  # in the source repository, e.g. data/ZhoBLiMP.tar.gz
    sha256: str  # of the archive's bytes at the pinned commit

    @property
    def name(self) -> str:
        return PurePosixPath(self.source_path).name


@dataclass(frozen=True, kw_only=True)
class Companion:
    """A file published beside a data set's files whose figures each suite's ``meta`` takes at
    conversion (ZhoBLiMP's human agreement per paradigm): read from where the data is read
    (offline folder, cache, checked download), never shipped, and shown by the report beside the
    models' accuracy."""

    path: str  # in an offline folder laid out as the project's shared copy
    source_path: str  # in the source repository
    sha256: str
    key: str  # the meta key the figures go under, e.g. human_agreement
    label: str  # the report's column, e.g. humans
    #: The file's figures for one paradigm (``accuracy`` is the one shown), or None.
    figures: Callable[[bytes, SourceFile], Mapping[str, float] | None]


Line = tuple[int, str]  # (1-based line number, text without its line end)
Reader = Callable[[Iterable[Line], SourceFile, str], Iterator["MinimalPair | PairProblem"]]
#: A data set's own cut of a pair: (cut, split name, why it fell back) or None to use the default.
OwnCut = Callable[[MinimalPair, Sentence, Sentence], "tuple[Cut | None, str, str] | None"]
MetaHead = Callable[["DataSet", SourceFile, MinimalPair], "dict[str, Any]"]
#: Extra predictions after the whole-sentence one: (formulas, notes on those left out).
ExtraPredictions = Callable[[Sequence[tuple[MinimalPair, Any]], SourceFile],
                            "tuple[list[str], list[str]]"]


@dataclass(frozen=True, kw_only=True)
class DataSet:
    """A minimal-pair data set, declared: its source, naming, languages, reader, and what the
    leaderboard, the report and ``scripts/pairs_sources.py`` need of it."""

    name: str  # suite names start with name + "_"; its files are data/pairs_<name>.tsv
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
    #: Where its files lie in the project's shared copy (``../shared/<folder>``) and their names
    #: there (a glob), for scripts/pairs_sources.py.
    shared_folder: str
    shared_glob: str
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
    #: What a file's group is (the report's column header): group, phenomenon, ...
    group_label: str = "group"
    #: What one of its files (one suite) is, in the plural: paradigms, languages (MultiBLiMP's).
    files_label: str = "paradigms"
    #: The leaderboard's groups of its suites (default: languages, where several, then groups).
    leaderboard_groups: Callable[[], list[PairGroup]] | None = None
    #: The figures its paper publishes per paradigm (None: not held here) and what the report
    #: says of them.
    paper_figures: Callable[[], PaperFigures] | None = None
    paper_note: str = ""
    #: A file's group and extra columns of its row in data/pairs_<name>.tsv, read from its bytes
    #: (default: the group :attr:`describe` gives, no extra column), and the table's note on them.
    table_row: Callable[[SourceFile, bytes], Mapping[str, str]] | None = None
    table_note: str = ""
    #: Where a file is downloaded from: ``{repository}``, ``{commit}`` and ``{path}`` filled in
    #: (default: GitHub's raw files); ``commit`` empty: not pinned yet (no download, and offline
    #: copies cannot be checked: docs/multilingual.md).
    download: str = "https://raw.githubusercontent.com/{repository}/{commit}/{path}"
    #: The archive the files are published in (None: each file on its own).
    archive: Archive | None = None
    #: A file beside the data whose figures each suite's meta takes (None: none).
    companion: Companion | None = None
    #: Names of languages beyond the catalogue's (ISO 639-3 codes: MultiBLiMP's).
    language_names: Mapping[str, str] = field(default_factory=dict)
    #: The sentence score its paper uses where it is not the sum (``zhoblimp:0.5``, ``mean``):
    #: the report adds each model's accuracy under it.
    paper_score: str | None = None
    #: Its files, for a data set whose files could not be read where the package was built
    #: (``data/pairs_<name>.tsv`` is written from it, without checksums; None: read them).
    listing: Callable[[], list[SourceFile]] | None = None

    @property
    def env_var(self) -> str:
        return f"SYNTAXGYM_{self.name.upper()}_DIR"

    @property
    def prefix(self) -> str:
        return f"{self.name}_"

    @property
    def pinned(self) -> bool:
        """Whether its files are pinned: a commit, and a SHA-256 for each file."""
        return bool(self.commit)

    @property
    def url(self) -> str:
        """The download address pattern: ``{path}`` is a file's source path."""
        return self.download.format(repository=self.repository, commit=self.commit,
                                    path="{path}")

    def source_url(self, file: SourceFile) -> str:
        """Where ``file`` is published: its own address, or its archive's and the member."""
        if self.archive is not None:
            return f"{self.url.format(path=self.archive.source_path)}#{file.source_path}"
        return self.url.format(path=file.source_path)

    @property
    def table(self) -> str:
        """The package's list of its files: ``data/pairs_<name>.tsv``."""
        return f"pairs_{self.name}.tsv"

    @property
    def cited(self) -> str:
        """Its paper as prose cites it: ``Mueller et al. (2020)``."""
        authors, _, year = self.short_citation.rpartition(", ")
        return f"{authors} ({year})"

    def files(self) -> tuple[SourceFile, ...]:
        """Its files, as ``data/pairs_<name>.tsv`` lists them."""
        return read_files(self.table)

    def by_suite(self) -> dict[str, SourceFile]:
        return {file.suite: file for file in self.files()}


@cache
def read_files(table: str) -> tuple[SourceFile, ...]:
    """The files listed in the package's ``data/<table>`` (tab-separated, ``#`` comments)."""
    rows = packaged_table(table)
    return tuple(SourceFile(suite=row["suite"], path=row["path"], source_path=row["source_path"],
                            sha256=row["sha256"], pairs=int(row["pairs"]),
                            language=row["language"], paradigm=row["paradigm"],
                            group=row["group"])
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
