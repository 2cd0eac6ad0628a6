"""Prefix sharing: lay many token sequences out so that each distinct prefix is computed once.

The conditions of a SyntaxGym item share most of their tokens (``The farmer near the clerks``
+ ``knows`` / ``know``), the items of a suite share beginnings (``The ...``), and neighbouring
suites share whole sentences. A causal LM's output at a position depends only on the tokens up to
it, so every distinct prefix needs computing once.

A *node* is a distinct prefix ``seq[:j + 1]``; the model's output there gives the logprob of every
token that follows that prefix in any sequence. Only prefixes that some sequence continues are
nodes: the last token of a sequence is scored by its parent's output and needs no position of its
own.

Two mechanisms, both planned here (pure Python; the tensors live in :mod:`.pass_packing`,
:mod:`.prefix_store` and :mod:`.forward_passes`):

- **Rows** (:class:`PackedRow`): the new nodes of some sequences, parents before children, each
  with its depth (its position id) and parent; one forward pass over a row, with an attention mask
  letting each node see exactly its ancestors (:func:`attention_allowed`), computes every node as
  a separate left-to-right pass would. :class:`PassBuilder` collects a pass's sequences into one
  tree, which is then cut between independent subtrees into rows of similar length (attention
  costs the square of a row's length; the rows of a pass are padded to the longest).
- **Stored prefixes** (:class:`PrefixIndex`): the keys/values (and final hidden state) of nodes
  computed in earlier passes are kept in numbered slots; a row attends to the slots of its nodes'
  stored ancestors as past keys/values instead of recomputing them. The index evicts the slots
  used in one call before those used in several, the least recently used first, never a slot
  whose descendants stay.

A call's sequences are planned in lexicographic order dealt into interleaved streams
(:func:`pass_order`), so that sequences sharing a prefix are planned close together (the store
need not keep it long) while each pass still holds independent subtrees (rows of even length).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

ROOT = -1
"""Parent of a sequence's first token (in rows and in the index)."""

Ref = tuple[bool, int]
"""Where a node's output is: ``(True, node index in the row)`` or ``(False, stored slot)``."""


class PrefixIndex:
    """Which prefixes are stored, as a trie over slots ``0 .. capacity - 1``.

    ``tick`` counts forward passes; a slot used in the current pass is never evicted. ``call``
    counts the caller's calls (:meth:`begin_call`: a HELM run's prompts are one call). Eviction
    takes first the slots used in one call only, then those used in several (the beginnings that
    run after run share); within each, the deepest first, the least recently used first among
    equals. The deepest first, because a short prefix begins more sentences, of this call and of
    the next (the prefixes that a data set's suites share are mostly a few tokens after the
    beginning of text); and no slot is evicted before its descendants. Each of these choices
    computes fewer positions over all of BLiMP than the plain least recently used first
    (``benchmarks/bench_pass_planning.py`` measures them against the floor; BENCHMARKS.md).
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.children: dict[tuple[int, int], int] = {}
        self.parent = [ROOT] * capacity
        self.token = [0] * capacity
        self.depth = [0] * capacity
        self.last_used = [0] * capacity
        self.in_use = [False] * capacity
        self.first_call = [0] * capacity
        self.several_calls = [False] * capacity
        self.free = list(range(capacity - 1, -1, -1))
        self.tick = 1
        self.call = 0

    def begin_call(self) -> None:
        """Count a new call of the caller (see the class's docstring)."""
        self.call += 1

    def __len__(self) -> int:
        return self.capacity - len(self.free)

    def lookup(self, parent: int, token: int) -> int | None:
        return self.children.get((parent, token))

    def chain(self, slot: int) -> list[int]:
        """``slot`` and its stored ancestors, root first."""
        found = []
        while slot != ROOT:
            found.append(slot)
            slot = self.parent[slot]
        found.reverse()
        return found

    def touch(self, slot: int) -> None:
        self.last_used[slot] = self.tick
        if self.first_call[slot] != self.call:
            self.several_calls[slot] = True

    def insert(self, parent: int, token: int, depth: int) -> tuple[int | None, bool]:
        """Slot for ``parent + token``: ``(slot, True)`` when newly taken (fill it), ``(slot,
        False)`` when already stored, ``(None, False)`` when no slot can be freed."""
        existing = self.children.get((parent, token))
        if existing is not None:
            self.touch(existing)
            return existing, False
        if not self.free:
            self._evict()
            if not self.free:
                return None, False
        slot = self.free.pop()
        self.children[(parent, token)] = slot
        self.parent[slot], self.token[slot], self.depth[slot] = parent, token, depth
        self.in_use[slot] = True
        self.first_call[slot], self.several_calls[slot] = self.call, False
        self.touch(slot)
        return slot, True

    def _evict(self) -> None:
        """Free about half the slots (only ones not used in the current pass)."""
        candidates = [s for s in range(self.capacity)
                      if self.in_use[s] and self.last_used[s] < self.tick]
        candidates.sort(key=self.eviction_rank)
        for slot in candidates[: max(1, self.capacity // 2)]:
            del self.children[(self.parent[slot], self.token[slot])]
            self.in_use[slot] = False
            self.free.append(slot)

    def eviction_rank(self, slot: int) -> tuple[bool, int, int]:
        """Slots are evicted in increasing rank: one call's before several calls', the deepest
        first, the least recently used first among equals."""
        return self.several_calls[slot], -self.depth[slot], self.last_used[slot]

    def clear(self) -> None:
        self.__init__(self.capacity)  # type: ignore[misc]  # every field back to its start


def insert_rows(index: PrefixIndex, rows: Sequence[PackedRow]) -> list[tuple[int, int, int]]:
    """Store the new nodes of a pass's ``rows`` in ``index`` (parents first; a node whose parent
    could not be stored is not stored either); returns ``(slot, row, node)`` for each slot newly
    taken, whose contents the caller fills."""
    fresh: list[tuple[int, int, int]] = []
    for b, row in enumerate(rows):
        slot_of: list[int | None] = [None] * len(row)
        for i in range(len(row)):
            parent = row.parents[i]
            parent_slot = slot_of[parent] if parent != ROOT else row.anchors[i]
            if parent_slot is None:
                continue  # the parent could not be stored
            slot, new = index.insert(parent_slot, row.tokens[i], row.depths[i])
            slot_of[i] = slot
            if new and slot is not None:  # (a newly taken slot is never None)
                fresh.append((slot, b, i))
    return fresh


@dataclass
class PackedRow:
    """One row of a forward pass: new nodes, parents before children, and the stored slots
    (``past``) they attend to."""

    tokens: list[int] = field(default_factory=list)
    """The last token of each node's prefix (the input id at that position)."""
    parents: list[int] = field(default_factory=list)
    """Index in this row of each node's parent; ROOT when the parent is stored or there is none."""
    anchors: list[int] = field(default_factory=list)
    """For a node whose parent is stored: that slot; else ROOT."""
    depths: list[int] = field(default_factory=list)
    """Position of each node's last token in its sequence (0 for the first token)."""
    past: dict[int, int] = field(default_factory=dict)
    """Stored slots this row attends to -> their column among the past keys/values."""
    members: list[tuple[int, list[Ref]]] = field(default_factory=list)
    """``(sequence index, where the output of seq[:j + 1] is, for j in 0..len - 2)``: output
    ``j`` scores token ``j + 1`` of the sequence."""
    _children: dict[tuple[Ref | None, int], int] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self.tokens)

    def new_nodes(self, seq: Sequence[int], start: int, anchor: Ref | None) -> int:
        """How many nodes adding ``seq[start:]`` (after the stored ``anchor``) would create."""
        parent = anchor
        for j in range(start, len(seq) - 1):
            child = self._children.get((parent, seq[j]))
            if child is None:
                return len(seq) - 1 - j
            parent = (True, child)
        return 0

    def add(self, index: int, seq: Sequence[int], stored: list[int],
            chain: Iterable[int]) -> None:
        """Add sequence ``index`` whose first ``len(stored)`` prefixes are the stored slots
        ``stored`` (``chain``: those slots, the columns the new nodes attend to)."""
        refs: list[Ref] = [(False, slot) for slot in stored]
        anchor_slot = stored[-1] if stored else ROOT
        parent: Ref | None = (False, anchor_slot) if stored else None
        for slot in chain:
            self.past.setdefault(slot, len(self.past))
        for j in range(len(stored), len(seq) - 1):
            key = (parent, seq[j])
            child = self._children.get(key)
            if child is None:
                child = len(self.tokens)
                self._children[key] = child
                self.tokens.append(seq[j])
                row_parent = parent[1] if parent is not None and parent[0] else ROOT
                self.parents.append(row_parent)
                self.anchors.append(anchor_slot if row_parent == ROOT else ROOT)
                self.depths.append(j)
            parent = (True, child)
            refs.append(parent)
        self.members.append((index, refs))


class PassBuilder:
    """Collects the sequences of one forward pass, one at a time (see :meth:`add`), into one
    tree of their new nodes (a :class:`PackedRow`).

    Limits: at most ``max_positions`` new nodes and ``max_sequences`` sequences; the first
    sequence always fits. :meth:`rows` then splits the tree into rows for the forward pass.
    """

    def __init__(self, index: PrefixIndex | None, max_positions: int,
                 max_sequences: int) -> None:
        if min(max_positions, max_sequences) < 1:
            raise ValueError("the limits of a pass must be positive")
        self.index = index
        self.max_positions = max_positions
        self.max_sequences = max_sequences
        self.tree = PackedRow()
        self.sequences = 0

    def add(self, index: int, seq: Sequence[int]) -> bool:
        """Add sequence ``index`` (at least 2 tokens) if it fits; False when the pass is full."""
        if len(seq) < 2:
            raise ValueError("every sequence needs at least 2 tokens (a context and a token)")
        stored: list[int] = []
        if self.index is not None:
            slot = ROOT
            for j in range(len(seq) - 1):
                found = self.index.lookup(slot, seq[j])
                if found is None:
                    break
                stored.append(found)
                slot = found
        anchor: Ref | None = (False, stored[-1]) if stored else None
        new = self.tree.new_nodes(seq, len(stored), anchor)
        if self.sequences and (len(self.tree) + new > self.max_positions
                               or self.sequences + 1 > self.max_sequences):
            return False
        if self.index is not None:
            for slot in stored:
                self.index.touch(slot)
        self.tree.add(index, seq, stored, stored)
        self.sequences += 1
        return True

    def rows(self, max_row_nodes: int) -> list[PackedRow]:
        """The pass's rows: the tree itself, or, when it has more than ``max_row_nodes`` nodes,
        its independent subtrees (those under different stored prefixes or first tokens, which
        attend to nothing of each other) spread over rows of about that many nodes, balanced so
        that padding to the longest row costs little. Nothing is computed twice; a subtree larger
        than the limit sets the rows' length."""
        return split_row(self.tree, max_row_nodes, self.index)


def split_row(row: PackedRow, max_row_nodes: int, index: PrefixIndex | None) -> list[PackedRow]:
    """``row`` as rows of about ``max_row_nodes`` nodes each (at most that or its largest
    subtree, whichever is larger, give or take the balancing), cut between its subtrees (see
    :meth:`PassBuilder.rows`)."""
    if len(row) <= max_row_nodes:
        return [row]
    top: list[int] = []
    for node, parent in enumerate(row.parents):
        top.append(node if parent == ROOT else top[parent])
    sizes: dict[int, int] = {}
    for tree in top:
        sizes[tree] = sizes.get(tree, 0) + 1
    # As many rows as the limit (or the largest subtree) needs; subtrees largest first, each to
    # the row with the fewest nodes so far, which keeps rows of similar length (little padding).
    capacity = max(max_row_nodes, max(sizes.values()))
    count = -(-len(row) // capacity)
    fill = [(0, b) for b in range(count)]
    bin_of: dict[int, int] = {}
    for tree in sorted(sizes, key=lambda t: -sizes[t]):
        used, b = heapq.heappop(fill)
        bin_of[tree] = b
        heapq.heappush(fill, (used + sizes[tree], b))
    rows = [PackedRow() for _ in range(count)]
    new_index: list[int] = []
    for node in range(len(row)):
        target = rows[bin_of[top[node]]]
        new_index.append(len(target.tokens))
        parent = row.parents[node]
        target.tokens.append(row.tokens[node])
        target.parents.append(ROOT if parent == ROOT else new_index[parent])
        target.anchors.append(row.anchors[node])
        target.depths.append(row.depths[node])
        anchor = row.anchors[node]
        if anchor != ROOT:
            assert index is not None
            for slot in index.chain(anchor):
                target.past.setdefault(slot, len(target.past))
    for sequence, refs in row.members:
        first_new = next((where for is_new, where in refs if is_new), None)
        target = rows[bin_of[top[first_new]]] if first_new is not None else rows[0]
        target.members.append((sequence, [(True, new_index[where]) if is_new else (False, where)
                                          for is_new, where in refs]))
    return rows


#: How many interleaved streams :func:`pass_order` deals a store-backed call's sequences into.
STREAMS = 8


def pass_order(seqs: Sequence[Sequence[int]], streams: int) -> list[int]:
    """The order in which :func:`plan_passes` takes ``seqs``: lexicographic, dealt card by card
    into ``streams`` interleaved streams (1: plain lexicographic order).

    Why: in lexicographic order the sequences that share a prefix are neighbours, so a prefix is
    needed only while they are planned and a store of computed prefixes need not keep it long
    (in the order asked for, a prefix shared by sequences far apart is often evicted before its
    second use). But a pass of neighbours is one large subtree, and the rows of a pass are padded
    to the largest (:func:`split_row`). Taking the sequences from several streams in turn fills
    each pass with independent subtrees that balance into rows, while each stream walks its own
    stretch of the order, so the store still keeps little more than each stream's current
    path. On all of BLiMP (SmolLM2's tokenizer, the engine's default limits and store, each
    paradigm a call) the positions computed, padding included: 815,525 in the order asked for,
    893,449 in lexicographic order, 794,211 with 3 streams and 788,760 with 8 (715,754 distinct
    prefixes; 778,130 counted within each paradigm)."""
    ordered = sorted(range(len(seqs)), key=lambda i: tuple(seqs[i]))
    if streams <= 1:
        return ordered
    size = -(-len(ordered) // streams)  # each stream a stretch of this many sequences
    stretches = [ordered[start: start + size] for start in range(0, len(ordered), size)]
    return [stretch[step] for step in range(size) for stretch in stretches
            if step < len(stretch)]


def plan_passes(seqs: Sequence[Sequence[int]], index: PrefixIndex | None, max_positions: int,
                max_sequences: int, max_row_nodes: int | None = None,
                streams: int | None = None) -> Iterable[tuple[list[PackedRow], int]]:
    """The forward passes for ``seqs``: ``(rows, sequences)`` each, taken as given (``streams``
    None) or in :func:`pass_order` with that many streams. Each is yielded before the next is
    planned, so that what the caller stores from it (in ``index``) serves the later ones.

    Without a store of computed prefixes, plain lexicographic order (1 stream) puts sequences
    that share prefixes in the same pass; with one, several streams compute the fewest
    positions (see :func:`pass_order`).
    """
    order = list(range(len(seqs))) if streams is None else pass_order(seqs, streams)
    position = 0
    while position < len(order):
        if index is not None:
            index.tick += 1
        builder = PassBuilder(index, max_positions, max_sequences)
        while position < len(order) and builder.add(order[position], seqs[order[position]]):
            position += 1
        yield builder.rows(max_row_nodes or max_positions), builder.sequences


def count_nodes(seqs: Iterable[Sequence[int]]) -> int:
    """Distinct non-final prefixes of ``seqs``: the positions a fully shared pass computes."""
    prefixes: set[tuple[int, ...]] = set()
    for seq in seqs:
        for j in range(1, len(seq)):
            prefixes.add(tuple(seq[:j]))
    return len(prefixes)


def attention_allowed(rows: Sequence[PackedRow], length: int, past_length: int,
                      index: PrefixIndex | None):
    """Boolean ``[B, length, past_length + length]`` array: which past slot (first
    ``past_length`` columns, in each row's ``past`` order) and which row position each position
    may attend to: the node itself and its ancestors. Padding positions see only themselves."""
    import numpy as np

    allowed = np.zeros((len(rows), length, past_length + length), dtype=bool)
    for b, row in enumerate(rows):
        for i in range(length):
            if i >= len(row):
                allowed[b, i, past_length + i] = True
                continue
            parent = row.parents[i]
            if parent != ROOT:
                allowed[b, i] = allowed[b, parent]
            elif row.anchors[i] != ROOT:
                assert index is not None
                for slot in index.chain(row.anchors[i]):
                    allowed[b, i, row.past[slot]] = True
            allowed[b, i, past_length + i] = True
    return allowed
