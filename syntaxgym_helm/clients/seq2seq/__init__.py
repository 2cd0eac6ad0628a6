"""Encoder-decoder LMs (T5 family): :mod:`.decoder_scoring` (minicons' convention, the sentence as
the decoder's output), :mod:`.babylm_scoring` (BabyLM's ``enc_dec_mask`` and ``enc_dec_prefix``)
and :mod:`.client` (the HELM client). The conventions (``convention``) are declared in
:mod:`syntaxgym_helm.core.scoring_variants`."""
