"""The last encoder layer of a BERT-family masked LM computed at each row's target position only.

A masked copy is scored at one position, and the last layer is the only one whose other positions
feed nothing scored: its keys and values are needed at every position (the target attends to
them), but its query, attention output, residual, layer norms and feed-forward block only at the
target. Computing those at the target alone leaves about 2/12 of the layer's matrix products
(keys and values) at the other positions: 10/12 of one layer saved per position, a tenth of
the body of a 4-layer model, 7% of a 12-layer one (BERT-base), with the same values up to float
rounding.

It applies to the layer structure BERT's code shares with RoBERTa, XLM-RoBERTa, ELECTRA,
CamemBERT and their copies in transformers (``encoder.layer[-1]`` with ``attention.self.query /
key / value``, ``attention.output`` and ``feed_forward_chunk``); another architecture keeps its
layer as it is. :class:`~.pll.TargetLogits` installs it beside its output-head shortcut and checks
both together against the full logits when the model loads.
"""

from __future__ import annotations

from collections.abc import Callable
from types import MethodType
from typing import Any

import torch
import torch.nn.functional as F


def encoder_layers(model) -> list[Any]:
    """``model``'s encoder layers (``base_model.encoder.layer``), [] when it has none."""
    encoder = getattr(getattr(model, "base_model", None), "encoder", None)
    layers = getattr(encoder, "layer", None)
    return list(layers) if isinstance(layers, torch.nn.ModuleList) else []


def bert_self_attention(layer) -> Any | None:
    """``layer``'s self-attention when it is BERT's (``attention.self`` with plain linear
    ``query``, ``key`` and ``value`` layers) in an encoder, not a decoder; else None."""
    self_attention = getattr(getattr(layer, "attention", None), "self", None)
    parts = [getattr(self_attention, name, None) for name in ("query", "key", "value")]
    if (not all(type(part) is torch.nn.Linear for part in parts)
            or getattr(layer, "is_decoder", False)):
        return None
    return self_attention


def last_bert_layer(model) -> torch.nn.Module | None:
    """The last encoder layer of ``model`` when it has BERT's structure, else None."""
    layers = encoder_layers(model)
    if not layers:
        return None
    layer = layers[-1]
    self_attention = bert_self_attention(layer)
    if (self_attention is None
            or not hasattr(layer.attention, "output") or not hasattr(layer, "feed_forward_chunk")
            or not isinstance(getattr(self_attention, "scaling", None), float)
            or not hasattr(self_attention, "num_attention_heads")
            or not hasattr(self_attention, "attention_head_size")):
        return None
    return layer


class TargetRowsLayer:
    """Installed on ``layer`` (its ``forward``): while ``positions()`` gives one position per
    row, the layer returns each row's output at that position only (rows x 1 x hidden); when it
    gives None, the layer computes every position as before. :meth:`remove` restores it."""

    def __init__(self, layer: torch.nn.Module,
                 positions: Callable[[], torch.Tensor | None]) -> None:
        self.layer: Any = layer
        self._positions = positions
        full = layer.forward

        def forward(module, hidden_states, attention_mask=None, *args, **kwargs):
            targets = self._positions()
            if (targets is None or any(arg is not None for arg in args)
                    or kwargs.get("encoder_hidden_states") is not None
                    or (attention_mask is not None and attention_mask.dim() != 4)):
                return full(hidden_states, attention_mask, *args, **kwargs)
            return self._at_targets(hidden_states, attention_mask, targets)

        layer.forward = MethodType(forward, layer)

    def remove(self) -> None:
        self.layer.__dict__.pop("forward", None)

    def _at_targets(self, hidden: torch.Tensor, mask: torch.Tensor | None,
                    targets: torch.Tensor) -> torch.Tensor:
        attention = self.layer.attention
        self_attention = attention.self
        rows = torch.arange(hidden.shape[0], device=hidden.device)
        targets = targets.to(hidden.device)
        at_targets = hidden[rows, targets].unsqueeze(1)
        heads = (hidden.shape[0], -1, self_attention.num_attention_heads,
                 self_attention.attention_head_size)
        query = self_attention.query(at_targets).view(*heads).transpose(1, 2)
        key = self_attention.key(hidden).view(*heads).transpose(1, 2)
        value = self_attention.value(hidden).view(*heads).transpose(1, 2)
        if mask is not None and mask.shape[-2] > 1:  # rows x heads x queries x keys
            mask = mask.expand(hidden.shape[0], -1, -1, -1)[rows, :, targets].unsqueeze(2)
        if mask is not None and mask.dtype == torch.bool and bool(mask.all()):
            mask = None
        mixed = F.scaled_dot_product_attention(query, key, value, attn_mask=mask,
                                               scale=self_attention.scaling)
        mixed = mixed.transpose(1, 2).reshape(hidden.shape[0], 1, -1)
        return self.layer.feed_forward_chunk(attention.output(mixed, at_targets))
