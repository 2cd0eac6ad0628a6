"""The per-layer matrix products of a BERT-family masked LM written into memory kept for them.

Every product of a forward pass returns a new tensor, and a pass of 1,024 positions of
RoBERTa-base makes tensors of 3 MB (queries, keys, values, the attention's output projection,
the feed-forward block's output) and 12 MB (the feed-forward block's inner layer, and its
activation). glibc maps each block of a megabyte or more on its own and unmaps it when freed
(:func:`.freed_memory.map_large_blocks_apart`, which keeps a run's peak memory down), so the
kernel hands every such tensor fresh zeroed pages, a page fault each 4 KB (BENCHMARKS.md
counts them and their cost). Here the products of each
role (query, key, value, attention output, inner layer, output) are written with ``out=`` into
one buffer shared by all layers, each role at a place where what it overwrites has been read
(:class:`Workspace`), the activation is applied in place where it has an in-place form
(:func:`.inplace_mlp.inplace_activation`), and the residual sums are taken in place.
The buffer is dropped after each pass, so the pages of a pass's products are faulted in once
a pass instead of once a layer, and nothing of it stays resident between passes (it takes less
than the tensors it replaces at the pass's largest moment).
The operations and their order are those of transformers' modules (``F.linear`` on a contiguous
input is the same ``addmm``; ``a + b`` and ``a.add_(b)`` round alike), so the values are the
same bit for bit; only the attention's output and the layer norms still take new memory.

It applies to the layer structure BERT's code shares with RoBERTa, XLM-RoBERTa, ELECTRA,
CamemBERT and their copies (:func:`.last_layer.bert_self_attention` on every layer); other
architectures keep their modules as they are. It is active only while ``active()`` says so
(:class:`~.pll.TargetLogits`' passes), so the full logits it is checked against at load, and any
other use of the model, run transformers' own forward.
"""

from __future__ import annotations

from collections.abc import Callable
from types import MethodType
from typing import Any

import torch
import torch.nn.functional as F

from syntaxgym_helm.clients.local.inplace_mlp import inplace_activation
from syntaxgym_helm.clients.masked.last_layer import bert_self_attention, encoder_layers


class Workspace:
    """One flat buffer for a pass's layer products, each at an offset where nothing it
    overwrites is still to be read: within a layer of ``n`` positions, the query, key and value
    at 0, ``n`` and ``2n`` hidden-size rows (read by the attention, which writes its own
    output), then the attention's output projection at 0, the inner layer from 0 (both read
    before anything later is written there) and the layer's output projection after the inner
    layer (which it reads). It grows to the largest layer asked of it and is dropped after each
    pass (:meth:`release`), so that nothing of it is resident between passes."""

    def __init__(self) -> None:
        self._buffer: torch.Tensor | None = None

    def take(self, like: torch.Tensor, offset: int, shape: tuple[int, ...]) -> torch.Tensor:
        """A contiguous ``shape`` view starting ``offset`` elements in (``like``'s dtype and
        device)."""
        need = offset
        size = 1
        for extent in shape:
            size *= extent
        need += size
        buffer = self._buffer
        if (buffer is None or buffer.numel() < need or buffer.dtype != like.dtype
                or buffer.device != like.device):
            # A view taken before stays valid: it keeps the buffer it points into.
            buffer = self._buffer = torch.empty(need, dtype=like.dtype, device=like.device)
        return buffer[offset:offset + size].view(shape)

    def reserve(self, elements: int, like: torch.Tensor) -> None:
        """Make the buffer ``elements`` long at once (one allocation a pass, not one each time
        a larger role is asked for)."""
        self.take(like, 0, (elements,))

    def release(self) -> None:
        self._buffer = None

    @property
    def bytes(self) -> int:
        buffer = self._buffer
        return 0 if buffer is None else buffer.numel() * buffer.element_size()


#: Where each role's product goes, in rows of its own width from the start of the buffer
#: (:class:`Workspace`); the output projection's place is after the inner layer it reads.
SLOTS = {"query": 0, "key": 1, "value": 2, "attention_output": 0, "inner": 0}


def _linear_into(workspace: Workspace, role: str, layer: torch.nn.Linear,
                 x: torch.Tensor) -> torch.Tensor:
    """``layer(x)`` written into the workspace at ``role``'s place: ``addmm``, as
    ``F.linear`` computes it."""
    if not x.is_contiguous() or layer.bias is None:
        return F.linear(x, layer.weight, layer.bias)
    rows = x.numel() // x.shape[-1]
    if role == "output":  # after the inner layer (``x`` itself, rows x its width)
        offset = rows * x.shape[-1]
    else:
        offset = SLOTS[role] * rows * layer.out_features
    out = workspace.take(x, offset, (rows, layer.out_features))
    torch.addmm(layer.bias, x.view(rows, x.shape[-1]), layer.weight.t(), out=out)
    return out.view(*x.shape[:-1], layer.out_features)


def bert_layers(model) -> list[Any]:
    """``model``'s encoder layers when every one has BERT's structure, else []."""
    layers = encoder_layers(model)
    for layer in layers:
        outputs = [getattr(layer.attention, "output", None), getattr(layer, "output", None)]
        inner = getattr(layer, "intermediate", None)
        if (bert_self_attention(layer) is None
                or not all(type(getattr(o, "dense", None)) is torch.nn.Linear
                           and isinstance(getattr(o, "LayerNorm", None), torch.nn.LayerNorm)
                           and hasattr(o, "dropout") for o in outputs)
                or type(getattr(inner, "dense", None)) is not torch.nn.Linear
                or not hasattr(inner, "intermediate_act_fn")):
            return []
    return layers


class WorkspaceLayers:
    """Installed on a BERT-family model's layers (the ``forward`` of their query, key and value
    layers, attention output, inner layer and output): while ``active()``, their products go
    into one :class:`Workspace`; otherwise they compute as before. :meth:`remove` restores
    them."""

    def __init__(self, layers: list[Any], active: Callable[[], bool]) -> None:
        self.workspace = Workspace()
        self.patched: list[Any] = []
        space = self.workspace

        def projection(role: str):
            def forward(module, x):
                if not active():
                    return F.linear(x, module.weight, module.bias)
                return _linear_into(space, role, module, x)
            return forward

        def residual(role: str):
            def forward(module, hidden, input_tensor):
                if not active():
                    return module.LayerNorm(module.dropout(module.dense(hidden)) + input_tensor)
                out = _linear_into(space, role, module.dense, hidden)
                out = module.dropout(out)  # the identity in eval mode, as in transformers
                return module.LayerNorm(out.add_(input_tensor) if out.shape == input_tensor.shape
                                        else out + input_tensor)
            return forward

        def inner(module, hidden):
            if not active():
                return module.intermediate_act_fn(module.dense(hidden))
            out = _linear_into(space, "inner", module.dense, hidden)
            in_place = inplace_activation(module.intermediate_act_fn)
            if in_place is not None and not module.training:
                return in_place(out)
            return module.intermediate_act_fn(out)

        first = layers[0]
        hidden = first.attention.self.query.out_features
        inner_width = first.intermediate.dense.out_features
        #: Elements a position takes in the workspace (:data:`SLOTS`: the inner layer, or the
        #: query, key and value, then the output projection).
        self.per_position = max(3 * hidden, inner_width) + hidden
        for layer in layers:
            attention = layer.attention.self
            for role in ("query", "key", "value"):
                self._install(getattr(attention, role), projection(role))
            self._install(layer.attention.output, residual("attention_output"))
            self._install(layer.intermediate, inner)
            self._install(layer.output, residual("output"))

    def reserve(self, positions: int, like: torch.Tensor) -> None:
        """The workspace for a pass of ``positions`` (rows x length)."""
        self.workspace.reserve(positions * self.per_position, like)

    def _install(self, module: Any, forward) -> None:
        module.forward = MethodType(forward, module)
        self.patched.append(module)

    def remove(self) -> None:
        for module in self.patched:
            module.__dict__.pop("forward", None)
        self.patched = []
