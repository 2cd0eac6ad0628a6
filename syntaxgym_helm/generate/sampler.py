"""Choosing the entries of each item: a bounded backtracking search over the candidate sets.

Reproducibility: item *i* draws from its own random generator, seeded by a hash of
``(seed, i)``, and draws the same numbers whatever the search does. So the same config and seed
give the same items, and raising ``sampling.items`` appends items without changing earlier ones
(an item depends only on the seed, its index and the items before it).

Balance: within an item, a slot tries first the candidates used least so far in that slot (ties
broken at random), so entries are spread evenly over the items.

The search is complete (it finds an assignment whenever one exists) and bounded: past
``MAX_STEPS`` partial assignments it stops with an error rather than run for ever.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from syntaxgym_helm.generate.candidates import Domains, PairCheck
from syntaxgym_helm.generate.model import Entry

#: Partial assignments one item may try before the search gives up.
MAX_STEPS = 200_000

Assignment = dict[str, Entry]
#: Judges a complete assignment: None if acceptable, else the reason it is rejected.
Judge = Callable[[Assignment], "str | None"]


def item_rng(seed: int, index: int) -> random.Random:
    """The random generator of item ``index``: independent of every other item's.

    ``random.Random(int).random()`` is guaranteed to give the same sequence in every Python
    version, unlike numpy's ``Generator`` methods."""
    digest = hashlib.sha256(f"syntaxgym-helm:{seed}:{index}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


@dataclass
class SearchFailure:
    """Why an item could not be generated."""

    exhausted: bool  # False: gave up after MAX_STEPS
    rejections: Counter = field(default_factory=Counter)  # reason -> count of full assignments


@dataclass
class Sampler:
    """Draws one assignment of entries to slots per item, honouring every constraint."""

    domains: Domains
    checks: list[PairCheck]
    seed: int
    no_reuse: frozenset[str]
    #: How often each entry has filled each slot in the items so far.
    uses: dict[str, Counter] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Most constrained slots first (fewest candidates), then by name: a fixed order.
        self.order = sorted(self.domains, key=lambda slot: (len(self.domains[slot]), slot))
        self.uses = {slot: Counter() for slot in self.domains}
        self._checks_by_slot: dict[str, list[PairCheck]] = {slot: [] for slot in self.domains}
        for check in self.checks:
            self._checks_by_slot[check.left].append(check)

    def sample(self, index: int, judge: Judge) -> Assignment | SearchFailure:
        """The assignment of item ``index`` (0-based), or why there is none."""
        rng = item_rng(self.seed, index)
        # Draw one key per candidate up front, in a fixed order, whatever the search does later.
        keys = {slot: [rng.random() for _ in self.domains[slot]] for slot in self.order}
        ordered: dict[str, list[Entry]] = {}
        for slot in self.order:
            pairs = zip(self.domains[slot], keys[slot], strict=True)
            allowed = [(entry, key) for entry, key in pairs
                       if slot not in self.no_reuse or not self.uses[slot][entry.key]]
            allowed.sort(key=lambda pair: (self.uses[slot][pair[0].key], pair[1]))
            ordered[slot] = [entry for entry, _ in allowed]
        failure = SearchFailure(exhausted=True)
        steps = [0]
        result = self._search(0, {}, ordered, judge, failure, steps)
        if result is None:
            return failure
        for slot, entry in result.items():
            self.uses[slot][entry.key] += 1
        return result

    def _search(self, depth: int, partial: Assignment, ordered: Mapping[str, list[Entry]],
                judge: Judge, failure: SearchFailure, steps: list[int]) -> Assignment | None:
        if depth == len(self.order):
            reason = judge(partial)
            if reason is None:
                return dict(partial)
            failure.rejections[reason] += 1
            return None
        slot = self.order[depth]
        for entry in ordered[slot]:
            steps[0] += 1
            if steps[0] > MAX_STEPS:
                failure.exhausted = False
                return None
            if all(check.holds(entry, partial[check.right])
                   for check in self._checks_by_slot[slot] if check.right in partial):
                partial[slot] = entry
                found = self._search(depth + 1, partial, ordered, judge, failure, steps)
                del partial[slot]
                if found is not None or not failure.exhausted:
                    return found
        return None
