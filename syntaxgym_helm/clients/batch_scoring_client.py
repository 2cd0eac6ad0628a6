"""The HELM client shape shared by the masked-LM and encoder-decoder clients: echo requests
(``echo_prompt=True, max_tokens=0``) answered with each prompt token's logprob, computed in
batches.

Before HELM sends a run's requests, the plugin hands the client all of them (:meth:`prefetch`,
:mod:`syntaxgym_helm.clients.local.prefetch`): the prompts the request cache lacks are scored in
a few large, length-sorted passes and kept until HELM asks for them. A prompt not prefetched is
scored alone. The request cache's keys name the checkpoint's files
(:mod:`~syntaxgym_helm.clients.checkpoint_identity`) and the scoring settings. A checkpoint that
cannot be scored (no mask token, a tokenizer without offsets...) fails each of its requests with
one clear, non-fatal error, so the other models of the run go on.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from helm.clients.client import CachingClient
from helm.common.cache import CacheConfig
from helm.common.request import Request, RequestResult, wrap_request_time

from syntaxgym_helm.clients.checkpoint_identity import checkpoint_identity
from syntaxgym_helm.clients.failed_request import failed_request
from syntaxgym_helm.clients.local.client import (
    SyntaxGymClient,
    impossible_logprob,
    result_of_response,
)
from syntaxgym_helm.clients.local.freed_memory import map_large_blocks_apart
from syntaxgym_helm.clients.local.prompt_encoding import PromptError, PromptLogprobs
from syntaxgym_helm.clients.request_cache import RefusedAnswer, RequestCache
from syntaxgym_helm.supported_versions import require_supported

Encoded = TypeVar("Encoded")


def score_usable(encoded: Sequence[Encoded | PromptError],
                 score: Callable[[list[Encoded]], Sequence[PromptLogprobs]],
                 ) -> list[PromptLogprobs | PromptError]:
    """Each prompt's result, in order: the encoded ones scored together by one ``score`` call,
    a refused one's :class:`PromptError` kept in its place."""
    usable = [e for e in encoded if not isinstance(e, PromptError)]
    scored = iter(score(usable))
    return [e if isinstance(e, PromptError) else next(scored) for e in encoded]


class CheckpointUnusable(ValueError):
    """The checkpoint cannot be scored by this client (the message says why and what to do)."""


class BatchScoringClient(CachingClient):
    """Base of :class:`~.masked.client.MaskedLMClient` and :class:`~.seq2seq.client.Seq2SeqClient`.

    Args: ``pretrained_model_name_or_path`` (folder or Hub id), ``device`` (``auto``: CUDA when
    available), ``dtype`` (``float32``), ``max_batch_tokens`` (most positions in one forward
    pass, which bounds its memory; default 4096), ``prefetch`` (default True), ``revision``,
    ``trust_remote_code``. HELM passes ``cache_config`` and ``model_name``.
    """

    #: Part of every cache key; a subclass bumps it when its scores change.
    CACHE_FORMAT = ""

    def __init__(self, cache_config: CacheConfig, pretrained_model_name_or_path: str,
                 device: str = "auto", dtype: str = "float32", max_batch_tokens: int = 4096,
                 prefetch: bool = True, revision: str | None = None,
                 trust_remote_code: bool = False, model_name: str | None = None) -> None:
        require_supported()  # torch, transformers and gguf within the tested ranges
        super().__init__(cache_config=cache_config)
        self.pretrained_model_name_or_path = str(pretrained_model_name_or_path)
        self.requested_device = device
        self.dtype = str(dtype).replace("torch.", "")
        self.max_batch_tokens = int(max_batch_tokens)
        if self.max_batch_tokens < 1:
            raise ValueError(f"max_batch_tokens={max_batch_tokens} must be 1 or more")
        self.prefetch_enabled = bool(prefetch)
        self.revision = revision
        self.trust_remote_code = bool(trust_remote_code)
        self.model_name = model_name
        self.checkpoint = checkpoint_identity(self.pretrained_model_name_or_path, None, revision)
        self.request_cache = RequestCache(cache_config, commit_every=256)
        self.cache = self.request_cache
        self._lock = threading.Lock()
        self._loaded = False
        self._load_error: CheckpointUnusable | None = None
        self._ready: dict[str, PromptLogprobs | PromptError] = {}
        self.counts: Counter[str] = Counter()

    # -- what a subclass provides --------------------------------------------------------------

    def _load(self) -> None:
        """Load the model and tokenizer (raise CheckpointUnusable when they cannot be scored)."""
        raise NotImplementedError

    def _score(self, prompts: Sequence[str]) -> list[PromptLogprobs | PromptError]:
        """Each prompt's token logprobs, in order (the model is loaded)."""
        raise NotImplementedError

    def _key_fields(self) -> dict[str, Any]:
        """The settings that change the scores, for the cache key."""
        return {}

    # -- shared -----------------------------------------------------------------------------------

    @property
    def device(self) -> str:
        from syntaxgym_helm.clients.local.model_loading import resolve_device

        return resolve_device(self.requested_device)

    def _torch_dtype(self):
        from syntaxgym_helm.clients.local.model_loading import resolve_dtype

        return resolve_dtype(self.dtype)

    def _compute(self, prompts: Sequence[str]) -> list[PromptLogprobs | PromptError]:
        with self._lock:
            if self._load_error is not None:
                raise self._load_error
            if not self._loaded:
                # A pass's activations handed back when freed, not kept in the heap beside
                # the next pass's (freed_memory).
                map_large_blocks_apart()
                try:
                    self._load()
                except CheckpointUnusable as error:
                    self._load_error = error
                    raise
                self._loaded = True
            results = self._score(prompts)
            self.counts["prompts"] += len(prompts)
            self.counts["tokens"] += sum(len(r.texts) - 1 for r in results
                                         if isinstance(r, PromptLogprobs))
            return results

    def _cache_key(self, request: Request) -> Mapping:
        raw = {"format": self.CACHE_FORMAT, "model": request.model, "prompt": request.prompt,
               "echo_prompt": True, "max_tokens": 0, "dtype": self.dtype,
               "checkpoint": self.checkpoint, **self._key_fields()}
        return CachingClient.make_cache_key(raw, request)

    def make_request(self, request: Request) -> RequestResult:
        name = type(self).__name__
        problem = SyntaxGymClient.unsupported(request)
        if problem:
            return failed_request(f"{name}: {problem}")

        def compute() -> dict[str, Any]:
            result = self._ready.get(request.prompt) or self._compute([request.prompt])[0]
            if isinstance(result, PromptError):
                raise result
            return {"tokens": list(result.texts), "logprobs": list(result.logprobs)}

        try:
            response, cached = self.request_cache.get(self._cache_key(request),
                                                      wrap_request_time(compute),
                                                      check=impossible_logprob)
        except (PromptError, CheckpointUnusable) as error:
            return failed_request(f"{name}: {error}")
        except RefusedAnswer as error:
            return failed_request(f"{name}: the model's answer cannot be used: {error}; are "
                                  "its weights or its computation broken?")
        return result_of_response(response, cached)

    def prefetch(self, requests: Sequence[Request]) -> int:
        """Score the uncached prompts of ``requests`` now, in batches; returns how many."""
        wanted = [r for r in requests if SyntaxGymClient.unsupported(r) is None]
        if wanted:
            hits = self.request_cache.contains([self._cache_key(r) for r in wanted])
            wanted = [r for r, hit in zip(wanted, hits, strict=True) if not hit]
        prompts = list(dict.fromkeys(r.prompt for r in wanted))
        if not prompts:
            return 0
        try:
            results = self._compute(prompts)
        except CheckpointUnusable:
            return 0  # each request reports it
        self._ready = dict(zip(prompts, results, strict=True))  # this run's, kept for repeats
        return len(prompts)

    def flush(self) -> None:
        self.request_cache.commit()

    def engine_counts(self) -> Counter[str]:
        return Counter(self.counts)
