"""What :class:`~syntaxgym_helm.runners.RayRunner` reads from ``runner_config.yaml``: its ``ray:``
section, declared once as :class:`RaySettings`, and what each model's actor asks the cluster for.

HELM reads ``<--local-path>/runner_config.yaml`` for its own runners
(``helm_max_concurrent_workers``, ``slurm_args``, ``slurm_monitor_interval``) and ignores keys it
does not know; the Ray runner reads the same file's ``ray:`` section::

    ray:
      address: auto            # else $RAY_ADDRESS, else a Ray started for the run on this machine
      max_attempts: 2          # a run whose worker died (node lost) is run this often in all
      replicas: 1              # actors per model deployment (each loads the weights once)
      num_cpus: 4              # per actor, for every model (default: the smallest node's CPUs)
      configs: driver          # actors get the driver's parsed configs (files: read the YAML)
      models:                  # per model deployment (or model name), over the defaults above
        syntaxgym/gemma-3-270m-q4_k_m: {memory_gb: 4, num_gpus: 1}

Every value is checked against its type, and an error names the file, the key and what it takes.
What an actor asks for, when the file does not say (:func:`actor_resources`): the CPUs of the
smallest node (one actor a node: torch uses a node's cores within one process), one GPU where the
cluster has GPUs, and host memory from the model's size (:func:`memory_estimate`).
"""

from __future__ import annotations

import dataclasses
import json
import os
import struct
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from syntaxgym_helm.core.options import OptionError, check_fields, option, options_from

#: HELM's runner configuration file in ``--local-path`` (helm.benchmark.config_registry's name).
RUNNER_CONFIG_FILE = "runner_config.yaml"
#: The section of that file the Ray runner reads.
SECTION = "ray"
#: What a run of the plugin's engine holds besides the weights: Python, torch, transformers and
#: HELM (about 0.4 GiB), the prefix store and a pass's activations (docs/scaling.md, Memory).
MEMORY_FLOOR_BYTES = 1 << 30
#: The weights' share: the fp32 weights as oneDNN packs them, and the loading's copy (a peak of
#: about 1.5 times the fp32 weights is measured; 2 leaves a margin).
MEMORY_PER_FP32_BYTE = 2.0
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".gguf", ".pt", ".pth")
_DTYPE_BYTES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1,
                "U8": 1, "BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1}


class RaySettingsError(OptionError):
    """A value of ``runner_config.yaml``'s ``ray:`` section that the runner does not take."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class ModelResources:
    """What one actor asks the cluster for (None: decided by :func:`actor_resources`)."""

    num_cpus: float | None = option(None, "CPUs per actor (default: the smallest node's)",
                                    minimum=0)
    num_gpus: float | None = option(None, "GPUs per actor (default: 1 where the cluster has "
                                    "GPUs, else 0)", minimum=0)
    memory_gb: float | None = option(None, "host memory per actor, GiB (default: from the "
                                     "model's size)", minimum=0)
    replicas: int | None = option(None, "actors per model deployment (default 1)", minimum=1)

    def __post_init__(self) -> None:
        check_fields(self)

    def over(self, base: ModelResources) -> ModelResources:
        """These values, ``base``'s where these are None."""
        return ModelResources(**{f.name: getattr(base, f.name) if getattr(self, f.name) is None
                                 else getattr(self, f.name) for f in dataclasses.fields(self)})


@dataclasses.dataclass(frozen=True, kw_only=True)
class RaySettings(ModelResources):
    """``runner_config.yaml``'s ``ray:`` section."""

    address: str | None = option(None, "the cluster (host:port, auto, ray://...); default "
                                 "$RAY_ADDRESS, else a Ray started for the run")
    connect_timeout_s: float = option(20.0, "how long connecting may take", minimum=1)
    max_attempts: int = option(2, "how often a run is tried when its worker dies", minimum=1)
    shared_output: Literal["auto"] | bool = option(
        "auto", "whether workers see --output-path (auto: each worker checks); false: the runs' "
        "files come back to the driver")
    request_cache: Literal["node", "local_path"] = option(
        "node", "node: each node's <plugin cache>/ray_request_cache; local_path: "
        "<--local-path>/cache, as HELM's own runner (one machine, or a file system with "
        "working locks)")
    configs: Literal["driver", "files"] = option(
        "driver", "driver: each actor gets the driver's parsed model, metadata and tokenizer "
        "configs; files: each actor reads HELM's and --local-path's YAML, as helm-run does")
    models: Mapping[str, Any] | None = option(None, "per model deployment or model name: "
                                              "num_cpus, num_gpus, memory_gb, replicas")

    def __post_init__(self) -> None:
        check_fields(self)
        for name, values in (self.models or {}).items():
            if not isinstance(values, Mapping):
                raise RaySettingsError(f"models.{name} is {values!r}, not a mapping of "
                                       "num_cpus, num_gpus, memory_gb, replicas")
            options_from(ModelResources, values, where=f"models.{name}: ")

    def for_model(self, deployment: str, model: str | None) -> ModelResources:
        """The resources the file gives ``deployment`` (its own entry, else its model's, over
        the section's defaults)."""
        models = self.models or {}
        values = models.get(deployment) or models.get(model or "") or {}
        return options_from(ModelResources, values).over(self)


def read_settings(local_path: str | None) -> RaySettings:
    """The ``ray:`` section of ``<local_path>/runner_config.yaml`` (defaults where there is no
    file or section); a bad value is a :class:`RaySettingsError` naming the file and key."""
    path = Path(local_path or ".") / RUNNER_CONFIG_FILE
    if not path.is_file():
        return RaySettings()
    import yaml

    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise RaySettingsError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None
    section = raw.get(SECTION) if isinstance(raw, Mapping) else None
    if section is None:
        return RaySettings()
    if not isinstance(section, Mapping):
        raise RaySettingsError(f"{path}: {SECTION}: is {section!r}, not a mapping")
    try:
        return options_from(RaySettings, section, where=f"{path}, {SECTION}: ")
    except OptionError as error:
        message = str(error)
        if not message.startswith(str(path)):
            message = f"{path}, {SECTION}: {message}"
        raise RaySettingsError(message) from None


@dataclasses.dataclass(frozen=True)
class ActorResources:
    """What one actor of a model deployment asks for, and how many of them there are."""

    num_cpus: float
    num_gpus: float
    memory_bytes: int
    replicas: int

    def ray_options(self) -> dict[str, Any]:
        return {"num_cpus": self.num_cpus, "num_gpus": self.num_gpus,
                "memory": self.memory_bytes}

    def describe(self) -> str:
        return (f"{self.num_cpus:g} CPU, {self.num_gpus:g} GPU, "
                f"{self.memory_bytes / 2**30:.1f} GiB")


def actor_resources(settings: RaySettings, deployment: str, nodes: Sequence[Mapping[str, float]],
                    ) -> ActorResources:
    """What an actor of ``deployment`` asks for: the file's values, else one actor a node (the
    CPUs of the smallest node among ``nodes``, Ray's resource totals of the alive nodes; per GPU
    where it has GPUs), one GPU where the cluster has any, and host memory for the model's size."""
    model = _model_name(deployment)
    given = settings.for_model(deployment, model)
    gpus_somewhere = any(node.get("GPU", 0) > 0 for node in nodes)
    num_gpus = given.num_gpus if given.num_gpus is not None else (1.0 if gpus_somewhere else 0.0)
    if given.num_cpus is not None:
        num_cpus = given.num_cpus
    else:
        usable = [node for node in nodes if node.get("GPU", 0) >= num_gpus] or nodes
        per_node = [node.get("CPU", 1) / (max(1.0, node.get("GPU", 0)) if num_gpus else 1.0)
                    for node in usable]
        num_cpus = max(1.0, min(per_node, default=1.0))
    memory = (int(given.memory_gb * 2**30) if given.memory_gb is not None
              else memory_estimate(deployment))
    return ActorResources(num_cpus, num_gpus, memory, given.replicas or 1)


def memory_estimate(deployment: str) -> int:
    """Host memory for a run of ``deployment``: :data:`MEMORY_FLOOR_BYTES` plus
    :data:`MEMORY_PER_FP32_BYTE` times its fp32 weights, their count read from the model's
    ``num_parameters``, else the safetensors headers of its checkpoint, else its weight files'
    size; the floor alone for a model served elsewhere (no weights here)."""
    parameters = _parameter_count(deployment)
    return int(MEMORY_FLOOR_BYTES + MEMORY_PER_FP32_BYTE * 4 * parameters)


def _model_name(deployment: str) -> str | None:
    from helm.benchmark.model_deployment_registry import get_model_deployment

    try:
        return get_model_deployment(deployment).model_name
    except ValueError:
        return None


def _parameter_count(deployment: str) -> int:
    from helm.benchmark.model_deployment_registry import get_model_deployment
    from helm.benchmark.model_metadata_registry import MODEL_NAME_TO_MODEL_METADATA

    try:
        spec = get_model_deployment(deployment)
    except ValueError:
        return 0
    metadata = MODEL_NAME_TO_MODEL_METADATA.get(spec.model_name or deployment)
    if metadata is not None and metadata.num_parameters:
        return int(metadata.num_parameters)
    source = spec.client_spec.args.get("pretrained_model_name_or_path")
    if not source or not os.path.exists(str(source)):
        return 0
    return checkpoint_parameters(Path(str(source)))


def checkpoint_parameters(path: Path) -> int:
    """The parameters of a checkpoint folder (or file): counted from its safetensors headers,
    else its weight files' bytes read as fp32 (an upper bound for 16-bit files)."""
    files = [path] if path.is_file() else sorted(p for p in path.iterdir()
                                                 if p.suffix in _WEIGHT_SUFFIXES)
    safetensors = [p for p in files if p.suffix == ".safetensors"]
    if safetensors:
        return sum(_safetensors_parameters(p) for p in safetensors)
    return sum(p.stat().st_size for p in files) // 4


def _safetensors_parameters(path: Path) -> int:
    """The element count of every tensor in a safetensors file, from its JSON header (an
    8-byte little-endian length, then the header); its bytes / 4 where the header is unreadable."""
    try:
        with path.open("rb") as file:
            (length,) = struct.unpack("<Q", file.read(8))
            header = json.loads(file.read(length))
        count = 0
        for name, tensor in header.items():
            if name == "__metadata__":
                continue
            elements = 1
            for size in tensor["shape"]:
                elements *= int(size)
            count += elements if tensor.get("dtype") in _DTYPE_BYTES else 0
        return count
    except (OSError, ValueError, KeyError, TypeError, struct.error):
        return path.stat().st_size // 4
