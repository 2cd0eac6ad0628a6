"""The cross-pass store of computed prefixes (:class:`PrefixStore`): what a later forward pass
needs of a prefix an earlier pass computed, so that it is never computed again.

Past keys and values go to the model as a transformers ``Cache`` (:class:`DynamicCache`, filled
with its public ``update``), under the keyword the model's ``forward`` declares
(:func:`cache_keyword`: ``cache`` since transformers 5.24, ``past_key_values`` before; the old
name is deprecated and goes in 5.40). A model given past keys and values under a name it ignores
would compute without them and disagree with plain passes: the engine's probe would then turn
prefix sharing off, so the name is read from the signature, never assumed.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

import torch
from transformers import DynamicCache

from syntaxgym_helm.clients.local.prefix_trie import ROOT, PackedRow, PrefixIndex, insert_rows


class PrefixStore:
    """Stored prefixes: the index (:class:`~syntaxgym_helm.clients.local.prefix_trie.PrefixIndex`:
    which prefix is in which slot), and per slot each layer's key and value, the final hidden
    state (what the output layer turns into logits) and the log of the softmax's normaliser over
    the vocabulary (so that a stored prefix scores a token with one dot product), and that over
    the word-beginning tokens when the engine applies the word-boundary correction.

    A pass's rows attend to the slots of their stored ancestors as past keys and values
    (:meth:`past_key_values`); after the pass, its new nodes are kept (:meth:`keep`).
    """

    def __init__(self, index: PrefixIndex, keys: list[torch.Tensor], values: list[torch.Tensor],
                 hidden: torch.Tensor) -> None:
        self.index = index
        self.keys = keys
        self.values = values
        self.hidden = hidden
        self.normaliser = torch.empty(index.capacity, dtype=torch.float32, device=hidden.device)
        self.boundary = torch.empty(index.capacity, dtype=torch.float32, device=hidden.device)

    @classmethod
    def sized(cls, layer_shapes: list[tuple[int, int]], hidden_size: int, budget_bytes: int,
              dtype: torch.dtype, device: torch.device) -> PrefixStore:
        """As many slots as ``budget_bytes`` holds; ``layer_shapes``: (kv heads, head dim)."""
        capacity = slots_in(budget_bytes, layer_shapes, hidden_size, dtype)

        def slots(heads: int, dim: int) -> torch.Tensor:
            return torch.empty(capacity, heads, dim, dtype=dtype, device=device)

        return cls(PrefixIndex(capacity), [slots(h, d) for h, d in layer_shapes],
                   [slots(h, d) for h, d in layer_shapes],
                   torch.empty(capacity, hidden_size, dtype=dtype, device=device))

    @property
    def device(self) -> torch.device:
        return self.hidden.device

    def past_key_values(self, slots: torch.Tensor | None) -> DynamicCache:
        """Every layer's stored keys and values at ``slots`` (rows x past positions) as the
        model's past keys and values, empty for None. Not built from the model's config (see
        below)."""
        # Every layer a full layer, also a sliding-window one (Gemma-3's 512): a pass packs many
        # sequences in a row, so its past and its new nodes can each exceed the window, and a
        # sliding layer would drop the oldest keys while the pass's mask covers them all ("size
        # of tensor a (624) must match ... b (896)"), or keep too few new ones (:meth:`keep`'s
        # "index 932 is out of bounds ... size 511"). An empty cache too: given none, the model
        # would make its own, with sliding layers. The masks say what each node sees, the
        # sliding layers' their window (:mod:`.sliding_window`).
        cache = DynamicCache()
        if slots is None:
            return cache
        slots = slots.to(self.device)
        for layer, (keys, values) in enumerate(zip(self.keys, self.values, strict=True)):
            cache.update(keys[slots].transpose(1, 2), values[slots].transpose(1, 2), layer)
        return cache

    def copy_root(self, other: PrefixStore, token: int) -> None:
        """Store ``other``'s one-token prefix ``token`` (the beginning-of-text position) here too,
        if ``other`` holds it and this store has room."""
        source = other.index.lookup(ROOT, token)
        if source is None:
            return
        slot, fresh = self.index.insert(ROOT, token, 0)
        if slot is None or not fresh:
            return
        for mine, theirs in zip(self.keys + self.values, other.keys + other.values, strict=True):
            mine[slot] = theirs[source]
        self.hidden[slot] = other.hidden[source]
        self.normaliser[slot] = other.normaliser[source]
        self.boundary[slot] = other.boundary[source]

    def keep(self, rows: list[PackedRow], kv: DynamicCache, hidden: torch.Tensor, past_length: int,
             output_rows: Mapping[int, int], normaliser: torch.Tensor | None,
             boundary: torch.Tensor | None = None) -> None:
        """Keep the keys, values (``kv``: the pass's past keys and values), final hidden states
        and normalisers (and word-beginning normalisers, ``boundary``, when given) of the pass's
        new nodes (``output_rows``: flat position in ``hidden`` -> row of ``normaliser``). A node
        whose parent could not be stored is not stored either."""
        length = hidden.shape[1]
        fresh = insert_rows(self.index, rows)
        if not fresh:
            return
        fill_slots, fill_rows, fill_positions = zip(*fresh, strict=True)
        fill_outputs = [output_rows[b * length + i] for _, b, i in fresh]
        device = self.device
        slots = torch.tensor(fill_slots, device=device)
        batch = torch.tensor(fill_rows, device=device)
        position = torch.tensor(fill_positions, device=device)
        for layer, keys, values in zip(kv.layers, self.keys, self.values, strict=True):
            layer_keys, layer_values = layer_tensors(layer)
            keys[slots] = layer_keys[batch, :, past_length + position, :]
            values[slots] = layer_values[batch, :, past_length + position, :]
        self.hidden[slots] = hidden[batch, position]
        assert normaliser is not None
        outputs = torch.tensor(fill_outputs, device=device)
        self.normaliser[slots] = normaliser[outputs]
        if boundary is not None:
            self.boundary[slots] = boundary[outputs]


def slots_in(budget_bytes: float, layer_shapes: list[tuple[int, int]], hidden_size: int,
             dtype: torch.dtype) -> int:
    """How many stored prefixes ``budget_bytes`` holds: per slot each layer's key and value
    (``layer_shapes``: kv heads, head dim), the final hidden state and the normaliser."""
    element = torch.empty((), dtype=dtype).element_size()
    per_slot = element * (hidden_size + sum(2 * heads * dim for heads, dim in layer_shapes))
    per_slot += 8  # the normaliser and the word-beginning normaliser, float32
    return max(0, int(budget_bytes) // per_slot)


def cache_keyword(model: torch.nn.Module) -> str:
    """The keyword under which ``model.forward`` takes past keys and values: ``cache`` (transformers
    5.24 and later) or ``past_key_values`` (earlier); ValueError when it takes neither."""
    parameters = inspect.signature(model.forward).parameters
    for name in ("cache", "past_key_values"):
        if name in parameters:
            return name
    raise ValueError(f"{type(model).__name__}.forward takes no past keys and values "
                     "(neither `cache` nor `past_key_values`)")


def layer_tensors(layer: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """The keys and values of one filled attention layer of a :class:`DynamicCache` (typed
    here: transformers types a cache's layers as a union that includes layers without them)."""
    return layer.keys, layer.values


def returned_cache(output: Any) -> DynamicCache:
    """The keys and values a forward pass returned (``output.cache``, or ``past_key_values`` in
    transformers before 5.24), without touching the deprecated name where the new one exists."""
    cache = getattr(output, "cache", None)
    if cache is None:
        cache = getattr(output, "past_key_values", None)
    if cache is None:
        raise ValueError("the forward pass returned no keys and values (use_cache=True)")
    return cache
