"""Where a BLiMP pair differs: its two sentences split into the same four numbered regions.

Every BLiMP suite has the regions ``prefix`` (1), ``critical`` (2), ``next_word`` (3) and
``rest`` (4); each holds whole whitespace-separated words, punctuation staying glued to its word as
the data writes it (a region boundary inside ``herself.`` would change the text a model reads,
since regions are joined with spaces). How a pair is split, by what its record provides:

- ``one_prefix``: records with BLiMP's own one-prefix fields (``one_prefix_prefix``,
  ``one_prefix_word_good``/``_bad``): the prefix, then BLiMP's critical word(s);
- ``two_prefix``: records with BLiMP's two-prefix fields (``two_prefix_prefix_good``/``_bad``,
  ``two_prefix_word``): the words the two prefixes share, then the rest of each prefix, and
  BLiMP's shared critical word is ``next_word``;
- ``word_diff`` (every other record, and a record whose fields do not match its sentences): the
  longest shared beginning, then everything from the first to the last differing word.

``next_word`` is the word after the critical region (BLiMP's ``two_prefix_word``, which may be
two words, in the ``two_prefix`` split) and ``rest`` all that follows it. The
``shape`` of the difference is counted apart from the split: ``one_span`` (one contiguous place),
``several_spans`` (several places, merged into one critical region with the shared words between
them) or ``reordering`` (several places holding the same words in another order).
"""

from __future__ import annotations

import difflib
import string
from dataclasses import dataclass
from typing import Literal, Mapping, Sequence

Split = Literal["one_prefix", "two_prefix", "word_diff"]
Shape = Literal["one_span", "several_spans", "reordering"]
REGION_NAMES = ("prefix", "critical", "next_word", "rest")
_PUNCTUATION = frozenset(string.punctuation)


class UnconvertiblePair(ValueError):
    """A pair that cannot become an item; the message says why (e.g. identical sentences)."""


@dataclass(frozen=True)
class PairRegions:
    """One pair as regions: ``good`` and ``bad`` hold the four regions' contents in order."""

    good: tuple[str, str, str, str]
    bad: tuple[str, str, str, str]
    split: Split
    shape: Shape
    #: Why BLiMP's own prefix fields were not used for the split (empty when they were, or absent).
    fallback: str = ""


def split_pair(record: Mapping[str, object]) -> PairRegions:
    """The regions of a BLiMP record (its sentences must be strings; see :mod:`.convert`)."""
    good = str(record["sentence_good"]).split()
    bad = str(record["sentence_bad"]).split()
    if good == bad:
        raise UnconvertiblePair("sentence_good and sentence_bad are the same sentence")
    shape = difference_shape(good, bad)
    fallback = ""
    for split, reader in (("one_prefix", _one_prefix_cut), ("two_prefix", _two_prefix_cut)):
        if _has_fields(record, split):
            try:
                cut_good, cut_bad = reader(record, good, bad)
            except _FieldMismatch as exc:
                fallback = f"BLiMP's {split} fields do not fit: {exc}"
                break
            return PairRegions(_regions(good, *cut_good), _regions(bad, *cut_bad), split, shape)
    start, end_good, end_bad = _diff_cut(good, bad)
    return PairRegions(_regions(good, start, end_good, end_good + 1),
                       _regions(bad, start, end_bad, end_bad + 1), "word_diff", shape, fallback)


def difference_shape(good: Sequence[str], bad: Sequence[str]) -> Shape:
    """How two different word lists differ (see the module docstring)."""
    start, end_good, end_bad = _diff_cut(good, bad)
    # Only the stretch between the shared beginning and end can hold several places; diffing
    # just that keeps SequenceMatcher (quadratic) cheap.
    matcher = difflib.SequenceMatcher(None, good[start:end_good], bad[start:end_bad],
                                      autojunk=False)
    places = sum(1 for tag, *_ in matcher.get_opcodes() if tag != "equal")
    if places == 1:
        return "one_span"
    same_words = sorted(map(_bare, good)) == sorted(map(_bare, bad))
    return "reordering" if same_words else "several_spans"


def _bare(word: str) -> str:
    """A word without the punctuation glued to its ends, case folded: 'Whose' = 'whose?'."""
    return word.strip(string.punctuation).casefold()


def _regions(words: Sequence[str], start: int, end: int,
             next_end: int) -> tuple[str, str, str, str]:
    """prefix = words[:start], critical = words[start:end], next_word = words[end:next_end]."""
    return (" ".join(words[:start]), " ".join(words[start:end]),
            " ".join(words[end:next_end]), " ".join(words[next_end:]))


def _diff_cut(good: Sequence[str], bad: Sequence[str]) -> tuple[int, int, int]:
    """The shared beginning's length and where each sentence's differing words end: the longest
    common prefix and suffix of the word lists (never overlapping) frame the difference."""
    shortest = min(len(good), len(bad))
    start = 0
    while start < shortest and good[start] == bad[start]:
        start += 1
    shared_end = 0
    while shared_end < shortest - start and good[-1 - shared_end] == bad[-1 - shared_end]:
        shared_end += 1
    return start, len(good) - shared_end, len(bad) - shared_end


class _FieldMismatch(Exception):
    """BLiMP's prefix fields do not describe the record's sentences word for word."""


def _has_fields(record: Mapping[str, object], split: str) -> bool:
    names = (("one_prefix_prefix", "one_prefix_word_good", "one_prefix_word_bad")
             if split == "one_prefix" else
             ("two_prefix_prefix_good", "two_prefix_prefix_bad", "two_prefix_word"))
    return all(isinstance(record.get(name), str) for name in names)


_Cut = tuple[int, int, int]  # where critical starts, where it ends, where next_word ends


def _one_prefix_cut(record: Mapping[str, object], good: list[str],
                    bad: list[str]) -> tuple[_Cut, _Cut]:
    prefix = str(record["one_prefix_prefix"]).split()
    _expect(good, 0, prefix, "one_prefix_prefix", "sentence_good", prefix=True)
    _expect(bad, 0, prefix, "one_prefix_prefix", "sentence_bad", prefix=True)
    end_good = _expect(good, len(prefix), str(record["one_prefix_word_good"]).split(),
                       "one_prefix_word_good", "sentence_good")
    end_bad = _expect(bad, len(prefix), str(record["one_prefix_word_bad"]).split(),
                      "one_prefix_word_bad", "sentence_bad")
    return (len(prefix), end_good, end_good + 1), (len(prefix), end_bad, end_bad + 1)


def _two_prefix_cut(record: Mapping[str, object], good: list[str],
                    bad: list[str]) -> tuple[_Cut, _Cut]:
    prefix_good = str(record["two_prefix_prefix_good"]).split()
    prefix_bad = str(record["two_prefix_prefix_bad"]).split()
    word = str(record["two_prefix_word"]).split()
    _expect(good, 0, prefix_good, "two_prefix_prefix_good", "sentence_good", prefix=True)
    _expect(bad, 0, prefix_bad, "two_prefix_prefix_bad", "sentence_bad", prefix=True)
    if prefix_good == prefix_bad:
        raise _FieldMismatch("the two prefixes are the same")
    next_good = _expect(good, len(prefix_good), word, "two_prefix_word", "sentence_good")
    next_bad = _expect(bad, len(prefix_bad), word, "two_prefix_word", "sentence_bad")
    start = 0
    shortest = min(len(prefix_good), len(prefix_bad))
    while start < shortest and prefix_good[start] == prefix_bad[start]:
        start += 1
    return (start, len(prefix_good), next_good), (start, len(prefix_bad), next_bad)


def _expect(words: Sequence[str], at: int, expected: Sequence[str], field: str,
            sentence: str, prefix: bool = False) -> int:
    """Where ``expected`` ends if ``words`` has it at ``at`` (its last word may carry glued
    punctuation, as in ``herself.``, unless it is a prefix); else :class:`_FieldMismatch`.
    A prefix may be empty, a word may not."""
    if prefix:
        if list(words[at:at + len(expected)]) != list(expected) or len(expected) >= len(words):
            raise _FieldMismatch(f"{field} {' '.join(expected)!r} does not begin {sentence}")
        return at + len(expected)
    found = words[at:at + len(expected)]
    ok = bool(expected) and len(found) == len(expected) and all(
        _same_word(actual, wanted, last=index == len(expected) - 1)
        for index, (actual, wanted) in enumerate(zip(found, expected)))
    if not ok:
        raise _FieldMismatch(f"{field} {' '.join(expected)!r} is not word {at + 1} of {sentence}")
    return at + len(expected)


def _same_word(actual: str, wanted: str, last: bool) -> bool:
    if actual == wanted:
        return True
    tail = actual[len(wanted):]
    return last and actual.startswith(wanted) and bool(tail) and set(tail) <= _PUNCTUATION
