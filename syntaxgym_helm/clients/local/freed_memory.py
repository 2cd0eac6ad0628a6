"""Dropping the Python copies of the vocabulary and merges a transformers tokenizer keeps after
building its Rust tokenizer (:func:`drop_tokenizer_build_inputs`).

Loading a checkpoint's tokenizer leaves behind what scoring never reads: transformers' tokenizer
classes keep the vocabulary and merges they built their Rust tokenizer from (Gemma-3's 262,144
words and 514,906 merges: about 150 MB of Python objects) for the length of the process. This is
a reach into transformers' private attributes (:mod:`syntaxgym_helm.clients.reaches`:
``tokenizer_build_inputs``), used only where it is active.
"""

from __future__ import annotations

from syntaxgym_helm.clients import reaches

#: Attributes in which transformers' tokenizer classes keep the vocabulary and merges they built
#: their Rust tokenizer from (``GemmaTokenizer``, ``LlamaTokenizer``, ``GPT2Tokenizer``, ...).
_BUILD_INPUTS = ("_vocab", "_merges")


def drop_tokenizer_build_inputs(tokenizer: object, stock: bool = False) -> int:
    """Drop the Python copies of the vocabulary and merges that a transformers tokenizer built
    its Rust tokenizer (``backend_tokenizer``) from and keeps only for ``__init__`` (Gemma-3's
    262,144 words and 514,906 merges: about 150 MB of Python objects); encoding, decoding and
    ``get_vocab`` read the Rust tokenizer. Only for a tokenizer that has one; saving it afterwards
    is not supported (save before). Returns how many attributes were dropped (none where the
    reach ``tokenizer_build_inputs`` is off: ``stock``)."""
    if (getattr(tokenizer, "backend_tokenizer", None) is None
            or not reaches.active("tokenizer_build_inputs", stock)):
        return 0
    dropped = 0
    for name in _BUILD_INPUTS:
        if isinstance(getattr(tokenizer, name, None), (dict, list)):
            setattr(tokenizer, name, None)
            dropped += 1
    return dropped
