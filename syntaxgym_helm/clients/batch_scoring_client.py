"""The HELM client shape shared by the masked-LM and encoder-decoder clients: echo requests
(``echo_prompt=True, max_tokens=0``) answered with each prompt token's logprob, computed in
batches.

Before HELM sends a run's requests, the plugin hands the client all of them (:meth:`prefetch`,
:mod:`syntaxgym_helm.clients.local.prefetch`): the prompts the request cache lacks are scored in
a few large, length-sorted passes and kept until HELM asks for them. A prompt not prefetched is
scored alone. The request cache's keys name what the checkpoint's files hold
(:mod:`~syntaxgym_helm.clients.checkpoint_identity`) and the scoring settings; the loaded model is
that of the files as they are at each request: a folder saved again is loaded again, and a
client that loads a folder's new version drops the models other clients loaded from its earlier
versions. A checkpoint that
cannot be scored (no mask token, a tokenizer without offsets...) fails each of its requests with
one clear, non-fatal error, so the other models of the run go on; so does a request whose
scoring fails otherwise (never raised: HELM's executor would retry it for minutes).
"""

from __future__ import annotations

import threading
import weakref
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from helm.clients.client import CachingClient
from helm.common.cache import CacheConfig
from helm.common.hierarchical_logger import hexception
from helm.common.request import Request, RequestResult, wrap_request_time

from syntaxgym_helm.clients.checkpoint_identity import (
    CheckpointIdentity,
    CheckpointWatch,
    note_use,
)
from syntaxgym_helm.clients.failed_request import failed_request
from syntaxgym_helm.clients.local.client import (
    SyntaxGymClient,
    impossible_logprob,
    result_of_response,
)
from syntaxgym_helm.clients.local.freed_memory import map_large_blocks_apart
from syntaxgym_helm.clients.local.prompt_encoding import PromptError, PromptLogprobs
from syntaxgym_helm.clients.request_cache import RefusedAnswer, RequestCache

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
    #: Every client of the process, to drop models loaded from a folder's earlier versions.
    _INSTANCES: weakref.WeakSet[BatchScoringClient] = weakref.WeakSet()
    _model: Any  # set by a subclass's _load
    _tokenizer: Any

    def __init__(self, cache_config: CacheConfig, pretrained_model_name_or_path: str,
                 device: str = "auto", dtype: str = "float32", max_batch_tokens: int = 4096,
                 prefetch: bool = True, revision: str | None = None,
                 trust_remote_code: bool = False, model_name: str | None = None) -> None:
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
        self.watch = CheckpointWatch(self.pretrained_model_name_or_path, None, revision)
        self._loaded_identity: CheckpointIdentity | None = None
        # The identity a run's requests are scored with: the one seen when the run began
        # (prefetch), else the files' at each request.
        self._run_identity: CheckpointIdentity | None = None
        BatchScoringClient._INSTANCES.add(self)
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

    @property
    def checkpoint(self) -> str:
        """The checkpoint's identity now (:mod:`~syntaxgym_helm.clients.checkpoint_identity`)."""
        return self.watch.current().digest

    @property
    def load_revision(self) -> str | None:
        """The revision to load: the commit a Hub revision resolved to (the weights named)."""
        return self.watch.current().commit or self.revision

    def _compute(self, prompts: Sequence[str],
                 identity: CheckpointIdentity | None = None) -> list[PromptLogprobs | PromptError]:
        """The prompts scored by the model of ``identity`` (default: the files as they are)."""
        identity = identity or self.watch.current()
        with self._lock:
            if self._loaded and identity != self._loaded_identity:
                self._unload()  # saved again since it was loaded: load the files as they are
            if self._load_error is not None and identity == self._loaded_identity:
                raise self._load_error
            if not self._loaded:
                self._load_checked(identity)
            results = self._score(prompts)
            self.counts["prompts"] += len(prompts)
            self.counts["tokens"] += sum(len(r.texts) - 1 for r in results
                                         if isinstance(r, PromptLogprobs))
            return results

    def _load_checked(self, identity: CheckpointIdentity) -> None:
        """Load the model of ``identity`` (with the lock held): tokenizer files checked first,
        its vocabulary against the model's embeddings after, and the files unchanged meanwhile;
        the models other clients loaded from the same folder's earlier versions are dropped."""
        from syntaxgym_helm.clients.checkpoint_identity import CheckpointChanged
        from syntaxgym_helm.clients.model_kind import CheckpointError
        from syntaxgym_helm.clients.tokenizer_checks import check_before_load, check_loaded

        # A pass's activations handed back when freed, not kept in the heap beside the next
        # pass's (freed_memory).
        map_large_blocks_apart()
        self._loaded_identity, self._load_error = identity, None
        try:
            try:
                check_before_load(self.pretrained_model_name_or_path)
                self._load()
                check_loaded(self._model, self._tokenizer, self.pretrained_model_name_or_path)
                self.watch.confirm(identity)
            except (CheckpointError, CheckpointChanged) as error:
                raise CheckpointUnusable(str(error)) from None
        except CheckpointUnusable as error:
            self._load_error = error
            self._unload()
            raise
        self._loaded = True
        for other in list(BatchScoringClient._INSTANCES):
            if other is not self and other.pretrained_model_name_or_path == \
                    self.pretrained_model_name_or_path and other._loaded_identity not in (
                        None, identity) and other._lock.acquire(blocking=False):
                try:
                    other._unload()
                finally:
                    other._lock.release()

    def _unload(self) -> None:
        """Drop the loaded model and tokenizer (loaded again at the next prompt)."""
        self._loaded = False
        self._ready = {}
        for name in ("_model", "_tokenizer"):
            self.__dict__.pop(name, None)

    def _cache_key(self, request: Request, checkpoint: str | None = None) -> Mapping:
        raw = {"format": self.CACHE_FORMAT, "model": request.model, "prompt": request.prompt,
               "echo_prompt": True, "max_tokens": 0, "dtype": self.dtype,
               "checkpoint": checkpoint or self.checkpoint, **self._key_fields()}
        return CachingClient.make_cache_key(raw, request)

    def make_request(self, request: Request) -> RequestResult:
        name = type(self).__name__
        problem = SyntaxGymClient.unsupported(request)
        if problem:
            return failed_request(f"{name}: {problem}")

        identity = self._run_identity or self.watch.current()
        note_use(request.model_deployment, identity)

        def compute() -> dict[str, Any]:
            ready = self._ready.get(request.prompt) if identity == self._loaded_identity else None
            result = ready or self._compute([request.prompt], identity)[0]
            if isinstance(result, PromptError):
                raise result
            return {"tokens": list(result.texts), "logprobs": list(result.logprobs)}

        try:
            response, cached = self.request_cache.get(self._cache_key(request, identity.digest),
                                                      wrap_request_time(compute),
                                                      check=impossible_logprob)
        except (PromptError, CheckpointUnusable) as error:
            return failed_request(f"{name}: {error}")
        except RefusedAnswer as error:
            return failed_request(f"{name}: the model's answer cannot be used: {error}; are "
                                  "its weights or its computation broken?")
        except Exception as error:  # noqa: BLE001 - the request fails with the reason
            # Raised, HELM's executor would retry it for minutes (its backoff: 10 to 160 s).
            hexception(error)
            return failed_request(f"{name}: scoring failed: {type(error).__name__}: {error}")
        return result_of_response(response, cached)

    def prefetch(self, requests: Sequence[Request]) -> int:
        """Score the uncached prompts of ``requests`` now, in batches; returns how many."""
        wanted = [r for r in requests if SyntaxGymClient.unsupported(r) is None]
        self._run_identity = identity = self.watch.current()
        if wanted:
            hits = self.request_cache.contains([self._cache_key(r, identity.digest)
                                                for r in wanted])
            wanted = [r for r, hit in zip(wanted, hits, strict=True) if not hit]
        prompts = list(dict.fromkeys(r.prompt for r in wanted))
        if not prompts:
            return 0
        try:
            results = self._compute(prompts, identity)
        except CheckpointUnusable:
            return 0  # each request reports it
        self._ready = dict(zip(prompts, results, strict=True))  # this run's, kept for repeats
        return len(prompts)

    def flush(self) -> None:
        """Commit the request cache's pending writes; forget the run's identity."""
        self._run_identity = None
        self.request_cache.commit()

    def engine_counts(self) -> Counter[str]:
        return Counter(self.counts)
