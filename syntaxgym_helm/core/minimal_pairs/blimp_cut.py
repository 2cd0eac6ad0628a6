"""BLiMP's own cuts of a pair into the four regions of :mod:`.regions`.

Every BLiMP suite has the regions ``prefix`` (1), ``critical`` (2), ``next_word`` (3) and
``rest`` (4); each holds whole whitespace-separated words, punctuation staying glued to its word as
the data writes it. How a pair is split, by what its record provides:

- ``one_prefix``: records with BLiMP's own one-prefix fields (``one_prefix_prefix``,
  ``one_prefix_word_good``/``_bad``): the prefix, then BLiMP's critical word(s);
- ``two_prefix``: records with BLiMP's two-prefix fields (``two_prefix_prefix_good``/``_bad``,
  ``two_prefix_word``): the words the two prefixes share, then the rest of each prefix, and
  BLiMP's shared critical word is ``next_word``;
- ``word_diff`` (every other record, and a record whose fields do not match its sentences): the
  layer's own rule, the longest shared beginning, then everything from the first to the last
  differing word.

``next_word`` is the word after the critical region (BLiMP's ``two_prefix_word``, which may be
two words, in the ``two_prefix`` split) and ``rest`` all that follows it. The ``shape`` of the
difference is counted apart from the split (:func:`.minimal_pairs.regions.difference_shape`).
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence

from syntaxgym_helm.core.minimal_pairs.dataset import MinimalPair
from syntaxgym_helm.core.minimal_pairs.regions import Cut, Sentence

__all__ = ["blimp_cut"]
_PUNCTUATION = frozenset(string.punctuation)


def blimp_cut(pair: MinimalPair, good: Sentence, bad: Sentence) -> tuple[Cut | None, str, str]:
    """BLiMP's one- or two-prefix cut where the record has its fields and they fit, else None and
    why they do not (the layer then cuts by the difference)."""
    record = pair.fields
    for split, reader in (("one_prefix", _one_prefix_cut), ("two_prefix", _two_prefix_cut)):
        if _has_fields(record, split):
            try:
                return reader(record, good.units, bad.units), split, ""
            except _FieldMismatch as exc:
                return None, "", f"BLiMP's {split} fields do not fit: {exc}"
    return None, "", ""


class _FieldMismatch(Exception):
    """BLiMP's prefix fields do not describe the record's sentences word for word."""


def _has_fields(record: Mapping[str, object], split: str) -> bool:
    names = (("one_prefix_prefix", "one_prefix_word_good", "one_prefix_word_bad")
             if split == "one_prefix" else
             ("two_prefix_prefix_good", "two_prefix_prefix_bad", "two_prefix_word"))
    return all(isinstance(record.get(name), str) for name in names)


def _one_prefix_cut(record: Mapping[str, object], good: list[str], bad: list[str]) -> Cut:
    prefix = str(record["one_prefix_prefix"]).split()
    _expect(good, 0, prefix, "one_prefix_prefix", "sentence_good", prefix=True)
    _expect(bad, 0, prefix, "one_prefix_prefix", "sentence_bad", prefix=True)
    end_good = _expect(good, len(prefix), str(record["one_prefix_word_good"]).split(),
                       "one_prefix_word_good", "sentence_good")
    end_bad = _expect(bad, len(prefix), str(record["one_prefix_word_bad"]).split(),
                      "one_prefix_word_bad", "sentence_bad")
    return Cut(len(prefix), end_good, end_bad, min(end_good + 1, len(good)),
               min(end_bad + 1, len(bad)))


def _two_prefix_cut(record: Mapping[str, object], good: list[str], bad: list[str]) -> Cut:
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
    return Cut(start, len(prefix_good), len(prefix_bad), next_good, next_bad)


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
        for index, (actual, wanted) in enumerate(zip(found, expected, strict=True)))
    if not ok:
        raise _FieldMismatch(f"{field} {' '.join(expected)!r} is not word {at + 1} of {sentence}")
    return at + len(expected)


def _same_word(actual: str, wanted: str, last: bool) -> bool:
    if actual == wanted:
        return True
    tail = actual[len(wanted):]
    return last and actual.startswith(wanted) and bool(tail) and set(tail) <= _PUNCTUATION
