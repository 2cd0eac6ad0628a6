"""Small real-architecture masked and encoder-decoder checkpoints, built by the tests themselves.

No masked or encoder-decoder LM can be installed here, so the tests make their own: a tokenizer
trained with the ``tokenizers`` library on sentences the tests write (WordPiece with lower-casing
and accent stripping for BERT, byte-level BPE for RoBERTa, a Unigram SentencePiece model for T5),
a model of the real architecture at a tiny size from its config, seeded and trained for a few
steps on the same sentences, and both saved with ``save_pretrained`` to a folder: the folder a
user would download from the Hub, read through the same code.
"""

from __future__ import annotations

from pathlib import Path

#: Sentences the tokenizers and models learn from (English with accents, and other scripts).
SENTENCES = (
    "The author that the guards like laughs.",
    "The authors that the guard likes laugh.",
    "The keys to the cabinet are on the table.",
    "The key to the cabinets is on the table.",
    "No student has ever passed that exam.",
    "Every student has ever passed that exam.",
    "The café near the église serves crêpes.",
    "Ежик пьет молоко, а кошки спят.",
    "Kedi süt içiyor ve köpekler uyuyor.",
    "猫在喝牛奶，狗在睡觉。",
    "Who did the senator say that the reporter admired?",
    "Which book did you read without understanding it?",
)

KINDS = ("bert", "roberta", "modernbert", "t5")
#: How many entries each kind's tokenizer learns (WordPiece, byte-level BPE, Unigram).
TOKENIZER_VOCAB = {"bert": 160, "roberta": 400, "t5": 300}


def build_checkpoint(kind: str, folder: Path, *, seed: int = 0, steps: int = 8,
                     save_tokenizer: bool = True) -> Path:
    """A tiny ``kind`` checkpoint (one of :data:`KINDS`) trained for ``steps`` steps, saved in
    ``folder`` (config, safetensors weights, tokenizer); returns ``folder``."""
    import torch

    torch.manual_seed(seed)
    tokenizer = _tokenizer(kind)
    model = _model(kind, tokenizer)
    _train(model, tokenizer, kind, steps)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    if save_tokenizer:
        tokenizer.save_pretrained(folder)
    return folder


def _tokenizer(kind: str, sentences: tuple[str, ...] | None = None,
               vocab_size: int | None = None):
    """``kind``'s tokenizer trained on ``sentences`` (default: :data:`SENTENCES` as it is when
    called: a benchmark sets it to its own sentences), with at most ``vocab_size`` entries
    (default :data:`TOKENIZER_VOCAB`'s)."""
    sentences = SENTENCES if sentences is None else sentences
    from tokenizers import (
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        processors,
        trainers,
    )
    from transformers import PreTrainedTokenizerFast

    if kind in ("bert", "modernbert"):
        specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(lowercase=True, strip_accents=True)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.train_from_iterator(sentences, trainers.WordPieceTrainer(
            vocab_size=vocab_size or TOKENIZER_VOCAB["bert"], special_tokens=specials,
            min_frequency=1))
        cls_id, sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]",
            special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)])
        tok.decoder = decoders.WordPiece()
        return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]",
                                       pad_token="[PAD]", cls_token="[CLS]",
                                       sep_token="[SEP]", mask_token="[MASK]")
    if kind == "roberta":
        specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        tok.train_from_iterator(sentences, trainers.BpeTrainer(
            vocab_size=vocab_size or TOKENIZER_VOCAB["roberta"], special_tokens=specials,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
        tok.post_processor = processors.RobertaProcessing(
            ("</s>", tok.token_to_id("</s>")), ("<s>", tok.token_to_id("<s>")),
            trim_offsets=True, add_prefix_space=False)
        return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>",
                                       unk_token="<unk>", pad_token="<pad>", cls_token="<s>",
                                       sep_token="</s>", mask_token="<mask>")
    # T5's sentinel <extra_id_0> (the mask of BabyLM's enc_dec_mask and enc_dec_prefix).
    specials = ["<pad>", "</s>", "<unk>", "<extra_id_0>"]
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    tok.train_from_iterator(sentences, trainers.UnigramTrainer(
        vocab_size=vocab_size or TOKENIZER_VOCAB["t5"], special_tokens=specials, unk_token="<unk>"))
    tok.post_processor = processors.TemplateProcessing(
        single="$A </s>", special_tokens=[("</s>", tok.token_to_id("</s>"))])
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="</s>",
                                   unk_token="<unk>", extra_special_tokens=["<extra_id_0>"])


def _model(kind: str, tokenizer):
    import transformers as tf

    vocab = len(tokenizer)
    if kind == "bert":
        return tf.BertForMaskedLM(tf.BertConfig(
            vocab_size=vocab, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
            intermediate_size=64, max_position_embeddings=64,
            pad_token_id=tokenizer.pad_token_id))
    if kind == "roberta":
        return tf.RobertaForMaskedLM(tf.RobertaConfig(
            vocab_size=vocab, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
            intermediate_size=64, max_position_embeddings=80,
            pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id))
    if kind == "modernbert":
        return tf.ModernBertForMaskedLM(tf.ModernBertConfig(
            vocab_size=vocab, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
            intermediate_size=64, max_position_embeddings=64, local_attention=16,
            pad_token_id=tokenizer.pad_token_id, cls_token_id=tokenizer.cls_token_id,
            sep_token_id=tokenizer.sep_token_id, bos_token_id=tokenizer.cls_token_id,
            eos_token_id=tokenizer.sep_token_id, attn_implementation="eager"))
    return tf.T5ForConditionalGeneration(tf.T5Config(
        vocab_size=vocab, d_model=32, d_kv=16, d_ff=64, num_layers=2, num_decoder_layers=2,
        num_heads=2, pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.pad_token_id))


def _train(model, tokenizer, kind: str, steps: int) -> None:
    """A few optimiser steps, so that the weights are not their random initial values."""
    import torch

    batch = tokenizer(list(SENTENCES), padding=True, return_tensors="pt")
    optimiser = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    for _ in range(steps):
        labels = batch["input_ids"].clone()
        labels[batch["attention_mask"] == 0] = -100
        if kind == "t5":
            loss = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                         labels=labels).loss
        else:
            inputs = batch["input_ids"].clone()
            chosen = (torch.rand(inputs.shape) < 0.3) & (batch["attention_mask"] == 1)
            inputs[chosen] = tokenizer.mask_token_id
            labels[~chosen] = -100
            loss = model(input_ids=inputs, attention_mask=batch["attention_mask"],
                         labels=labels).loss
        loss.backward()
        optimiser.step()
        optimiser.zero_grad()
    model.eval()
