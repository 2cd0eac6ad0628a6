"""BLiMP JSONL to SyntaxGym suites: BLiMP as a data set of the minimal-pair layer
(:mod:`syntaxgym_helm.core.minimal_pairs`); one record becomes one two-condition item, one
paradigm file one suite named ``blimp_<UID>``.

Conditions ``good`` and ``bad``; the four regions of :mod:`.regions`; ``meta.metric`` is ``sum``.
Predictions, in this order (prediction 0 is what BLiMP and every other tool report):

0. ``(*;%good%) < (*;%bad%)``: the good sentence is less surprising as a whole (the sum of its
   tokens' surprisals after the beginning-of-text token), BLiMP's own method;
1. where the paradigm's ``one_prefix_method`` is set: ``(2;%good%) < (2;%bad%)``, the critical
   word(s) given the shared prefix;
2. where ``two_prefix_method`` is set: ``(3;%good%) < (3;%bad%)``, the same next word given the
   two different prefixes.

A prefix-method prediction is added only when every converted pair has the shape it needs (a
shared prefix and a non-empty critical region; a shared, non-empty next word); otherwise
``meta.blimp_conversion.omitted_predictions`` says which pairs lack it. No pair is dropped silently:
one that cannot be converted is listed in ``meta.blimp_conversion.skipped`` with its pairID and
reason, and in :attr:`BlimpConversion.problems`.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

from syntaxgym_helm.core.blimp.regions import blimp_cut
from syntaxgym_helm.core.blimp.sources import BLIMP_COMMIT, CITATION, SUITE_PREFIX, TABLE
from syntaxgym_helm.core.minimal_pairs.convert import (
    CONDITIONS,
    CONVERTER_VERSION,
    WHOLE_SENTENCE,
    Conversion,
    convert_data,
    convert_records,
)
from syntaxgym_helm.core.minimal_pairs.dataset import (
    DataSet,
    Line,
    MinimalPair,
    PairDataError,
    PairProblem,
    SourceFile,
    read_files,
)
from syntaxgym_helm.core.minimal_pairs.regions import PairRegions

__all__ = ["BLIMP", "CONDITIONS", "CONVERTER_VERSION", "ONE_PREFIX", "TWO_PREFIX",
           "WHOLE_SENTENCE", "BlimpConversion", "BlimpError", "PairProblem", "convert_bytes",
           "convert_file", "convert_lines"]

ONE_PREFIX = "(2;%good%) < (2;%bad%)"
TWO_PREFIX = "(3;%good%) < (3;%bad%)"
#: The fields a record must have, with their JSON types; the paradigm fields must not vary.
_FIELDS: dict[str, type] = {"sentence_good": str, "sentence_bad": str, "pairID": str, "UID": str,
                            "field": str, "linguistics_term": str, "one_prefix_method": bool,
                            "two_prefix_method": bool}
_PARADIGM_FIELDS = ("UID", "field", "linguistics_term", "one_prefix_method", "two_prefix_method")
BlimpConversion = Conversion


class BlimpError(PairDataError):
    """A BLiMP file cannot become a suite at all (unreadable, or no pair converts)."""


def convert_file(path: str | Path) -> BlimpConversion:
    """Convert ``<UID>.jsonl``; the paradigm's UID is the file name's stem."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BlimpError(f"cannot read {path}: {exc}") from exc
    return convert_bytes(data, path.stem, source=str(path))


def convert_bytes(data: bytes, uid: str, source: str | None = None) -> BlimpConversion:
    """Convert the bytes of one paradigm's JSONL file (their SHA-256 is recorded in the suite)."""
    return convert_data(BLIMP, _file(uid), data, source or f"{uid}.jsonl",
                        hashlib.sha256(data).hexdigest())


def convert_lines(lines: Iterable[str], uid: str, source: str,
                  sha256: str | None = None) -> BlimpConversion:
    """Convert one paradigm's JSONL lines (blank lines are skipped) into a suite."""
    file = _file(uid)
    return convert_records(BLIMP, file, _read(enumerate(lines, start=1), file, source), source,
                           sha256)


def _file(uid: str) -> SourceFile:
    """The file of paradigm ``uid`` (a user's file of another name: no checksum, no group)."""
    return BLIMP.by_suite().get(f"{SUITE_PREFIX}{uid}") or SourceFile(
        f"{SUITE_PREFIX}{uid}", f"{uid}.jsonl", f"data/{uid}.jsonl", None, None, "en", uid, "")


def _read(lines: Iterable[Line], file: SourceFile,
          source: str) -> Iterator[MinimalPair | PairProblem]:
    paradigm: dict[str, Any] | None = None
    for number, line in lines:
        if not line.strip():
            continue
        record, problem = _read_record(line, file.paradigm, paradigm)
        if record is None:
            yield PairProblem(source, number, _pair_id(line), problem or "unknown")
            continue
        paradigm = paradigm or {key: record[key] for key in _PARADIGM_FIELDS}
        yield MinimalPair(int(record["pairID"]), record["sentence_good"], record["sentence_bad"],
                          number, file.paradigm, "en", record["pairID"], fields=record)


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


BLIMP = DataSet(
    name="blimp", title="BLiMP", citation=CITATION, short_citation="Warstadt et al., 2020",
    paper_url="https://doi.org/10.1162/tacl_a_00321", licence="CC BY 4.0",
    repository="alexwarstadt/blimp", commit=BLIMP_COMMIT, languages=("en",), read=_read,
    describe=lambda path: _file(Path(path).stem),
    files=lru_cache(maxsize=1)(lambda: read_files(TABLE)),
    good_label="sentence_good", bad_label="sentence_bad", id_label="pairID",
    own_cut=blimp_cut, extra_predictions=_prefix_predictions, meta_head=_meta_head,
    error=BlimpError)
