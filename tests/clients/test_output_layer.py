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
