"""What a checkpoint is, read from its files before any weights are loaded: where its config and
weights are, and whether it is a causal, masked or encoder-decoder LM.

The kind comes from ``config.json``: its ``architectures`` (``...ForMaskedLM``, ``...ForCausalLM``
/ ``...LMHeadModel``, ``...ForConditionalGeneration`` with ``is_encoder_decoder``), else its
``model_type`` looked up in transformers' auto-model mappings (an encoder-decoder config is
scored as one; a model type with a masked-LM class and no ``is_decoder`` as masked). A GGUF file
is a causal LM (llama.cpp's format holds decoder-only models). A Hub id is read at a revision
(default: its default branch), resolved to the commit it is now
(:func:`~.hub_revisions.hub_commit`), which the deployment then loads. Every refusal names
the path and what to do (:class:`CheckpointError`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from syntaxgym_helm.clients.hub_revisions import hub_commit, looks_like_hub_id

ModelKind = Literal["causal", "masked", "seq2seq"]
MODEL_KINDS: tuple[ModelKind, ...] = ("causal", "masked", "seq2seq")
#: Files that hold a transformers checkpoint's weights.
WEIGHTS_PATTERNS = ("*.safetensors", "pytorch_model*.bin", "model*.bin", "tf_model.h5",
                    "flax_model.msgpack")
GGUF_MAGIC = b"GGUF"


class CheckpointError(ValueError):
    """A checkpoint the plugin cannot score; the message names the path and what to do."""


@dataclass(frozen=True)
class Checkpoint:
    """Where a checkpoint's files are and what kind of LM it is."""

    source: str  # a folder, or a Hub id
    kind: ModelKind
    gguf_file: str | None = None  # a GGUF file in ``source``
    model_type: str = ""
    revision: str | None = None  # a Hub id's revision, as asked (None: the default branch)
    commit: str | None = None  # the commit a Hub id's revision resolved to

    @property
    def label(self) -> str:
        """A short readable name: the folder's or file's name, or the Hub id."""
        if self.gguf_file:
            return Path(self.gguf_file).stem
        path = Path(self.source)
        return path.name if path.is_dir() else self.source


def inspect_checkpoint(source: str | Path, kind: str | None = None,
                       revision: str | None = None) -> Checkpoint:
    """The :class:`Checkpoint` at ``source``: a folder with ``config.json`` and weights, a GGUF
    file (or a folder holding exactly one), or a Hub id at ``revision`` (its config is fetched by
    transformers, at the commit the revision resolves to). ``kind`` overrides what the config
    says."""
    text = str(source)
    path = Path(text).expanduser()
    if kind is not None and kind not in MODEL_KINDS:
        raise CheckpointError(f"kind={kind!r} is not one of {', '.join(MODEL_KINDS)}")
    if path.is_file():
        return _gguf(path, kind)
    if path.is_dir():
        return _folder(path, kind)
    if looks_like_hub_id(text):
        return _hub(text, kind, revision)
    raise CheckpointError(f"{text}: no such file or folder, and not a Hugging Face Hub id; give "
                          "a folder with config.json and weights, a .gguf file or a Hub id")


def _gguf(path: Path, kind: str | None) -> Checkpoint:
    with path.open("rb") as stream:
        magic = stream.read(4)
    if magic != GGUF_MAGIC:
        raise CheckpointError(
            f"{path}: not a GGUF model file (it starts with {magic!r}, not {GGUF_MAGIC!r}); give "
            "a .gguf file written by llama.cpp or a folder with config.json and weights")
    if kind not in (None, "causal"):
        raise CheckpointError(f"{path}: a GGUF file is scored as a causal LM, not kind={kind}")
    return Checkpoint(str(path.parent.resolve()), "causal", gguf_file=path.name)


def _folder(path: Path, kind: str | None) -> Checkpoint:
    ggufs = sorted(path.glob("*.gguf"))
    config_file = path / "config.json"
    if not config_file.is_file():
        if len(ggufs) == 1:
            return _gguf(ggufs[0], kind)
        raise CheckpointError(
            f"{path}: no config.json in this folder"
            + (f" (and {len(ggufs)} GGUF files: name one)" if ggufs else "")
            + "; give the folder save_pretrained wrote (config.json, weights, tokenizer files)")
    if not any(any(path.glob(pattern)) for pattern in WEIGHTS_PATTERNS):
        raise CheckpointError(
            f"{path}: config.json but no weights (no *.safetensors or pytorch_model.bin); copy "
            "the weights files next to it, or save the model with save_pretrained")
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise CheckpointError(
            f"{config_file}: unreadable ({error}); is the file complete?"
        ) from None
    return Checkpoint(str(path.resolve()), _kind(config, str(path), kind),
                      model_type=str(config.get("model_type", "")))


def _hub(hub_id: str, kind: str | None, revision: str | None) -> Checkpoint:
    """A Hub id's checkpoint, its config read at the commit its revision resolves to. When the
    config is not in the local Hub cache and the Hub cannot be reached (offline mode, no
    network), a :class:`CheckpointError` at once, not after the Hub client's retries (23 s
    offline)."""
    at = f" at revision {revision}" if revision else ""
    if not _cached_config(hub_id, revision):
        unreachable = hub_unreachable()
        if unreachable:
            raise CheckpointError(
                f"{hub_id}: no such local file or folder, and not in the local Hugging Face "
                f"cache{at}; the Hub cannot be asked ({unreachable}): check the name, or "
                "download the model and give its folder")
    commit = hub_commit(hub_id, revision)
    try:
        from transformers import AutoConfig

        config = AutoConfig.from_pretrained(hub_id, revision=commit or revision).to_dict()
    except Exception as error:  # noqa: BLE001 - offline, unknown id, gated: say which
        raise CheckpointError(
            f"{hub_id}: neither a local path nor a Hub model whose config could be read{at} "
            f"({type(error).__name__}: {error}); check the id, the revision, the network, or "
            "download the model and give its folder") from None
    return Checkpoint(hub_id, _kind(config, hub_id, kind),
                      model_type=str(config.get("model_type", "")), revision=revision,
                      commit=commit)


def _cached_config(hub_id: str, revision: str | None) -> bool:
    """Whether the local Hub cache holds the model's config (nothing is asked of the Hub)."""
    try:
        from transformers import AutoConfig

        AutoConfig.from_pretrained(hub_id, revision=revision, local_files_only=True)
    except Exception:  # noqa: BLE001 - not cached (or not loadable: the Hub is asked)
        return False
    return True


#: How long the check that the Hub can be reached waits for a connection (seconds).
HUB_CONNECT_TIMEOUT_S = 5.0


def hub_unreachable(timeout_s: float = HUB_CONNECT_TIMEOUT_S) -> str:
    """Why the Hugging Face Hub cannot be asked now ("" when it may be): its offline mode
    (``HF_HUB_OFFLINE``, as huggingface_hub reads it), or no connection to its endpoint within
    ``timeout_s`` (not tried through a proxy, which may reach what this host cannot)."""
    import socket
    import urllib.request
    from urllib.parse import urlsplit

    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        return "HF_HUB_OFFLINE is set"
    if urllib.request.getproxies():
        return ""
    endpoint = urlsplit(constants.ENDPOINT)
    host = endpoint.hostname or ""
    port = endpoint.port or (443 if endpoint.scheme == "https" else 80)
    try:
        socket.create_connection((host, port), timeout=timeout_s).close()
    except OSError as error:
        return f"{host}:{port} cannot be reached: {error.strerror or error}"
    return ""


def _kind(config: dict, where: str, kind: str | None) -> ModelKind:
    if kind is not None:
        return kind  # type: ignore[return-value]
    architectures = [str(name) for name in config.get("architectures") or []]
    encoder_decoder = bool(config.get("is_encoder_decoder"))
    for name in architectures:
        if name.endswith("ForMaskedLM"):
            return "masked"
        if name.endswith(("ForCausalLM", "LMHeadModel")) and not encoder_decoder:
            return "causal"
        if encoder_decoder and name.endswith(("ForConditionalGeneration", "Seq2SeqLM")):
            return "seq2seq"
    from transformers.models.auto import modeling_auto as auto

    model_type = str(config.get("model_type", ""))
    if encoder_decoder and model_type in auto.MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES:
        return "seq2seq"
    if model_type in auto.MODEL_FOR_MASKED_LM_MAPPING_NAMES and not config.get("is_decoder"):
        return "masked"
    if model_type in auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES and not encoder_decoder:
        return "causal"
    raise CheckpointError(
        f"{where}: cannot score this architecture (architectures={architectures or 'none'}, "
        f"model_type={model_type or 'none'}): the plugin scores causal LMs, masked LMs "
        "(...ForMaskedLM) and encoder-decoder LMs (T5 family); if the config is wrong, give "
        "the kind yourself (--kind causal|masked|seq2seq)")
