"""The request and cache path every local scoring client shares (:class:`EchoScoringClient`):
the causal engine's :class:`~.local.client.SyntaxGymClient` and the masked-LM and
encoder-decoder clients' :class:`~.batch_scoring_client.BatchScoringClient`.

They answer the requests SyntaxGym sends (``echo_prompt=True, max_tokens=0``: each prompt token's
logprob) and nothing else (:meth:`EchoScoringClient.unsupported`); a request's answer comes from
the request cache (:mod:`.request_cache`, keyed by what the subclass says changes the scores) or
is computed and cached, an answer that cannot be a logprob (a NaN from damaged weights) is refused
and never cached (:func:`impossible_logprob`), and a prompt that cannot be scored is a failed,
non-fatal request naming the client; a failure of the model itself stops the run (or, where
:attr:`EchoScoringClient.FATAL_FAILURES` is off, fails the request with the reason).

Every key names what the checkpoint's files hold (:mod:`.checkpoint_identity`): the identity seen
when a run began (its prefetch), else the files' at each request, so a folder saved again is
scored as it is now and never answered from its earlier version's entries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from helm.clients.client import CachingClient
from helm.common.cache import CacheConfig
from helm.common.hierarchical_logger import hexception, hlog
from helm.common.request import GeneratedOutput, Request, RequestResult, Token, wrap_request_time

from syntaxgym_helm.clients.checkpoint_identity import (
    CheckpointIdentity,
    CheckpointWatch,
    note_use,
)
from syntaxgym_helm.clients.failed_request import failed_request
from syntaxgym_helm.clients.local.prompt_encoding import PromptError
from syntaxgym_helm.clients.request_cache import RefusedAnswer, RequestCache
from syntaxgym_helm.core.logprobs import first_impossible
from syntaxgym_helm.supported_versions import require_supported


class EchoScoringClient(CachingClient):
    """A HELM client that scores echo requests, through the request cache (see the module doc).

    A subclass gives :meth:`_cache_key` and :meth:`_response` (the computed answer: ``tokens``
    and ``logprobs``, optionally ``batch_request_time`` and ``batch_size``), each for the
    checkpoint identity given; the exceptions of :attr:`REFUSALS` fail the request alone, any
    other stops the run (:attr:`FATAL_FAILURES`) or fails the request with the reason."""

    #: What refuses one request (a prompt that cannot be scored...), not the run.
    REFUSALS: tuple[type[Exception], ...] = (PromptError,)
    #: Whether any other failure of the scoring stops the run (a broken engine), or only fails
    #: its request with the reason (raised, HELM's executor would retry it for minutes).
    FATAL_FAILURES = True

    def __init__(self, cache_config: CacheConfig, watch: CheckpointWatch) -> None:
        require_supported()  # torch, transformers and gguf within the tested ranges
        super().__init__(cache_config=cache_config)
        self.request_cache = RequestCache(cache_config, commit_every=256)
        self.cache = self.request_cache
        self.watch = watch
        # The identity a run's requests are scored with: the one seen when the run began
        # (prefetch), else the files' at each request.
        self._run_identity: CheckpointIdentity | None = None

    @property
    def checkpoint(self) -> str:
        """The checkpoint's identity now (:mod:`~syntaxgym_helm.clients.checkpoint_identity`)."""
        return self.watch.current().digest

    def _cache_key(self, request: Request, checkpoint: str | None = None) -> Mapping:
        """The request-cache key of ``request`` for the checkpoint ``checkpoint`` (default: the
        files' identity now)."""
        raise NotImplementedError

    def _response(self, request: Request, identity: CheckpointIdentity) -> dict[str, Any]:
        raise NotImplementedError

    @staticmethod
    def unsupported(request: Request) -> str | None:
        """Why no scoring client can serve ``request``; None when it can."""
        if request.embedding:
            return "embeddings are not supported"
        if request.messages or request.multimodal_prompt:
            return "only plain-text prompts are supported (no chat messages or media)"
        if not request.echo_prompt or request.max_tokens != 0:
            return (f"generation is not supported (echo_prompt={request.echo_prompt}, "
                    f"max_tokens={request.max_tokens}): this client only scores prompts, "
                    "which needs echo_prompt=True and max_tokens=0")
        if request.num_completions != 1:
            return f"num_completions={request.num_completions}: only 1 is supported"
        if not request.prompt:
            return "the prompt is empty: there is nothing to score"
        return None

    def make_request(self, request: Request) -> RequestResult:
        name = type(self).__name__
        problem = self.unsupported(request)
        if problem:
            return failed_request(f"{name}: {problem}")
        try:
            identity = self._run_identity or self.watch.current()
            note_use(request.model_deployment, identity)
            response, cached = self.request_cache.get(
                self._cache_key(request, identity.digest),
                wrap_request_time(lambda: self._response(request, identity)),
                check=impossible_logprob)
        except self.REFUSALS as exc:
            return failed_request(f"{name}: {exc}")
        except RefusedAnswer as exc:
            return failed_request(f"{name}: the model's answer cannot be used: {exc}; are its "
                                  "weights or its computation broken?")
        except Exception as exc:  # noqa: BLE001 - a broken model should stop the run, clearly
            _log_once(exc)
            if not self.FATAL_FAILURES:
                return failed_request(f"{name}: scoring failed: {type(exc).__name__}: {exc}")
            return failed_request(f"{name} error: {type(exc).__name__}: {exc}", fatal=True)
        return result_of_response(response, cached)

    def uncached(self, requests: Sequence[Request]) -> list[Request]:
        """The requests of ``requests`` this client can serve and the cache lacks (a run's
        prefetch computes those); the run's identity is taken from the files now."""
        self._run_identity = identity = self.watch.current()
        wanted = [r for r in requests if self.unsupported(r) is None]
        if wanted:
            hits = self.request_cache.contains([self._cache_key(r, identity.digest)
                                                for r in wanted])
            wanted = [r for r, hit in zip(wanted, hits, strict=True) if not hit]
        return wanted

    def flush(self) -> None:
        """Commit the request cache's pending writes (done after each HELM run and at exit);
        the run's identity is forgotten (the next run looks at the files again)."""
        self._run_identity = None
        self.request_cache.commit()


def impossible_logprob(response: Mapping[str, Any]) -> str | None:
    """Why a response holds a value that cannot be a logprob (NaN from damaged weights, an
    infinity, a probability above 1); None when it holds none."""
    try:
        return first_impossible(response["tokens"], response["logprobs"])
    except (KeyError, TypeError) as exc:
        return f"it is malformed ({type(exc).__name__}: {exc})"


def result_of_response(response: Mapping[str, Any], cached: bool) -> RequestResult:
    """HELM's result for a scored prompt's response (its token texts and logprobs, already
    checked by :func:`impossible_logprob`). ``request_time`` is how long the request waited
    (HELM's meaning); what it cost is its share of the forward pass that computed it, as HELM
    records batched inference (absent for clients that do not batch)."""
    tokens = [Token(text=text, logprob=logprob)
              for text, logprob in zip(response["tokens"], response["logprobs"], strict=True)]
    completion = GeneratedOutput(text="".join(response["tokens"]),
                                 logprob=sum(response["logprobs"]), tokens=tokens)
    return RequestResult(success=True, cached=cached, request_time=response["request_time"],
                         request_datetime=response.get("request_datetime"),
                         batch_request_time=response.get("batch_request_time"),
                         batch_size=response.get("batch_size"),
                         completions=[completion], embedding=[])


def _log_once(exc: BaseException) -> None:
    """Log ``exc``'s traceback, once per cause: a model that could not be loaded fails every
    request of the run with it (the engine gives each its own error around the same cause), and
    one traceback says it; the others get a line."""
    cause = exc.__cause__ or exc
    if getattr(cause, "_syntaxgym_logged", False):
        hlog(f"(again) {type(exc).__name__}: {exc}")
        return
    hexception(exc)
    try:
        cause._syntaxgym_logged = True  # type: ignore[attr-defined]
    except AttributeError:  # an exception type with __slots__: logged each time
        pass
