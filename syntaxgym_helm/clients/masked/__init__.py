"""Masked LMs (BERT, RoBERTa, DeBERTa, ModernBERT...) scored by pseudo-log-likelihood:
:mod:`.pll` (the scoring, torch) and :mod:`.client` (the HELM client). The variants (``pll``)
are declared in :mod:`syntaxgym_helm.core.scoring_variants`."""
