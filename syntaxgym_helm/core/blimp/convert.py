"""BLiMP JSONL to SyntaxGym suites: one record becomes one two-condition item, one paradigm file
one suite named ``blimp_<UID>``.

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
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from syntaxgym_helm.core.blimp.regions import (
    REGION_NAMES,
    PairRegions,
    UnconvertiblePair,
    split_pair,
)
from syntaxgym_helm.core.blimp.sources import BLIMP_COMMIT, BLIMP_URL, CITATION, SUITE_PREFIX
from syntaxgym_helm.core.errors import SyntaxGymError

#: Bumped whenever the conversion changes what a suite holds (recorded in each suite's meta).
CONVERTER_VERSION = 1
CONDITIONS = ("good", "bad")
WHOLE_SENTENCE = "(*;%good%) < (*;%bad%)"
ONE_PREFIX = "(2;%good%) < (2;%bad%)"
TWO_PREFIX = "(3;%good%) < (3;%bad%)"
#: The fields a record must have, with their JSON types; the paradigm fields must not vary.
_FIELDS: dict[str, type] = {"sentence_good": str, "sentence_bad": str, "pairID": str, "UID": str,
                            "field": str, "linguistics_term": str, "one_prefix_method": bool,
                            "two_prefix_method": bool}
_PARADIGM_FIELDS = ("UID", "field", "linguistics_term", "one_prefix_method", "two_prefix_method")


class BlimpError(SyntaxGymError):
    """A BLiMP file cannot become a suite at all (unreadable, or no pair converts)."""


@dataclass(frozen=True)
class PairProblem:
    """A record that did not become an item: where it is (1-based line), its pairID and why."""

    source: str
    line: int
    pair_id: str | None
    reason: str

    def __str__(self) -> str:
        pair = f" (pairID {self.pair_id})" if self.pair_id is not None else ""
        return f"{self.source} line {self.line}{pair}: {self.reason}"


@dataclass(frozen=True)
class BlimpConversion:
    """One paradigm converted: the suite (syntaxgym-core JSON), the pairs left out, the counts."""

    suite: dict[str, Any]
    problems: tuple[PairProblem, ...]
    #: (split, shape) of every converted pair: which rule made its regions (see :mod:`.regions`).
    rules: Counter[tuple[str, str]] = field(default_factory=Counter)
    #: Pairs whose BLiMP prefix fields did not fit their sentences, split by the word diff instead.
    fallbacks: int = 0

    @property
    def name(self) -> str:
        return str(self.suite["meta"]["name"])


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
    source = source or f"{uid}.jsonl"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BlimpError(f"{source} is not UTF-8 text: {exc}") from exc
    return convert_lines(text.splitlines(), uid, source, hashlib.sha256(data).hexdigest())


def convert_lines(lines: Iterable[str], uid: str, source: str,
                  sha256: str | None = None) -> BlimpConversion:
    """Convert one paradigm's JSONL lines (blank lines are skipped) into a suite."""
    items: list[dict[str, Any]] = []
    pairs: list[tuple[str, PairRegions]] = []
    problems: list[PairProblem] = []
    paradigm: dict[str, Any] | None = None
    seen: dict[int, int] = {}
    for line_number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        record, problem = _read_record(line, uid, paradigm)
        if record is not None:
            paradigm = paradigm or {key: record[key] for key in _PARADIGM_FIELDS}
            number = int(record["pairID"])
            if number in seen:
                problem = f"pairID {record['pairID']} was already used on line {seen[number]}"
            else:
                try:
                    regions = split_pair(record)
                except UnconvertiblePair as exc:
                    problem = str(exc)
                else:
                    seen[number] = line_number
                    items.append(_item(number, regions))
                    pairs.append((str(record["pairID"]), regions))
                    continue
        problems.append(PairProblem(source, line_number, _pair_id(line), problem or "unknown"))
    if paradigm is None or not items:
        reasons = "; ".join(str(problem) for problem in problems[:3]) or "the file has no records"
        raise BlimpError(f"{source}: no pair could be converted ({reasons})")
    suite = _suite(uid, paradigm, items, pairs, problems, source, sha256)
    rules = Counter((regions.split, regions.shape) for _, regions in pairs)
    fallbacks = sum(1 for _, regions in pairs if regions.fallback)
    return BlimpConversion(suite, tuple(problems), rules, fallbacks)


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


def _item(number: int, regions: PairRegions) -> dict[str, Any]:
    return {"item_number": number, "conditions": [
        {"condition_name": name, "regions": [
            {"region_number": index, "content": content}
            for index, content in enumerate(contents, start=1)]}
        for name, contents in (("good", regions.good), ("bad", regions.bad))]}


def _suite(uid: str, paradigm: Mapping[str, Any], items: list[dict[str, Any]],
           pairs: list[tuple[str, PairRegions]], problems: list[PairProblem], source: str,
           sha256: str | None) -> dict[str, Any]:
    predictions = [WHOLE_SENTENCE]
    omitted: list[str] = []
    for flag, formula, need in (
            ("one_prefix_method", ONE_PREFIX, "a shared prefix and a critical region"),
            ("two_prefix_method", TWO_PREFIX, "the same, non-empty next_word")):
        if not paradigm[flag]:
            continue
        lacking = [pair_id for pair_id, regions in pairs if not _fits(regions, flag)]
        if lacking:
            omitted.append(f"{formula} ({flag}): {len(lacking)} of {len(pairs)} pairs lack "
                           f"{need}, e.g. pairID {lacking[0]}")
        else:
            predictions.append(formula)
    rules = Counter(f"{regions.split}/{regions.shape}" for _, regions in pairs)
    meta: dict[str, Any] = {
        "name": f"{SUITE_PREFIX}{uid}",
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
        "source_url": BLIMP_URL.format(uid=uid),
        "blimp_conversion": {
            "converter_version": CONVERTER_VERSION,
            "pairs": len(pairs) + len(problems),
            "items": len(items),
            "rules": dict(sorted(rules.items())),
            "fallbacks": sum(1 for _, regions in pairs if regions.fallback),
            "skipped": [{"line": p.line, "pairID": p.pair_id, "reason": p.reason}
                        for p in problems],
            "omitted_predictions": omitted,
        },
    }
    if sha256:
        meta["source_sha256"] = sha256
    return {"meta": meta,
            "region_meta": {str(index): name for index, name in enumerate(REGION_NAMES, start=1)},
            "predictions": [{"type": "formula", "formula": formula} for formula in predictions],
            "items": items}


def _fits(regions: PairRegions, flag: str) -> bool:
    """Whether a pair has the regions a prefix-method prediction compares (see the docstring)."""
    good, bad = regions.good, regions.bad
    if flag == "one_prefix_method":
        return good[0] == bad[0] and bool(good[1]) and bool(bad[1])
    return good[2] == bad[2] and bool(good[2])
