"""Prefix sharing: pack many token sequences into a few rows of one tree each.

The conditions of a SyntaxGym item share most of their tokens (``The farmer near the clerks``
+ ``knows`` / ``know``), and so do the items of a suite (``The ...``). A causal LM's output at a
position depends only on the tokens up to it, so every distinct prefix needs computing once.

A *node* is a distinct prefix ``seq[:j + 1]``; the model's output there gives the logprob of
every token that follows that prefix in any sequence. Only prefixes that some sequence continues
are nodes: the last token of a sequence is scored by its parent's output and needs no position of
its own (so a sequence of ``n`` tokens whose first ``n - 1`` are shared costs nothing).

:func:`pack_rows` lays the nodes of a set of sequences out as rows: each row holds the nodes of
some sequences in parent-before-child order with each node's depth (its position id) and parent,
so that one forward pass over the row, with an attention mask letting each node see exactly its
ancestors (:func:`ancestor_matrix`), computes every node as a separate left-to-right pass would.
Sequences are sorted so that those sharing prefixes land in the same row. A shared prefix is
repeated only where two sequences that share it fall into different rows.

This module is pure Python and torch-free except for :func:`ancestor_matrix`'s tensors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence


@dataclass
class PackedRow:
    """One row of a forward pass: nodes of a tree of prefixes, parents before children."""

    tokens: list[int] = field(default_factory=list)
    """The last token of each node's prefix (the input id at that position)."""
    parents: list[int] = field(default_factory=list)
    """Index in this row of each node's parent; -1 for a root (a sequence's first token)."""
    depths: list[int] = field(default_factory=list)
    """Position of each node's last token in its sequence (0 for the first token)."""
    members: list[tuple[int, list[int]]] = field(default_factory=list)
    """``(sequence index, node of seq[:j + 1] for j in 0..len - 2)``: output ``j`` scores token
    ``j + 1`` of the sequence."""
    _children: dict[tuple[int, int], int] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self.tokens)

    def new_nodes(self, seq: Sequence[int]) -> int:
        """How many nodes adding ``seq`` would create."""
        node = -1
        for j in range(len(seq) - 1):
            child = self._children.get((node, seq[j]))
            if child is None:
                return len(seq) - 1 - j
            node = child
        return 0

    def add(self, index: int, seq: Sequence[int]) -> None:
        node = -1
        path: list[int] = []
        for j in range(len(seq) - 1):
            key = (node, seq[j])
            child = self._children.get(key)
            if child is None:
                child = len(self.tokens)
                self._children[key] = child
                self.tokens.append(seq[j])
                self.parents.append(node)
                self.depths.append(j)
            node = child
            path.append(node)
        self.members.append((index, path))


def pack_rows(seqs: Sequence[Sequence[int]], max_row_nodes: int) -> list[PackedRow]:
    """Pack ``seqs`` (each at least 2 tokens) into rows of at most ``max_row_nodes`` nodes.

    Sequences go in lexicographic order, so those sharing a prefix are neighbours; each row takes
    sequences while its node count stays within the limit. A sequence with more nodes than the
    limit gets a row of its own. Every sequence index appears in exactly one row's ``members``.
    """
    if max_row_nodes < 1:
        raise ValueError("max_row_nodes must be at least 1")
    for seq in seqs:
        if len(seq) < 2:
            raise ValueError("every sequence needs at least 2 tokens (a context and a token)")
    order = sorted(range(len(seqs)), key=lambda i: tuple(seqs[i]))
    rows: list[PackedRow] = []
    row: PackedRow | None = None
    for index in order:
        seq = seqs[index]
        if row is None or (len(row) and len(row) + row.new_nodes(seq) > max_row_nodes):
            row = PackedRow()
            rows.append(row)
        row.add(index, seq)
    return rows


def group_rows(rows: Sequence[PackedRow], max_positions: int,
               max_sequences: int) -> list[list[PackedRow]]:
    """Consecutive rows grouped into forward passes.

    A pass of ``B`` rows is padded to its longest row ``L``: it takes rows while ``B * L`` stays
    within ``max_positions`` and its rows hold at most ``max_sequences`` sequences (a single row
    always forms a pass, whatever its size).
    """
    groups: list[list[PackedRow]] = []
    group: list[PackedRow] = []
    longest = 0
    members = 0
    for row in rows:
        new_longest = max(longest, len(row))
        if group and ((len(group) + 1) * new_longest > max_positions
                      or members + len(row.members) > max_sequences):
            groups.append(group)
            group, new_longest, members = [], len(row), 0
        group.append(row)
        longest = new_longest
        members += len(row.members)
    if group:
        groups.append(group)
    return groups


def count_nodes(seqs: Iterable[Sequence[int]]) -> int:
    """Distinct non-final prefixes of ``seqs``: the positions a fully shared pass computes."""
    prefixes: set[tuple[int, ...]] = set()
    for seq in seqs:
        for j in range(1, len(seq)):
            prefixes.add(tuple(seq[:j]))
    return len(prefixes)


def ancestor_matrix(rows: Sequence[PackedRow], length: int):
    """Boolean ``[B, length, length]`` tensor: entry ``[b, i, k]`` is True when node ``k`` of row
    ``b`` is node ``i`` or one of its ancestors. Padding positions see only themselves."""
    import torch

    batch = len(rows)
    allowed = torch.zeros(batch * length, length, dtype=torch.bool)
    flat = torch.arange(batch * length)
    allowed[flat, flat % length] = True  # every position sees itself (padding too: no empty row)
    parents_flat = torch.full((batch * length,), -1, dtype=torch.long)
    depths_flat = torch.full((batch * length,), -1, dtype=torch.long)
    for b, row in enumerate(rows):
        n = len(row)
        if n:
            parents = torch.tensor(row.parents, dtype=torch.long)
            parents_flat[b * length: b * length + n] = torch.where(
                parents >= 0, parents + b * length, parents)
            depths_flat[b * length: b * length + n] = torch.tensor(row.depths, dtype=torch.long)
    # Parents come before their children and sit one level up: fill level by level.
    max_depth = int(depths_flat.max()) if batch * length else -1
    for depth in range(1, max_depth + 1):
        nodes = torch.nonzero((depths_flat == depth) & (parents_flat >= 0)).flatten()
        if len(nodes):
            allowed[nodes] |= allowed[parents_flat[nodes]]
    return allowed.view(batch, length, length)
