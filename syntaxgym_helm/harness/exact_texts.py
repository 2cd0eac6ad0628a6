"""Exact token texts for answers whose texts lost pieces of characters (HELM's HuggingFaceClient).

HELM's ``HuggingFaceClient`` returns each token's text as ``tokenizer.decode(token_id)`` of that
token alone, so a token that holds a piece of a multi-byte character (a CJK character, most
emoji, with byte-level tokenizers) comes back as U+FFFD. The aligner matches such runs exactly
(:mod:`syntaxgym_helm.core.alignment`, rule 5), but several U+FFFD tokens in a row can often be
laid over the text in more than one way, and then it refuses to guess.

The deployment's tokenizer settles it. :func:`exact_texts` encodes the prompt as the client did
(HELM's HuggingFace tokenizer, special tokens added as the client adds them), checks that the
tokens correspond one for one (same count, and each returned text is what decoding that token
alone gives), and then gives each token the slice of the prompt it covers, as the plugin's own
client does (:func:`~syntaxgym_helm.clients.local.prompt_encoding.texts_from_offsets`: a
character split over several tokens goes with the last of them). Whatever does not fit (no HELM
HuggingFace tokenizer for the deployment, another tokenization) leaves the texts as they were.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from helm.common.cache import BlackHoleCacheConfig
from helm.common.hierarchical_logger import hwarn
from helm.common.request import Request

from syntaxgym_helm.clients.local.prompt_encoding import texts_from_offsets

LOSSY = "\ufffd"


def exact_texts(request: Request, texts: Sequence[str]) -> list[str] | None:
    """The exact texts of the tokens the client returned as ``texts`` for ``request``, or None
    when they need none (no U+FFFD) or the deployment's tokenizer cannot give them."""
    if not any(LOSSY in text for text in texts):
        return None
    tokenizer = _huggingface_tokenizer(request.model_deployment or request.model)
    if tokenizer is None:
        return None
    with tokenizer as hf:
        if not getattr(hf, "is_fast", False):
            return None  # no offsets
        encoded = hf(request.prompt, return_offsets_mapping=True)
        ids = list(encoded["input_ids"])
        if len(ids) != len(texts) or any(hf.decode(token) != text
                                         for token, text in zip(ids, texts, strict=True)):
            return None  # not the tokens the client scored
        special = set(hf.all_special_ids)
    # Special tokens first (one the tokenizer added, or the prefix's <|endoftext|>) keep their
    # own text; the tokens after them get the rest of the prompt, slice by slice.
    leading = next((k for k, token in enumerate(ids) if token not in special), len(ids))
    if any(token in special for token in ids[leading:]):
        return None
    offsets = [(int(start), int(end)) for start, end in encoded["offset_mapping"][leading:]]
    if not offsets:
        return None
    begin = offsets[0][0]
    rest = request.prompt[begin:]
    sliced = texts_from_offsets(rest, [(start - begin, end - begin) for start, end in offsets])
    return [*texts[:leading], *sliced]


@functools.lru_cache(maxsize=32)
def _huggingface_tokenizer(deployment_name: str):
    """The deployment's tokenizer as HELM's ``HuggingFaceTokenizer`` wraps it (a lock-guarded
    Hugging Face tokenizer), or None when its tokenizer is not a Hugging Face one."""
    from helm.benchmark.model_deployment_registry import get_model_deployment
    from helm.benchmark.tokenizer_config_registry import get_tokenizer_config
    from helm.common.object_spec import create_object, inject_object_spec_args
    from helm.tokenizers.huggingface_tokenizer import HuggingFaceTokenizer

    try:
        name = get_model_deployment(deployment_name).tokenizer_name
        config = get_tokenizer_config(name) if name else None
        if config is None:
            return None
        spec = inject_object_spec_args(config.tokenizer_spec, constant_bindings={
            "cache_config": BlackHoleCacheConfig(), "tokenizer_name": name})
        tokenizer = create_object(spec)
        if not isinstance(tokenizer, HuggingFaceTokenizer):
            return None
        return tokenizer.get_wrapped_tokenizer()
    except Exception as exc:  # noqa: BLE001 - the texts as returned are still scored
        hwarn(f"SyntaxGym: no Hugging Face tokenizer for {deployment_name} to read exact token "
              f"texts from ({type(exc).__name__}: {exc}); tokens shown as U+FFFD are aligned as "
              "they are")
        return None
