"""oneDNN packed linear layers (syntaxgym_helm.clients.local.cpu_kernels): exact outside the context, equal
up to float rounding inside it, thread-local, and invisible in the model's state dict."""

from __future__ import annotations

import threading

import pytest
import torch

from syntaxgym_helm.clients.local import cpu_kernels

pytestmark = pytest.mark.skipif(
    not cpu_kernels.available(torch.device("cpu"), torch.float32),
    reason="this torch build has no oneDNN packed linear kernels")


class TwoLayers(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.inner = torch.nn.Sequential(torch.nn.Linear(64, 96), torch.nn.SiLU(),
                                         torch.nn.Linear(96, 32, bias=False))
        self.head = torch.nn.Linear(32, 50)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.inner(x))


def test_packed_layers_compute_as_before_outside_the_context_and_close_inside():
    model = TwoLayers()
    x = torch.randn(3, 7, 64)
    with torch.inference_mode():
        before = model(x)
        keys = list(model.state_dict())
        # The 96-wide projection back to 32 features is left out, as is the head.
        assert cpu_kernels.install(model, batch_hint=21, skip=(model.head,),
                                   max_in_features=64) == 1
        assert cpu_kernels.install(model, batch_hint=21, skip=(model.head,)) == 1  # the rest
        assert cpu_kernels.install(model, batch_hint=21) == 1  # the head; then nothing is left
        assert cpu_kernels.install(model, batch_hint=21) == 0
        assert all(isinstance(m, cpu_kernels.PackedLinear)
                   for m in (model.inner[0], model.inner[2], model.head))
        assert list(model.state_dict()) == keys  # same parameters, same names
        assert torch.equal(model(x), before)  # default kernels: bit for bit
        with cpu_kernels.packed_kernels():
            packed = model(x)
        assert packed.shape == before.shape
        assert torch.allclose(packed, before, rtol=1e-5, atol=1e-5)
        for rows in (1, 5, 40):  # other row counts than the hint
            y = torch.randn(rows, 64)
            with cpu_kernels.packed_kernels():
                got = model.inner(y)
            assert torch.allclose(got, model.inner(y), rtol=1e-5, atol=1e-5)


def test_the_context_is_per_thread_and_nests():
    seen: list[bool] = []
    with cpu_kernels.packed_kernels():
        assert cpu_kernels.packed_kernels_enabled()
        thread = threading.Thread(target=lambda: seen.append(cpu_kernels.packed_kernels_enabled()))
        thread.start()
        thread.join()
        with cpu_kernels.packed_kernels(False):
            assert not cpu_kernels.packed_kernels_enabled()
        assert cpu_kernels.packed_kernels_enabled()
    assert seen == [False] and not cpu_kernels.packed_kernels_enabled()


def test_only_cpu_float32_qualifies():
    assert not cpu_kernels.available(torch.device("cpu"), torch.bfloat16)
    assert not cpu_kernels.available(torch.device("meta"), torch.float32)
