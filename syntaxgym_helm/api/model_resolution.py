"""``model=`` of the Python API as a researcher gives it: a HELM model name, a checkpoint folder
(config + weights), a GGUF file or a Hugging Face Hub id (at a revision: ``org/model@step1000``),
with an optional scoring variant (``/path/to/bert~within_word_l2r``, ``/path/to/t5~enc_dec_mask``).

A checkpoint is inspected (:mod:`syntaxgym_helm.clients.model_kind`: its kind from its config),
checked (its tokenizer files, a vocabulary its model's embeddings cover; a masked LM's tokenizer
needs a mask token, and word ids for ``within_word_l2r``), identified by what its files hold
(:mod:`syntaxgym_helm.clients.checkpoint_identity`; a Hub id by the commit its revision
resolves to, which is what is loaded) and registered with HELM in this process under the name
``syntaxgym-helm model add`` would give it (:mod:`syntaxgym_helm.clients.checkpoint_models`); the
HELM model name is returned. Nothing is written to disk, and the weights are loaded only when
the first request is scored.

A name made from a path never points at another checkpoint: when ``local/<folder name>`` (or a
Hub id) already names another checkpoint in this process (in HELM's registry: the deployments of
``local_path``'s YAML, or a path resolved earlier, such as the same folder before it was saved
again), the checkpoint is named ``<name>-<8 hex digits of its identity>`` instead, with a warning
that names both; a name given explicitly (``name=``) that is taken stops with an error naming
both (docs/models.md, "What names a checkpoint").
"""

from __future__ import annotations

import threading
import warnings
from pathlib import Path
from typing import Any

from syntaxgym_helm.clients.checkpoint_identity import CheckpointIdentity, identify
from syntaxgym_helm.clients.checkpoint_models import (
    REVISION_MARK,
    checkpoint_entries,
    model_name_for,
    register_entries,
)
from syntaxgym_helm.clients.model_kind import (
    Checkpoint,
    CheckpointError,
    inspect_checkpoint,
    looks_like_hub_id,
)
from syntaxgym_helm.core import scoring_variants
from syntaxgym_helm.core.scoring_variants import DEFAULT_VARIANT, split_variant, variant_name

_LOCK = threading.Lock()
#: HELM model name -> the checkpoint registered under it in this process.
_REGISTERED: dict[str, CheckpointIdentity] = {}
#: (identity, variant) pairs whose tokenizer was checked in this process.
_CHECKED: set[tuple[str, str]] = set()


class NameTakenError(CheckpointError):
    """A model name given for a checkpoint already names another one."""


def is_checkpoint_reference(model: str) -> bool:
    """Whether ``model`` names a local checkpoint (an existing path, with or without a variant)."""
    base, _ = split_variant(model)
    return Path(base).expanduser().exists()


def split_revision(model: str, revision: str | None = None) -> tuple[str, str | None]:
    """``"org/model@step1000"`` -> ``("org/model", "step1000")`` (not for an existing path);
    ``revision``, when given, is the revision (both given and different: ``CheckpointError``)."""
    base, mark, after = model.rpartition(REVISION_MARK)
    if not mark or not base or not after or Path(model).expanduser().exists() \
            or not looks_like_hub_id(base):
        return model, revision
    if revision is not None and revision != after:
        raise CheckpointError(f"{model}: two revisions given ({after} in the name, {revision} "
                              "as revision=); give one")
    return base, after


def resolve_model(model: str, known_to_helm: bool = False, *, revision: str | None = None,
                  name: str | None = None, replace: bool = False) -> str:
    """The HELM model name for ``model`` (see the module doc). ``known_to_helm``: HELM already
    serves ``model`` under that name (then it is returned as given, unless it is a path).
    ``revision``: a Hub id's revision (or ``model`` as ``org/model@REVISION``). ``name``: the
    model name to register it under (default: ``local/<folder name>``, or the Hub id). Names
    are checked against HELM's registry as it is: register a ``local_path``'s YAML first
    (:func:`resolved_model` does). ``replace``: a ``name`` given that names another checkpoint
    is re-pointed to this one (a sweep's checkpoint whose files changed, its runs done again)
    instead of refused. Raises :class:`CheckpointError` naming the path and what to do."""
    from helm.benchmark.model_deployment_registry import DEPLOYMENT_NAME_TO_MODEL_DEPLOYMENT

    base, variant = split_variant(model)
    base, revision = split_revision(base, revision)
    if not Path(base).expanduser().exists() and (known_to_helm or not looks_like_hub_id(base)):
        return model
    checkpoint = inspect_checkpoint(base, revision=revision)
    if variant is not None:
        try:
            scoring_variants.check_variant(checkpoint.kind, variant, model)
        except ValueError as error:
            raise CheckpointError(str(error)) from None
    chosen = variant or DEFAULT_VARIANT
    identity = identify(checkpoint.source, checkpoint.gguf_file,
                        checkpoint.commit or checkpoint.revision)
    check_checkpoint(checkpoint, (chosen,), identity)
    with _LOCK:
        chosen_name = free_name(checkpoint, identity, chosen, name, replace=replace)
        # A deployment of this name is of this checkpoint (free_name): its settings are kept.
        if variant_name(chosen_name, chosen) not in DEPLOYMENT_NAME_TO_MODEL_DEPLOYMENT:
            register_entries(checkpoint_entries(checkpoint, chosen_name, variants=(chosen,)))
        _REGISTERED[chosen_name] = identity
    return variant_name(chosen_name, chosen)


def check_checkpoint(checkpoint: Checkpoint, variants: tuple[str, ...],
                     identity: CheckpointIdentity | None = None) -> None:
    """Raise :class:`CheckpointError` when the checkpoint's tokenizer cannot score it: no
    tokenizer files, a vocabulary the model's embeddings do not cover
    (:mod:`syntaxgym_helm.clients.tokenizer_checks`), or what a variant needs (a mask token, a
    sentinel). A GGUF file's tokenizer is checked when it is loaded. Checked once per identity
    and variant in a process."""
    from syntaxgym_helm.clients.tokenizer_checks import (
        check_tokenizer_files,
        check_vocabulary,
        config_embedding_rows,
    )

    if checkpoint.gguf_file:
        return
    digest = identity.digest if identity is not None else None
    if digest is not None and all((digest, variant) in _CHECKED for variant in variants):
        return
    folder = Path(checkpoint.source)
    if folder.is_dir():
        check_tokenizer_files(folder)
    tokenizer = _tokenizer(checkpoint)
    check_vocabulary(tokenizer, config_embedding_rows(folder) if folder.is_dir() else None,
                     checkpoint.source)
    for variant in variants:
        if checkpoint.kind == "masked":
            check_masked_tokenizer(checkpoint, variant, tokenizer)
        elif checkpoint.kind == "seq2seq" and variant != DEFAULT_VARIANT:
            check_babylm_tokenizer(checkpoint, tokenizer)
    if digest is not None:
        _CHECKED.update((digest, variant) for variant in variants)


def check_babylm_tokenizer(checkpoint: Checkpoint, tokenizer: Any = None) -> None:
    """Raise :class:`CheckpointError` when the checkpoint's tokenizer (``tokenizer``: already
    loaded) has neither a mask token nor a sentinel for BabyLM's encoder-decoder conventions."""
    from syntaxgym_helm.clients.seq2seq.babylm_scoring import special_ids

    try:
        special_ids(tokenizer if tokenizer is not None else _tokenizer(checkpoint),
                    checkpoint.source)
    except ValueError as error:
        raise CheckpointError(str(error)) from None


def _tokenizer(checkpoint: Checkpoint):
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(checkpoint.source,
                                             revision=checkpoint.commit or checkpoint.revision)
    except Exception as error:  # noqa: BLE001 - any loading failure: say where
        raise CheckpointError(f"{checkpoint.source}: its tokenizer cannot be loaded "
                              f"({type(error).__name__}: {error}); save it with "
                              "tokenizer.save_pretrained next to the weights") from None


def check_masked_tokenizer(checkpoint: Checkpoint, variant: str, tokenizer: Any = None) -> None:
    """Raise :class:`CheckpointError` when the checkpoint's tokenizer (``tokenizer``: already
    loaded) cannot score ``variant``."""
    from syntaxgym_helm.clients.masked.pll import UnscorableTokenizer, check_tokenizer

    tokenizer = tokenizer if tokenizer is not None else _tokenizer(checkpoint)
    try:
        check_tokenizer(tokenizer, variant, checkpoint.source)  # type: ignore[arg-type]
    except UnscorableTokenizer as error:
        raise CheckpointError(str(error)) from None


def free_name(checkpoint: Checkpoint, identity: CheckpointIdentity,
              variant: str = DEFAULT_VARIANT, name: str | None = None, *,
              replace: bool = False) -> str:
    """The model name for the checkpoint: ``name`` or :func:`model_name_for`'s, unless HELM's
    registry (or this module, in this process) already has it for another checkpoint; then,
    for a name made from the path, that name with 8 hex digits of ``identity`` (and a warning
    naming both), and for a name given, :class:`NameTakenError` naming both (``replace``: the
    name given is taken over, with a warning naming what it named)."""
    wanted = model_name_for(checkpoint, name)
    owner = next(filter(None, (name_owner(taken, identity)
                               for taken in dict.fromkeys((wanted,
                                                           variant_name(wanted, variant))))), None)
    if owner is None:
        return wanted
    if name and replace:
        warnings.warn(f"{wanted} named {owner}; it now names {identity.describe()}",
                      UserWarning, stacklevel=4)
        return wanted
    if name:
        raise NameTakenError(
            f"{wanted} already names {owner}, not {identity.describe()}: give another name, or "
            "replace that deployment (syntaxgym-helm model add ... --replace)")
    renamed = f"{wanted}-{identity.digest[:8]}"
    if name_owner(renamed, identity) is not None:  # 32 bits alike: never in practice
        renamed = f"{wanted}-{identity.digest}"
    warnings.warn(f"{wanted} already names {owner}; {identity.describe()} is named {renamed}",
                  UserWarning, stacklevel=4)
    return renamed


def name_owner(name: str, identity: CheckpointIdentity) -> str | None:
    """What ``name`` names when that is not the checkpoint ``identity``, for messages: the
    checkpoint this process registered under it (a folder's earlier files, when it was saved
    again since), else what HELM's registry deploys under it; None when the name is free or
    names ``identity``."""
    from helm.benchmark.model_deployment_registry import DEPLOYMENT_NAME_TO_MODEL_DEPLOYMENT

    registered = _REGISTERED.get(name)
    if registered is not None and registered.digest != identity.digest:
        return registered.describe()
    deployment = DEPLOYMENT_NAME_TO_MODEL_DEPLOYMENT.get(name)
    if deployment is None:
        return None
    return deployment_owner(deployment.client_spec.args or {}, identity,
                            f"the deployment {name} ({deployment.client_spec.class_name})")


def deployment_owner(args: dict[str, Any], identity: CheckpointIdentity, what: str) -> str | None:
    """For a deployment's client args: None when they point at the checkpoint ``identity``,
    else what they point at (``what`` for a deployment that names no checkpoint)."""
    source = args.get("pretrained_model_name_or_path")
    if not source:
        return what
    theirs = identify(str(source), args.get("gguf_file"), args.get("revision"))
    return None if theirs.digest == identity.digest else theirs.describe()


def resolved_model(model: str, local_path: Path) -> str:
    """:func:`resolve_model` for the Python API: a path is a checkpoint; a name HELM serves
    (plugin, ``local_path``'s YAML, HELM's own) is kept; any other Hub-id-like name is fetched
    from the Hub. Raises the API's ``UnknownModelError`` when none applies."""
    from syntaxgym_helm.api.helm_engine import (
        UnknownModelError,
        model_deployment,
        prepare_registry,
    )

    prepare_registry(local_path)  # its YAML's names are taken before a path is named
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
