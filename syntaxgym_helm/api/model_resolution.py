"""``model=`` of the Python API as a researcher gives it: a HELM model name, a checkpoint folder
(config + weights), a GGUF file or a Hugging Face Hub id, with an optional scoring variant
(``/path/to/bert~within_word_l2r``, ``/path/to/t5~enc_dec_mask``).

A checkpoint is inspected (:mod:`syntaxgym_helm.clients.model_kind`: its kind from its config),
checked (a masked LM's tokenizer needs a mask token, and word ids for ``within_word_l2r``), and
registered with HELM in this process under the name ``syntaxgym-helm model add`` would give it
(:mod:`syntaxgym_helm.clients.checkpoint_models`); the HELM model name is returned. Nothing is
written to disk, and the weights are loaded only when the first request is scored.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

from syntaxgym_helm.clients.checkpoint_models import (
    DEFAULT_VARIANT,
    checkpoint_entries,
    model_name_for,
    register_entries,
    split_variant,
    variant_name,
)
from syntaxgym_helm.clients.masked import PLL_VARIANTS
from syntaxgym_helm.clients.model_kind import (
    Checkpoint,
    CheckpointError,
    inspect_checkpoint,
    looks_like_hub_id,
)
from syntaxgym_helm.clients.seq2seq import SEQ2SEQ_VARIANTS

_LOCK = threading.Lock()
#: HELM model name -> the checkpoint registered under it in this process.
_REGISTERED: dict[str, str] = {}


def is_checkpoint_reference(model: str) -> bool:
    """Whether ``model`` names a local checkpoint (an existing path, with or without a variant)."""
    base, _ = split_variant(model)
    return Path(base).expanduser().exists()


def resolve_model(model: str, known_to_helm: bool = False, name: str | None = None) -> str:
    """The HELM model name for ``model`` (see the module doc). ``known_to_helm``: HELM already
    serves ``model`` under that name (then it is returned as given, unless it is a path).
    ``name``: the model name to register a checkpoint under (``local/<name>`` without an
    organisation) instead of the one made from its path (a sweep names each checkpoint after
    its model and revision). Raises :class:`CheckpointError` naming the path and what to do."""
    base, variant = split_variant(model)
    if not Path(base).expanduser().exists() and (known_to_helm or not looks_like_hub_id(base)):
        return model
    checkpoint = inspect_checkpoint(base)
    if variant is not None:
        check_variant(checkpoint, variant, model)
    chosen = variant or DEFAULT_VARIANT
    if checkpoint.kind == "masked":
        check_masked_tokenizer(checkpoint, chosen)
    elif checkpoint.kind == "seq2seq" and chosen != DEFAULT_VARIANT:
        check_babylm_tokenizer(checkpoint)
    with _LOCK:
        free = _free_name(checkpoint, name)
        register_entries(checkpoint_entries(checkpoint, free, variants=(chosen,)))
        _REGISTERED[free] = _identity(checkpoint)
    return variant_name(free, chosen)


VARIANTS = {"masked": PLL_VARIANTS, "seq2seq": SEQ2SEQ_VARIANTS}
_OWNERS = {"masked": "masked LMs (pseudo-log-likelihood)",
           "seq2seq": "encoder-decoder LMs (BabyLM's conventions)"}


def check_variant(checkpoint: Checkpoint, variant: str, model: str) -> None:
    """Raise :class:`CheckpointError` when ``~variant`` is not one of the checkpoint's kind."""
    allowed = VARIANTS.get(checkpoint.kind, ())
    if variant in allowed:
        return
    owner = next((kind for kind, names in VARIANTS.items() if variant in names), None)
    if owner is not None:
        raise CheckpointError(f"{checkpoint.source}: the variant ~{variant} applies to "
                              f"{_OWNERS[owner]}; this is a {checkpoint.kind} LM: drop "
                              f"~{variant}")
    raise CheckpointError(f"{model}: ~{variant} is not a variant of a {checkpoint.kind} LM ("
                          + (", ".join(allowed) or "it has none") + ")")


def check_babylm_tokenizer(checkpoint: Checkpoint) -> None:
    """Raise :class:`CheckpointError` when the checkpoint's tokenizer has neither a mask token
    nor a sentinel for BabyLM's encoder-decoder conventions."""
    from syntaxgym_helm.clients.seq2seq.babylm_scoring import special_ids

    try:
        special_ids(_tokenizer(checkpoint), checkpoint.source)
    except ValueError as error:
        raise CheckpointError(str(error)) from None


def _tokenizer(checkpoint: Checkpoint):
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(checkpoint.source)
    except Exception as error:  # noqa: BLE001 - any loading failure: say where
        raise CheckpointError(f"{checkpoint.source}: its tokenizer cannot be loaded "
                              f"({type(error).__name__}: {error}); save it with "
                              "tokenizer.save_pretrained next to the weights") from None


def check_masked_tokenizer(checkpoint: Checkpoint, variant: str) -> None:
    """Raise :class:`CheckpointError` when the checkpoint's tokenizer cannot score ``variant``."""
    from syntaxgym_helm.clients.masked.pll import UnscorableTokenizer, check_tokenizer

    tokenizer = _tokenizer(checkpoint)
    try:
        check_tokenizer(tokenizer, variant, checkpoint.source)  # type: ignore[arg-type]
    except UnscorableTokenizer as error:
        raise CheckpointError(str(error)) from None


def _identity(checkpoint: Checkpoint) -> str:
    return f"{checkpoint.source}\0{checkpoint.gguf_file}"


def _free_name(checkpoint: Checkpoint, wanted: str | None = None) -> str:
    """``model_name_for(checkpoint, wanted)``, made unique in this process when another
    checkpoint with the same name was registered before (a short digest of the path is added)."""
    name = model_name_for(checkpoint, wanted)
    owner = _REGISTERED.get(name)
    if owner is None or owner == _identity(checkpoint):
        return name
    digest = hashlib.sha256(_identity(checkpoint).encode()).hexdigest()[:6]
    return f"{name}-{digest}"


def resolved_model(model: str, local_path: Path) -> str:
    """:func:`resolve_model` for the Python API: a path is a checkpoint; a name HELM serves
    (plugin, ``local_path``'s YAML, HELM's own) is kept; any other Hub-id-like name is fetched
    from the Hub. Raises the API's ``UnknownModelError`` when none applies."""
    from syntaxgym_helm.api.helm_engine import UnknownModelError, model_deployment

    if is_checkpoint_reference(model):
        return resolve_model(model)
    try:
        model_deployment(model, local_path)
        return model
    except UnknownModelError as unknown:
        base, _ = split_variant(model)
        if not looks_like_hub_id(base):
            raise
        try:
            return resolve_model(model)
        except CheckpointError as error:
            raise UnknownModelError(f"{unknown}; nor is it a checkpoint: {error}") from None
