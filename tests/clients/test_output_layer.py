"""The output layer's log normaliser: the same float32 values as ``torch.logsumexp``, computed in
place (the engine's vocabulary blocks are overwritten instead of copied)."""

from __future__ import annotations

import torch

from syntaxgym_helm.clients.local.output_layer import OutputLayer, _log_normaliser


def test_log_normaliser_equals_torch_logsumexp_bit_for_bit() -> None:
    generator = torch.Generator().manual_seed(0)
    logits = torch.randn(64, 4096, generator=generator) * 12 + 30  # large logits: exp overflows
    logits[3, :] = float("-inf")  # a row with no finite logit: -inf, as torch gives
    logits[5, 7] = float("inf")
    expected = torch.logsumexp(logits, dim=-1)
    computed = _log_normaliser(logits.clone())
    assert torch.equal(computed.isnan(), expected.isnan())
    assert torch.equal(computed.nan_to_num(), expected.nan_to_num())
    assert computed[3] == float("-inf") and computed[5] == float("inf")


def test_output_layer_logprobs_match_a_whole_vocabulary_log_softmax() -> None:
    generator = torch.Generator().manual_seed(1)
    head = torch.nn.Linear(32, 10_000, bias=True)
    with torch.no_grad():
        head.weight.copy_(torch.randn(10_000, 32, generator=generator))
    hidden = torch.randn(6, 32, generator=generator)
    before = hidden.clone()
    sources, targets = [0, 2, 5, 5], [17, 9_999, 0, 4_096]
    logprobs, normalisers, _ = OutputLayer(head).logprobs(hidden, sources, targets)
    whole = torch.log_softmax(head(hidden).detach(), dim=-1)
    assert torch.allclose(logprobs, whole[sources, targets], atol=1e-4)
    assert torch.allclose(normalisers, torch.logsumexp(head(hidden).detach(), dim=-1), atol=1e-4)
    assert torch.equal(hidden, before)  # only the logits blocks are overwritten


def test_packing_with_release_hands_the_table_back_and_computes_the_same(tmp_path) -> None:
    """A table mapped from a file (as transformers maps safetensors) packed block by block with
    ``release_originals``: its pages go back as the blocks are packed (the table is never in
    memory twice), and the logprobs equal those packed without release, bit for bit."""
    import numpy as np
    import pytest

    from syntaxgym_helm.clients.local import cpu_kernels

    if not cpu_kernels.available(torch.device("cpu"), torch.float32):
        pytest.skip("needs oneDNN's packed float32 kernels")
    rows, width = 3 * OutputLayer.VOCABULARY_BLOCK + 100, 64
    values = np.random.default_rng(2).standard_normal(rows * width).astype(np.float32)
    path = tmp_path / "table.bin"
    values.tofile(path)
    mapped = torch.from_numpy(np.memmap(path, dtype=np.float32, mode="c")).view(rows, width)
    head = torch.nn.Linear(width, rows, bias=False)
    head.weight = torch.nn.Parameter(mapped, requires_grad=False)
    hidden = torch.randn(5, width, generator=torch.Generator().manual_seed(3))
    kept, released = OutputLayer(head), OutputLayer(head)
    kept.pack_for_onednn(8)
    assert float(mapped.sum()) == float(torch.from_numpy(values).sum())  # every page resident
    resident = _resident_bytes(path)
    released.pack_for_onednn(8, release_originals=True)
    assert resident - _resident_bytes(path) > 0.9 * rows * width * 4
    sources, targets = [0, 1, 4, 4], [0, rows - 1, 4096, 77]
    for a, b in zip(kept.logprobs(hidden, sources, targets, packed=True)[:2],
                    released.logprobs(hidden, sources, targets, packed=True)[:2], strict=False):
        assert torch.equal(a, b)
    assert torch.equal(mapped, torch.from_numpy(values).view(rows, width))  # read back


def _resident_bytes(path) -> int:
    """Resident bytes of this process's mappings of ``path`` (Linux's /proc/self/smaps)."""
    import pytest

    try:
        lines = open("/proc/self/smaps").read().splitlines()
    except OSError:
        pytest.skip("needs Linux's /proc/self/smaps")
    total, inside = 0, False
    for line in lines:
        if "-" in line.split(" ", 1)[0] and ":" not in line.split(" ", 1)[0]:
            inside = line.rstrip().endswith(str(path))
        elif inside and line.startswith("Rss:"):
            total += int(line.split()[1]) * 1024
    return total
