"""syntaxgym_helm.clients.reaches: the register of reaches into torch's, transformers', gguf's
and glibc's internals, and the switch that turns them off.

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
    broken = REACHES["bert_last_layer_at_targets"]
    monkeypatch.setitem(REACHES, "bert_last_layer_at_targets", type(broken)(
        **{**broken.__dict__, "probe": lambda: ["BertLayer has no feed_forward_chunk"]}))
    with caplog.at_level("WARNING"):
        assert not reaches.active("bert_last_layer_at_targets")
        assert not reaches.active("bert_last_layer_at_targets")
    out = caplog.text
    assert out.count("BertLayer has no feed_forward_chunk") == 1
    assert "stock path instead of bert_last_layer_at_targets" in out
    assert f"checked on {', '.join(broken.checked_on)}" in out  # the releases it was checked on


def test_a_probe_that_raises_is_a_problem_found(monkeypatch: pytest.MonkeyPatch) -> None:
    broken = REACHES["malloc_trim"]

    def probe() -> list[str]:
        raise OSError("no libc")

    monkeypatch.setitem(REACHES, "malloc_trim", type(broken)(
        **{**broken.__dict__, "probe": probe}))
    assert reaches.problems("malloc_trim") == ["its probe failed (OSError: no libc)"]


@pytest.mark.parametrize(("value", "off"), [
    ("1", set(REACHES)), ("all", set(REACHES)), ("0", set()), ("", set()),
    ("malloc_trim, gguf_parse_once", {"malloc_trim", "gguf_parse_once"}),
])
def test_the_environment_turns_all_or_the_named_reaches_off(
        monkeypatch: pytest.MonkeyPatch, value: str, off: set[str]) -> None:
    monkeypatch.setenv(reaches.STOCK_VARIABLE, value)
    assert reaches.stocked_by_environment() == off
    assert {name for name in REACHES if not reaches.active(name)} == off


def test_an_unknown_name_in_the_environment_is_refused_naming_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(reaches.STOCK_VARIABLE, "malloc_trim,workspace")
    with pytest.raises(StockSettingError, match=r"workspace is not a reach.*gguf_parse_once"):
        reaches.active("malloc_trim")


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
    from syntaxgym_helm.clients.local.freed_memory import return_freed_memory
    from syntaxgym_helm.clients.local.gguf_parsing import gguf_parsed_once

    assert return_freed_memory()
    monkeypatch.setenv(reaches.STOCK_VARIABLE, "1")
    assert not return_freed_memory()
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
    assert fast.active and fast.last_layer_active
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
