"""A checkpoint's tokenizer checked against its model before anything is scored.

Two faults give plausible numbers for the wrong text, so both are refused, naming the folder and
what to do:

- **No tokenizer files** in a folder (``save_pretrained`` was called on the model only, as a
  Trainer's ``checkpoint-N/`` folders often are): transformers then makes up a tokenizer with an
  empty vocabulary from the config's model type, which reads every word as its unknown token
  (a masked LM's scores looked normal and were the scores of ``[UNK] [UNK] ...``).
- **A tokenizer that cannot cover the model's vocabulary**: a token id it can give is at or past
  the model's embedding rows (another model's tokenizer, or tokens added and the model saved
  before its embeddings were resized).

:func:`check_tokenizer_files` looks at a folder's file names (before loading anything);
:func:`check_vocabulary` at a loaded tokenizer and the model's embedding rows (from its config
before loading, from its embeddings after).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from syntaxgym_helm.clients.model_kind import CheckpointError

#: Files any of which carries a tokenizer (its vocabulary, or the settings of a tokenizer that
#: needs none, such as ByT5's bytes).
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model", "spiece.model",
                   "sentencepiece.bpe.model", "vocab.txt", "vocab.json", "merges.txt",
                   "special_tokens_map.json", "added_tokens.json", "tokenizer.tiktoken")


def check_tokenizer_files(folder: str | Path) -> None:
    """Raise :class:`CheckpointError` when ``folder`` holds none of :data:`TOKENIZER_FILES`."""
    path = Path(folder)
    if any((path / name).is_file() for name in TOKENIZER_FILES):
        return
    raise CheckpointError(
        f"{path}: no tokenizer files (none of tokenizer.json, tokenizer_config.json, vocab.txt, "
        "vocab.json, spiece.model, ...): transformers would make up a tokenizer with an empty "
        "vocabulary and every word would be scored as the unknown token; save the tokenizer "
        f"the model was trained with next to the weights: tokenizer.save_pretrained({str(path)!r})")


def config_embedding_rows(folder: str | Path) -> int | None:
    """The model's embedding rows as its ``config.json`` says (``vocab_size``, or its text
    config's); None when it does not say."""
    try:
        config = json.loads((Path(folder) / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    for holder in (config, config.get("text_config") or {}, config.get("decoder") or {}):
        rows = holder.get("vocab_size") if isinstance(holder, dict) else None
        if isinstance(rows, int) and rows > 0:
            return rows
    return None


def model_embedding_rows(model: Any) -> int | None:
    """A loaded model's input embedding rows; None when it has no embedding matrix."""
    try:
        return int(model.get_input_embeddings().weight.shape[0])
    except (AttributeError, NotImplementedError, TypeError, IndexError):
        return None


def highest_token_id(tokenizer: Any) -> int:
    """The highest token id ``tokenizer`` can give: its base vocabulary's last, or an added
    token's (read without listing a vocabulary of hundreds of thousands of entries)."""
    return max([int(tokenizer.vocab_size) - 1,
                *map(int, getattr(tokenizer, "added_tokens_decoder", {}) or {})])


def check_vocabulary(tokenizer: Any, rows: int | None, where: str) -> None:
    """Raise :class:`CheckpointError` when ``tokenizer`` has no entries but its special tokens,
    or can give a token id of ``rows`` or more (the model's embedding rows; None: not
    checked)."""
    specials = set(getattr(tokenizer, "all_special_tokens", ()) or ())
    if len(tokenizer) <= len(specials) + 1 and not set(tokenizer.get_vocab()) - specials:
        raise CheckpointError(
            f"{where}: the tokenizer has no entries but its special tokens "
            f"({', '.join(sorted(specials)) or 'none'}): every word would be scored as the "
            "unknown token; save the tokenizer the model was trained with next to the weights "
            f"(tokenizer.save_pretrained({where!r}))")
    if rows is None:
        return
    highest = highest_token_id(tokenizer)
    if highest >= rows:
        vocabulary = tokenizer.get_vocab()
        beyond = sorted((token for token, index in vocabulary.items() if index >= rows),
                        key=vocabulary.__getitem__)
        shown = ", ".join(repr(token) for token in beyond[:3]) + (
            f" and {len(beyond) - 3} more" if len(beyond) > 3 else "")
        raise CheckpointError(
            f"{where}: the tokenizer gives token ids up to {highest}, but the model has "
            f"{rows} embedding rows (ids 0 to {rows - 1}); {len(beyond)} token(s) past them: "
            f"{shown}. It is not this model's tokenizer, or tokens were added to it after the "
            "model was saved: save the tokenizer the model was trained with "
            "(tokenizer.save_pretrained), or resize the model's embeddings "
            "(model.resize_token_embeddings(len(tokenizer))) and save both again")


def check_before_load(source: str, gguf_file: str | None = None) -> None:
    """:func:`check_tokenizer_files` for a folder checkpoint (a GGUF file holds its tokenizer,
    a Hub model's files are checked once loaded)."""
    if not gguf_file and Path(source).is_dir():
        check_tokenizer_files(source)


def check_loaded(model: Any, tokenizer: Any, where: str) -> None:
    """:func:`check_vocabulary` against a loaded model's embedding rows."""
    check_vocabulary(tokenizer, model_embedding_rows(model), where)
