"""The aligner's walk: every way the tokens can cover the text, and the one it must agree on.

A dynamic programme over (token, byte offset) on :class:`.text.SentenceBytes`; rules 1-3 of
:mod:`syntaxgym_helm.core.alignment` decide each token's region, and the messages of
:class:`AlignmentError` (which token, where, the text around it) are written here.
"""

from __future__ import annotations

from collections.abc import Sequence

from syntaxgym_helm.core.alignment.text import IN_GAP, IN_PREFIX, WHITESPACE, SentenceBytes
from syntaxgym_helm.core.alignment.token_forms import Reading, readings
from syntaxgym_helm.core.errors import AlignmentError

__all__ = ["Ambiguous", "NoAlignment", "Search"]


class NoAlignment(AlignmentError):
    """No way to align the tokens (message says where it breaks)."""


class Ambiguous(AlignmentError):
    """More than one way to align the tokens, and the ways disagree about some token's region."""


_INVALID = -3  # a move that would straddle prefix and sentence
#: (cost, nodes): how loose the best alignments of the remaining tokens are, and up to two of them.
_Options = tuple[int, tuple[int, ...]]


class Search:
    """All alignments of the tokens to the text, as a dynamic programme over (token, byte offset).

    The forward pass finds every offset each token can start at; the backward pass keeps, for
    each state, up to two distinct region assignments of the remaining tokens (shared suffixes
    are interned, so long prompts stay linear). For each token the most literal reading that
    completes an alignment wins; two surviving assignments at the start mean real ambiguity.
    """

    def __init__(self, text: SentenceBytes, tokens: Sequence[str], *, loose: bool = False) -> None:
        self.text = text
        self.tokens = tokens
        self.readings = [readings(token, loose) for token in tokens]
        self.moves: dict[tuple[int, int], list[tuple[int, int]]] = {}
        self.straddle: str | None = None

    def run(self) -> list[int | None]:
        """The region index (``None``: no region) of each token; raises AlignmentError."""
        reach = self._forward()
        return self._backward(reach)

    def _forward(self) -> list[set[int]]:
        reach: list[set[int]] = [{0}]
        for i in range(len(self.tokens)):
            following: set[int] = set()
            for pos in reach[i]:
                moves = [
                    (r, end)
                    for r, reading in enumerate(self.readings[i])
                    for end in self.text.match(reading, pos)
                ]
                self.moves[(i, pos)] = moves
                following.update(end for _, end in moves)
            if not following:
                raise NoAlignment(self._mismatch(i, max(reach[i])))
            reach.append(following)
        return reach

    def _backward(self, reach: list[set[int]]) -> list[int | None]:
        n = len(self.tokens)
        nodes: list[tuple[int | None, int]] = [(None, -1)]  # node 0: the empty suffix
        interned: dict[tuple[int | None, int], int] = {}
        best: dict[int, _Options] = {p: (0, (0,)) for p in reach[n] if self.text.at_end(p)}
        if not best:
            raise NoAlignment(self._uncovered(max(reach[n])))
        for i in range(n - 1, -1, -1):
            best = {pos: self._options(i, pos, best, nodes, interned) for pos in reach[i]}
        root = best.get(0, (0, ()))[1]
        if not root:
            raise NoAlignment(self.straddle or "the tokens cannot be aligned to the text")
        if len(root) > 1:
            raise Ambiguous(self._ambiguity(reach, *(self._unwind(nodes, r) for r in root[:2])))
        return self._unwind(nodes, root[0])

    def _options(
        self,
        i: int,
        pos: int,
        best: dict[int, _Options],
        nodes: list[tuple[int | None, int]],
        interned: dict[tuple[int | None, int], int],
    ) -> _Options:
        """Up to two distinct assignments of tokens i.. from ``pos``: those of the least loose
        alignments (fewest dropped pieces of characters the text does not show), and among
        those the ones whose token ``i`` has the most literal reading."""
        moves = self.moves[(i, pos)]
        chosen: _Options = (0, ())
        for r, reading in enumerate(self.readings[i]):
            if chosen[1] and reading.cost > chosen[0]:
                continue
            cost = -1
            found: list[int] = []
            for move_reading, end in moves:
                if move_reading != r or end not in best or not best[end][1]:
                    continue
                child_cost, children = best[end]
                if cost >= 0 and reading.cost + child_cost > cost:
                    continue
                owner = self._owner(i, reading, pos, end)
                if owner == _INVALID:
                    continue
                if cost < 0 or reading.cost + child_cost < cost:
                    cost, found = reading.cost + child_cost, []
                for child in children:
                    key = (owner, child)
                    node = interned.get(key)
                    if node is None:
                        node = interned[key] = len(nodes)
                        nodes.append(key)
                    if node not in found:
                        found.append(node)
            if found and (not chosen[1] or cost < chosen[0]):
                chosen = (cost, tuple(found[:2]))
                if cost == 0:
                    break  # nothing beats a strict reading, and earlier readings come first
        return chosen

    def _owner(self, i: int, reading: Reading, pos: int, end: int) -> int | None:
        """The region index token ``i`` counts for when it covers bytes ``pos:end``."""
        text = self.text
        if reading.special:
            return None
        if pos < text.prefix_bytes and end <= text.prefix_bytes:
            return None  # wholly inside the prefix
        first = text.skip_ws(pos)  # rule 1, and rule 2 for whitespace-only tokens
        if first >= len(text.data):
            return None
        owner = text.owner_of_byte(first)
        if owner == IN_PREFIX:
            if any(b not in WHITESPACE for b in text.data[text.prefix_bytes : end]):
                self.straddle = self.straddle or (
                    f"token {i} {self.tokens[i]!r} runs from the prefix into the sentence, at "
                    f"{text.where(text.prefix_bytes)}: end the prefix at a token boundary "
                    "(e.g. with whitespace) so that the first region keeps all its text"
                )
                return _INVALID
            return None
        return None if owner == IN_GAP else owner

    @staticmethod
    def _unwind(nodes: list[tuple[int | None, int]], node: int) -> list[int | None]:
        owners: list[int | None] = []
        while node != 0:
            owner, node = nodes[node]
            owners.append(owner)
        return owners

    # -- messages ------------------------------------------------------------------------------

    def _mismatch(self, i: int, pos: int) -> str:
        token = self.tokens[i]
        where = self.text.where(self.text.skip_ws(pos))
        if self.text.at_end(pos):
            problem = f"cannot align token {i} {token!r}: the tokens run past the end of the text"
        else:
            problem = f"cannot align token {i} {token!r}: its text does not occur"
        problem += f", at {where}"
        if not self.text.at_end(pos) and self._is_wildcard(i):
            problem += (
                "; it is a wildcard (unknown word or U+FFFD) and no stretch of the text there "
                "fits one"
            )
        if i > 0:
            problem += f"; the previous token is {i - 1} {self.tokens[i - 1]!r}"
        return problem

    def _uncovered(self, pos: int) -> str:
        count = len(self.tokens)
        last = f" (the last is {count - 1} {self.tokens[-1]!r})" if count else ""
        return (
            f"the {count} tokens{last} do not cover the whole text: it goes on at "
            f"{self.text.where(self.text.skip_ws(pos))}"
        )

    def _ambiguity(
        self, reach: list[set[int]], one: list[int | None], other: list[int | None]
    ) -> str:
        k = next(k for k, (a, b) in enumerate(zip(one, other, strict=False)) if a != b)
        wild = [f"{j} {self.tokens[j]!r}" for j in range(len(self.tokens)) if self._is_wildcard(j)]
        return (
            f"cannot align token {k} {self.tokens[k]!r} without guessing: it may count for "
            f"{self._region_label(one[k])} or {self._region_label(other[k])} at "
            f"{self.text.where(min(reach[k]))}, because the wildcard tokens "
            f"({', '.join(wild)}) can cover the text in more than one way"
        )

    def _is_wildcard(self, i: int) -> bool:
        return any(reading.is_wildcard for reading in self.readings[i])

    def _region_label(self, owner: int | None) -> str:
        return "no region" if owner is None else f"region {self.text.numbers[owner]}"
