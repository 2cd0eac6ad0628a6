"""The thin HELM client of the local engine: turns HELM requests into prompts for a model server
and the server's token logprobs into HELM results (as HELM's ``HuggingFaceClient`` does for its
``HuggingFaceServer``).

``SyntaxGymClient`` answers the requests SyntaxGym (and any perplexity-style run) sends: echo the
prompt, generate nothing (``echo_prompt=True, max_tokens=0``), and report each prompt token's
logprob. It differs from HELM's ``HuggingFaceClient`` in four ways:

1. **The first token gets a context.** It puts the model's beginning-of-text token before the
   prompt, returns it as the first token (logprob 0.0, never part of the prompt) and then every
   prompt token with its real logprob given the beginning-of-text token and the tokens before it.
2. **Token texts are exact.** Each token's text is the slice of the prompt its characters come
   from (the tokenizer's offsets; a leading space belongs to the token after it; a character
   split over several tokens belongs to the last of them, the pieces before it are ``""``), so
   the texts after the first concatenate to exactly the prompt.
3. **Batches.** Requests from HELM's worker threads are gathered by the model server's engine
   thread into batches (:mod:`.server`). Before HELM executes a run, the plugin hands the client
   all of the run's requests (:mod:`.prefetch`), so batches are as large as configured whatever
   ``--num-threads`` is; without that, a batch closes as soon as every HELM thread waits.
4. **Prefix sharing.** The prompts of a batch are packed as prefix trees and prefixes computed in
   earlier batches are reused (:mod:`.logprob_engine`), so cost follows distinct prefixes, not
   tokens. The results equal one-prompt-at-a-time scoring up to float rounding
   (checked on every model load; a model that ignores custom masks, position ids or past keys and
   values, or post-processes its logits, falls back to plain padded batches).

Identical prompts are computed once: HELM's request cache serves repeats across runs
(:mod:`syntaxgym_helm.clients.request_cache`; its keys name the checkpoint's files, and an answer
that cannot be a logprob, a NaN from damaged weights, is refused, never cached), and the server
does not compute again a prompt already queued or recently computed. Requests it cannot serve
(generation, several completions, chat messages, an empty or over-long prompt) fail with a clear
error that HELM records as a non-fatal, non-retried failure, so the run goes on and the metric
reports it. Models are loaded by :mod:`.model_loading` (GGUF files are dequantised once and cached).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

from helm.clients.client import CachingClient
from helm.common.cache import CacheConfig
from helm.common.hierarchical_logger import hexception, hlog
from helm.common.request import (
    GeneratedOutput,
    Request,
    RequestResult,
    Token,
    wrap_request_time,
)

from syntaxgym_helm.clients import interruption
from syntaxgym_helm.clients.checkpoint_identity import checkpoint_identity
from syntaxgym_helm.clients.failed_request import failed_request
from syntaxgym_helm.clients.local.engine_settings import EngineSettings
from syntaxgym_helm.clients.local.prompt_encoding import PromptError, PromptLogprobs
from syntaxgym_helm.clients.request_cache import RefusedAnswer, RequestCache
from syntaxgym_helm.core.logprobs import first_impossible

if TYPE_CHECKING:
    from syntaxgym_helm.clients.local.server import ModelServer

__all__ = ["SyntaxGymClient"]

CACHE_FORMAT = "syntaxgym-echo-logprobs-v3"
"""Part of every cache key: bump when the logprobs or the stored response change (v2: a character
split over several tokens goes with the last of them, see ``texts_from_offsets``; v3: a
sliding-window model's layers see only their window past it, see ``.local.sliding_window``)."""


class SyntaxGymClient(CachingClient):
    """HELM client scoring echo requests (``echo_prompt=True, max_tokens=0``) locally.

    Args (the ``args`` of a model deployment's ``client_spec``): ``pretrained_model_name_or_path``
    (a hub name or local folder) and the engine's settings, given as ``settings`` (an
    :class:`~.engine_settings.EngineSettings`) or as keywords, which build one (YAML's ``args:``);
    docs/models.md lists them. HELM passes ``cache_config`` (its request cache) and
    ``model_name`` itself.
    """

    def __init__(self, cache_config: CacheConfig, pretrained_model_name_or_path: str, *,
                 settings: EngineSettings | None = None, model_name: str | None = None,
                 **setting_values: Any) -> None:
        super().__init__(cache_config=cache_config)
        self.settings = (settings or EngineSettings()).updated(setting_values)
        self.pretrained_model_name_or_path = pretrained_model_name_or_path
        self.model_name = model_name
        self._server: ModelServer | None = None
        # The checkpoint's files, in every cache key: another checkpoint under this model name
        # gets its own entries.
        self.checkpoint = checkpoint_identity(pretrained_model_name_or_path,
                                              self.settings.gguf_file, self.settings.revision)
        self.request_cache = RequestCache(cache_config, commit_every=256)
        self.cache = self.request_cache
        self._prefetched: dict[str, Mapping] = {}  # prompt -> cache key, of the current run
        interruption.register(self)

    @property
    def dtype(self) -> str:
        return self.settings.dtype

    @property
    def bos_text(self) -> str | None:
        return self.settings.bos_text

    @property
    def prefetch_enabled(self) -> bool:
        """Whether the executor hook hands this client its run's requests first
        (:mod:`.prefetch`)."""
        return self.settings.prefetch

    # torch, transformers and the engine are imported at the first prompt to compute, not with
    # the client: a run whose every request is in the request cache never imports them (a large
    # share of a cached rerun's time).

    @cached_property
    def device(self) -> str:
        """The device the model runs on (``auto`` resolved: CUDA when available, else CPU)."""
        from syntaxgym_helm.clients.local.model_loading import resolve_device

        return resolve_device(self.settings.device)

    @property
    def _model_key(self) -> tuple:
        """What one loaded model is shared by (:class:`~.server.ModelServerFactory`)."""
        settings = self.settings
        return (self.pretrained_model_name_or_path, settings.gguf_file, settings.revision,
                self.device, settings.dtype, settings.trust_remote_code)

    @property
    def server(self) -> ModelServer:
        """This client's model server (made on first use; it loads the model in its thread)."""
        if self._server is None or self._server.closed:  # closed: its model was released
            from syntaxgym_helm.clients.local.model_loading import load_model_and_tokenizer
            from syntaxgym_helm.clients.local.server import ModelServerFactory

            self._server = ModelServerFactory.get_server(
                self._model_key,
                lambda: load_model_and_tokenizer(self.pretrained_model_name_or_path,
                                                 device=self.device,
                                                 **self.settings.load_args()),
                self.settings.engine_args(), self.settings.server_args())
        return self._server

    # -- requests -------------------------------------------------------------------------------

    @staticmethod
    def unsupported(request: Request) -> str | None:
        """Why this client cannot serve ``request``; None when it can."""
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

    def _cache_key(self, request: Request) -> Mapping:
        raw = {"format": CACHE_FORMAT, "model": request.model, "prompt": request.prompt,
               **({"word_boundary": True} if self.settings.word_boundary else {}),
               **({"boundary_end_of_text": False} if self.settings.word_boundary
                  and not self.settings.boundary_end_of_text else {}),
               "echo_prompt": True, "max_tokens": 0, "bos_text": self.bos_text,
               "dtype": self.dtype, "checkpoint": self.checkpoint}
        return CachingClient.make_cache_key(raw, request)

    def make_request(self, request: Request) -> RequestResult:
        problem = self.unsupported(request)
        if problem:
            return failed_request(f"SyntaxGymClient: {problem}")

        def compute() -> dict[str, Any]:
            computed = self.server.prompt_logprobs(request.prompt)
            return {"tokens": list(computed.texts), "logprobs": list(computed.logprobs),
                    "batch_request_time": computed.pass_seconds,
                    "batch_size": computed.pass_prompts}

        try:
            response, cached = self.request_cache.get(self._cache_key(request),
                                                      wrap_request_time(compute),
                                                      check=impossible_logprob)
        except PromptError as exc:
            return failed_request(f"SyntaxGymClient: {exc}")
        except RefusedAnswer as exc:
            return failed_request(f"SyntaxGymClient: the model's answer cannot be used: {exc}; "
                                  "are its weights or its computation broken?")
        except Exception as exc:  # noqa: BLE001 - a broken model should stop the run, clearly
            hexception(exc)
            return failed_request(f"SyntaxGymClient error: {type(exc).__name__}: {exc}", fatal=True)
        return result_of_response(response, cached)

    def flush(self) -> None:
        """Commit the request cache's pending writes (done after each HELM run and at exit)."""
        self.request_cache.commit()

    def engine_counts(self) -> Counter[str]:
        """What this client's engine computed so far (see
        :attr:`~.logprob_engine.LogprobEngine.counts`); empty before the model is loaded."""
        engine = self._server.engine if self._server is not None else None
        return Counter(engine.counts) if engine is not None else Counter()

    def prefetch(self, requests: Sequence[Request]) -> int:
        """Queue the prompts of ``requests`` that the cache lacks, before HELM asks for them, so
        that they are computed in full batches; returns how many distinct prompts were queued."""
        wanted = [r for r in requests if self.unsupported(r) is None]
        if wanted:
            cached = self.request_cache.contains([self._cache_key(r) for r in wanted])
            wanted = [r for r, hit in zip(wanted, cached, strict=False) if not hit]
        if not wanted:
            return 0
        self._prefetched = {r.prompt: self._cache_key(r) for r in wanted}
        queued = self.server.reserve(r.prompt for r in wanted)
        # The model loads in the engine thread; wait here, so that a run's execution starts
        # with the model ready (and HELM's timing of it leaves the loading out, as it does for
        # its own clients). A failed load raises, and each request reports it.
        self.server.wait_ready()
        hlog(f"syntaxgym local engine: scoring {queued} distinct prompts of {len(wanted)} requests "
             "in batches")
        return queued

    def save_computed(self, timeout_s: float = 2.0) -> int:
        """Store in the request cache what the engine computed for this run's prefetched
        requests but HELM has not yet asked for (a run being interrupted); returns how many."""
        if self._server is None or not self._prefetched:
            return 0
        saved = 0
        for prompt, result in self._server.finished_results(timeout_s).items():
            key = self._prefetched.get(prompt)
            if key is not None and isinstance(result, PromptLogprobs):
                response = {"tokens": list(result.texts), "logprobs": list(result.logprobs),
                            "request_time": 0.0}
                saved += self.request_cache.put_if_absent(key, response,
                                                          check=impossible_logprob)
        return saved


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
