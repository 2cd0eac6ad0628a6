"""Masked LMs (BERT, RoBERTa, DeBERTa, ModernBERT...) scored by pseudo-log-likelihood:
:mod:`.pll` (the scoring, torch) and :mod:`.client` (the HELM client)."""

from typing import Literal

PllVariant = Literal["original", "within_word_l2r"]
#: The pseudo-log-likelihood variants (:mod:`.pll`), the default first.
PLL_VARIANTS: tuple[PllVariant, ...] = ("original", "within_word_l2r")
