"""The HELM client of encoder-decoder LMs: each sentence scored as the decoder's output
(:mod:`.decoder_scoring`, minicons' ``Seq2SeqScorer`` convention)."""

from __future__ import annotations

from typing import Any, Sequence

from syntaxgym_helm.clients.batch_scoring_client import BatchScoringClient, CheckpointUnusable
from syntaxgym_helm.clients.local.prompt_encoding import PromptError, PromptLogprobs


class Seq2SeqClient(BatchScoringClient):
    """Scores echo requests on an encoder-decoder LM (arguments: those of
    :class:`~syntaxgym_helm.clients.batch_scoring_client.BatchScoringClient`)."""

    CACHE_FORMAT = "syntaxgym-seq2seq-decoder-v1"

    def _key_fields(self) -> dict[str, Any]:
        return {"convention": "minicons-seq2seq-empty-source"}

    def _load(self) -> None:
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

        from syntaxgym_helm.clients.seq2seq.decoder_scoring import source_ids

        where = self.pretrained_model_name_or_path
        tokenizer = AutoTokenizer.from_pretrained(where, revision=self.revision,
                                                  trust_remote_code=self.trust_remote_code)
        if not getattr(tokenizer, "is_fast", False):
            raise CheckpointUnusable(f"{where}: the tokenizer gives no character offsets (a slow "
                                     "tokenizer); save the checkpoint with tokenizer.json")
        try:
            model = AutoModelForSeq2SeqLM.from_pretrained(
                where, dtype=self._torch_dtype(), revision=self.revision,
                trust_remote_code=self.trust_remote_code)
        except ValueError as error:
            raise CheckpointUnusable(f"{where}: cannot be loaded as an encoder-decoder LM "
                                     f"({error})") from None
        start = model.config.decoder_start_token_id
        if start is None:
            raise CheckpointUnusable(f"{where}: the config has no decoder_start_token_id")
        try:
            self._source = source_ids(tokenizer, where)
        except ValueError as error:
            raise CheckpointUnusable(str(error)) from None
        self._tokenizer = tokenizer
        self._start_text: str = str(tokenizer.convert_ids_to_tokens(start))
        self._model = model.to(self.device).eval()
        positions = getattr(model.config, "n_positions", None)
        self._max_length = positions if isinstance(positions, int) and positions > 0 else 10**6

    def _score(self, prompts: Sequence[str]) -> list[PromptLogprobs | PromptError]:
        from syntaxgym_helm.clients.seq2seq.decoder_scoring import (
            DecoderSentence,
            encode_sentences,
            score_sentences,
        )

        encoded = encode_sentences(self._tokenizer, self._start_text, prompts, self._max_length)
        good = [e for e in encoded if isinstance(e, DecoderSentence)]
        pad = self._tokenizer.pad_token_id
        scored = iter(score_sentences(self._model, good, self._source,
                                      pad_id=pad if pad is not None else 0, device=self.device,
                                      max_batch_tokens=self.max_batch_tokens, counts=self.counts))
        return [next(scored) if isinstance(e, DecoderSentence) else e for e in encoded]
