"""HELM's HuggingFace client and tokenizer, keeping their answers in the plugin's request cache.

The ``helmhf/`` models, and the HELM deployment of the local-checkpoint example, are scored by
HELM's own ``HuggingFaceClient``: its code loads the model, scores and builds results unchanged.
These subclasses change only where answers are kept (:class:`~.request_cache.RequestCache`
instead of HELM's ``Cache``):

- keys name what the checkpoint's files hold (:mod:`.checkpoint_identity`), not only the model:
  HELM's cache keys on the model name, so a deployment pointed at other weights under the same
  name was answered with the first weights' scores. HELM keeps one loaded model per model name
  and one tokenizer per tokenizer name for the process: when the files change (a folder saved
  again in a notebook), both are dropped and loaded again; a Hub revision is loaded at the commit
  it resolved to;
- an answer holding a value that cannot be a logprob (NaN, an infinity, above 0 beyond rounding)
  is refused, never cached, and its request fails without stopping the run (its item is
  unscorable with the reason);
- the SQLite file cannot hang the run (:mod:`.sqlite_store`), and its errors name it;
- a GGUF checkpoint is loaded from its dequantised copy (the plugin's weights cache, made once),
  not dequantised again in every run: the same weights, read instead of computed; its tokenizer,
  which HELM converts from the file in every run, is read with the plugin's faster GGUF reader
  (:mod:`.local.gguf_parsing`).

Importing this module imports torch and transformers (through HELM's client).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from helm.clients.huggingface_client import HuggingFaceClient
from helm.common.cache import CacheConfig
from helm.common.hierarchical_logger import hlog
from helm.common.request import Request, RequestResult
from helm.common.tokenization_request import (
    DecodeRequest,
    DecodeRequestResult,
    TokenizationRequest,
    TokenizationRequestResult,
)
from helm.tokenizers.huggingface_tokenizer import HuggingFaceTokenizer, WrappedPreTrainedTokenizer
from helm.tokenizers.tokenizer import Tokenizer

from syntaxgym_helm.clients.checkpoint_identity import (
    CheckpointIdentity,
    CheckpointWatch,
    note_use,
)
from syntaxgym_helm.clients.failed_request import failed_request
from syntaxgym_helm.clients.local.gguf_parsing import gguf_parsed_once
from syntaxgym_helm.clients.request_cache import REFUSED_MARK, RequestCache
from syntaxgym_helm.core.logprobs import first_impossible
from syntaxgym_helm.helm_compat import require
from syntaxgym_helm.supported_versions import require_supported


def impossible_hf_logprob(response: Mapping[str, Any]) -> str | None:
    """Why a ``HuggingFaceServer`` response holds a value that cannot be a logprob; None when it
    holds none. The first prompt token's 0.0 is HELM's placeholder (it has no context)."""
    try:
        for completion in response["completions"]:
            prompt = completion.get("prompt_logprobs") or []
            problem = (first_impossible(completion["tokens"], prompt, skip_first=True)
                       or first_impossible(completion["tokens"][len(prompt):],
                                           completion["logprobs"]))
            if problem:
                return problem
    except (KeyError, TypeError, AttributeError) as exc:
        return f"it is malformed ({type(exc).__name__}: {exc})"
    return None


class CheckedHuggingFaceClient(HuggingFaceClient):
    """HELM's ``HuggingFaceClient`` (same arguments) with the plugin's request cache; see the
    module doc. ``checkpoint`` (optional): what names the weights in cache keys, instead of the
    files of ``pretrained_model_name_or_path`` (then they are not watched for changes)."""

    def __init__(self, cache_config: CacheConfig, tokenizer: Tokenizer,
                 pretrained_model_name_or_path: str | None = None,
                 end_of_text_token: str | None = None,
                 apply_chat_template: bool | None = None,
                 checkpoint: str | None = None, **kwargs: Any) -> None:
        require_supported()  # torch, transformers and gguf within the tested ranges
        # Keys name the checkpoint as given (the GGUF file), whichever copy is loaded.
        self.watch = None if checkpoint else CheckpointWatch(
            pretrained_model_name_or_path, kwargs.get("gguf_file"), kwargs.get("revision"))
        self._identity = self.watch.current() if self.watch else CheckpointIdentity(
            str(checkpoint), str(pretrained_model_name_or_path), kwargs.get("gguf_file"))
        if self._identity.commit:
            kwargs = {**kwargs, "revision": self._identity.commit}  # the commit named
        self._given = (pretrained_model_name_or_path, dict(kwargs))
        self._helm_tokenizer = tokenizer  # a HuggingFaceTokenizer (HELM's client checks it)
        if pretrained_model_name_or_path and kwargs.get("gguf_file"):
            pretrained_model_name_or_path, kwargs = _from_dequantised_copy(
                pretrained_model_name_or_path, kwargs)
        super().__init__(cache_config=cache_config, tokenizer=tokenizer,
                         pretrained_model_name_or_path=pretrained_model_name_or_path,
                         end_of_text_token=end_of_text_token,
                         apply_chat_template=apply_chat_template, **kwargs)
        self.request_cache = RequestCache(
            cache_config, key_fields={"checkpoint": self._identity.digest},
            check=impossible_hf_logprob)
        self.cache = self.request_cache

    def make_request(self, request: Request) -> RequestResult:
        if self.watch is not None:
            identity = self.watch.current()
            if identity != self._identity:
                self._load_again(request.model, identity)
        note_use(request.model_deployment, self._identity)
        result = super().make_request(request)
        error = result.error or ""
        if not result.success and result.error_flags is None and REFUSED_MARK in error:
            # HELM would stop the run on this failure: it is one request's (its item unscorable).
            return failed_request(error)
        return result

    def _load_again(self, model_name: str, identity: CheckpointIdentity) -> None:
        """The files changed since HELM loaded them: drop HELM's model (kept per model name)
        and tokenizer (per tokenizer name), so that the next request loads them as they are."""
        from helm.clients.huggingface_client import HuggingFaceServerFactory

        require("huggingface_loaded_models")
        with HuggingFaceServerFactory._servers_lock:
            HuggingFaceServerFactory._servers.pop(model_name, None)
        if isinstance(self._helm_tokenizer, CheckedHuggingFaceTokenizer):
            self._helm_tokenizer.forget_loaded()
        path, kwargs = self._given
        if path and kwargs.get("gguf_file"):  # the new file's dequantised copy
            self._pretrained_model_name_or_path = _from_dequantised_copy(path, kwargs)[0]
        if isinstance(self._helm_tokenizer, HuggingFaceTokenizer):
            self._wrapped_tokenizer = self._helm_tokenizer.get_wrapped_tokenizer()
        self._identity = identity
        self.request_cache.key_fields["checkpoint"] = identity.digest


_ANNOUNCED: set[str] = set()
#: HELM may build a deployment's client in several threads at once: one makes the copy.
_COPY_LOCK = threading.Lock()


def _from_dequantised_copy(pretrained: str, kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Where HELM's client would load a GGUF file, the folder of its dequantised copy (the one
    the plugin's engine reads, made once by ``model_loading.dequantised_copy``) and the
    arguments without ``gguf_file``: the same weights, read from a file instead of dequantised
    in every run. Unchanged where no
    copy can be had; then HELM's own load reports any error."""
    from syntaxgym_helm.clients.local.model_loading import ModelLoadError, dequantised_copy

    try:
        with _COPY_LOCK:
            folder = dequantised_copy(
                pretrained, kwargs["gguf_file"], revision=kwargs.get("revision"),
                trust_remote_code=bool(kwargs.get("trust_remote_code", False)))
    except ModelLoadError:
        folder = None
    if folder is None:
        return pretrained, kwargs
    if str(folder) not in _ANNOUNCED:
        _ANNOUNCED.add(str(folder))
        hlog(f"syntaxgym: HELM's HuggingFaceClient loads {pretrained} / {kwargs['gguf_file']} from "
             f"its dequantised copy {folder}")
    return str(folder), {key: value for key, value in kwargs.items() if key != "gguf_file"}


class CheckedHuggingFaceTokenizer(HuggingFaceTokenizer):
    """HELM's ``HuggingFaceTokenizer`` (same arguments) with the plugin's request cache: the
    same SQLite file as the client of its organisation, which must not hang either, and keys
    that name the tokenizer's files (``checkpoint``: or this text; else the files are watched,
    and the tokenizer HELM keeps for the process is loaded again when they change)."""

    def __init__(self, cache_config: CacheConfig, tokenizer_name: str,
                 pretrained_model_name_or_path: str | None = None,
                 checkpoint: str | None = None, **kwargs: Any) -> None:
        self.watch = None if checkpoint else CheckpointWatch(
            pretrained_model_name_or_path or tokenizer_name, kwargs.get("gguf_file"),
            kwargs.get("revision"))
        self._identity = self.watch.current() if self.watch else None
        if self._identity is not None and self._identity.commit:
            kwargs = {**kwargs, "revision": self._identity.commit}  # the commit named
        super().__init__(cache_config=cache_config, tokenizer_name=tokenizer_name,
                         pretrained_model_name_or_path=pretrained_model_name_or_path, **kwargs)
        identity = checkpoint or (self._identity.digest if self._identity else "")
        self.request_cache = RequestCache(cache_config, key_fields={"checkpoint": identity})
        self.cache = self.request_cache
        self.gguf_file: str | None = kwargs.get("gguf_file")

    def tokenize(self, request: TokenizationRequest) -> TokenizationRequestResult:
        self._follow_files()
        return super().tokenize(request)

    def decode(self, request: DecodeRequest) -> DecodeRequestResult:
        self._follow_files()
        return super().decode(request)

    def _follow_files(self) -> None:
        """When the files changed since they were loaded: load them again, and key anew."""
        if self.watch is None:
            return
        identity = self.watch.current()
        if identity != self._identity:
            self.forget_loaded()
            self._identity = identity
            self.request_cache.key_fields["checkpoint"] = identity.digest

    def forget_loaded(self) -> None:
        """Drop the tokenizer HELM keeps for this tokenizer name (loaded again at next use)."""
        require("huggingface_loaded_models")
        with HuggingFaceTokenizer._tokenizers_lock:
            HuggingFaceTokenizer._tokenizers.pop(self._helm_tokenizer_name, None)

    def get_wrapped_tokenizer(self) -> WrappedPreTrainedTokenizer:
        """HELM's tokenizer; from a GGUF file, the file read by :func:`gguf_parsed_once`'s
        faster reader (the same values)."""
        if not self.gguf_file:
            return super().get_wrapped_tokenizer()
        with gguf_parsed_once():
            return super().get_wrapped_tokenizer()
