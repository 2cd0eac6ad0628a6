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
versions. A checkpoint that cannot be scored (no mask token, a tokenizer without offsets...)
fails each of its requests with one clear, non-fatal error, so the other models of the run go
on; so does a request whose scoring fails otherwise (never raised: HELM's executor would retry
it for minutes).
"""

from __future__ import annotations

import threading
import weakref
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields
from typing import Any, TypeVar

from helm.clients.client import CachingClient
from helm.common.cache import CacheConfig
from helm.common.request import Request

from syntaxgym_helm.clients.batch_settings import BatchScoringSettings
from syntaxgym_helm.clients.checkpoint_identity import CheckpointIdentity, CheckpointWatch
from syntaxgym_helm.clients.echo_client import EchoScoringClient
from syntaxgym_helm.clients.local.prompt_encoding import PromptError, PromptLogprobs

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


class BatchScoringClient(EchoScoringClient):
    """Base of :class:`~.masked.client.MaskedLMClient` and :class:`~.seq2seq.client.Seq2SeqClient`.

    Args: ``pretrained_model_name_or_path`` (folder or Hub id) and the client's settings, given as
    ``settings`` (a :attr:`SETTINGS`, :mod:`.batch_settings`) or as keywords, which build one
    (YAML's ``args:``). HELM passes ``cache_config`` and ``model_name``.
    """

    #: Part of every cache key; a subclass bumps it when its scores change.
    CACHE_FORMAT = ""
    #: The settings' class (a subclass of :class:`~.batch_settings.BatchScoringSettings`).
    SETTINGS: type[BatchScoringSettings] = BatchScoringSettings
    REFUSALS = (PromptError, CheckpointUnusable)
    FATAL_FAILURES = False
    #: Every client of the process, to drop models loaded from a folder's earlier versions.
    _INSTANCES: weakref.WeakSet[BatchScoringClient] = weakref.WeakSet()
    _model: Any  # set by a subclass's _load
    _tokenizer: Any

    def __init__(self, cache_config: CacheConfig, pretrained_model_name_or_path: str, *,
                 settings: BatchScoringSettings | None = None, model_name: str | None = None,
                 **setting_values: Any) -> None:
        if settings is not None and not isinstance(settings, self.SETTINGS):
            raise TypeError(f"{type(self).__name__}: settings must be a "
                            f"{self.SETTINGS.__name__}, not {type(settings).__name__}")
        given = ({} if settings is None else
                 {field.name: getattr(settings, field.name) for field in fields(settings)})
        self.settings = self.SETTINGS.from_args({**given, **setting_values},
                                                type(self).__name__)
        self.pretrained_model_name_or_path = str(pretrained_model_name_or_path)
        super().__init__(cache_config, CheckpointWatch(self.pretrained_model_name_or_path, None,
                                                       self.settings.revision))
        self.model_name = model_name
        self._loaded_identity: CheckpointIdentity | None = None
        BatchScoringClient._INSTANCES.add(self)
        self._lock = threading.Lock()
        self._loaded = False
        self._load_error: CheckpointUnusable | None = None
        self._ready: dict[str, PromptLogprobs | PromptError] = {}
        self.counts: Counter[str] = Counter()

    @property
    def dtype(self) -> str:
        return self.settings.dtype

    @property
    def revision(self) -> str | None:
        return self.settings.revision

    @property
    def load_revision(self) -> str | None:
        """The revision to load: the commit a Hub revision resolved to (the weights named)."""
        return self.watch.current().commit or self.revision

    @property
    def trust_remote_code(self) -> bool:
        return self.settings.trust_remote_code

    @property
    def max_batch_tokens(self) -> int:
        return self.settings.max_batch_tokens

    @property
    def prefetch_enabled(self) -> bool:
        """Whether the executor hook hands this client its run's requests first."""
        return self.settings.prefetch

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

        return resolve_device(self.settings.device)

    def _torch_dtype(self):
        from syntaxgym_helm.clients.local.model_loading import resolve_dtype

        return resolve_dtype(self.dtype)

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

    def _response(self, request: Request, identity: CheckpointIdentity) -> dict[str, Any]:
        ready = self._ready.get(request.prompt) if identity == self._loaded_identity else None
        result = ready or self._compute([request.prompt], identity)[0]
        if isinstance(result, PromptError):
            raise result
        return {"tokens": list(result.texts), "logprobs": list(result.logprobs)}

    def prefetch(self, requests: Sequence[Request]) -> int:
        """Score the uncached prompts of ``requests`` now, in batches; returns how many."""
        prompts = list(dict.fromkeys(r.prompt for r in self.uncached(requests)))
        if not prompts:
            return 0
        try:
            results = self._compute(prompts, self._run_identity)
        except CheckpointUnusable:
            return 0  # each request reports it
        self._ready = dict(zip(prompts, results, strict=True))  # this run's, kept for repeats
        return len(prompts)

    def engine_counts(self) -> Counter[str]:
        return Counter(self.counts)
