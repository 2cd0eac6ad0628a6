"""A data set's file to a SyntaxGym suite: one pair becomes one two-condition item, one file one
suite.

Conditions ``good`` (the grammatical sentence) and ``bad``; the four regions of :mod:`.regions`;
``meta.metric`` is ``sum``. Prediction 0 is ``(*;%good%) < (*;%bad%)``: the good sentence is the
less surprising as a whole (the sum of its tokens' surprisals after the beginning-of-text token),
what every minimal-pair benchmark reports; a data set may add its own (BLiMP's prefix methods).

No pair is dropped silently: a line that cannot be read (not UTF-8, malformed, an unknown
language) or a pair that cannot be an item (identical sentences, an id used twice) is listed in
``meta.<data set>_conversion.skipped`` with its line, id and reason, and in
:attr:`Conversion.problems`; the other pairs convert. Only a file with no convertible pair at all
is an error.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from syntaxgym_helm.core.minimal_pairs.dataset import (
    DataSet,
    Line,
    MinimalPair,
    PairProblem,
    SourceFile,
)
from syntaxgym_helm.core.minimal_pairs.regions import (
    REGION_NAMES,
    PairRegions,
    Sentence,
    UnconvertiblePair,
    diff_cut,
    difference_shape,
    marked_cut,
    regions_of,
    word_diff,
)

#: Bumped whenever the conversion changes what a suite holds (recorded in each suite's meta).
CONVERTER_VERSION = 1
CONDITIONS = ("good", "bad")
WHOLE_SENTENCE = "(*;%good%) < (*;%bad%)"


@dataclass(frozen=True, kw_only=True)
class Conversion:
    """One file converted: the suite (syntaxgym-core JSON), the pairs left out, the counts."""

    suite: dict[str, Any]
    problems: tuple[PairProblem, ...]
    #: (split, shape) of every converted pair: which rule made its regions (see :mod:`.regions`).
    rules: Counter[tuple[str, str]] = field(default_factory=Counter)
    #: Pairs whose data set's own cut did not fit their sentences, cut by the difference instead.
    fallbacks: int = 0
    #: How the data set's marked critical words sit against the difference, and its later mark.
    marks: Counter[str] = field(default_factory=Counter)
    marks_after: Counter[str] = field(default_factory=Counter)

    @property
    def name(self) -> str:
        return str(self.suite["meta"]["name"])


@dataclass(frozen=True, kw_only=True)
class LeftOut:
    """The pairs of a suite's source file that conversion left out, as its meta records them
    (``meta.<data set>_conversion``): the file's pairs and, per pair left out, its line, id
    (where the data set has ids) and reason."""

    dataset: str
    pairs: int
    skipped: tuple[Mapping[str, Any], ...]
    id_label: str  # the key of a skipped pair's id (``line``: the data set has no ids)

    def ids(self) -> list[str]:
        """Each left-out pair's id (its line where the data set has none)."""
        return [str(pair.get(self.id_label, pair["line"])) for pair in self.skipped]


def left_out(meta: Mapping[str, Any]) -> LeftOut | None:
    """The conversion record of a suite's ``meta`` (None: not a converted minimal-pair suite)."""
    for key, record in meta.items():
        if key.endswith("_conversion") and isinstance(record, Mapping) and "skipped" in record:
            skipped = tuple(record["skipped"])
            labels = {label for pair in skipped for label in pair} - {"line", "reason"}
            return LeftOut(dataset=key.removesuffix("_conversion"), pairs=int(record["pairs"]),
                           skipped=skipped, id_label=labels.pop() if labels else "line")
    return None


def decode_lines(data: bytes, source: str) -> tuple[list[Line], list[PairProblem]]:
    """The file's lines (LF or CRLF ends; a final line end and a byte-order mark are dropped) and
    a problem for each line that is not UTF-8, saying where its first bad byte is."""
    raw = data.split(b"\n")
    if raw and not raw[-1]:
        raw.pop()
    lines: list[Line] = []
    problems: list[PairProblem] = []
    for number, chunk in enumerate(raw, start=1):
        try:
            text = chunk.decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.append(PairProblem(source=source, line=number, pair_id=None, reason=(
                f"not UTF-8 text: byte 0x{chunk[exc.start]:02x} at column {exc.start + 1} "
                f"({exc.reason})")))
            continue
        if number == 1:
            text = text.removeprefix("\ufeff")
        lines.append((number, text.removesuffix("\r")))
    return lines, problems


def convert_data(dataset: DataSet, file: SourceFile, data: bytes, source: str,
                 sha256: str | None = None) -> Conversion:
    """Convert the bytes of one of ``dataset``'s files (``source`` names it in messages)."""
    if file.language not in dataset.languages:  # read from where it lies: once, not each pair
        example = next(iter(dataset.files()), None)
        raise dataset.error(
            f"{source}: its language {file.language!r}, read from where the file lies, is not "
            f"one of {dataset.title}'s ({', '.join(dataset.languages)})"
            + (f": lay it out as the data set does ({example.path})" if example else ""))
    lines, problems = decode_lines(data, source)
    return convert_records(dataset, file, [*problems, *dataset.read(lines, file, source)],
                           source, sha256)


def convert_records(dataset: DataSet, file: SourceFile,
                    records: Iterable[MinimalPair | PairProblem], source: str,
                    sha256: str | None = None) -> Conversion:
    """The suite of ``file`` from its reader's pairs and problems."""
    items: list[dict[str, Any]] = []
    kept: list[tuple[MinimalPair, PairRegions]] = []
    problems: list[PairProblem] = []
    seen: dict[int, int] = {}
    for record in records:
        if isinstance(record, PairProblem):
            problems.append(replace(record, id_label=dataset.id_label))
            continue
        try:
            reason = _misfit(dataset, file, record, seen)
            if reason:
                raise UnconvertiblePair(reason)
            regions = split_pair(dataset, record)
        except UnconvertiblePair as exc:
            problems.append(PairProblem(source=source, line=record.line, pair_id=record.id_text,
                                        reason=str(exc), id_label=dataset.id_label))
            continue
        seen[record.number] = record.line
        items.append(_item(record.number, regions))
        kept.append((record, regions))
    problems.sort(key=lambda problem: problem.line)
    if not items:
        reasons = "; ".join(str(problem) for problem in problems[:3]) or "the file has no records"
        raise dataset.error(f"{source}: no pair could be converted ({reasons})")
    predictions: list[str] = [WHOLE_SENTENCE]
    omitted: list[str] = []
    if dataset.extra_predictions:
        extra, omitted = dataset.extra_predictions(kept, file)
        predictions += extra
    rules: Counter[tuple[str, str]] = Counter(
        (regions.split, regions.shape) for _, regions in kept)
    marks = Counter(regions.marked for _, regions in kept if regions.marked)
    after = Counter(regions.marked_after for _, regions in kept if regions.marked_after)
    fallbacks = sum(1 for _, regions in kept if regions.fallback)
    conversion: dict[str, Any] = {
        "converter_version": CONVERTER_VERSION,
        "pairs": len(kept) + len(problems),
        "items": len(items),
        "rules": dict(sorted((f"{split}/{shape}", n) for (split, shape), n in rules.items())),
        "fallbacks": fallbacks,
    }
    if marks:
        conversion["marked"] = dict(sorted(marks.items()))
    if after:
        conversion["marked_after"] = dict(sorted(after.items()))
    conversion["skipped"] = [{"line": p.line, dataset.id_label: p.pair_id, "reason": p.reason}
                         if dataset.id_label != "line" else {"line": p.line, "reason": p.reason}
                         for p in problems]
    conversion["omitted_predictions"] = omitted
    meta = {**(dataset.meta_head or default_meta_head)(dataset, file, kept[0][0]),
            f"{dataset.name}_conversion": conversion}
    if sha256:
        meta["source_sha256"] = sha256
        pinned = dataset.by_suite().get(file.suite)
        if pinned is not None and pinned.sha256 and pinned.sha256 != sha256:
            # A modified copy (converted by path): it does not come from the pinned commit.
            meta["source_commit"] = ""
            meta["modified_from"] = meta.pop("source_url", None)
    suite = {"meta": meta,
             "region_meta": {str(index): name for index, name in enumerate(REGION_NAMES, 1)},
             "predictions": [{"type": "formula", "formula": formula} for formula in predictions],
             "items": items}
    return Conversion(suite=suite, problems=tuple(problems), rules=rules, fallbacks=fallbacks,
                      marks=marks, marks_after=after)


def _misfit(dataset: DataSet, file: SourceFile, pair: MinimalPair,
            seen: dict[int, int]) -> str | None:
    """Why a pair cannot be an item of ``file`` whatever its sentences, or None."""
    if pair.number in seen:
        return f"{dataset.id_label} {pair.id_text} was already used on line {seen[pair.number]}"
    if pair.language not in dataset.languages:
        return (f"its language {pair.language!r} is not one of {dataset.title}'s "
                f"({', '.join(dataset.languages)})")
    if pair.paradigm != file.paradigm:
        return f"its paradigm {pair.paradigm!r} is not the file's {file.paradigm!r}"
    for label, text in ((dataset.good_label, pair.good), (dataset.bad_label, pair.bad)):
        if not text.strip():
            return f"{label} is empty"
    return None


def split_pair(dataset: DataSet, pair: MinimalPair) -> PairRegions:
    """The pair's regions by the first rule that applies (see :mod:`.regions`): the data set's
    own cut, its marks, else the difference, with its separator and case folding."""
    separator, own_cut, fold = dataset.separator, dataset.own_cut, dataset.fold
    if pair.good == pair.bad:
        raise UnconvertiblePair(
            f"{dataset.good_label} and {dataset.bad_label} are the same sentence")
    good, bad = Sentence(pair.good, separator), Sentence(pair.bad, separator)
    difference = diff_cut(good.units, bad.units)
    shape = difference_shape(good.units, bad.units, difference)
    split = "word_diff" if separator else "char_diff"
    fallback = ""
    if own_cut is not None:
        own = own_cut(pair, good, bad)
        if own is not None:
            cut, own_split, fallback = own
            if cut is not None:
                return regions_of(good, bad, cut, own_split, shape, separator)
    if pair.marked_good is not None and pair.marked_bad is not None:
        cut, place, after = marked_cut(good, bad, (pair.marked_good, pair.marked_bad),
                                       pair.marked_after, fold)
        return regions_of(good, bad, cut or word_diff(good, bad, difference),
                          "marked" if cut else split, shape, separator, marked=place,
                          marked_after=after)
    return regions_of(good, bad, word_diff(good, bad, difference), split, shape, separator,
                      fallback=fallback)


def _item(number: int, regions: PairRegions) -> dict[str, Any]:
    return {"item_number": number, "conditions": [
        {"condition_name": "good", "regions": _regions(regions.good)},
        {"condition_name": "bad", "regions": _regions(regions.bad)}]}


def _regions(contents: tuple[str, str, str, str]) -> list[dict[str, Any]]:
    # Written out: this runs twice per pair (314,692 times for CLAMS English).
    return [{"region_number": 1, "content": contents[0]},
            {"region_number": 2, "content": contents[1]},
            {"region_number": 3, "content": contents[2]},
            {"region_number": 4, "content": contents[3]}]


def default_meta_head(dataset: DataSet, file: SourceFile, first: MinimalPair) -> dict[str, Any]:
    """The suite's ``meta`` before its conversion record: name, provenance, groups."""
    head: dict[str, Any] = {
        "name": file.suite,
        "metric": "sum",
        "reference": dataset.citation,
        "description": (f"{dataset.title} paradigm {file.paradigm} ({file.language}, "
                        f"{file.group}): condition good is the grammatical sentence, bad the "
                        "ungrammatical one. Prediction 0 is the whole-sentence comparison."),
        "tags": [dataset.name, file.language, file.group],
        "dataset": dataset.name,
        "language": file.language,
        "paradigm": file.paradigm,
        "group": file.group,
        "source_commit": dataset.commit,
        "source_url": dataset.source_url(file),
    }
    if dataset.separator != " ":
        head["region_separator"] = dataset.separator
    return head

