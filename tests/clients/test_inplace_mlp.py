"""Gated MLP blocks with their activation and product in place (:mod:`.inplace_mlp`): the same
floats as transformers' own forward, on small real-architecture models built from their
configs (Llama: SiLU, SmolLM2's architecture; Gemma-3: the tanh GELU)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from syntaxgym_helm.clients.local import inplace_mlp  # noqa: E402

SIZES = dict(vocab_size=300, hidden_size=64, intermediate_size=160, num_hidden_layers=3,
             num_attention_heads=4, num_key_value_heads=2, head_dim=16)


def _models():
    torch.manual_seed(0)
    llama = transformers.LlamaForCausalLM(transformers.LlamaConfig(**SIZES)).eval()
    gemma = transformers.Gemma3ForCausalLM(transformers.Gemma3TextConfig(
        **SIZES, sliding_window=8,
        layer_types=["sliding_attention", "sliding_attention", "full_attention"])).eval()
    return {"llama": llama, "gemma3": gemma}


@pytest.mark.parametrize("kind", ["llama", "gemma3"])
def test_every_gated_block_is_patched_and_computes_the_same_floats(kind):
    model = _models()[kind]
    ids = torch.randint(0, SIZES["vocab_size"], (3, 11), generator=torch.Generator().manual_seed(1))
    with torch.inference_mode():
        before = model(input_ids=ids).logits
    assert inplace_mlp.install(model) == SIZES["num_hidden_layers"]
    assert all("forward" in vars(layer.mlp) for layer in model.model.layers)
    with torch.inference_mode():
        assert torch.equal(model(input_ids=ids).logits, before)
    assert inplace_mlp.install(model) == 0, "installed once"


def test_a_block_whose_activation_has_no_in_place_form_keeps_its_forward():
    model = _models()["llama"]
    for layer in model.model.layers:
        layer.mlp.act_fn = torch.nn.Tanh()
    assert inplace_mlp.install(model) == 0
    assert not any("forward" in vars(layer.mlp) for layer in model.model.layers)


def test_a_block_that_computes_otherwise_is_left_as_it_is():
    model = _models()["llama"]
    mlp = type(model.model.layers[0].mlp)

    class Scaled(mlp):  # a gated block whose forward is not down(act(gate(x)) * up(x))
        def forward(self, x):
            return 2 * super().forward(x)

    for layer in model.model.layers:
        layer.mlp.__class__ = Scaled
    assert inplace_mlp.install(model) == 0


def test_a_block_that_takes_other_inputs_is_left_as_it_is():
    model = _models()["llama"]
    mlp = type(model.model.layers[0].mlp)

    class Routed(mlp):  # a block whose forward needs more than the hidden states
        def forward(self, x, routing):
            return super().forward(x) * routing

    for layer in model.model.layers:
        layer.mlp.__class__ = Routed
    assert inplace_mlp.install(model) == 0
    assert not any("forward" in vars(layer.mlp) for layer in model.model.layers)
