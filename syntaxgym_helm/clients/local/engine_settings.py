"""The local engine's settings, declared once: :class:`EngineSettings`.

A model deployment's ``client_spec.args`` (HELM's YAML, or the embedded models' registration) are
keywords of :class:`~.client.SyntaxGymClient`; the client reads every one of them but the
checkpoint's path into one ``EngineSettings`` (:meth:`EngineSettings.from_args`: YAML's numbers,
booleans and strings are taken, a string where a number or ``true``/``false`` belongs is read as
one), checked against its type with an error naming the argument. An engine setting is added as one
field here; :meth:`load_args`, :meth:`engine_args` and :meth:`server_args` hand each part on to the
model loader (:mod:`.model_loading`), the :class:`~.logprob_engine.LogprobEngine` and the
:class:`~.server.ModelServer`. docs/models.md lists them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Literal, TypeVar

from syntaxgym_helm.clients.local.dtype_names import dtype_attribute
from syntaxgym_helm.core.options import OptionError, check_fields, option, options_from

DtypeName = Literal["float32", "float", "bfloat16", "float16", "half"]


class EngineSettingError(OptionError):
    """A setting of the local engine has a value it does not take (the message names it)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class EngineSettings:
    """How the local engine loads a checkpoint and batches its prompts."""

    gguf_file: str | None = option(None, "a GGUF file in the checkpoint's folder or repository "
                                   "(dequantised to dtype)")
    device: str = option("auto", "auto (CUDA when available, else CPU), cpu, cuda:0...")
    dtype: DtypeName = option("float32", "float32, bfloat16 or float16 (bf16 flips minimal-pair "
                              "verdicts: score in float32)")
    batch_size: int = option(128, "most prompts in one forward pass", minimum=1)
    bos_text: str | None = option(None, "the beginning-of-text token put before each prompt "
                                  "(default: the tokenizer's bos token, else its eos token)")
    prefix_sharing: bool = option(True, "pack prompts as prefix trees")
    prefix_cache_mb: float = option(160.0, "memory for computed prefixes kept for later "
                                    "batches (0: none)", minimum=0)
    max_batch_positions: int = option(384, "most distinct positions in one forward pass",
                                      minimum=1)
    max_row_nodes: int = option(128, "about how many positions one row of a pass holds",
                                minimum=1)
    max_wait_ms: float = option(20.0, "how long a batch waits for more requests", minimum=0)
    workers: int = option(1, "worker threads computing passes at once, each with its share of "
                          "torch's threads and of prefix_cache_mb", minimum=1)
    word_boundary: bool = option(False, "correct the logprobs for word boundaries (Pimentel & "
                                 "Meister 2024; the ~bow models; docs/scoring.md)")
    boundary_end_of_text: bool = option(True, "with word_boundary: the end of text counts as a "
                                        "word boundary (false: minicons' bow_correction rule)")
    prefetch: bool = option(True, "take all of a run's requests before HELM sends them")
    progress: bool = option(True, "a progress bar on a terminal")
    weights_cache_dir: str | None = option(None, "where dequantised GGUF weights are kept "
                                           "(none: nowhere; default: the plugin's cache)")
    max_sequence_length: int | None = option(None, "the context length (default: the model "
                                             "config's)", minimum=1)
    revision: str | None = option(None, "the checkpoint's revision (from_pretrained)")
    trust_remote_code: bool = option(False, "passed to from_pretrained")
    model_kwargs: Mapping[str, Any] | None = option(None, "more from_pretrained arguments")
    stock: bool = option(False, "score with stock transformers, torch and gguf paths: every "
                         "reach into their internals off (clients/reaches.py; SYNTAXGYM_STOCK=1 "
                         "for every model)")

    def __post_init__(self) -> None:
        check_settings(self)

    @classmethod
    def from_args(cls, values: Mapping[str, Any]) -> EngineSettings:
        """The settings from a deployment's ``args`` (a torch dtype, or ``torch.float32``, is
        taken by its name); an unknown name or a bad value is an error naming it."""
        return settings_from(cls, values, "SyntaxGymClient")

    def updated(self, values: Mapping[str, Any]) -> EngineSettings:
        """These settings with ``values`` (a deployment's ``args``, read as :meth:`from_args`
        reads them); themselves when there are none."""
        if not values:
            return self
        current = {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}
        return EngineSettings.from_args({**current, **values})

    def load_args(self) -> dict[str, Any]:
        """What :func:`~.model_loading.load_model_and_tokenizer` takes besides the path and
        device."""
        return dict(gguf_file=self.gguf_file, dtype=self.dtype, revision=self.revision,
                    trust_remote_code=self.trust_remote_code,
                    weights_cache_dir=self.weights_cache_dir, model_kwargs=self.model_kwargs,
                    stock=self.stock)

    def engine_args(self) -> dict[str, Any]:
        """The :class:`~.logprob_engine.LogprobEngine`'s keyword arguments."""
        return dict(bos_text=self.bos_text, batch_size=self.batch_size,
                    prefix_sharing=self.prefix_sharing,
                    prefix_cache_mb=float(self.prefix_cache_mb),
                    max_row_nodes=self.max_row_nodes,
                    max_batch_positions=self.max_batch_positions,
                    max_sequence_length=self.max_sequence_length,
                    workers=self.workers, word_boundary=self.word_boundary,
                    boundary_end_of_text=self.boundary_end_of_text)

    def server_args(self) -> dict[str, Any]:
        """The :class:`~.server.ModelServer`'s keyword arguments."""
        return dict(max_wait_s=float(self.max_wait_ms) / 1000.0, progress=self.progress)


def check_settings(settings: Any) -> None:
    """Check a client's settings object (each field against its type, the dtype by name),
    raising :class:`EngineSettingError` (the ``__post_init__`` of every client's settings)."""
    try:
        check_fields(settings)
    except OptionError as error:
        raise EngineSettingError(str(error)) from None
    dtype_attribute(settings.dtype)


Settings = TypeVar("Settings")


def settings_from(cls: type[Settings], values: Mapping[str, Any], client: str) -> Settings:
    """A client's settings of class ``cls`` from a deployment's ``args`` (a torch dtype, or
    ``torch.float32``, taken by its name); an unknown name or a bad value is an
    :class:`EngineSettingError` naming ``client`` and the argument."""
    values = dict(values)
    if "dtype" in values:
        values["dtype"] = str(values["dtype"]).replace("torch.", "")
    try:
        return options_from(cls, values, where=f"{client}: ")
    except EngineSettingError:
        raise
    except OptionError as error:
        raise EngineSettingError(str(error)) from None
