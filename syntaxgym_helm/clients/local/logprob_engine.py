"""Scoring prompts with a loaded model: beginning-of-text token + prompt, one logprob per token,
computing each distinct prefix once (:class:`LogprobEngine`; one caller at a time).

The prompts of a forward pass are packed as prefix trees (:mod:`syntaxgym_helm.clients.local.prefix_trie`):
each distinct prefix is one position, which its descendants alone see through a tree-shaped 4D
attention mask with explicit position ids. Prefixes computed in earlier passes (the same item's
other conditions, the next suite's identical beginnings) are not recomputed but read from a store
of their keys, values, final hidden states and softmax normalisers. On CPU the linear layers run
on oneDNN-packed weights (:mod:`syntaxgym_helm.clients.local.cpu_kernels`). The results equal plain
one-prompt-at-a-time scoring up to float rounding; that is checked on every model load, and a
model that ignores custom masks, position ids or past keys and values gets plain padded batches.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Sequence

import torch
from transformers import DynamicCache

from helm.common.hierarchical_logger import hlog, hwarn

from syntaxgym_helm.clients.local import cpu_kernels
from syntaxgym_helm.clients.local.prefix_trie import (
    ROOT,
    PackedRow,
    PrefixIndex,
    attention_allowed,
    plan_passes,
)

class PromptError(ValueError):
    """A request this client cannot serve (its fault, not the model's): reported, not retried."""


@dataclass(frozen=True)
class PromptLogprobs:
    """A prompt's tokens, beginning-of-text token first, and their logprobs (nats)."""

    prompt: str
    texts: tuple[str, ...]
    logprobs: tuple[float, ...]


@dataclass(frozen=True)
class _Encoded:
    prompt: str
    ids: tuple[int, ...]  # beginning-of-text id first
    texts: tuple[str, ...]  # beginning-of-text text first


PROBE_PROMPTS = (
    "The keys to the cabinet are on the table.",
    "The keys to the cabinet is on the table.",
    "The author that the guards like laughs.",
    "The author that the guards like laugh.",
    "No",
)


class _PrefixStore:
    """Stored prefixes: the index, and per slot each layer's key and value, the final hidden
    state (what the output layer turns into logits) and the log of the softmax's normaliser over
    the vocabulary (so that a stored prefix scores a token with one dot product)."""

    def __init__(self, index: PrefixIndex, keys: list[torch.Tensor], values: list[torch.Tensor],
                 hidden: torch.Tensor) -> None:
        self.index = index
        self.keys = keys
        self.values = values
        self.hidden = hidden
        self.normaliser = torch.empty(index.capacity, dtype=torch.float32, device=hidden.device)

    @classmethod
    def sized(cls, layer_shapes: list[tuple[int, int]], hidden_size: int, budget_bytes: int,
              dtype: torch.dtype, device: torch.device) -> "_PrefixStore":
        """As many slots as ``budget_bytes`` holds; ``layer_shapes``: (kv heads, head dim)."""
        element = torch.empty((), dtype=dtype).element_size()
        per_slot = element * (hidden_size + sum(2 * heads * dim for heads, dim in layer_shapes))
        per_slot += 4  # the normaliser
        capacity = max(0, int(budget_bytes) // per_slot)
        def slots(heads: int, dim: int) -> torch.Tensor:
            return torch.empty(capacity, heads, dim, dtype=dtype, device=device)

        return cls(PrefixIndex(capacity), [slots(h, d) for h, d in layer_shapes],
                   [slots(h, d) for h, d in layer_shapes],
                   torch.empty(capacity, hidden_size, dtype=dtype, device=device))


class LogprobEngine:
    """Scores prompts with a loaded model: beginning-of-text token + prompt, one logprob each.

    With ``prefix_sharing`` (default), each forward pass packs its prompts' distinct prefixes as
    trees (:mod:`syntaxgym_helm.clients.local.prefix_trie`), and prefixes computed in earlier passes are reused
    from a store of their keys and values (``prefix_cache_mb`` of memory; 0: no reuse across
    passes). Limits of one forward pass: ``batch_size`` prompts and ``max_batch_positions``
    distinct positions, laid out in rows of about ``max_row_nodes`` positions (cut between
    independent subtrees; attention costs the square of a row's length, padding to the longest
    row costs linear layers). Calls are serialised by a lock.
    """

    VOCABULARY_BLOCK = 4096  # output-layer rows turned into logits at once

    def __init__(
        self,
        model,
        tokenizer,
        *,
        bos_text: str | None = None,
        batch_size: int = 128,
        prefix_sharing: bool = True,
        prefix_cache_mb: float = 256,
        max_batch_positions: int = 384,
        max_row_nodes: int = 128,
        max_sequence_length: int | None = None,
        check_prefix_sharing: bool = True,
        onednn: bool = True,
    ) -> None:
        if batch_size < 1 or max_row_nodes < 1 or max_batch_positions < 1:
            raise ValueError("batch_size, max_row_nodes and max_batch_positions must be positive")
        self.model = model
        self.tokenizer = tokenizer
        self.batch_size = batch_size
        self.max_row_nodes = max_row_nodes
        self.max_batch_positions = max_batch_positions
        self.device = next(model.parameters()).device
        self.dtype = next(model.parameters()).dtype
        self.bos_text, self.bos_id = self._beginning_of_text(bos_text)
        self.max_length = max_sequence_length or self._model_max_length()
        self.counts: Counter[str] = Counter()
        """Totals of ``prompts``, ``tokens`` (with the beginning-of-text token), ``positions``
        (computed, padding included), ``reused`` (positions served by the store), forward
        ``passes`` and ``packed_passes`` (those with oneDNN kernels), over :meth:`score_encoded`
        calls."""
        self._lock = threading.Lock()
        self._store: _PrefixStore | None = None
        self._head_blocks: list[torch.Tensor] = []  # oneDNN-packed blocks of the output layer
        self._packed_layers = 0
        self.onednn = onednn and cpu_kernels.available(self.device, self.dtype)
        self.prefix_sharing = False
        if prefix_sharing:
            self.prefix_sharing = self._set_up_prefix_sharing(prefix_cache_mb,
                                                              check_prefix_sharing)
            self.counts.clear()

    # -- setup ----------------------------------------------------------------------------------

    def _beginning_of_text(self, bos_text: str | None) -> tuple[str, int]:
        tokenizer = self.tokenizer
        text = bos_text or tokenizer.bos_token or tokenizer.eos_token
        if not text:
            raise ValueError("the tokenizer has no beginning-of-text (bos) or end-of-text token; "
                             "pass bos_text")
        token_id = tokenizer.convert_tokens_to_ids(text)
        if not isinstance(token_id, int) or (
                token_id == tokenizer.unk_token_id and text != tokenizer.unk_token):
            raise ValueError(f"bos_text {text!r} is not a single token of the tokenizer")
        return text, token_id

    def _model_max_length(self) -> int:
        config = self.model.config
        for name in ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length"):
            value = getattr(config, name, None)
            if isinstance(value, int) and value > 0:
                return value
        value = getattr(self.tokenizer, "model_max_length", None)
        if isinstance(value, int) and 0 < value < 10**8:
            return value
        return 2048

    def _set_up_prefix_sharing(self, cache_mb: float, check: bool) -> bool:
        """Find the model's parts and key/value shapes, then score probe prompts with prefix
        sharing (small store, several passes, evictions) and without: a model that ignores
        custom 4D masks, explicit position ids or past keys/values, or post-processes its logits,
        disagrees and gets plain batches instead."""
        try:
            self.base = self.model.base_model
            self.head = self.model.get_output_embeddings()
            if (self.head is None or self.base is self.model
                    or not isinstance(getattr(self.head, "weight", None), torch.Tensor)):
                raise ValueError("no separate linear output layer")
            with torch.inference_mode():
                out = self.base(input_ids=torch.tensor([[self.bos_id] * 2], device=self.device),
                                use_cache=True)
            shapes = [(layer.keys.shape[1], layer.keys.shape[3])
                      for layer in out.past_key_values.layers]
            hidden_size = out.last_hidden_state.shape[-1]

            def store(budget: float) -> _PrefixStore:
                return _PrefixStore.sized(shapes, hidden_size, int(budget), self.dtype,
                                          self.device)

            if self.onednn:
                self._set_up_onednn()
            if check:
                tolerance = 1e-3 if self.dtype == torch.float32 else 5e-2
                worst = self._probe_disagreement(store)
                if worst > tolerance and self.onednn:
                    hwarn(f"SyntaxGymClient: with oneDNN kernels the logprobs differ by up to "
                          f"{worst:.3g} nats from plain scoring; using the default kernels")
                    self.onednn = False
                    worst = self._probe_disagreement(store)
                if worst > tolerance:
                    raise ValueError(f"its logprobs differ by up to {worst:.3g} nats from plain "
                                     "scoring")
            self._store = store(cache_mb * 2**20)
            hlog(f"SyntaxGymClient: prefix sharing on ({self._store.index.capacity} prefixes "
                 f"stored at most); "
                 + (f"oneDNN kernels for {self._packed_layers} linear layers and the output layer"
                    if self.onednn else "default kernels"))
            return True
        except Exception as exc:  # noqa: BLE001
            hwarn(f"SyntaxGymClient: prefix sharing is off for this model, which is scored in "
                  f"plain batches ({type(exc).__name__}: {exc})")
            return False

    def _probe_disagreement(self, store: Callable[[float], _PrefixStore]) -> float:
        """Largest logprob difference between plain and prefix-shared scoring of the probe
        prompts, with a store so small that prefixes are evicted (nats)."""
        encoded = [self.encode(prompt) for prompt in PROBE_PROMPTS]
        plain = self._score_plain(encoded)
        slots_per_mb = store(2**20).hidden.shape[0]
        scratch = store(2**20 * 12 / max(slots_per_mb, 1))  # 12 slots: evictions happen
        saved = self.batch_size, self.max_row_nodes
        worst = 0.0
        try:
            # Several passes (later ones reuse stored prefixes), several padded rows each.
            self.batch_size, self.max_row_nodes = 2, 4
            for _ in range(2):
                shared = self._score_shared(encoded, scratch)
                worst = max(worst, max(abs(a - b) for x, y in zip(shared, plain)
                                       for a, b in zip(x, y)))
        finally:
            self.batch_size, self.max_row_nodes = saved
        return worst

    def _set_up_onednn(self) -> None:
        """Pack the weights of the model's linear layers and of the output layer's vocabulary
        blocks for oneDNN (:mod:`syntaxgym_helm.clients.local.cpu_kernels`); on failure, keep the default."""
        try:
            # The MLP's output projection (input wider than the hidden size) stays on the
            # default kernels: its inputs are where the model's huge activations are.
            cpu_kernels.install(self.model, self.max_batch_positions, skip=(self.head,),
                                max_in_features=self.head.weight.shape[1])
            self._packed_layers = sum(isinstance(m, cpu_kernels.PackedLinear)
                                      for m in self.model.modules())
            weight = self.head.weight
            self._head_blocks = [cpu_kernels.pack_weight(weight[start: start + self.VOCABULARY_BLOCK],
                                                         self.max_batch_positions)
                                 for start in range(0, weight.shape[0], self.VOCABULARY_BLOCK)]
        except Exception as exc:  # noqa: BLE001 - an optimisation: never fatal
            hwarn(f"SyntaxGymClient: oneDNN kernels unavailable ({type(exc).__name__}: {exc})")
            self.onednn = False
            self._head_blocks = []

    # -- tokens ---------------------------------------------------------------------------------

    def encode(self, prompt: str) -> _Encoded:
        """Token ids (beginning-of-text first) and exact token texts; PromptError when unusable."""
        encoded = self.encode_many([prompt])[0]
        if isinstance(encoded, PromptError):
            raise encoded
        return encoded

    def encode_many(self, prompts: Sequence[str]) -> list[_Encoded | PromptError]:
        results: list[_Encoded | PromptError] = []
        usable = [i for i, p in enumerate(prompts) if p]
        encodings: dict[int, tuple[list[int], list[str]]] = {}
        if usable and getattr(self.tokenizer, "is_fast", False):
            batch = self.tokenizer([prompts[i] for i in usable], add_special_tokens=False,
                                   return_offsets_mapping=True)
            for k, i in enumerate(usable):
                ids = list(batch["input_ids"][k])
                encodings[i] = (ids, _texts_from_offsets(prompts[i], batch["offset_mapping"][k]))
        else:
            for i in usable:
                ids = self.tokenizer(prompts[i], add_special_tokens=False)["input_ids"]
                encodings[i] = (list(ids), self._texts_by_decoding(prompts[i], ids))
        for i, prompt in enumerate(prompts):
            if i not in encodings:
                results.append(PromptError("the prompt is empty: there is nothing to score"))
                continue
            ids, texts = encodings[i]
            if not ids:
                results.append(PromptError(f"the prompt {prompt!r} has no tokens"))
            elif "".join(texts) != prompt:
                results.append(PromptError(f"the tokenizer's tokens of {prompt!r} do not cover "
                                           f"it exactly: {texts!r}"))
            elif len(ids) + 1 > self.max_length:
                results.append(PromptError(
                    f"the prompt is {len(ids)} tokens long; with the beginning-of-text token that "
                    f"exceeds the model's context of {self.max_length} tokens"))
            else:
                results.append(_Encoded(prompt, (self.bos_id, *ids), (self.bos_text, *texts)))
        return results

    def _texts_by_decoding(self, prompt: str, ids: Sequence[int]) -> list[str]:
        texts: list[str] = []
        previous = ""
        for end in range(1, len(ids) + 1):
            decoded = self.tokenizer.decode(ids[:end])
            texts.append(decoded[len(previous):] if decoded.startswith(previous) else decoded)
            previous = decoded
        return texts

    # -- scoring --------------------------------------------------------------------------------

    def score(self, prompts: Sequence[str]) -> list[PromptLogprobs]:
        """Score ``prompts`` (raises PromptError for the first unusable one)."""
        encoded = self.encode_many(prompts)
        for item in encoded:
            if isinstance(item, PromptError):
                raise item
        usable: list[_Encoded] = encoded  # type: ignore[assignment]
        logprobs = self.score_encoded(usable)
        return [PromptLogprobs(e.prompt, e.texts, tuple(lp)) for e, lp in zip(usable, logprobs)]

    def score_encoded(
        self,
        encoded: Sequence[_Encoded],
        on_batch: Callable[[list[int], list[list[float]]], None] | None = None,
    ) -> list[list[float]]:
        """Logprobs of each encoded prompt's tokens (0.0 first, for the beginning-of-text token).

        ``on_batch(indices, logprobs)`` is called after each forward pass with what it scored.
        """
        with self._lock:
            if self.prefix_sharing:
                assert self._store is not None
                return self._score_shared(encoded, self._store, on_batch)
            results: list[list[float]] = [[] for _ in encoded]
            for indices in self._plain_passes(encoded):
                scored = self._score_plain([encoded[i] for i in indices])
                for i, logprobs in zip(indices, scored):
                    results[i] = logprobs
                if on_batch is not None:
                    on_batch(indices, scored)
            return results

    def _plain_passes(self, encoded: Sequence[_Encoded]) -> list[list[int]]:
        """Prompt indices of each plain forward pass: sorted by length, then chunked."""
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i].ids))
        passes: list[list[int]] = []
        current: list[int] = []
        for i in order:
            length = len(encoded[i].ids)
            if current and (len(current) >= self.batch_size
                            or (len(current) + 1) * length > self.max_batch_positions):
                passes.append(current)
                current = []
            current.append(i)
        if current:
            passes.append(current)
        return passes

    @torch.inference_mode()
    def _score_plain(self, encoded: Sequence[_Encoded]) -> list[list[float]]:
        """One forward pass of the whole model over ``encoded`` as right-padded rows."""
        length = max(len(e.ids) for e in encoded)
        input_ids = torch.full((len(encoded), length), self.bos_id, dtype=torch.long)
        attention = torch.zeros(len(encoded), length, dtype=torch.long)
        for b, item in enumerate(encoded):
            input_ids[b, : len(item.ids)] = torch.tensor(item.ids)
            attention[b, : len(item.ids)] = 1
        logits = self.model(input_ids=input_ids.to(self.device),
                            attention_mask=attention.to(self.device), use_cache=False).logits
        self.counts.update(prompts=len(encoded), tokens=sum(len(e.ids) for e in encoded),
                           positions=len(encoded) * length, passes=1)
        flat = logits.reshape(-1, logits.shape[-1])
        sources = [b * length + j for b, item in enumerate(encoded)
                   for j in range(len(item.ids) - 1)]
        targets = [t for item in encoded for t in item.ids[1:]]
        values = self._logprobs_from_logits(flat, sources, targets)
        return self._split(encoded, values)

    @staticmethod
    def _split(encoded: Sequence[_Encoded], values: list[float]) -> list[list[float]]:
        results, start = [], 0
        for item in encoded:
            count = len(item.ids) - 1
            results.append([0.0] + values[start: start + count])
            start += count
        return results

    @staticmethod
    def _logprobs_from_logits(logits: torch.Tensor, sources: list[int],
                              targets: list[int]) -> list[float]:
        nodes = torch.tensor(sources, device=logits.device)
        unique, inverse = torch.unique(nodes, return_inverse=True)
        normaliser = torch.logsumexp(logits[unique].float(), dim=-1)[inverse]
        chosen = logits[nodes, torch.tensor(targets, device=logits.device)].float()
        return (chosen - normaliser).tolist()

    @torch.inference_mode()
    def _score_shared(self, encoded: Sequence[_Encoded], store: _PrefixStore,
                      on_batch: Callable[[list[int], list[list[float]]], None] | None = None,
                      ) -> list[list[float]]:
        results: list[list[float]] = [[] for _ in encoded]
        sort = not store.index.capacity  # with no store, sequences sharing prefixes go together
        for rows, _ in plan_passes([e.ids for e in encoded], store.index,
                                   self.max_batch_positions, self.batch_size, self.max_row_nodes,
                                   sort=sort):
            scored = self._run_pass(rows, encoded, store)
            for index, logprobs in scored.items():
                results[index] = logprobs
            if on_batch is not None:
                indices = list(scored)
                on_batch(indices, [scored[i] for i in indices])
        return results

    def _run_pass(self, rows: list[PackedRow], encoded: Sequence[_Encoded],
                  store: _PrefixStore) -> dict[int, list[float]]:
        """One forward pass over the rows' new nodes; the logprobs of the rows' sequences."""
        rows = [row for row in rows if row.members]
        compute = [row for row in rows if len(row)]
        index = store.index
        hidden = kv = None
        length = past_length = 0
        # oneDNN, except for a pass computing the beginning-of-text position (see cpu_kernels).
        packed = self.onednn and not any(0 in row.depths for row in compute)
        if compute:
            length = max(len(row) for row in compute)
            past_length = max(len(row.past) for row in compute)
            input_ids = torch.zeros(len(compute), length, dtype=torch.long)
            positions = torch.zeros(len(compute), length, dtype=torch.long)
            for b, row in enumerate(compute):
                input_ids[b, : len(row)] = torch.tensor(row.tokens)
                positions[b, : len(row)] = torch.tensor(row.depths)
            allowed = torch.from_numpy(attention_allowed(compute, length, past_length, index))
            mask = torch.zeros(allowed.shape, dtype=self.dtype)
            mask.masked_fill_(~allowed, torch.finfo(self.dtype).min)
            past = None
            if past_length:
                slots = torch.zeros(len(compute), past_length, dtype=torch.long)
                for b, row in enumerate(compute):
                    if row.past:
                        slots[b, : len(row.past)] = torch.tensor(list(row.past))
                slots = slots.to(self.device)
                past = DynamicCache(ddp_cache_data=[
                    (keys[slots].transpose(1, 2), values[slots].transpose(1, 2))
                    for keys, values in zip(store.keys, store.values)], config=self.model.config)
            with cpu_kernels.packed_kernels(packed):
                out = self.base(input_ids=input_ids.to(self.device),
                                attention_mask=mask[:, None].to(self.device),
                                position_ids=positions.to(self.device), past_key_values=past,
                                use_cache=True)
            hidden, kv = out.last_hidden_state, out.past_key_values
            self.counts.update(positions=len(compute) * length, passes=1,
                               packed_passes=int(packed))
        # Outputs: of new nodes from this pass's hidden states (all of the vocabulary's logits:
        # the softmax's normaliser), of stored ones from the store (one logit each).
        batch_of = {id(row): b for b, row in enumerate(compute)}
        new_rows: dict[int, int] = {}
        new_at: list[int] = []  # (output index, hidden row, target)
        new_source: list[int] = []
        new_target: list[int] = []
        stored_at: list[int] = []
        stored_slot: list[int] = []
        stored_target: list[int] = []
        count = 0
        for row in rows:
            for sequence, refs in row.members:
                for (is_new, where), target in zip(refs, encoded[sequence].ids[1:]):
                    if is_new:
                        key = batch_of[id(row)] * length + where
                        new_at.append(count)
                        new_source.append(new_rows.setdefault(key, len(new_rows)))
                        new_target.append(target)
                    else:
                        stored_at.append(count)
                        stored_slot.append(where)
                        stored_target.append(target)
                    count += 1
        values = torch.empty(count, dtype=torch.float32)
        normaliser = None
        if new_rows:
            assert hidden is not None
            new_hidden = hidden.reshape(-1, hidden.shape[-1])[
                torch.tensor(list(new_rows), device=self.device)]
            scored, normaliser = self._head_logprobs(new_hidden, new_source, new_target, packed)
            values[new_at] = scored
        if stored_slot:
            values[stored_at] = self._stored_logprobs(store, stored_slot, stored_target)
            self.counts["reused"] += len(set(stored_slot))
        if compute and index.capacity:
            self._store_nodes(compute, kv, hidden, past_length, store, new_rows, normaliser)
        flat = values.tolist()
        results: dict[int, list[float]] = {}
        start = 0
        for row in rows:
            for sequence, refs in row.members:
                results[sequence] = [0.0] + flat[start: start + len(refs)]
                start += len(refs)
        self.counts.update(prompts=len(results),
                           tokens=sum(len(encoded[i].ids) for i in results))
        return results

    def _head_logprobs(self, hidden: torch.Tensor, sources: list[int], targets: list[int],
                       packed: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
        """Logprob of ``targets[k]`` after the hidden state ``hidden[sources[k]]``, and each
        row's log normaliser (float32). The normaliser is summed over blocks of the vocabulary
        (so the logits never fill memory); a target's logit is one dot product."""
        weight = self.head.weight
        bias = getattr(self.head, "bias", None)
        parts = []
        for k, start in enumerate(range(0, weight.shape[0], self.VOCABULARY_BLOCK)):
            rows = weight[start: start + self.VOCABULARY_BLOCK]
            block_bias = None if bias is None else bias[start: start + self.VOCABULARY_BLOCK]
            if packed and self._head_blocks:
                block = cpu_kernels.packed_linear(hidden, self._head_blocks[k], block_bias,
                                                  rows.shape[0])
            else:
                block = torch.nn.functional.linear(hidden, rows, block_bias)
            parts.append(torch.logsumexp(block.float(), dim=-1))
        normalisers = torch.logsumexp(torch.stack(parts, dim=-1), dim=-1)
        source = torch.tensor(sources, device=hidden.device)
        target = torch.tensor(targets, device=hidden.device)
        logits = (hidden[source].float() * weight[target].float()).sum(-1)
        if bias is not None:
            logits = logits + bias[target].float()
        return (logits - normalisers[source]).cpu(), normalisers

    def _stored_logprobs(self, store: _PrefixStore, slots: list[int],
                         targets: list[int]) -> torch.Tensor:
        """Logprob of ``targets[k]`` after the stored prefix ``slots[k]``: its logit (a dot
        product with the output layer's row for the token) less the stored normaliser."""
        slot = torch.tensor(slots, device=self.device)
        target = torch.tensor(targets, device=self.device)
        weight = self.head.weight[target]
        logits = (store.hidden[slot].float() * weight.float()).sum(-1)
        bias = getattr(self.head, "bias", None)
        if bias is not None:
            logits = logits + bias[target].float()
        return (logits - store.normaliser[slot]).cpu()

    def _store_nodes(self, rows: list[PackedRow], kv, hidden: torch.Tensor, past_length: int,
                     store: _PrefixStore, output_rows: Mapping[int, int],
                     normaliser: torch.Tensor | None) -> None:
        """Keep the keys, values, final hidden states and normalisers of the pass's new nodes
        (``output_rows``: flat position in ``hidden`` -> row of ``normaliser``)."""
        index = store.index
        length = hidden.shape[1]
        fill_slots: list[int] = []
        fill_rows: list[int] = []
        fill_positions: list[int] = []
        fill_outputs: list[int] = []
        for b, row in enumerate(rows):
            slot_of: list[int | None] = [None] * len(row)
            for i in range(len(row)):
                parent = row.parents[i]
                parent_slot = slot_of[parent] if parent != ROOT else row.anchors[i]
                if parent_slot is None:
                    continue  # the parent could not be stored
                slot, fresh = index.insert(parent_slot, row.tokens[i], row.depths[i])
                slot_of[i] = slot
                if fresh:
                    fill_slots.append(slot)  # type: ignore[arg-type]
                    fill_rows.append(b)
                    fill_positions.append(i)
                    fill_outputs.append(output_rows[b * length + i])
        if not fill_slots:
            return
        slots = torch.tensor(fill_slots, device=self.device)
        batch = torch.tensor(fill_rows, device=self.device)
        position = torch.tensor(fill_positions, device=self.device)
        for layer, keys, values in zip(kv.layers, store.keys, store.values):
            keys[slots] = layer.keys[batch, :, past_length + position, :]
            values[slots] = layer.values[batch, :, past_length + position, :]
        store.hidden[slots] = hidden[batch, position]
        assert normaliser is not None
        store.normaliser[slots] = normaliser[torch.tensor(fill_outputs, device=self.device)]


def _texts_from_offsets(prompt: str, offsets: Iterable[tuple[int, int]]) -> list[str]:
    """Exact prompt slices, one per token: each token runs from the previous token's end to its
    own end (so a space the tokenizer leaves out of a token's span goes with the token after it),
    the last to the end of the prompt. Concatenated they give the prompt back."""
    ends: list[int] = []
    furthest = 0
    for _, end in offsets:
        furthest = max(furthest, min(int(end), len(prompt)))
        ends.append(furthest)
    if ends:
        ends[-1] = len(prompt)
    texts: list[str] = []
    start = 0
    for end in ends:
        texts.append(prompt[start:end])
        start = end
    return texts
