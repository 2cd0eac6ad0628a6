"""oneDNN matrix products with pre-packed weights for a model's linear layers (CPU, float32).

On x86 CPUs PyTorch computes ``nn.Linear`` with MKL's sgemm. oneDNN, given weights reordered
once into the layout of its kernels, is faster at the shapes the engine uses (a few hundred
positions by a few hundred features; about a fifth of the computing time on the 2-core AMD EPYC
of BENCHMARKS.md), still in float32. Its summation order differs from MKL's, so results differ
by float rounding, which is harmless except where a layer's inputs are huge ("massive
activations"): the beginning-of-text position (the "attention sink", moved by about 1.5e-4
nats) and the inputs of the MLP's output projection (up to 75 against at most 10 elsewhere in
SmolLM2; with it on oneDNN one token of the 34 Hu et al. suites moved by 1.9e-4 nats). So the
engine computes passes that hold the beginning-of-text position with the default kernels (once:
it is then stored and reused), and leaves layers whose input is wider than the model's hidden
size (the MLP's output projection: ``down_proj``, ``fc2``, ``dense_4h_to_h``) on the default
kernels; everything else, about three quarters of the matrix products, runs on oneDNN.

:func:`install` swaps a model's ``nn.Linear`` layers for :class:`PackedLinear` layers that share
their parameters (same state dict) and compute exactly as before, except on a thread inside
:func:`packed_kernels`. Other users of the model see no change. The packed copies assume the
weights do not change afterwards (inference only) and take as much memory again as the weights.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator

import torch
import torch.nn.functional as F

_STATE = threading.local()


def available(device: torch.device, dtype: torch.dtype) -> bool:
    """Whether this torch build can run oneDNN's packed float32 linear kernels on ``device``."""
    return (device.type == "cpu" and dtype == torch.float32
            and torch.backends.mkldnn.is_available()
            and hasattr(torch.ops.mkldnn, "_reorder_linear_weight")
            and hasattr(torch.ops.mkldnn, "_linear_pointwise"))


def pack_weight(weight: torch.Tensor, batch_hint: int) -> torch.Tensor:
    """``weight`` (out x in) reordered for oneDNN; ``batch_hint``: the usual number of rows."""
    return torch.ops.mkldnn._reorder_linear_weight(weight.detach().contiguous(), batch_hint)


def packed_linear(x: torch.Tensor, packed: torch.Tensor, bias: torch.Tensor | None,
                  out_features: int) -> torch.Tensor:
    """``F.linear(x, weight, bias)`` with the packed weight, any leading dimensions."""
    flat = x.reshape(-1, x.shape[-1])
    out = torch.ops.mkldnn._linear_pointwise(flat, packed, bias, "none", [], "")
    return out.reshape(*x.shape[:-1], out_features)


@contextmanager
def packed_kernels(enabled: bool = True) -> Iterator[None]:
    """Within this block, :class:`PackedLinear` layers called from this thread use oneDNN."""
    saved = getattr(_STATE, "enabled", False)
    _STATE.enabled = enabled
    try:
        yield
    finally:
        _STATE.enabled = saved


def packed_kernels_enabled() -> bool:
    return getattr(_STATE, "enabled", False)


class PackedLinear(torch.nn.Linear):
    """An ``nn.Linear`` (the same parameters) that multiplies with a oneDNN-packed copy of its
    weight inside :func:`packed_kernels`, and exactly as ``nn.Linear`` elsewhere."""

    def __init__(self, linear: torch.nn.Linear, batch_hint: int) -> None:
        torch.nn.Module.__init__(self)
        self.in_features = linear.in_features
        self.out_features = linear.out_features
        self.weight = linear.weight
        self.bias = linear.bias
        self.packed = pack_weight(linear.weight, batch_hint)  # an attribute: not in state dicts

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if packed_kernels_enabled():
            return packed_linear(x, self.packed, self.bias, self.out_features)
        return F.linear(x, self.weight, self.bias)


def install(model: torch.nn.Module, batch_hint: int, skip: tuple[torch.nn.Module, ...] = (),
            max_in_features: int | None = None) -> int:
    """Swap the float32 ``nn.Linear`` layers of ``model`` for :class:`PackedLinear`, except those
    in ``skip``, those with more than ``max_in_features`` inputs and those already swapped;
    returns how many were swapped."""
    swapped = 0
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if (type(child) is torch.nn.Linear and child.weight.dtype == torch.float32
                    and not any(child is s for s in skip)
                    and (max_in_features is None or child.in_features <= max_in_features)):
                setattr(parent, name, PackedLinear(child, batch_hint))
                swapped += 1
    return swapped
