"""Masked LMs (pseudo-log-likelihood) and encoder-decoder LMs, scored through the path a Hub
checkpoint takes: a folder given to the Python API's ``model=``, its kind read from its config,
registered with HELM, requests made by HELM's adapter and executor.

The checkpoints are small real-architecture models the tests build and train for a few steps
(:mod:`tiny_checkpoints`); every score is checked against plain transformers computed here, one
masked copy (or one sentence) per forward pass, independently of the plugin's batching.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path

import pytest

from tiny_checkpoints import SENTENCES, build_checkpoint

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from syntaxgym_helm.api.evaluate import score_sentences  # noqa: E402
from syntaxgym_helm.clients.model_kind import CheckpointError, inspect_checkpoint  # noqa: E402

#: The test sentences, plus characters the tokenizers never saw ([UNK], byte pieces).
PROMPTS = (*SENTENCES[:4], SENTENCES[6], SENTENCES[7], SENTENCES[9], "Zyx Ω≈ç√ quux.")
TOLERANCE_NATS = 1e-4


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("checkpoints")
    return {kind: build_checkpoint(kind, root / kind) for kind in
            ("bert", "roberta", "modernbert", "t5")}


def _nats(bits: float) -> float:
    return -bits * math.log(2)


@functools.cache
def _loaded(folder: Path, kind: str):
    classes = {"masked": transformers.AutoModelForMaskedLM,
               "seq2seq": transformers.AutoModelForSeq2SeqLM}
    return (transformers.AutoTokenizer.from_pretrained(folder),
            classes[kind].from_pretrained(folder).eval())


def _reference_pll(folder: Path, sentence: str, variant: str) -> list[float]:
    """Plain transformers: one forward pass per masked copy."""
    tokenizer, model = _loaded(folder, "masked")
    encoded = tokenizer(sentence, return_special_tokens_mask=True)
    ids, words = encoded["input_ids"], encoded.word_ids()
    targets = [i for i, special in enumerate(encoded["special_tokens_mask"]) if not special]
    values = []
    for target in targets:
        copy = list(ids)
        masked = [target] + ([j for j in targets if j > target and words[j] == words[target]]
                             if variant == "within_word_l2r" else [])
        for position in masked:
            copy[position] = tokenizer.mask_token_id
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([copy])).logits[0, target]
        values.append(torch.log_softmax(logits, -1)[ids[target]].item())
    return values


def _reference_seq2seq(folder: Path, sentence: str) -> list[float]:
    tokenizer, model = _loaded(folder, "seq2seq")
    start = tokenizer.convert_ids_to_tokens(model.config.decoder_start_token_id)
    ids = tokenizer(f"{start} {sentence}", add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([[tokenizer.eos_token_id]]),
                       decoder_input_ids=torch.tensor([ids])).logits[0]
    logprobs = torch.log_softmax(logits, -1)
    return [logprobs[i, ids[i + 1]].item() for i in range(len(ids) - 1)]


@pytest.mark.parametrize(("kind", "variant"), [
    ("bert", "original"),
    pytest.param("bert", "within_word_l2r", marks=pytest.mark.slow),
    pytest.param("roberta", "original", marks=pytest.mark.slow),
    ("roberta", "within_word_l2r"),
    pytest.param("modernbert", "original", marks=pytest.mark.slow),
    pytest.param("modernbert", "within_word_l2r", marks=pytest.mark.slow),
])
def test_masked_lm_scores_equal_plain_transformers(checkpoints, kind, variant):
    model = str(checkpoints[kind]) + ("" if variant == "original" else f"~{variant}")
    scores = score_sentences(list(PROMPTS), model)
    for sentence, score in zip(PROMPTS, scores, strict=True):
        assert "".join(score.tokens[1:]) == sentence, "token texts are the prompt's pieces"
        assert math.isnan(score.surprisals[0]) and score.tokens[0] in ("[CLS]", "<s>")
        expected = _reference_pll(checkpoints[kind], sentence, variant)
        got = [_nats(bits) for bits in score.surprisals[1:]]
        assert len(got) == len(expected)
        assert max(abs(a - b) for a, b in zip(got, expected, strict=True)) < TOLERANCE_NATS


def test_within_word_l2r_changes_only_the_earlier_pieces_of_words(checkpoints):
    folder = checkpoints["bert"]
    original = _reference_pll(folder, SENTENCES[6], "original")
    l2r = score_sentences([SENTENCES[6]], f"{folder}~within_word_l2r")[0]
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    words = tokenizer(SENTENCES[6], add_special_tokens=False).word_ids()
    # Float rounding (the engine's output layer is computed in blocks of the vocabulary, other
    # kernels than the reference's) moves a token by a few 1e-7 nats; masking a word's later
    # pieces moves its earlier ones by 2e-5 nats or more in this model.
    changed = [abs(_nats(bits) - value) > 2e-6
               for bits, value in zip(l2r.surprisals[1:], original, strict=True)]
    last_of_word = [i == len(words) - 1 or words[i + 1] != words[i] for i in range(len(words))]
    assert any(changed)
    assert not any(c and last for c, last in zip(changed, last_of_word, strict=True))


def test_encoder_decoder_scores_equal_plain_transformers(checkpoints):
    scores = score_sentences(list(PROMPTS), str(checkpoints["t5"]))
    for sentence, score in zip(PROMPTS, scores, strict=True):
        assert "".join(score.tokens[1:]) == sentence and score.tokens[0] == "<pad>"
        expected = _reference_seq2seq(checkpoints["t5"], sentence)
        got = [_nats(bits) for bits in score.surprisals[1:]]
        assert len(got) == len(expected)
        assert max(abs(a - b) for a, b in zip(got, expected, strict=True)) < TOLERANCE_NATS


def _babylm_specials(tokenizer) -> tuple[int, list[int]]:
    """BabyLM's mask and ``enc_dec_mask`` decoder input (``dataset.py``; its
    ``additional_special_tokens`` are transformers 5's ``extra_special_tokens``)."""
    extra = tokenizer.convert_tokens_to_ids(tokenizer.extra_special_tokens)
    mask = tokenizer.mask_token_id if tokenizer.mask_token_id is not None else extra[0]
    decoder = [tokenizer.bos_token_id, mask] if tokenizer.bos_token_id is not None else [extra[0]]
    return mask, decoder


def _reference_babylm(folder: Path, sentence: str, convention: str) -> list[float]:
    """BabyLM's evaluation pipeline (2025), ``sentence_zero_shot`` with no prefix, one masked
    copy (``enc_dec_mask``) or one sentence (``enc_dec_prefix``) per forward pass."""
    tokenizer, model = _loaded(folder, "seq2seq")
    mask, decoder = _babylm_specials(tokenizer)
    if convention == "enc_dec_mask":
        encoded = tokenizer(sentence, return_offsets_mapping=True)
        ids = encoded["input_ids"]
        values = []
        for index, (_, end) in enumerate(encoded["offset_mapping"]):
            if end > 0:  # the token overlaps the completion (the whole sentence)
                copy = list(ids)
                copy[index] = mask
                with torch.no_grad():
                    logits = model(input_ids=torch.tensor([copy]),
                                   decoder_input_ids=torch.tensor([decoder])).logits[0, -1]
                values.append(torch.log_softmax(logits, -1)[ids[index]].item())
        return values
    start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else decoder[0]
    targets = tokenizer(sentence, add_special_tokens=False)["input_ids"]
    source = [i for i in (tokenizer.cls_token_id, mask, tokenizer.eos_token_id) if i is not None]
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([source]),
                       decoder_input_ids=torch.tensor([[start, mask, *targets[:-1]]])).logits[0]
    logprobs = torch.log_softmax(logits, -1)
    return [logprobs[i + 1, token].item() for i, token in enumerate(targets)]


@pytest.mark.parametrize("convention", ["enc_dec_mask", "enc_dec_prefix"])
def test_babylm_conventions_equal_plain_transformers(checkpoints, convention):
    scores = score_sentences(list(PROMPTS), f"{checkpoints['t5']}~{convention}")
    original = score_sentences(list(PROMPTS[:1]), str(checkpoints["t5"]))[0]
    for sentence, score in zip(PROMPTS, scores, strict=True):
        assert "".join(score.tokens[1:]) == sentence and score.tokens[0] == "<extra_id_0>"
        expected = _reference_babylm(checkpoints["t5"], sentence, convention)
        got = [_nats(bits) for bits in score.surprisals[1:]]
        assert len(got) == len(expected)
        assert max(abs(a - b) for a, b in zip(got, expected, strict=True)) < TOLERANCE_NATS
    assert abs(sum(scores[0].surprisals[1:]) - sum(original.surprisals[1:])) > 0.01  # not minicons


def test_babylm_conventions_need_a_mask_or_a_sentinel(checkpoints, tmp_path):
    import json
    import shutil

    folder = tmp_path / "t5-no-sentinel"
    shutil.copytree(checkpoints["t5"], folder)
    config = json.loads((folder / "tokenizer_config.json").read_text())
    config.pop("extra_special_tokens", None)
    config.pop("additional_special_tokens", None)
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match=r"no mask token and no extra special token"):
        score_sentences(["The key."], f"{folder}~enc_dec_mask")
    assert score_sentences(["The key."], str(folder))  # minicons' convention needs neither
    with pytest.raises(ValueError, match=r"~enc_dec_mask applies to encoder-decoder LMs"):
        score_sentences(["The key."], f"{checkpoints['bert']}~enc_dec_mask")


def test_passes_stay_under_the_token_bound_and_give_the_same_scores(checkpoints):
    from collections import Counter

    from syntaxgym_helm.clients.masked.pll import encode_sentences, pass_plan, score_sentences

    folder = checkpoints["roberta"]
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    model = transformers.AutoModelForMaskedLM.from_pretrained(folder).eval()
    encoded = encode_sentences(tokenizer, PROMPTS, "original", 512)
    for bound in (40, 200):
        for copies in pass_plan(encoded, bound):
            lengths = {len(encoded[i].ids) for i, _ in copies}
            assert len(lengths) == 1, "a pass holds copies of one length (no padding)"
            assert len(copies) == 1 or len(copies) * lengths.pop() <= bound
    counts: Counter[str] = Counter()
    small = score_sentences(model, encoded, mask_id=tokenizer.mask_token_id, device="cpu",
                            max_batch_tokens=40, counts=counts)
    large = score_sentences(model, encoded, mask_id=tokenizer.mask_token_id, device="cpu",
                            max_batch_tokens=10**6)
    assert counts["passes"] > 1
    for a, b in zip(small, large, strict=True):
        assert max(abs(x - y) for x, y in zip(a.logprobs, b.logprobs, strict=True)) < TOLERANCE_NATS


def test_the_kind_is_read_from_the_config(checkpoints, tmp_path):
    kinds = {name: inspect_checkpoint(folder).kind for name, folder in checkpoints.items()}
    assert kinds == {"bert": "masked", "roberta": "masked", "modernbert": "masked",
                     "t5": "seq2seq"}
    gpt2 = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        n_embd=16, n_layer=1, n_head=2, vocab_size=50, n_positions=32))
    gpt2.save_pretrained(tmp_path / "gpt2")
    assert inspect_checkpoint(tmp_path / "gpt2").kind == "causal"


# -- bad input: a clear error naming the path and what to do ----------------------------------

def test_a_folder_without_config_or_weights_is_refused(checkpoints, tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(CheckpointError, match=r"empty: no config.json.*save_pretrained"):
        inspect_checkpoint(tmp_path / "empty")
    (tmp_path / "no_weights").mkdir()
    (tmp_path / "no_weights" / "config.json").write_text(
        (checkpoints["bert"] / "config.json").read_text())
    with pytest.raises(CheckpointError, match=r"no_weights: config.json but no weights"):
        inspect_checkpoint(tmp_path / "no_weights")


def test_a_gguf_file_that_is_not_a_model_is_refused(tmp_path):
    (tmp_path / "notes.gguf").write_text("not a model")
    with pytest.raises(CheckpointError, match=r"notes.gguf: not a GGUF model file"):
        inspect_checkpoint(tmp_path / "notes.gguf")


def test_an_architecture_the_plugin_cannot_score_is_refused(checkpoints, tmp_path):
    folder = tmp_path / "classifier"
    folder.mkdir()
    (folder / "config.json").write_text('{"architectures": ["BertForSequenceClassification"], '
                                        '"model_type": "vit"}')
    (folder / "model.safetensors").write_bytes(
        (checkpoints["bert"] / "model.safetensors").read_bytes())
    with pytest.raises(CheckpointError, match=r"classifier: cannot score this architecture"):
        inspect_checkpoint(folder)


def test_a_masked_lm_without_a_mask_token_is_refused_and_the_run_goes_on(checkpoints, tmp_path):
    import shutil

    from helm.common.cache import BlackHoleCacheConfig
    from helm.common.request import Request

    from syntaxgym_helm.clients.masked.client import MaskedLMClient

    folder = tmp_path / "no_mask"
    shutil.copytree(checkpoints["bert"], folder)
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    tokenizer.mask_token = None
    tokenizer.save_pretrained(folder)
    with pytest.raises(ValueError, match=r"no_mask: the tokenizer has no mask token"):
        score_sentences(["The key is here."], str(folder))
    client = MaskedLMClient(BlackHoleCacheConfig(), str(folder))
    result = client.make_request(Request(model="local/no_mask", model_deployment="local/no_mask",
                                         prompt="The key is here.", echo_prompt=True,
                                         max_tokens=0))
    assert not result.success and "no mask token" in (result.error or "")
    assert result.error_flags is not None and not result.error_flags.is_fatal
    assert score_sentences(["The key is here."], str(checkpoints["bert"]))  # others unharmed


def test_within_word_l2r_needs_a_tokenizer_that_knows_words(checkpoints, tmp_path):
    import shutil

    from tokenizers import Tokenizer

    folder = tmp_path / "no_words"
    shutil.copytree(checkpoints["bert"], folder)
    raw = Tokenizer.from_file(str(folder / "tokenizer.json"))
    raw.pre_tokenizer = None
    raw.save(str(folder / "tokenizer.json"))
    with pytest.raises(ValueError, match=r"no_words: pll=within_word_l2r needs to know which word"):
        score_sentences(["The key is here."], f"{folder}~within_word_l2r")
    assert score_sentences(["The key is here."], str(folder))  # original needs no words


def test_a_variant_on_a_model_that_is_not_masked_is_refused(checkpoints):
    with pytest.raises(ValueError, match=r"~within_word_l2r applies to masked LMs"):
        score_sentences(["The key."], f"{checkpoints['t5']}~within_word_l2r")


def test_model_add_writes_entries_helm_reads(checkpoints, tmp_path, capsys):
    from helm.benchmark.config_registry import register_configs_from_directory
    from helm.benchmark.model_deployment_registry import get_model_deployment
    from helm.benchmark.model_metadata_registry import get_model_metadata

    from syntaxgym_helm.cli.main import main

    prod_env = tmp_path / "prod_env"
    assert main(["model", "add", str(checkpoints["bert"]), "--name", "lab/bert-tiny",
                 "--local-path", str(prod_env)]) == 0
    assert main(["model", "add", str(checkpoints["t5"]), "--seq2seq", "all",
                 "--local-path", str(prod_env)]) == 0
    out = capsys.readouterr().out
    assert "model=lab/bert-tiny~within_word_l2r" in out and "model=local/t5~enc_dec_mask" in out
    register_configs_from_directory(str(prod_env))
    assert get_model_deployment("lab/bert-tiny~within_word_l2r").client_spec.args["pll"] == \
        "within_word_l2r"
    assert get_model_metadata("lab/bert-tiny").display_name == "lab/bert-tiny (PLL original)"
    assert get_model_metadata("local/t5").display_name == "t5 (encoder-decoder)"
    assert get_model_metadata("local/t5~enc_dec_prefix").display_name == \
        "t5 (encoder-decoder, enc_dec_prefix)"
    assert get_model_deployment("local/t5~enc_dec_mask").client_spec.args["convention"] == \
        "enc_dec_mask"
    assert main(["model", "add", str(tmp_path / "missing"), "--local-path", str(prod_env)]) == 2


def test_the_head_at_the_targets_only_computes_less_and_scores_the_same(checkpoints):
    from torch.utils.flop_counter import FlopCounterMode

    from syntaxgym_helm.clients.masked.pll import TargetLogits, encode_sentences, score_sentences

    folder = checkpoints["bert"]
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    model = transformers.AutoModelForMaskedLM.from_pretrained(folder).eval()
    encoded = encode_sentences(tokenizer, PROMPTS, "within_word_l2r", 512)
    shortcut = TargetLogits(model)
    assert shortcut.check(encoded[0], tokenizer.mask_token_id, "cpu")
    runs = []
    for target_logits in (shortcut, None):
        if target_logits is None:
            shortcut.off()  # the full model: every position of every layer and of the head
            target_logits = shortcut
        with FlopCounterMode(display=False) as counter:
            scores = score_sentences(model, encoded, mask_id=tokenizer.mask_token_id,
                                     device="cpu", target_logits=target_logits)
        runs.append((counter.get_total_flops(), scores))
    (fewer, short), (full_flops, full) = runs
    assert not shortcut.active
    assert fewer < full_flops
    for a, b in zip(short, full, strict=True):
        assert max(abs(x - y) for x, y in zip(a.logprobs, b.logprobs, strict=True)) < 1e-5


def test_the_log_softmax_in_pieces_is_the_whole_bit_for_bit():
    from syntaxgym_helm.clients.masked.pll import chosen_logprobs

    logits = torch.randn(70, 400)
    wanted = torch.randint(0, 400, (70,))
    assert torch.equal(chosen_logprobs(logits, wanted),
                       torch.log_softmax(logits, -1)[torch.arange(70), wanted])
