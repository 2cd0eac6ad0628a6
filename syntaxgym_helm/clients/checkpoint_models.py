"""A checkpoint as HELM model entries: deployment, metadata and tokenizer config, with no YAML
written by hand.

:func:`checkpoint_entries` gives the three entries in the form of HELM's YAML files
(``model_deployments.yaml``, ``model_metadata.yaml``, ``tokenizer_configs.yaml``): what
``syntaxgym-helm model add`` writes into ``prod_env/``, and what the Python API registers in the
process (:func:`register_entries`, through HELM's own parsers of those files). The client follows
the checkpoint's kind (:mod:`.model_kind`): the plugin's local engine for causal LMs,
:class:`~.masked.client.MaskedLMClient` (pseudo-log-likelihood, one deployment per variant) and
:class:`~.seq2seq.client.Seq2SeqClient` (one deployment per convention).

Model names: ``local/<label>`` for a folder or GGUF file (``<label>``: the folder's or file's
name, or ``--name``), the Hub id for a Hub model (``<id>@<revision>`` at a revision other than
the default branch: :data:`REVISION_MARK`); a Hub model's deployment loads the commit its
revision resolved to. A scoring variant is ``<name>~<variant>``, its own leaderboard row
(``~within_word_l2r`` for a masked LM, ``~enc_dec_mask`` and ``~enc_dec_prefix`` for an
encoder-decoder LM: :mod:`syntaxgym_helm.core.scoring_variants`).
"""

from __future__ import annotations

import datetime
import json
import re
from pathlib import Path
from typing import Any

from syntaxgym_helm.clients.class_paths import (
    HF_TOKENIZER,
    LOCAL_CLIENT,
    MASKED_CLIENT,
    NO_TOKENIZER_WINDOW_SERVICE,
    SEQ2SEQ_CLIENT,
)
from syntaxgym_helm.clients.model_kind import Checkpoint
from syntaxgym_helm.core.scoring_variants import DEFAULT_VARIANT, variant, variant_name

#: Separates a Hub id from a revision (``EleutherAI/pythia-160m@step1000``).
REVISION_MARK = "@"
KIND_WORDS = {"causal": "causal LM", "masked": "masked LM", "seq2seq": "encoder-decoder LM"}


def model_name_for(checkpoint: Checkpoint, name: str | None = None) -> str:
    """The HELM model name of a checkpoint (see the module doc)."""
    if name:
        return name if "/" in name else f"local/{name}"
    if Path(checkpoint.source).is_dir():
        label = re.sub(r"[^\w.-]+", "-", checkpoint.label).strip("-") or "checkpoint"
        return f"local/{label}"
    name = checkpoint.source if "/" in checkpoint.source else f"hub/{checkpoint.source}"
    if checkpoint.revision and checkpoint.revision != "main":
        name += REVISION_MARK + checkpoint.revision
    return name


def checkpoint_entries(checkpoint: Checkpoint, name: str | None = None,
                       variants: tuple[str, ...] = (DEFAULT_VARIANT,),
                       client_args: dict[str, Any] | None = None,
                       ) -> dict[str, list[dict[str, Any]]]:
    """The YAML-form entries of ``checkpoint``: ``{"model_deployments": [...], "models": [...],
    "tokenizer_configs": [...]}``, one deployment and model per scoring variant of ``variants``
    (each one of the checkpoint's kind: KeyError otherwise)."""
    base = model_name_for(checkpoint, name)
    weights = {"pretrained_model_name_or_path": checkpoint.source}
    if checkpoint.gguf_file:
        weights["gguf_file"] = checkpoint.gguf_file
    if checkpoint.commit or checkpoint.revision:  # a Hub model: the commit named, pinned
        weights["revision"] = str(checkpoint.commit or checkpoint.revision)
    entries: dict[str, list[dict[str, Any]]] = {
        "model_deployments": [], "models": [],
        "tokenizer_configs": [{
            "name": base,
            "tokenizer_spec": {"class_name": HF_TOKENIZER, "args": dict(weights)},
            "end_of_text_token": _special_token(checkpoint, "eos_token") or "",
            "prefix_token": "",
        }]}
    for scoring in variants:
        model = variant_name(base, scoring)
        args: dict[str, Any] = {**weights, **(client_args or {}),
                                **variant(checkpoint.kind, scoring).client_args}
        deployment: dict[str, Any] = {
            "name": model, "model_name": model, "tokenizer_name": base,
            "max_sequence_length": _context(checkpoint),
            "client_spec": {"class_name": _CLIENTS[checkpoint.kind], "args": args},
            "window_service_spec": {"class_name": NO_TOKENIZER_WINDOW_SERVICE, "args": {}},
        }
        entries["model_deployments"].append(deployment)
        entries["models"].append({
            "name": model,
            "display_name": _display_name(checkpoint, base, scoring),
            "description": f"{KIND_WORDS[checkpoint.kind]} from {checkpoint.source}"
                           + (f" ({checkpoint.gguf_file})" if checkpoint.gguf_file else "")
                           + (f" at commit {checkpoint.commit}" if checkpoint.commit else "")
                           + (f", pseudo-log-likelihood {scoring}"
                              if checkpoint.kind == "masked" else "")
                           + (f", {variant(checkpoint.kind, scoring).description}"
                              if checkpoint.kind != "masked" and scoring != DEFAULT_VARIANT
                              else ""),
            "creator_organization_name": base.split("/", 1)[0],
            "access": "open",
            "release_date": datetime.date.today(),
            "tags": ["TEXT_MODEL_TAG"],
        })
    return entries


_CLIENTS = {"causal": LOCAL_CLIENT, "masked": MASKED_CLIENT, "seq2seq": SEQ2SEQ_CLIENT}


def _display_name(checkpoint: Checkpoint, base: str, scoring: str) -> str:
    label = base.split("/", 1)[1] if base.startswith(("local/", "hub/")) else base
    if checkpoint.kind == "masked":
        return f"{label} (PLL {scoring})"
    if checkpoint.kind == "causal":
        return label if scoring == DEFAULT_VARIANT else f"{label} ({scoring})"
    return (f"{label} (encoder-decoder)" if scoring == DEFAULT_VARIANT
            else f"{label} (encoder-decoder, {scoring})")


def register_entries(entries: dict[str, list[dict[str, Any]]]) -> None:
    """Register the entries with HELM in this process, through the parsers of its YAML files."""
    import cattrs
    import dacite
    from helm.benchmark.model_deployment_registry import (
        ModelDeployments,
        register_model_deployment,
    )
    from helm.benchmark.model_metadata_registry import ModelMetadataList, register_model_metadata
    from helm.benchmark.tokenizer_config_registry import (
        TokenizerConfigs,
        register_tokenizer_config,
    )

    for config in cattrs.structure({"tokenizer_configs": entries["tokenizer_configs"]},
                                   TokenizerConfigs).tokenizer_configs:
        register_tokenizer_config(config)
    for metadata in dacite.from_dict(ModelMetadataList, {"models": entries["models"]}).models:
        register_model_metadata(metadata)
    for deployment in cattrs.structure({"model_deployments": entries["model_deployments"]},
                                       ModelDeployments).model_deployments:
        register_model_deployment(deployment)


def _config(checkpoint: Checkpoint) -> dict[str, Any]:
    path = Path(checkpoint.source) / "config.json"
    try:
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError):
        return {}


def _context(checkpoint: Checkpoint) -> int:
    config = _config(checkpoint)
    for key in ("max_position_embeddings", "n_positions", "max_sequence_length"):
        if isinstance(config.get(key), int) and config[key] > 0:
            return int(config[key])
    return 2048


def _special_token(checkpoint: Checkpoint, key: str) -> str | None:
    for file in ("tokenizer_config.json", "special_tokens_map.json"):
        path = Path(checkpoint.source) / file
        try:
            text = path.read_text(encoding="utf-8") if path.is_file() else "{}"
            value = json.loads(text).get(key)
        except (OSError, ValueError):
            continue
        if isinstance(value, dict):
            value = value.get("content")
        if isinstance(value, str):
            return value
    return None
