"""BLiMP (Warstadt et al. 2020): 67 English paradigms of 1,000 pairs, one suite each,
``blimp_<UID>`` for ``data/<UID>.jsonl``. docs/blimp.md describes the rules and what is compared.

A file holds one JSON record a line: ``sentence_good``, ``sentence_bad``, ``pairID`` (a whole
number, the item number) and the paradigm's ``UID``, ``field``, ``linguistics_term``,
``one_prefix_method`` and ``two_prefix_method`` (the same on every line), and where the paradigm
has them, the one- and two-prefix fields its own cut reads (:mod:`.blimp_cut`). Suites get
``meta.field`` and ``meta.linguistics_term`` and, after the whole-sentence prediction 0:

1. where the paradigm's ``one_prefix_method`` is set: ``(2;%good%) < (2;%bad%)``, the critical
   word(s) given the shared prefix;
2. where ``two_prefix_method`` is set: ``(3;%good%) < (3;%bad%)``, the same next word given the
   two different prefixes.

A prefix-method prediction is added only when every converted pair has the shape it needs (a
shared prefix and a non-empty critical region; a shared, non-empty next word); otherwise
``meta.blimp_conversion.omitted_predictions`` says which pairs lack it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from syntaxgym_helm.core.files import packaged_table
from syntaxgym_helm.core.minimal_pairs.blimp_cut import blimp_cut
from syntaxgym_helm.core.minimal_pairs.blimp_paper import PAPER_NOTE, paper_figures
from syntaxgym_helm.core.minimal_pairs.dataset import (
    DataSet,
    Line,
    MinimalPair,
    PairDataError,
    PairGroup,
    PairProblem,
    SourceFile,
)
from syntaxgym_helm.core.minimal_pairs.regions import PairRegions

__all__ = ["BLIMP", "BLIMP_COMMIT", "ONE_PREFIX", "PARADIGMS", "TWO_PREFIX", "BlimpError",
           "BlimpGroups", "Paradigm", "blimp_groups", "paradigm_of_suite"]

BLIMP_COMMIT = "3e56b06fcabca9b30822fc66435fca6b1aa40bb1"
#: A BLiMP suite is named ``blimp_<UID>``.
SUITE_PREFIX = "blimp_"
CITATION = ("Warstadt, Parrish, Liu, Mohananey, Peng, Wang, Bowman (2020). BLiMP: The Benchmark "
            "of Linguistic Minimal Pairs for English. TACL 8:377-392. "
            "https://doi.org/10.1162/tacl_a_00321 (data CC-BY 4.0)")
ONE_PREFIX = "(2;%good%) < (2;%bad%)"
TWO_PREFIX = "(3;%good%) < (3;%bad%)"
#: The fields a record must have, with their JSON types; the paradigm fields must not vary.
_FIELDS: dict[str, type] = {"sentence_good": str, "sentence_bad": str, "pairID": str, "UID": str,
                            "field": str, "linguistics_term": str, "one_prefix_method": bool,
                            "two_prefix_method": bool}
_PARADIGM_FIELDS = ("UID", "field", "linguistics_term", "one_prefix_method", "two_prefix_method")
#: The paper's phenomenon where the data files' linguistics_term differs: they call the two
#: animate_subject paradigms s-selection, the paper (and its models_summary.jsonl)
#: argument_structure.
_PAPER_PHENOMENA = {"animate_subject_passive": "argument_structure",
                    "animate_subject_trans": "argument_structure"}


class BlimpError(PairDataError):
    """A BLiMP file cannot become a suite at all (unreadable, or no pair converts)."""


@dataclass(frozen=True, kw_only=True)
class Paradigm:
    """One BLiMP paradigm (1,000 pairs): its UID, field, phenomenon and source file's SHA-256."""

    uid: str
    field: str
    linguistics_term: str
    sha256: str

    @property
    def field_group(self) -> str:
        """The paper's field (morphology, syntax, semantics, syntax_semantics): ``field``, except
        that principle_A_case_2's data files write ``syntax/semantics``."""
        return self.field.replace("/", "_")

    @property
    def phenomenon(self) -> str:
        """The paper's phenomenon (its 12 groups): ``linguistics_term``, except for the two
        animate_subject paradigms (see ``_PAPER_PHENOMENA``)."""
        return _PAPER_PHENOMENA.get(self.uid, self.linguistics_term)

    @property
    def suite_name(self) -> str:
        return f"{SUITE_PREFIX}{self.uid}"

    @property
    def url(self) -> str:
        return BLIMP.url.format(path=_file(self.uid).source_path)


def _paradigms() -> dict[str, Paradigm]:
    rows = packaged_table("pairs_blimp.tsv")
    return {row["paradigm"]: Paradigm(uid=row["paradigm"], field=row["field"],
                                      linguistics_term=row["linguistics_term"],
                                      sha256=row["sha256"]) for row in rows}


#: The 67 paradigms by UID, in alphabetical order (``data/pairs_blimp.tsv``).
PARADIGMS: dict[str, Paradigm] = _paradigms()


def paradigm_of_suite(name: str) -> Paradigm | None:
    """The paradigm a suite name ``blimp_<UID>`` stands for; None for any other name."""
    if not name.startswith(SUITE_PREFIX):
        return None
    return PARADIGMS.get(name[len(SUITE_PREFIX):])


@dataclass(frozen=True, kw_only=True)
class BlimpGroups:
    """The leaderboard's BLiMP groups, each a list of suite names ``blimp_<UID>``."""

    overall: tuple[str, ...]
    by_field: Mapping[str, tuple[str, ...]]
    by_phenomenon: Mapping[str, tuple[str, ...]]


def blimp_groups() -> BlimpGroups:
    """Overall, by field and by the paper's phenomenon (``linguistics_term``); the two properties
    of :class:`Paradigm` say where they differ from the data files' values. Each paradigm is also
    its own suite table."""
    by_field: dict[str, list[str]] = {}
    by_phenomenon: dict[str, list[str]] = {}
    for paradigm in PARADIGMS.values():
        by_field.setdefault(paradigm.field_group, []).append(paradigm.suite_name)
        by_phenomenon.setdefault(paradigm.phenomenon, []).append(paradigm.suite_name)
    return BlimpGroups(
        overall=tuple(paradigm.suite_name for paradigm in PARADIGMS.values()),
        by_field={name: tuple(names) for name, names in sorted(by_field.items())},
        by_phenomenon={name: tuple(names) for name, names in sorted(by_phenomenon.items())})


def _leaderboard_groups() -> list[PairGroup]:
    """The leaderboard's groups below BLiMP: the paper's fields, then its phenomena."""
    groups = blimp_groups()
    return ([PairGroup(name=f"syntaxgym_blimp_field_{name}", label=f"field: {name}",
                       suites=members) for name, members in groups.by_field.items()]
            + [PairGroup(name=f"syntaxgym_blimp_{name}", label=f"phenomenon: {name}",
                         suites=members) for name, members in groups.by_phenomenon.items()])


def _file(uid: str) -> SourceFile:
    """The file of paradigm ``uid`` (a user's file of another name: no checksum, no group)."""
    return BLIMP.by_suite().get(f"{SUITE_PREFIX}{uid}") or SourceFile(
        suite=f"{SUITE_PREFIX}{uid}", path=f"{uid}.jsonl", source_path=f"data/{uid}.jsonl",
        language="en", paradigm=uid, group="")


def _read(lines: Iterable[Line], file: SourceFile,
          source: str) -> Iterator[MinimalPair | PairProblem]:
    paradigm: dict[str, Any] | None = None
    for number, line in lines:
        if not line.strip():
            continue
        record, problem = _read_record(line, file.paradigm, paradigm)
        if record is None:
            yield PairProblem(source=source, line=number, pair_id=_pair_id(line),
                              reason=problem or "unknown")
            continue
        paradigm = paradigm or {key: record[key] for key in _PARADIGM_FIELDS}
        yield MinimalPair(number=int(record["pairID"]), good=record["sentence_good"],
                          bad=record["sentence_bad"], line=number, paradigm=file.paradigm,
                          language="en", pair_id=record["pairID"], fields=record)


def _read_record(line: str, uid: str,
                 paradigm: Mapping[str, Any] | None) -> tuple[dict[str, Any] | None, str | None]:
    """The record on one line, or None and the reason it cannot be used."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON: {exc.msg} at column {exc.colno}"
    if not isinstance(record, dict):
        return None, "a line must hold one JSON object"
    for key, kind in _FIELDS.items():
        if key not in record:
            return None, f"the field {key!r} is missing"
        if not isinstance(record[key], kind):
            kind_name = "boolean" if kind is bool else "string"
            return None, f"the field {key!r} must be a JSON {kind_name}"
    if not (record["pairID"].isascii() and record["pairID"].isdigit()):
        return None, f"pairID {record['pairID']!r} is not a whole number"
    for key in ("sentence_good", "sentence_bad"):
        if not record[key].split():
            return None, f"{key} is empty"
    if record["UID"] != uid:
        return None, f"its UID {record['UID']!r} is not the file's paradigm {uid!r}"
    if paradigm is not None:
        for key in _PARADIGM_FIELDS:
            if record[key] != paradigm[key]:
                return None, (f"its {key} {record[key]!r} differs from the paradigm's "
                              f"{paradigm[key]!r} (from its first record)")
    return record, None


def _pair_id(line: str) -> str | None:
    """The pairID of a line for a problem report, when one can be read at all."""
    try:
        value = json.loads(line).get("pairID")
    except (json.JSONDecodeError, AttributeError):
        return None
    return value if isinstance(value, str) else None


def _meta_head(dataset: DataSet, file: SourceFile, first: MinimalPair) -> dict[str, Any]:
    paradigm = first.fields
    uid = file.paradigm
    return {
        "name": file.suite,
        "metric": "sum",
        "reference": CITATION,
        "description": (f"BLiMP paradigm {uid} ({paradigm['linguistics_term']}, "
                        f"{paradigm['field']}): condition good is the acceptable sentence. "
                        "Prediction 0 is BLiMP's whole-sentence comparison."),
        "tags": ["blimp", paradigm["field"], paradigm["linguistics_term"]],
        "UID": uid,
        "field": paradigm["field"],
        "linguistics_term": paradigm["linguistics_term"],
        "source_commit": BLIMP_COMMIT,
        "source_url": dataset.url.format(path=file.source_path),
    }


def _prefix_predictions(pairs: Sequence[tuple[MinimalPair, PairRegions]],
                        file: SourceFile) -> tuple[list[str], list[str]]:
    """BLiMP's prefix-method predictions the paradigm flags, where every pair fits them."""
    flags = pairs[0][0].fields
    predictions: list[str] = []
    omitted: list[str] = []
    for flag, formula, need in (
            ("one_prefix_method", ONE_PREFIX, "a shared prefix and a critical region"),
            ("two_prefix_method", TWO_PREFIX, "the same, non-empty next_word")):
        if not flags[flag]:
            continue
        lacking = [pair.id_text for pair, regions in pairs if not _fits(regions, flag)]
        if lacking:
            omitted.append(f"{formula} ({flag}): {len(lacking)} of {len(pairs)} pairs lack "
                           f"{need}, e.g. pairID {lacking[0]}")
        else:
            predictions.append(formula)
    return predictions, omitted


def _fits(regions: PairRegions, flag: str) -> bool:
    """Whether a pair has the regions a prefix-method prediction compares (see the docstring)."""
    good, bad = regions.good, regions.bad
    if flag == "one_prefix_method":
        return good[0] == bad[0] and bool(good[1]) and bool(bad[1])
    return good[2] == bad[2] and bool(good[2])


def _table_row(file: SourceFile, data: bytes) -> dict[str, str]:
    """The paper's phenomenon as the file's group, and the field and linguistics_term of its
    first record, for data/pairs_blimp.tsv."""
    first = json.loads(data.decode("utf-8").splitlines()[0])
    paradigm = Paradigm(uid=file.paradigm, field=first["field"],
                        linguistics_term=first["linguistics_term"], sha256="")
    return {"group": paradigm.phenomenon, "field": paradigm.field,
            "linguistics_term": paradigm.linguistics_term}


BLIMP = DataSet(
    name="blimp", title="BLiMP", citation=CITATION, short_citation="Warstadt et al., 2020",
    paper_url="https://doi.org/10.1162/tacl_a_00321", licence="CC BY 4.0",
    repository="alexwarstadt/blimp", commit=BLIMP_COMMIT, languages=("en",), read=_read,
    describe=lambda path: _file(Path(path).stem), shared_folder="blimp",
    shared_glob="data/*.jsonl", good_label="sentence_good", bad_label="sentence_bad",
    id_label="pairID", own_cut=blimp_cut, extra_predictions=_prefix_predictions,
    meta_head=_meta_head, error=BlimpError, group_label="phenomenon",
    leaderboard_groups=_leaderboard_groups, paper_figures=paper_figures,
    paper_note=PAPER_NOTE, table_row=_table_row,
    table_note=("field and linguistics_term as its records give them; group: the paper's "
                "phenomenon (the data call the two\n# animate_subject paradigms s-selection, the "
                "paper argument_structure)"))
