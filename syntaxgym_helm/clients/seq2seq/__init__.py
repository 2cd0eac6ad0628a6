"""Encoder-decoder LMs (T5 family): :mod:`.decoder_scoring` (minicons' convention, the sentence as
the decoder's output), :mod:`.babylm_scoring` (BabyLM's ``enc_dec_mask`` and ``enc_dec_prefix``)
and :mod:`.client` (the HELM client)."""

from typing import Literal

Seq2SeqConvention = Literal["original", "enc_dec_mask", "enc_dec_prefix"]
#: The scoring conventions (model-name variants ``NAME~enc_dec_mask``...), the default first.
SEQ2SEQ_VARIANTS: tuple[Seq2SeqConvention, ...] = ("original", "enc_dec_mask", "enc_dec_prefix")
