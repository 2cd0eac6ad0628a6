"""No input makes a client hang: every model kind's length limit counts its real positions, and a
request whose scoring fails fails at once, with the reason.

Before: a RoBERTa-family masked LM took its limit from ``max_position_embeddings`` (roberta-base:
514), but its positions start after the padding index, so it holds 2 tokens fewer (512): a
sentence of its last two positions raised "index 80 is out of bounds" inside the model, and the
client let the error out, which HELM's executor retries with its backoff (10 + 20 + 40 + 80 s):
``score_sentences`` hung for 150 s, or raised a raw error. Any other failure of a masked or
encoder-decoder pass (a tokenizer larger than the model's vocabulary) did the same.

The checkpoints are real architectures built here from configs with 24 positions (random
weights: a limit is a property of the architecture, not of training), their tokenizers trained
by :mod:`tiny_checkpoints`.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "clients"))
from tiny_checkpoints import _tokenizer

POSITIONS = 24
#: kind -> (the tokenizer it takes, its client, how many tokens a sentence may have)
KINDS = {
    "bert": ("bert", "masked", POSITIONS),
    "electra": ("bert", "masked", POSITIONS),
    "roberta": ("roberta", "masked", POSITIONS - 2),  # positions start after padding_idx 1
    "xlm-roberta": ("roberta", "masked", POSITIONS - 2),
    "modernbert": ("bert", "masked", POSITIONS),  # rotary: the config's limit
    "bart": ("roberta", "seq2seq", POSITIONS),  # learned, offset by 2 inside the table
    "t5": ("t5", "seq2seq", None),  # relative positions: no limit
    "gpt2": ("roberta", "causal", POSITIONS),  # with the beginning-of-text token
    "llama": ("roberta", "causal", POSITIONS),
}


def _build(kind: str, folder: Path, vocabulary: int | None = None, **config: int) -> Path:
    import torch
    import transformers as tf

    tokenizer = _tokenizer(KINDS[kind][0])
    size = vocabulary or len(tokenizer)
    torch.manual_seed(0)
    small = {"hidden_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2,
             "intermediate_size": 32, "vocab_size": size, "pad_token_id": tokenizer.pad_token_id}
    limit = {"max_position_embeddings": POSITIONS}
    model = {
        "bert": lambda: tf.BertForMaskedLM(tf.BertConfig(**small, **limit)),
        "electra": lambda: tf.ElectraForMaskedLM(tf.ElectraConfig(embedding_size=16, **small,
                                                                  **limit)),
        "roberta": lambda: tf.RobertaForMaskedLM(tf.RobertaConfig(**small, **limit, **config)),
        "xlm-roberta": lambda: tf.XLMRobertaForMaskedLM(tf.XLMRobertaConfig(**small, **limit)),
        "modernbert": lambda: tf.ModernBertForMaskedLM(tf.ModernBertConfig(
            **small, **limit, local_attention=8, cls_token_id=tokenizer.cls_token_id,
            sep_token_id=tokenizer.sep_token_id, bos_token_id=tokenizer.cls_token_id,
            eos_token_id=tokenizer.sep_token_id, attn_implementation="eager")),
        "bart": lambda: tf.BartForConditionalGeneration(tf.BartConfig(
            vocab_size=size, d_model=16, encoder_layers=1, decoder_layers=1,
            encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32,
            decoder_ffn_dim=32, pad_token_id=tokenizer.pad_token_id, **limit,
            bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
            decoder_start_token_id=tokenizer.eos_token_id, forced_bos_token_id=None)),
        "t5": lambda: tf.T5ForConditionalGeneration(tf.T5Config(
            vocab_size=size, d_model=16, d_kv=8, d_ff=32, num_layers=1, num_decoder_layers=1,
            num_heads=2, pad_token_id=tokenizer.pad_token_id,
            eos_token_id=tokenizer.eos_token_id, decoder_start_token_id=tokenizer.pad_token_id)),
        "gpt2": lambda: tf.GPT2LMHeadModel(tf.GPT2Config(
            vocab_size=size, n_embd=16, n_layer=1, n_head=2, n_positions=POSITIONS)),
        "llama": lambda: tf.LlamaForCausalLM(tf.LlamaConfig(
            **small, **limit, num_key_value_heads=2)),
    }[kind]()
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def _client(kind: str, folder: Path):
    from helm.common.cache import BlackHoleCacheConfig

    from syntaxgym_helm.clients.local.client import SyntaxGymClient
    from syntaxgym_helm.clients.masked.client import MaskedLMClient
    from syntaxgym_helm.clients.seq2seq.client import Seq2SeqClient

    client_class = {"masked": MaskedLMClient, "seq2seq": Seq2SeqClient,
                    "causal": SyntaxGymClient}[KINDS[kind][1]]
    extra = {"bos_text": "<s>", "progress": False} if KINDS[kind][1] == "causal" else {}
    return client_class(BlackHoleCacheConfig(), str(folder), device="cpu", **extra)


def _tokens(kind: str, client, prompt: str) -> int:
    """How many positions ``prompt`` takes in the model (the client's own encoding)."""
    from syntaxgym_helm.clients.local.client import SyntaxGymClient

    if isinstance(client, SyntaxGymClient):
        return len(client.server.wait_ready().encoder.encode(prompt).ids)
    tokenizer = client._tokenizer
    if KINDS[kind][1] == "seq2seq":  # the decoder's start token, then the sentence
        return len(tokenizer(f"{client._start_text} {prompt}",
                             add_special_tokens=False)["input_ids"])
    return len(tokenizer(prompt)["input_ids"])


@pytest.mark.limit(300)
@pytest.mark.parametrize("kind", list(KINDS))
def test_every_kind_scores_its_last_position_and_refuses_one_more_at_once(
        tmp_path: Path, kind: str) -> None:
    from helm.common.request import Request

    client = _client(kind, _build(kind, tmp_path / kind))

    def ask(words: int):
        prompt = " ".join(["the"] * words)
        started = time.monotonic()
        result = client.make_request(Request(model="lab/tiny", model_deployment="lab/tiny",
                                             prompt=prompt, echo_prompt=True, max_tokens=0))
        assert time.monotonic() - started < 20
        return result, prompt

    client.make_request(Request(model="lab/tiny", model_deployment="lab/tiny", prompt="the",
                                echo_prompt=True, max_tokens=0))  # loads the model
    limit = KINDS[kind][2]
    results = [(words, *ask(words)) for words in range(POSITIONS - 6, POSITIONS + 4)]
    fits = [(words, _tokens(kind, client, prompt)) for words, result, prompt in results
            if result.success]
    refused = [result for _, result, _ in results if not result.success]
    if limit is None:
        assert not refused
        return
    assert fits and max(tokens for _, tokens in fits) == limit, fits
    assert refused and all(f"more than the model's {limit}" in (r.error or "")
                           or f"context of {limit} tokens" in (r.error or "") for r in refused)
    assert all(r.error_flags is not None and not r.error_flags.is_retriable for r in refused)


@pytest.mark.limit(300)
def test_a_pass_that_fails_fails_its_requests_with_the_reason_at_once(tmp_path: Path) -> None:
    """A model whose forward raises (a config with no token type for the ids every input
    carries, ``type_vocab_size: 0``): each sentence fails with the reason, in seconds."""
    from syntaxgym_helm.api.evaluate import score_sentences

    folder = _build("roberta", tmp_path / "broken", type_vocab_size=0)
    started = time.monotonic()
    with pytest.raises(ValueError, match=r"could not score 2 of 2 sentences: sentence 1: .*"
                                         r"MaskedLMClient: scoring failed: RuntimeError: "
                                         "index_select"):
        score_sentences(["The keys are on the table.", "The cat sat."], str(folder))
    assert time.monotonic() - started < 60


@pytest.mark.limit(300)
def test_evaluate_with_no_item_scored_fails_and_says_why(tmp_path: Path) -> None:
    """Every sentence longer than the model holds: before, ``evaluate`` printed "accuracy nan
    (0 of 0 items scored pass; 2 unscorable)" and exited 0, as a success."""
    import json

    from fault_helpers import syntaxgym_helm

    folder = _build("bert", tmp_path / "bert")
    long = " ".join(["the keys to the cabinet"] * 8)
    suite = tmp_path / "long.json"
    suite.write_text(json.dumps({
        "meta": {"name": "long", "metric": "sum"}, "region_meta": {"1": "all"},
        "predictions": [{"type": "formula", "formula": "(1;%a%) < (1;%b%)"}],
        "items": [{"item_number": n, "conditions": [
            {"condition_name": c, "regions": [{"region_number": 1, "content": f"{long} {c}."}]}
            for c in ("a", "b")]} for n in (1, 2)]}))
    done = syntaxgym_helm("evaluate", str(suite), "--model", str(folder))
    assert done.returncode == 1, done.stdout + done.stderr[-2000:]
    assert "syntaxgym-helm evaluate: long on " in done.stderr
    assert "no item was scored (2 unscorable, e.g. item 1: " in done.stderr
    assert f"more than the model's {POSITIONS}" in done.stderr and "accuracy" not in done.stdout
