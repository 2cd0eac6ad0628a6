"""Encoder-decoder LMs (T5 family) scoring a sentence as the decoder's output:
:mod:`.decoder_scoring` (the scoring, torch) and :mod:`.client` (the HELM client)."""
