"""The HELM client of masked LMs: pseudo-log-likelihood token scores (:mod:`.pll`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from syntaxgym_helm.clients.batch_scoring_client import (
    BatchScoringClient,
    CheckpointUnusable,
    score_usable,
)
from syntaxgym_helm.clients.batch_settings import MaskedSettings
from syntaxgym_helm.clients.local.prompt_encoding import PromptError, PromptLogprobs

#: The sentence the output head's shortcut is checked on when a model loads
#: (:class:`~.pll.TargetLogits`).
PROBE = "The keys to the old cabinet are on the table."


class MaskedLMClient(BatchScoringClient):
    """Scores echo requests on a masked LM by pseudo-log-likelihood.

    Args: a :class:`~syntaxgym_helm.clients.batch_settings.MaskedSettings` (``pll``:
    ``original`` or ``within_word_l2r``, :mod:`.pll`; what every batch client takes), as
    :class:`~syntaxgym_helm.clients.batch_scoring_client.BatchScoringClient` reads it.
    """

    CACHE_FORMAT = "syntaxgym-masked-pll-v1"
    SETTINGS = MaskedSettings
    settings: MaskedSettings

    @property
    def pll(self) -> str:
        return self.settings.pll

    def _key_fields(self) -> dict[str, Any]:
        return {"pll": self.pll}

    def _load(self) -> None:
        from transformers import AutoModelForMaskedLM, AutoTokenizer

        from syntaxgym_helm.clients.local.prompt_encoding import context_length
        from syntaxgym_helm.clients.masked.pll import (
            MaskedSentence,
            TargetLogits,
            UnscorableTokenizer,
            check_tokenizer,
            encode_sentences,
        )

        where = self.pretrained_model_name_or_path
        tokenizer = AutoTokenizer.from_pretrained(where, revision=self.load_revision,
                                                  trust_remote_code=self.trust_remote_code)
        try:
            check_tokenizer(tokenizer, self.settings.pll, where)
        except UnscorableTokenizer as error:
            raise CheckpointUnusable(str(error)) from None
        try:
            model = AutoModelForMaskedLM.from_pretrained(
                where, dtype=self._torch_dtype(), revision=self.load_revision,
                trust_remote_code=self.trust_remote_code)
        except ValueError as error:  # transformers: no masked-LM class for this config
            raise CheckpointUnusable(
                f"{where}: cannot be loaded as a masked LM ({error})"
            ) from None
        self._tokenizer = tokenizer
        self._model = model.to(self.device).eval()
        self._max_length = min(learned_positions(model) or context_length(model, tokenizer),
                               _tokenizer_limit(tokenizer) or 10**9)
        probe = encode_sentences(tokenizer, [PROBE], self.settings.pll, self._max_length)[0]
        self._target_logits = TargetLogits(self._model, stock=self.settings.stock)
        if isinstance(probe, MaskedSentence):
            self._target_logits.check(probe, tokenizer.mask_token_id, self.device)
        else:
            self._target_logits.off()

    def _score(self, prompts: Sequence[str]) -> list[PromptLogprobs | PromptError]:
        from syntaxgym_helm.clients.masked.pll import encode_sentences, score_sentences

        encoded = encode_sentences(self._tokenizer, prompts, self.settings.pll, self._max_length)
        return score_usable(encoded, lambda good: score_sentences(
            self._model, good, mask_id=self._tokenizer.mask_token_id, device=self.device,
            max_batch_tokens=self.max_batch_tokens, counts=self.counts,
            target_logits=self._target_logits))


def learned_positions(model) -> int | None:
    """How many tokens a model with a learned table of positions holds: the table's rows, less
    those RoBERTa's family (XLM-R, CamemBERT...) never uses, as its positions start after the
    padding index (roberta-base: 514 rows, 512 tokens); None without such a table (rotary or
    relative positions: the config's or the tokenizer's limit applies)."""
    import torch

    embeddings = getattr(getattr(model, "base_model", None), "embeddings", None)
    table = getattr(embeddings, "position_embeddings", None)
    if not isinstance(table, torch.nn.Embedding):
        return None
    padding = getattr(embeddings, "padding_idx", None)
    if hasattr(embeddings, "create_position_ids_from_input_ids") and isinstance(padding, int):
        return table.num_embeddings - padding - 1
    return table.num_embeddings


def _tokenizer_limit(tokenizer) -> int | None:
    value = getattr(tokenizer, "model_max_length", None)
    return value if isinstance(value, int) and 0 < value < 10**8 else None
