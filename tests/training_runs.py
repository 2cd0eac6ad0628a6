"""Checkpoints written by a real training loop, for the sweep's tests.

A tiny causal LM of a real architecture (GPT-2, GPT-NeoX as Pythia, Llama), a byte-level BPE
tokenizer trained by the ``tokenizers`` library on BLiMP sentences, and a plain PyTorch training
loop over those sentences that saves the model and tokenizer with ``save_pretrained`` every few
steps, in folders named as the field names them (a Trainer's ``checkpoint-N``, Pythia's
``stepN``, BabyLM's ``chck_NM``): what a user's training run leaves on disk, made in about a
second.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path

#: The special token that begins and ends every text (GPT-2's and Pythia's).
END_OF_TEXT = "<|endoftext|>"
#: The BLiMP paradigms the sweep's tests train on and score.
PARADIGMS = ("anaphor_number_agreement", "determiner_noun_agreement_2")


def blimp_sentences(blimp_dir: Path, paradigms: Sequence[str], per_paradigm: int = 40
                    ) -> list[str]:
    """The grammatical sentences of the first ``per_paradigm`` pairs of each paradigm."""
    sentences = []
    for uid in paradigms:
        lines = (blimp_dir / "data" / f"{uid}.jsonl").read_text(encoding="utf-8").splitlines()
        sentences += [json.loads(line)["sentence_good"] for line in lines[:per_paradigm]]
    return sentences


def tokenizer_for(sentences: Sequence[str], vocab_size: int = 300):
    """A byte-level BPE tokenizer (any text has tokens) trained on ``sentences``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(sentences, trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=[END_OF_TEXT],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=END_OF_TEXT,
                                   eos_token=END_OF_TEXT, unk_token=END_OF_TEXT,
                                   pad_token=END_OF_TEXT)


def tiny_model(architecture: str, vocab_size: int):
    """A causal LM of ``architecture`` (``gpt2``, ``gpt_neox``, ``llama``) at a tiny size."""
    import transformers as tf

    if architecture == "gpt2":
        return tf.GPT2LMHeadModel(tf.GPT2Config(
            vocab_size=vocab_size, n_embd=32, n_layer=2, n_head=2, n_positions=64,
            bos_token_id=0, eos_token_id=0))
    if architecture == "gpt_neox":
        return tf.GPTNeoXForCausalLM(tf.GPTNeoXConfig(
            vocab_size=vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
            intermediate_size=64, max_position_embeddings=64, bos_token_id=0, eos_token_id=0))
    return tf.LlamaForCausalLM(tf.LlamaConfig(
        vocab_size=vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=2, intermediate_size=64, max_position_embeddings=64,
        bos_token_id=0, eos_token_id=0))


def train(folder: Path, sentences: Sequence[str], *, architecture: str = "gpt2",
          steps: int = 6, save_every: int = 2, seed: int = 0,
          name: Callable[[int], str] = lambda step: f"checkpoint-{step}",
          save_first: bool = False) -> list[Path]:
    """Train a tiny ``architecture`` model on ``sentences`` for ``steps`` steps (batches of 16,
    AdamW), saving it and its tokenizer every ``save_every`` steps (and before the first step
    with ``save_first``) into ``folder / name(step)``; returns the folders in training order."""
    import torch

    torch.manual_seed(seed)
    tokenizer = tokenizer_for(sentences)
    model = tiny_model(architecture, len(tokenizer))
    optimiser = torch.optim.AdamW(model.parameters(), lr=1e-2)
    saved: list[Path] = []

    def save(step: int) -> None:
        target = folder / name(step)
        model.save_pretrained(target)
        tokenizer.save_pretrained(target)
        saved.append(target)

    if save_first:
        save(0)
    texts = [f"{END_OF_TEXT}{sentence}{END_OF_TEXT}" for sentence in sentences]
    model.train()
    for step in range(1, steps + 1):
        start = ((step - 1) * 16) % len(texts)
        batch = tokenizer(texts[start:start + 16], padding=True, return_tensors="pt")
        labels = batch["input_ids"].masked_fill(batch["attention_mask"] == 0, -100)
        loss = model(**batch, labels=labels).loss
        loss.backward()
        optimiser.step()
        optimiser.zero_grad()
        if step % save_every == 0:
            model.eval()
            save(step)
            model.train()
    return saved


def hub_cache(cache: Path, repo: str, folders: dict[str, Path]) -> dict[str, str]:
    """``folders`` (branch -> checkpoint folder) as revisions of ``repo`` in a Hugging Face cache
    laid out as huggingface_hub writes it (blobs by hash, snapshots of links, refs; two branches
    of one folder share its commit, as ``main`` and the last step do); returns branch ->
    commit."""
    root = cache / f"models--{repo.replace('/', '--')}"
    commits = {}
    for branch, folder in folders.items():
        commit = hashlib.sha1(str(folder).encode()).hexdigest()
        snapshot = root / "snapshots" / commit
        (root / "refs" / branch).parent.mkdir(parents=True, exist_ok=True)  # refs/pr/1 too
        (root / "refs" / branch).write_text(commit)
        commits[branch] = commit
        if snapshot.exists():
            continue
        snapshot.mkdir(parents=True)
        for file in folder.iterdir():
            data = file.read_bytes()
            blob = root / "blobs" / hashlib.sha256(data).hexdigest()
            blob.parent.mkdir(parents=True, exist_ok=True)
            blob.write_bytes(data)
            (snapshot / file.name).symlink_to(Path("..", "..", "blobs", blob.name))
    return commits
