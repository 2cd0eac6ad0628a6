"""Running forward passes and gathering the token logprobs they give: plain padded passes of the
whole model (:class:`PlainPasses`, the reference and the fallback) and prefix-shared passes
(:class:`SharedPasses`: each distinct prefix one position, stored prefixes reused).

Both return, per encoded prompt, the logprob of each token (0.0 first, for the beginning-of-text
token) given the tokens before it, and call ``on_pass(indices, logprobs)`` after each pass with
the prompts it finished, so that the server can answer them at once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from syntaxgym_helm.clients.local.output_layer import BOUNDARY, OutputLayer
from syntaxgym_helm.clients.local.pass_packing import logprobs_by_sequence, pack_rows, plan_outputs
from syntaxgym_helm.clients.local.prefix_store import PrefixStore, cache_keyword, returned_cache
from syntaxgym_helm.clients.local.prefix_trie import STREAMS, PackedRow, plan_passes
from syntaxgym_helm.clients.local.prompt_encoding import EncodedPrompt
from syntaxgym_helm.clients.local.sliding_window import sliding_window_of

OnPass = Callable[[list[int], list[list[float]]], None]
"""Called after each forward pass with the indices of the prompts it finished and their logprobs."""


@dataclass(frozen=True)
class PassLimits:
    """Limits of one forward pass: ``batch_size`` prompts, ``max_batch_positions`` distinct
    positions, rows of about ``max_row_nodes`` positions (prefix-shared passes only)."""

    batch_size: int
    max_batch_positions: int
    max_row_nodes: int


class PlainPasses:
    """Whole-model forward passes over prompts as right-padded rows (``pad_id``: the
    beginning-of-text id), the shortest prompts first, as many per pass as the limits allow.
    ``counts`` is updated with what each pass computed."""

    def __init__(self, model, pad_id: int, counts: Counter[str]) -> None:
        self.model = model
        self.pad_id = pad_id
        self.counts = counts
        self.device = next(model.parameters()).device
        self.boundary_mask: torch.Tensor | None = None  # for prompts with ``boundaries``

    def run(self, encoded: Sequence[EncodedPrompt], limits: PassLimits,
            on_pass: OnPass | None = None) -> list[list[float]]:
        results: list[list[float]] = [[] for _ in encoded]
        for indices in self.groups(encoded, limits):
            computed = self.one_pass([encoded[i] for i in indices])
            for i, logprobs in zip(indices, computed, strict=False):
                results[i] = logprobs
            if on_pass is not None:
                on_pass(indices, computed)
        return results

    @staticmethod
    def groups(encoded: Sequence[EncodedPrompt], limits: PassLimits) -> list[list[int]]:
        """Prompt indices of each pass: sorted by length, then chunked."""
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i].ids))
        passes: list[list[int]] = []
        current: list[int] = []
        for i in order:
            length = len(encoded[i].ids)
            if current and (len(current) >= limits.batch_size
                            or (len(current) + 1) * length > limits.max_batch_positions):
                passes.append(current)
                current = []
            current.append(i)
        if current:
            passes.append(current)
        return passes

    @torch.inference_mode()
    def one_pass(self, encoded: Sequence[EncodedPrompt]) -> list[list[float]]:
        """One forward pass of the whole model over ``encoded`` as right-padded rows."""
        length = max(len(e.ids) for e in encoded)
        input_ids = torch.full((len(encoded), length), self.pad_id, dtype=torch.long)
        attention = torch.zeros(len(encoded), length, dtype=torch.long)
        for b, item in enumerate(encoded):
            input_ids[b, : len(item.ids)] = torch.tensor(item.ids)
            attention[b, : len(item.ids)] = 1
        logits = self.model(input_ids=input_ids.to(self.device),
                            attention_mask=attention.to(self.device), use_cache=False).logits
        self.counts.update(prompts=len(encoded), tokens=sum(len(e.ids) for e in encoded),
                           positions=len(encoded) * length, passes=1)
        flat = logits.reshape(-1, logits.shape[-1])
        sources: list[int] = []
        targets: list[int] = []
        counts: list[int] = []
        for b, item in enumerate(encoded):
            positions = [b * length + j for j in range(len(item.ids) - 1)]
            sources += positions
            targets += item.ids[1:]
            if item.boundaries:  # then log P(next token begins a word) at each position
                sources += positions
                targets += [BOUNDARY] * len(positions)
            counts.append(len(positions) * (2 if item.boundaries else 1))
        values = _logprobs_from_logits(flat, sources, targets, self.boundary_mask)
        results, start = [], 0
        for count in counts:
            results.append([0.0] + values[start: start + count])
            start += count
        return results


def _logprobs_from_logits(logits: torch.Tensor, sources: list[int], targets: list[int],
                          boundary_mask: torch.Tensor | None = None) -> list[float]:
    nodes = torch.tensor(sources, device=logits.device)
    unique, inverse = torch.unique(nodes, return_inverse=True)
    rows = logits[unique].float()
    normaliser = torch.logsumexp(rows, dim=-1)[inverse]
    target = torch.tensor(targets, device=logits.device)
    chosen = logits[nodes, target.clamp(min=0)].float()
    asks_boundary = target == BOUNDARY
    if bool(asks_boundary.any()):
        if boundary_mask is None:
            raise ValueError("a word-boundary logprob was asked without a boundary mask")
        mask = boundary_mask.to(logits.device)
        in_mask = torch.logsumexp(rows.masked_fill(~mask[: rows.shape[-1]], float("-inf")),
                                  dim=-1)[inverse]
        chosen = torch.where(asks_boundary, in_mask, chosen)
    return (chosen - normaliser).tolist()


class SharedPasses:
    """Prefix-shared forward passes of the model's body (``base``, which gives final hidden
    states) and its output layer: the prompts' distinct prefixes are packed as trees into rows
    (:mod:`.prefix_trie`, :mod:`.pass_packing`),
    prefixes in the store are read from it, and each pass's new prefixes are stored for later
    passes. ``counts`` is updated with what each pass computed and reused."""

    def __init__(self, base, output_layer: OutputLayer, device: torch.device,
                 dtype: torch.dtype, counts: Counter[str]) -> None:
        self.base = base
        self.cache_keyword = cache_keyword(base)  # raises when the model takes no past keys
        self.sliding = sliding_window_of(getattr(base, "config", None))
        self.output_layer = output_layer
        self.device = device
        self.dtype = dtype
        self.counts = counts

    @torch.inference_mode()
    def run(self, encoded: Sequence[EncodedPrompt], store: PrefixStore, limits: PassLimits,
            on_pass: OnPass | None = None) -> list[list[float]]:
        results: list[list[float]] = [[] for _ in encoded]
        store.index.begin_call()
        # With no store, sequences sharing prefixes go together; with one, several streams.
        streams = STREAMS if store.index.capacity else 1
        for rows, _ in plan_passes([e.ids for e in encoded], store.index,
                                   limits.max_batch_positions, limits.batch_size,
                                   limits.max_row_nodes, streams=streams):
            computed = self.one_pass(rows, encoded, store)
            for index, logprobs in computed.items():
                results[index] = logprobs
            if on_pass is not None:
                indices = list(computed)
                on_pass(indices, [computed[i] for i in indices])
        return results

    def one_pass(self, rows: list[PackedRow], encoded: Sequence[EncodedPrompt],
                 store: PrefixStore) -> dict[int, list[float]]:
        """One forward pass over the rows' new nodes; the logprobs of the rows' sequences."""
        rows = [row for row in rows if row.members]
        computed = [row for row in rows if len(row)]
        hidden = kv = None
        length = past_length = 0
        if computed:
            inputs = pack_rows(computed, store.index, self.dtype,
                               self.sliding.window if self.sliding else None)
            length, past_length = inputs.length, inputs.past_length
            past = store.past_key_values(inputs.past_slots)
            mask = inputs.mask[:, None].to(self.device)
            if inputs.sliding_mask is not None:
                assert self.sliding is not None
                mask = self.sliding.model_mask(mask, inputs.sliding_mask[:, None].to(self.device))
            out = self.base(input_ids=inputs.input_ids.to(self.device), attention_mask=mask,
                            position_ids=inputs.positions.to(self.device), use_cache=True,
                            **{self.cache_keyword: past})
            hidden, kv = out.last_hidden_state, returned_cache(out)
            self.counts.update(positions=len(computed) * length, passes=1)
        # Outputs: of new nodes from this pass's hidden states (all of the vocabulary's logits:
        # the softmax's normaliser), of stored ones from the store (one logit each).
        plan = plan_outputs(rows, computed, length, encoded)
        values = torch.empty(plan.count, dtype=torch.float32)
        normaliser = boundary = None
        if plan.new_rows:
            assert hidden is not None
            new_hidden = hidden.reshape(-1, hidden.shape[-1])[
                torch.tensor(list(plan.new_rows), device=self.device)]
            new_values, normaliser, boundary = self.output_layer.logprobs(
                new_hidden, plan.new_source, plan.new_target)
            values[plan.new_at] = new_values
        if plan.stored_slot:
            slot = torch.tensor(plan.stored_slot, device=self.device)
            target = torch.tensor(plan.stored_target, device=self.device)
            values[plan.stored_at] = self.output_layer.target_logprobs(
                store.hidden[slot], store.normaliser[slot], target,
                store.boundary[slot] if self.output_layer.boundary_mask is not None else None)
            self.counts["reused"] += len(set(plan.stored_slot))
        if computed and store.index.capacity:
            assert hidden is not None and kv is not None
            store.keep(computed, kv, hidden, past_length, plan.new_rows, normaliser, boundary)
        results = logprobs_by_sequence(rows, values.tolist(), encoded)
        self.counts.update(prompts=len(results),
                           tokens=sum(len(encoded[i].ids) for i in results))
        return results
