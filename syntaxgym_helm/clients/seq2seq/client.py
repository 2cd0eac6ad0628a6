"""The HELM client of encoder-decoder LMs, under one of three conventions (``convention``, each
deployment its own, the model-name variant ``NAME~enc_dec_mask``...): ``original``, the sentence
as the decoder's output (:mod:`.decoder_scoring`, minicons' ``Seq2SeqScorer``), or BabyLM's
``enc_dec_mask`` and ``enc_dec_prefix`` (:mod:`.babylm_scoring`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from syntaxgym_helm.clients.batch_scoring_client import (
    BatchScoringClient,
    CheckpointUnusable,
    score_usable,
)
from syntaxgym_helm.clients.batch_settings import Seq2SeqSettings
from syntaxgym_helm.clients.local.prompt_encoding import PromptError, PromptLogprobs

#: What the cache key says of each convention (``original``'s is the key of earlier versions).
_KEYS = {"original": "minicons-seq2seq-empty-source", "enc_dec_mask": "babylm-2025-enc_dec_mask",
         "enc_dec_prefix": "babylm-2025-enc_dec_prefix"}


class Seq2SeqClient(BatchScoringClient):
    """Scores echo requests on an encoder-decoder LM.

    Args: a :class:`~syntaxgym_helm.clients.batch_settings.Seq2SeqSettings` (``convention``:
    ``original``, ``enc_dec_mask`` or ``enc_dec_prefix``, see the module doc; what every batch
    client takes), as :class:`~syntaxgym_helm.clients.batch_scoring_client.BatchScoringClient`
    reads it."""

    CACHE_FORMAT = "syntaxgym-seq2seq-decoder-v1"
    SETTINGS = Seq2SeqSettings
    settings: Seq2SeqSettings

    @property
    def convention(self) -> str:
        return self.settings.convention

    def _key_fields(self) -> dict[str, Any]:
        return {"convention": _KEYS[self.convention]}

    def _load(self) -> None:
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

        from syntaxgym_helm.clients.seq2seq.babylm_scoring import special_ids
        from syntaxgym_helm.clients.seq2seq.decoder_scoring import source_ids

        where = self.pretrained_model_name_or_path
        tokenizer = AutoTokenizer.from_pretrained(where, revision=self.load_revision,
                                                  trust_remote_code=self.trust_remote_code)
        if not getattr(tokenizer, "is_fast", False):
            raise CheckpointUnusable(f"{where}: the tokenizer gives no character offsets (a slow "
                                     "tokenizer); save the checkpoint with tokenizer.json")
        try:
            model = AutoModelForSeq2SeqLM.from_pretrained(
                where, dtype=self._torch_dtype(), revision=self.load_revision,
                trust_remote_code=self.trust_remote_code)
        except ValueError as error:
            raise CheckpointUnusable(f"{where}: cannot be loaded as an encoder-decoder LM "
                                     f"({error})") from None
        start = model.config.decoder_start_token_id
        if start is None:
            raise CheckpointUnusable(f"{where}: the config has no decoder_start_token_id")
        try:
            self._source = source_ids(tokenizer, where)
            self._babylm = special_ids(tokenizer, where) if self.convention != "original" else None
        except ValueError as error:
            raise CheckpointUnusable(str(error)) from None
        self._tokenizer = tokenizer
        self._pad_id: int = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        first = start if self._babylm is None else self._babylm.start
        self._start_text: str = str(tokenizer.convert_ids_to_tokens(first))
        self._model = model.to(self.device).eval()
        # A learned table of positions (BART's family) bounds the length; T5's relative
        # positions do not.
        positions = (getattr(model.config, "n_positions", None)
                     or getattr(model.config, "max_position_embeddings", None))
        self._max_length = positions if isinstance(positions, int) and positions > 0 else 10**6

    def _score(self, prompts: Sequence[str]) -> list[PromptLogprobs | PromptError]:
        if self._babylm is not None:
            return self._score_babylm(prompts)
        from syntaxgym_helm.clients.seq2seq.decoder_scoring import (
            encode_sentences,
            score_sentences,
        )

        encoded = encode_sentences(self._tokenizer, self._start_text, prompts, self._max_length)
        return score_usable(encoded, lambda good: score_sentences(
            self._model, good, self._source, pad_id=self._pad_id, device=self.device,
            max_batch_tokens=self.max_batch_tokens, counts=self.counts))

    def _score_babylm(self, prompts: Sequence[str]) -> list[PromptLogprobs | PromptError]:
        from syntaxgym_helm.clients.seq2seq.babylm_scoring import (
            encode_sentences,
            score_mask,
            score_prefix,
        )

        babylm = self._babylm
        assert babylm is not None
        encoded = encode_sentences(self._tokenizer, prompts, self.convention, self._start_text,
                                   self._max_length)
        score = score_mask if self.convention == "enc_dec_mask" else score_prefix
        return score_usable(encoded, lambda good: score(
            self._model, good, babylm, pad_id=self._pad_id, device=self.device,
            max_batch_tokens=self.max_batch_tokens, counts=self.counts))
