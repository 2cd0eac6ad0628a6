"""syntaxgym_helm.clients.reaches: the register of reaches into torch's, transformers' and gguf's
internals, and the switch that turns them off.

Every probe passes on the installed versions; a probe that fails turns its reach off with one
warning naming it (the stock path is used); ``SYNTAXGYM_STOCK`` turns all of them off or the ones
it names, and refuses a name the register lacks; a stock engine and a stock masked head patch
nothing in the model.
"""

from __future__ import annotations

import pytest

from syntaxgym_helm.clients import reaches
from syntaxgym_helm.clients.reaches import REACHES, StockSettingError

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


@pytest.fixture(autouse=True)
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test starts with nothing probed or warned in this process, the switch unset."""
    monkeypatch.setattr(reaches, "_PROBED", {})
    monkeypatch.setattr(reaches, "_WARNED", set())
    monkeypatch.delenv(reaches.STOCK_VARIABLE, raising=False)


@pytest.mark.parametrize("name", sorted(REACHES))
def test_every_probe_passes_on_the_installed_versions(name: str) -> None:
    assert reaches.problems(name) == []
    assert reaches.active(name)
    assert not reaches.active(name, stock=True)


@pytest.mark.parametrize("name", sorted(REACHES))
def test_each_reach_says_what_why_its_gain_and_the_versions(name: str) -> None:
    reach = REACHES[name]
    assert reach.used_by and all(path.startswith("syntaxgym_helm/") for path in reach.used_by)
    assert reach.touches and reach.why and reach.checked_on
    assert reaches.MEASURED in reach.gain


def test_a_failed_probe_turns_the_reach_off_with_one_warning(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    broken = REACHES["masked_head_at_targets"]
    monkeypatch.setitem(REACHES, "masked_head_at_targets", type(broken)(
        **{**broken.__dict__, "probe": lambda: ["the head takes no pre-hook"]}))
    with caplog.at_level("WARNING"):
        assert not reaches.active("masked_head_at_targets")
        assert not reaches.active("masked_head_at_targets")
    out = caplog.text
    assert out.count("the head takes no pre-hook") == 1
    assert "stock path instead of masked_head_at_targets" in out
    assert f"checked on {', '.join(broken.checked_on)}" in out  # the releases it was checked on


def test_a_probe_that_raises_is_a_problem_found(monkeypatch: pytest.MonkeyPatch) -> None:
    broken = REACHES["gguf_streamed_copy"]

    def probe() -> list[str]:
        raise ImportError("cannot import name 'TENSOR_PROCESSORS'")

    monkeypatch.setitem(REACHES, "gguf_streamed_copy", type(broken)(
        **{**broken.__dict__, "probe": probe}))
    assert reaches.problems("gguf_streamed_copy") == [
        "its probe failed (ImportError: cannot import name 'TENSOR_PROCESSORS')"]


@pytest.mark.parametrize(("value", "off"), [
    ("1", set(REACHES)), ("all", set(REACHES)), ("0", set()), ("", set()),
    ("tokenizer_build_inputs, gguf_parse_once", {"tokenizer_build_inputs", "gguf_parse_once"}),
])
def test_the_environment_turns_all_or_the_named_reaches_off(
        monkeypatch: pytest.MonkeyPatch, value: str, off: set[str]) -> None:
    monkeypatch.setenv(reaches.STOCK_VARIABLE, value)
    assert reaches.stocked_by_environment() == off
    assert {name for name in REACHES if not reaches.active(name)} == off


def test_an_unknown_name_in_the_environment_is_refused_naming_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(reaches.STOCK_VARIABLE, "gguf_parse_once,workspace")
    with pytest.raises(StockSettingError, match=r"workspace is not a reach.*gguf_parse_once"):
        reaches.active("gguf_parse_once")


def _patched_modules(model) -> list[str]:
    """Modules whose forward is replaced on the instance, or hooked."""
    return [name for name, module in model.named_modules()
            if "forward" in vars(module) or module._forward_pre_hooks]


def test_the_causal_engine_patches_nothing_in_the_model() -> None:
    from syntaxgym_helm.clients.local.logprob_engine import LogprobEngine

    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(transformers.LlamaConfig(
        vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=2, bos_token_id=1)).eval()
    engine = LogprobEngine(model, _word_tokenizer())
    assert engine.prefix_sharing and _patched_modules(model) == []


def test_the_environment_turns_the_loaders_reaches_off(monkeypatch: pytest.MonkeyPatch) -> None:
    from syntaxgym_helm.clients.local.gguf_parsing import gguf_parsed_once

    with gguf_parsed_once() as replaced:
        assert replaced
    monkeypatch.setenv(reaches.STOCK_VARIABLE, "1")
    with gguf_parsed_once() as replaced:
        assert not replaced


def test_a_stock_masked_head_patches_nothing() -> None:
    from syntaxgym_helm.clients.masked.pll import TargetLogits

    torch.manual_seed(0)
    model = transformers.BertForMaskedLM(transformers.BertConfig(
        vocab_size=2048, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64)).eval()
    stock = TargetLogits(model, stock=True)
    assert not stock.active and _patched_modules(model) == []
    fast = TargetLogits(model)
    assert fast.active
    assert _patched_modules(model)
    fast.off()
    assert _patched_modules(model) == []


def _word_tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = ["<unk>", "<s>", "the", "keys", "to", "cabinet", "are", "is", "on", "table", ".",
             "author", "that", "guards", "like", "laughs", "laugh", "No"]
    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)},
                                           unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="<unk>",
                                   bos_token="<s>")
