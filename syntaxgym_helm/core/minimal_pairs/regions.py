"""Where a minimal pair differs: both sentences cut into the same four numbered regions.

Every minimal-pair suite has the regions ``prefix`` (1), ``critical`` (2), ``next_word`` (3) and
``rest`` (4). A sentence is a sequence of units: whitespace-separated words (punctuation glued to
its word stays there), or single characters for a language written without spaces (SLING's
Mandarin, whose regions join with no separator). A region is a stretch of whole units of the
sentence as written, so its regions joined by the suite's separator give the sentence back
exactly (two spaces between two words stay inside a region; a pair where a region boundary would
fall on them is refused).

How a pair is cut (its ``split``):

- ``word_diff`` / ``char_diff`` (every data set): the longest shared beginning, then everything
  from the first to the last differing unit (the longest shared end is left out), then the next
  unit, then the rest;
- ``marked``: where the data set marks the critical word(s) on both sides (RuBLiMP's
  source/target word, TurBLiMP's cues) and they cover the difference, ``critical`` is the marked
  words (they may include shared words around the difference, e.g. ``doğum gününü`` where only
  ``gününü`` differs); ``next_word`` is the data set's later mark when it follows at once
  (TurBLiMP's ``critical_region``);
- BLiMP's own ``one_prefix`` and ``two_prefix`` cuts (:mod:`.blimp_cut`).

How a marked word sits against the difference is recorded per pair (``marked``): ``exact`` (it is
the difference), ``covers`` (it holds the difference and shared words around it), ``inside`` (the
difference is larger: a reordering, a moved particle), ``apart`` (elsewhere in the sentence) or
``missing`` (not found). The later mark's place (``marked_after``) is the region it is found in
first (``next_word``, ``rest``, ``critical``, ``prefix``, in that order) or ``missing``. The
``shape`` of the difference is counted apart: ``one_span``, ``several_spans`` (merged into one
critical region with the shared units between) or ``reordering`` (the same words, ignoring case
and glued punctuation, in another order).
"""

from __future__ import annotations

import itertools
import re
import string
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

Shape = Literal["one_span", "several_spans", "reordering"]
REGION_NAMES = ("prefix", "critical", "next_word", "rest")
#: How the marks sit, best first: a pair's is the worse of its two sentences'.
MARK_PLACES = ("exact", "covers", "inside", "apart", "missing")
PUNCTUATION = string.punctuation + "«»“”„‘’–—…¿¡。，、！？：；（）《》"
_WORD = re.compile(r"\S+")
Fold = Callable[[str], str]


class UnconvertiblePair(ValueError):
    """A pair that cannot become an item; the message says why (e.g. identical sentences)."""


@dataclass(frozen=True)
class Cut:
    """Unit indices: critical is ``[start, end)`` of each sentence, next_word ``[end, next)``."""

    start: int
    end_good: int
    end_bad: int
    next_good: int
    next_bad: int


@dataclass(frozen=True, kw_only=True)
class PairRegions:
    """One pair as regions: ``good`` and ``bad`` hold the four regions' contents in order."""

    good: tuple[str, str, str, str]
    bad: tuple[str, str, str, str]
    split: str
    shape: Shape
    #: Why the data set's own cut was not used (empty when it was, or there is none).
    fallback: str = ""
    marked: str | None = None  # one of MARK_PLACES; None: the data set marks nothing
    marked_after: str | None = None  # its region, or missing; None: no later mark


class Sentence:
    """A sentence and its units: its words (split on single spaces), or its characters when
    ``separator`` is empty. A sentence whose words are separated otherwise (two spaces, a tab) is
    cut by the character spans of its words instead, so its regions keep that whitespace inside
    them (and :func:`regions_of` refuses the pair where a region boundary falls on it)."""

    __slots__ = ("spans", "text", "units")

    def __init__(self, text: str, separator: str) -> None:
        self.text = text
        self.spans: list[tuple[int, int]] | None = None
        if not separator:
            self.units = list(text)
            return
        self.units = text.split(" ")
        if self.units != text.split():  # other whitespace than single spaces between words
            self.spans = [match.span() for match in _WORD.finditer(text)]
            self.units = [text[a:b] for a, b in self.spans]

    def cut(self, start: int, end: int, next_end: int,
            separator: str) -> tuple[str, str, str, str]:
        """The four regions: units ``[:start]``, ``[start:end]``, ``[end:next_end]``, the rest."""
        units, spans, join = self.units, self.spans, separator.join
        if spans is None:  # unrolled: this runs twice per pair, 157,346 pairs in CLAMS English
            return (join(units[:start]), join(units[start:end]), join(units[end:next_end]),
                    join(units[next_end:]))
        bounds = (0, start, end, next_end, len(units))
        first, critical, next_word, rest = (self.text[spans[a][0]:spans[b - 1][1]] if a < b else ""
                                            for a, b in itertools.pairwise(bounds))
        return first, critical, next_word, rest


def diff_cut(good: Sequence[str], bad: Sequence[str]) -> tuple[int, int, int]:
    """The shared beginning's length and where each sentence's differing units end: the longest
    common prefix and suffix of the unit lists (never overlapping) frame the difference."""
    shortest = min(len(good), len(bad))
    start = 0
    while start < shortest and good[start] == bad[start]:
        start += 1
    shared_end = 0
    while shared_end < shortest - start and good[-1 - shared_end] == bad[-1 - shared_end]:
        shared_end += 1
    return start, len(good) - shared_end, len(bad) - shared_end


def difference_shape(good: Sequence[str], bad: Sequence[str],
                     cut: tuple[int, int, int] | None = None) -> Shape:
    """How two different unit lists differ (see the module docstring; ``cut``: their
    :func:`diff_cut`). Between the shared beginning and end the first and the last units
    differ, so the two stretches differ in one place exactly when they share no unit (any shared
    unit is matched, leaving a difference on each side of it): no sequence matcher is needed."""
    start, end_good, end_bad = cut or diff_cut(good, bad)
    if set(good[start:end_good]).isdisjoint(bad[start:end_bad]):
        return "one_span"
    same_units = sorted(map(_bare, good)) == sorted(map(_bare, bad))
    return "reordering" if same_units else "several_spans"


def _bare(unit: str) -> str:
    """A unit without the punctuation glued to its ends, case folded: 'Whose' = 'whose?'."""
    return unit.strip(string.punctuation).casefold()


def word_diff(good: Sentence, bad: Sentence, cut: tuple[int, int, int] | None = None) -> Cut:
    """The default cut: the difference, then the next unit (``cut``: the :func:`diff_cut`)."""
    start, end_good, end_bad = cut or diff_cut(good.units, bad.units)
    return Cut(start, end_good, end_bad, min(end_good + 1, len(good.units)),
               min(end_bad + 1, len(bad.units)))


def regions_of(good: Sentence, bad: Sentence, cut: Cut, split: str, shape: Shape,
               separator: str, *, fallback: str = "", marked: str | None = None,
               marked_after: str | None = None) -> PairRegions:
    """The pair's regions from ``cut``; :class:`UnconvertiblePair` unless the regions of each
    sentence, joined by ``separator``, give it back exactly."""
    regions = (good.cut(cut.start, cut.end_good, cut.next_good, separator),
               bad.cut(cut.start, cut.end_bad, cut.next_bad, separator))
    for sentence, parts in zip((good, bad), regions, strict=True):
        if sentence.spans and separator.join(part for part in parts if part) != sentence.text:
            raise UnconvertiblePair(
                f"{sentence.text!r} does not separate its words by single spaces, so regions "
                "joined by spaces cannot give it back")
    return PairRegions(good=regions[0], bad=regions[1], split=split, shape=shape,
                       fallback=fallback, marked=marked, marked_after=marked_after)


def locate(units: Sequence[str], phrase: str, fold: Fold) -> list[int]:
    """Where the words of ``phrase`` occur in ``units`` (unit indices; compared case-folded with
    the punctuation at each unit's ends stripped)."""
    wanted = [fold(word) for word in phrase.split()]
    if not wanted:
        return []
    words = [fold(strip_punctuation(unit)) for unit in units]
    last = len(words) - len(wanted)
    return [index for index in range(last + 1)
            if words[index:index + len(wanted)] == wanted]


def strip_punctuation(unit: str) -> str:
    """``unit`` without the punctuation at its ends: :data:`PUNCTUATION` and every character
    Unicode calls punctuation (the danda ``।``, the Ethiopic full stop ``።``, Armenian ``։``)."""
    start, end = 0, len(unit)
    while start < end and _is_punctuation(unit[start]):
        start += 1
    while end > start and _is_punctuation(unit[end - 1]):
        end -= 1
    return unit[start:end]


def _is_punctuation(char: str) -> bool:
    return char in PUNCTUATION or unicodedata.category(char).startswith("P")


def mark_place(units: Sequence[str], phrase: str, fold: Fold, start: int,
               end: int) -> tuple[str, int, int]:
    """How ``phrase`` (the data set's critical words, ``""`` for nothing) sits against the
    difference ``[start, end)`` of ``units``: (place, its start, its end) of its best hit."""
    if not phrase:
        return ("exact" if start == end else "inside", start, start)
    size = len(phrase.split())
    best = ("missing", start, end)
    for hit in locate(units, phrase, fold):
        stop = hit + size
        place = ("exact" if (hit, stop) == (start, end) else
                 "covers" if hit <= start and end <= stop else
                 "inside" if start <= hit and stop <= end else "apart")
        if MARK_PLACES.index(place) < MARK_PLACES.index(best[0]):
            best = (place, hit, stop)
    return best


def marked_cut(good: Sentence, bad: Sentence, marks: tuple[str, str], after: str | None,
               fold: Fold) -> tuple[Cut | None, str, str | None]:
    """The ``marked`` cut where the marks (good, bad) cover the difference at the same place in
    both sentences (else None), the pair's mark place and the later mark's place."""
    start, end_good, end_bad = diff_cut(good.units, bad.units)
    place_good, first_good, stop_good = mark_place(good.units, marks[0], fold, start, end_good)
    place_bad, first_bad, stop_bad = mark_place(bad.units, marks[1], fold, start, end_bad)
    place = max(place_good, place_bad, key=MARK_PLACES.index)
    usable = (place in ("exact", "covers") and first_good == first_bad
              and len(good.units) - stop_good == len(bad.units) - stop_bad)
    if not usable:
        cut = word_diff(good, bad)
        return None, place, None if after is None else _after_place(good, cut, after, fold)
    cut = Cut(first_good, stop_good, stop_bad, min(stop_good + 1, len(good.units)),
              min(stop_bad + 1, len(bad.units)))
    if after is None:
        return cut, place, None
    after_place = _after_place(good, cut, after, fold)
    if after_place == "next_word":
        size = len(after.split())
        cut = Cut(cut.start, cut.end_good, cut.end_bad, cut.end_good + size, cut.end_bad + size)
    return cut, place, after_place


def _after_place(good: Sentence, cut: Cut, after: str, fold: Fold) -> str:
    hits = locate(good.units, after, fold)
    if cut.end_good in hits:
        return "next_word"
    for place, found in (("rest", lambda hit: hit > cut.end_good),
                         ("critical", lambda hit: cut.start <= hit < cut.end_good),
                         ("prefix", lambda hit: hit < cut.start)):
        if any(map(found, hits)):
            return place
    return "missing"
