"""A gated MLP block (``down(act(gate(x)) * up(x))``: Llama, SmolLM2, Gemma, Mistral, Qwen...)
with its activation and its product taken in place.

Transformers' forward makes four tensors of positions x the block's width a layer: the gate's
and the up projection's outputs, the activation's and the product's. In a pass of a few hundred
positions each is a few megabytes (SmolLM2 at 384 positions: 2.4 MB), so glibc maps each on its
own (:func:`.freed_memory.map_large_blocks_apart`) and the kernel hands it fresh pages, a page
fault each 4 KB. Taking the activation and the product in the gate's output leaves two, and two
passes over memory fewer. The values are the same bit for bit (the same element-wise kernels;
``a * b`` and ``a.mul_(b)`` round alike): :func:`install` compares both forwards on a probe
and patches only the blocks where they are equal.
"""

from __future__ import annotations

from collections.abc import Callable
from types import MethodType
from typing import Any

import torch
import torch.nn.functional as F


def inplace_activation(activation: Any) -> Callable[[torch.Tensor], torch.Tensor] | None:
    """The in-place form of ``activation`` (transformers' or torch's SiLU and GELUs), else
    None."""
    name = type(activation).__name__
    if name in ("SiLUActivation", "SiLU"):
        return lambda x: F.silu(x, inplace=True)
    act = getattr(activation, "act", None)
    if name == "GELUActivation" and act is F.gelu:
        return torch.ops.aten.gelu_
    if (name == "GELUTanh" and getattr(act, "func", None) is F.gelu
            and getattr(act, "keywords", None) == {"approximate": "tanh"}):
        return lambda x: torch.ops.aten.gelu_(x, approximate="tanh")
    return None


def _gated(module: Any) -> bool:
    return all(isinstance(getattr(module, name, None), torch.nn.Linear)
               for name in ("gate_proj", "up_proj", "down_proj")) and hasattr(module, "act_fn")


def install(model: torch.nn.Module) -> int:
    """Patch the ``forward`` of ``model``'s gated MLP blocks whose activation has an in-place
    form and whose patched forward gives the same floats as their own on a probe; returns how
    many were patched."""
    patched = 0
    generator = torch.Generator().manual_seed(0)
    modules: list[Any] = list(model.modules())
    for module in modules:
        if not _gated(module) or "forward" in vars(module):
            continue
        activation = inplace_activation(module.act_fn)
        if activation is None:
            continue

        def forward(self, x, _activation=activation):
            gate = self.gate_proj(x)
            up = self.up_proj(x)
            return self.down_proj(_activation(gate).mul_(up))

        weight = module.gate_proj.weight
        probe = torch.randn(2, 3, weight.shape[1], generator=generator).to(weight)
        same = False
        try:
            with torch.inference_mode():
                expected = module(probe)
                module.forward = MethodType(forward, module)
                same = torch.equal(module(probe), expected)
        except Exception:  # noqa: BLE001 - a block that takes other inputs: left as it is
            same = False
        if same:
            patched += 1
        else:
            module.__dict__.pop("forward", None)
    return patched
