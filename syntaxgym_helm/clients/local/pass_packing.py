"""One prefix-shared forward pass as tensors: its rows' new nodes packed into the model's inputs
(:func:`pack_rows`), and where each scored token's logprob will come from (:func:`plan_outputs`).

The rows come from :func:`~syntaxgym_helm.clients.local.prefix_trie.plan_passes`; running the
pass is :mod:`syntaxgym_helm.clients.local.forward_passes`'s job.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from syntaxgym_helm.clients.local.output_layer import BOUNDARY
from syntaxgym_helm.clients.local.prefix_trie import PackedRow, PrefixIndex, attention_allowed
from syntaxgym_helm.clients.local.prompt_encoding import EncodedPrompt
from syntaxgym_helm.clients.local.sliding_window import within_window


@dataclass(frozen=True)
class PassInputs:
    """The model's inputs for one pass over rows of new nodes (CPU tensors, rows x ``length``;
    shorter rows are padded): token ids, position ids (a node's depth in its prefix tree), the
    additive attention mask (rows x ``length`` x ``past_length + length``: each node sees its
    ancestors, stored or in the row), and the store slots each row attends to as its past
    (rows x ``past_length``; None when no row has a stored ancestor). ``sliding_mask``: the mask
    of a model's sliding-window layers, where some node lies past the window (else None: the
    two masks agree; :mod:`.sliding_window`)."""

    input_ids: torch.Tensor
    positions: torch.Tensor
    mask: torch.Tensor
    past_slots: torch.Tensor | None
    length: int
    past_length: int
    sliding_mask: torch.Tensor | None = None


def pack_rows(rows: Sequence[PackedRow], index: PrefixIndex, dtype: torch.dtype,
              window: int | None = None) -> PassInputs:
    """The inputs of a pass over ``rows`` (each with at least one new node); ``dtype``: the
    model's, for the mask; ``window``: the model's sliding window, if it has one."""
    length = max(len(row) for row in rows)
    past_length = max(len(row.past) for row in rows)
    input_ids = torch.zeros(len(rows), length, dtype=torch.long)
    positions = torch.zeros(len(rows), length, dtype=torch.long)
    for b, row in enumerate(rows):
        input_ids[b, : len(row)] = torch.tensor(row.tokens)
        positions[b, : len(row)] = torch.tensor(row.depths)
    allowed = attention_allowed(rows, length, past_length, index)
    past_slots = None
    if past_length:
        past_slots = torch.zeros(len(rows), past_length, dtype=torch.long)
        for b, row in enumerate(rows):
            if row.past:
                past_slots[b, : len(row.past)] = torch.tensor(list(row.past))
    sliding_mask = None
    if window is not None and int(positions.max()) >= window:
        keys = torch.cat([torch.tensor([[index.depth[slot] for slot in row.past]
                                        + [0] * (past_length - len(row.past)) for row in rows],
                                       dtype=torch.long).reshape(len(rows), past_length),
                          positions], dim=1)
        sliding_mask = _additive(within_window(allowed, positions.numpy(), keys.numpy(), window),
                                 dtype)
    return PassInputs(input_ids, positions, _additive(allowed, dtype), past_slots, length,
                      past_length, sliding_mask)


def _additive(allowed, dtype: torch.dtype) -> torch.Tensor:
    """A boolean mask as the additive one the model takes (0 where allowed, else the least
    value of ``dtype``)."""
    mask = torch.zeros(allowed.shape, dtype=dtype)
    mask.masked_fill_(~torch.from_numpy(allowed), torch.finfo(dtype).min)
    return mask


@dataclass
class OutputPlan:
    """Where each logprob a pass returns comes from, in the order of the rows' sequences and
    their tokens (``count`` in all): a new node's output (``new_*``: the output index, the row of
    the distinct new outputs, the target token) or a stored prefix's (``stored_*``: the output
    index, the store slot, the target token). ``new_rows`` maps a flat position in the pass's
    hidden states (row x ``length`` + node) to its row of the distinct new outputs."""

    count: int = 0
    new_rows: dict[int, int] = field(default_factory=dict)
    new_at: list[int] = field(default_factory=list)
    new_source: list[int] = field(default_factory=list)
    new_target: list[int] = field(default_factory=list)
    stored_at: list[int] = field(default_factory=list)
    stored_slot: list[int] = field(default_factory=list)
    stored_target: list[int] = field(default_factory=list)


def plan_outputs(rows: Sequence[PackedRow], computed: Sequence[PackedRow], length: int,
                 encoded: Sequence[EncodedPrompt]) -> OutputPlan:
    """The outputs of the sequences of ``rows`` (``computed``: those of them in the pass, padded
    to ``length``; ``encoded``: every sequence, by index). A sequence with ``boundaries`` has a
    second output per position after its token outputs: the :data:`BOUNDARY` target."""
    batch_of = {id(row): b for b, row in enumerate(computed)}
    plan = OutputPlan()
    for row in rows:
        for sequence, refs in row.members:
            targets = list(encoded[sequence].ids[1:])
            if encoded[sequence].boundaries:
                refs = refs + refs
                targets += [BOUNDARY] * len(targets)
            for (is_new, where), target in zip(refs, targets, strict=False):
                if is_new:
                    key = batch_of[id(row)] * length + where
                    plan.new_at.append(plan.count)
                    plan.new_source.append(plan.new_rows.setdefault(key, len(plan.new_rows)))
                    plan.new_target.append(target)
                else:
                    plan.stored_at.append(plan.count)
                    plan.stored_slot.append(where)
                    plan.stored_target.append(target)
                plan.count += 1
    return plan


def logprobs_by_sequence(rows: Sequence[PackedRow], flat: list[float],
                         encoded: Sequence[EncodedPrompt]) -> dict[int, list[float]]:
    """Sequence index -> its logprobs (0.0 first, for the beginning-of-text token), from the
    pass's outputs in :func:`plan_outputs`'s order (then its boundary outputs, if it has them)."""
    results: dict[int, list[float]] = {}
    start = 0
    for row in rows:
        for sequence, refs in row.members:
            count = len(refs) * (2 if encoded[sequence].boundaries else 1)
            results[sequence] = [0.0] + flat[start: start + count]
            start += count
    return results
