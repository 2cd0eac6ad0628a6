"""The masked-LM and encoder-decoder clients' settings, declared once, as the causal engine's are
(:class:`~.local.engine_settings.EngineSettings`): :class:`BatchScoringSettings` (what both
share), :class:`MaskedSettings` (``pll``) and :class:`Seq2SeqSettings` (``convention``).

A deployment's ``client_spec.args`` but the checkpoint's path are read into one of them
(:meth:`BatchScoringSettings.from_args`: YAML's numbers, booleans and strings taken, a string
where a number or ``true``/``false`` belongs read as one), each checked against its type with an
error naming the client and the argument. docs/models.md lists them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, TypeVar

from syntaxgym_helm.clients.local.engine_settings import (
    DtypeName,
    check_settings,
    settings_from,
)
from syntaxgym_helm.core.options import option
from syntaxgym_helm.core.scoring_variants import PllVariant, Seq2SeqConvention

Settings = TypeVar("Settings", bound="BatchScoringSettings")

#: Most positions (copies or rows x their length) in one forward pass, by default. A masked LM's
#: largest activations are the feed-forward block's, positions x its width (RoBERTa-base: 3,072)
#: twice over: 25 MB at 1,024 positions, 100 MB at 4,096.
MAX_BATCH_TOKENS = 1024


@dataclasses.dataclass(frozen=True, kw_only=True)
class BatchScoringSettings:
    """How a masked-LM or encoder-decoder client loads its checkpoint and batches its prompts."""

    device: str = option("auto", "auto (CUDA when available, else CPU), cpu, cuda:0...")
    dtype: DtypeName = option("float32", "float32, bfloat16 or float16")
    max_batch_tokens: int = option(MAX_BATCH_TOKENS, "most positions (copies or rows x their "
                                   "length) in one forward pass, which bounds its memory",
                                   minimum=1)
    prefetch: bool = option(True, "take all of a run's requests before HELM sends them")
    revision: str | None = option(None, "the checkpoint's revision (from_pretrained)")
    trust_remote_code: bool = option(False, "passed to from_pretrained")
    stock: bool = option(False, "score with transformers' own forwards: every reach into its "
                         "internals off (clients/reaches.py; SYNTAXGYM_STOCK=1 for every model)")

    def __post_init__(self) -> None:
        check_settings(self)

    @classmethod
    def from_args(cls: type[Settings], values: Mapping[str, Any], client: str) -> Settings:
        """The settings from a deployment's ``args`` (a torch dtype, or ``torch.float32``, is
        taken by its name); an unknown name or a bad value is an error naming ``client`` and
        the argument."""
        return settings_from(cls, values, client)


@dataclasses.dataclass(frozen=True, kw_only=True)
class MaskedSettings(BatchScoringSettings):
    """A masked LM's: the pseudo-log-likelihood variant besides what every batch client takes."""

    pll: PllVariant = option("original", "original (Salazar et al. 2020) or within_word_l2r "
                             "(Kauf & Ivanova 2023); the model-name variant NAME~within_word_l2r")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Seq2SeqSettings(BatchScoringSettings):
    """An encoder-decoder LM's: the scoring convention besides what every batch client takes."""

    convention: Seq2SeqConvention = option(
        "original", "original (minicons'), enc_dec_mask or enc_dec_prefix (BabyLM's); the "
        "model-name variants NAME~enc_dec_mask, NAME~enc_dec_prefix")
