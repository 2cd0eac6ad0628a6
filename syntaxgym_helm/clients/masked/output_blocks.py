"""A masked LM's output layer (hidden x vocabulary) computed a block of the vocabulary at a time.

PyTorch computes a float32 ``nn.Linear`` on the CPU with MKL, whose memory manager keeps the
buffers of each matrix product for the next one and never hands them back. For the output layer
those buffers grow with rows x vocabulary: after one product of 150 rows by RoBERTa's 50,265
words, about 48 MB stay resident for the rest of the process, on top of the logits themselves.
Computed :data:`BLOCK` words at a time (into one logits tensor), the same product leaves under
5 MB. Each logit is the same dot product of the row with the word's weights (plus its bias), so
the values are those of the whole product up to float rounding. :class:`~.pll.TargetLogits`
installs it with its other shortcuts and checks them together against the full logits when the
model loads.
"""

from __future__ import annotations

from types import MethodType
from typing import Any

import torch
import torch.nn.functional as F

#: Words of the vocabulary computed in one matrix product.
BLOCK = 1024


class BlockwiseOutputLayer:
    """Installed on ``layer`` (an ``nn.Linear`` whose outputs are the vocabulary; its
    ``forward``): the logits computed :data:`BLOCK` outputs at a time. :meth:`remove` restores
    it."""

    def __init__(self, layer: torch.nn.Module) -> None:
        self.layer: Any = layer

        def forward(module, hidden: torch.Tensor) -> torch.Tensor:
            weight, bias = module.weight, module.bias
            out = hidden.new_empty((*hidden.shape[:-1], weight.shape[0]))
            for start in range(0, weight.shape[0], BLOCK):
                end = start + BLOCK
                out[..., start:end] = F.linear(hidden, weight[start:end],
                                               None if bias is None else bias[start:end])
            return out

        layer.forward = MethodType(forward, layer)

    def remove(self) -> None:
        self.layer.__dict__.pop("forward", None)


def vocabulary_layer(model) -> torch.nn.Linear | None:
    """``model``'s output embeddings when they are a plain ``nn.Linear`` wider than a block."""
    layer = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    if type(layer) is not torch.nn.Linear or layer.weight.shape[0] <= BLOCK:
        return None
    return layer
