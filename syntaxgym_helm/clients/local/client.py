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
from helm.common.hierarchical_logger import hlog
from helm.common.request import Request

from syntaxgym_helm.clients import interruption
from syntaxgym_helm.clients.checkpoint_identity import CheckpointIdentity, CheckpointWatch
from syntaxgym_helm.clients.echo_client import (
    EchoScoringClient,
    impossible_logprob,
    result_of_response,
)
from syntaxgym_helm.clients.local.engine_settings import EngineSettings
from syntaxgym_helm.clients.local.prompt_encoding import PromptLogprobs

if TYPE_CHECKING:
    from syntaxgym_helm.clients.local.server import ModelServer

__all__ = ["SyntaxGymClient", "impossible_logprob", "result_of_response"]

CACHE_FORMAT = "syntaxgym-echo-logprobs-v3"
"""Part of every cache key: bump when the logprobs or the stored response change (v2: a character
split over several tokens goes with the last of them, see ``texts_from_offsets``; v3: a
sliding-window model's layers see only their window past it, see ``.local.sliding_window``)."""


class SyntaxGymClient(EchoScoringClient):
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
        self.settings = (settings or EngineSettings()).updated(setting_values)
        # What the checkpoint's files hold, in every cache key (another checkpoint under this
        # model name gets its own entries) and in the key of the loaded model (a folder saved
        # again is loaded again).
        super().__init__(cache_config, CheckpointWatch(pretrained_model_name_or_path,
                                                       self.settings.gguf_file,
                                                       self.settings.revision))
        self.pretrained_model_name_or_path = pretrained_model_name_or_path
        self.model_name = model_name
        self._server: ModelServer | None = None
        self._server_key: tuple | None = None
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
        """What one loaded model of the files as they are now is shared by
        (:class:`~.server.ModelServerFactory`)."""
        return self._model_key_of(self.watch.current())

    def _model_key_of(self, identity: CheckpointIdentity) -> tuple:
        """The model key of ``identity``: the checkpoint's path and identity, and the settings
        that change the loaded weights."""
        settings = self.settings
        return (self.pretrained_model_name_or_path, identity.digest, settings.gguf_file,
                self.device, settings.dtype, settings.trust_remote_code,
                settings.stock)  # a fast engine patches the model it is set up on

    @property
    def server(self) -> ModelServer:
        """The model server of the checkpoint's files as they are now (made on first use, and
        again when the files change: the server loads the model in its thread)."""
        return self._server_for(self.watch.current())

    def _server_for(self, identity: CheckpointIdentity) -> ModelServer:
        """The server of the model loaded from the files ``identity`` names (checked before
        and after the load: tokenizer files, the vocabulary against the embeddings, and that
        the files did not change meanwhile)."""
        key = self._model_key_of(identity)
        if self._server is None or self._server.closed or key != self._server_key:
            from syntaxgym_helm.clients.local.model_loading import load_model_and_tokenizer
            from syntaxgym_helm.clients.local.server import ModelServerFactory
            from syntaxgym_helm.clients.tokenizer_checks import check_before_load, check_loaded

            where = self.pretrained_model_name_or_path

            def load() -> tuple[Any, Any]:
                check_before_load(where, self.settings.gguf_file)
                # A Hub revision is loaded at the commit it resolved to: the weights named.
                args = {**self.settings.load_args(),
                        "revision": identity.commit or self.settings.revision}
                model, tokenizer = load_model_and_tokenizer(where, device=self.device, **args)
                check_loaded(model, tokenizer, where)
                self.watch.confirm(identity)
                return model, tokenizer

            self._server = ModelServerFactory.get_server(
                key, load, self.settings.engine_args(), self.settings.server_args())
            self._server_key = key
        return self._server

    # -- requests -------------------------------------------------------------------------------

    def _cache_key(self, request: Request, checkpoint: str | None = None) -> Mapping:
        """The request-cache key of ``request``: the prompt, the settings that change its
        logprobs, and ``checkpoint`` (default: the files' identity now)."""
        raw = {"format": CACHE_FORMAT, "model": request.model, "prompt": request.prompt,
               **({"word_boundary": True} if self.settings.word_boundary else {}),
               **({"boundary_end_of_text": False} if self.settings.word_boundary
                  and not self.settings.boundary_end_of_text else {}),
               "echo_prompt": True, "max_tokens": 0, "bos_text": self.bos_text,
               "dtype": self.dtype, "checkpoint": checkpoint or self.checkpoint}
        return CachingClient.make_cache_key(raw, request)

    def _response(self, request: Request, identity: CheckpointIdentity) -> dict[str, Any]:
        computed = self._server_for(identity).prompt_logprobs(request.prompt)
        return {"tokens": list(computed.texts), "logprobs": list(computed.logprobs),
                "batch_request_time": computed.pass_seconds, "batch_size": computed.pass_prompts}

    def engine_counts(self) -> Counter[str]:
        """What this client's engine computed so far (see
        :attr:`~.logprob_engine.LogprobEngine.counts`); empty before the model is loaded."""
        engine = self._server.engine if self._server is not None else None
        return Counter(engine.counts) if engine is not None else Counter()

    def prefetch(self, requests: Sequence[Request]) -> int:
        """Queue the prompts of ``requests`` that the cache lacks, before HELM asks for them, so
        that they are computed in full batches; returns how many distinct prompts were queued."""
        wanted = self.uncached(requests)
        identity = self._run_identity or self.watch.current()
        checkpoint = identity.digest
        if not wanted:
            return 0
        self._prefetched = {r.prompt: self._cache_key(r, checkpoint) for r in wanted}
        queued = self._server_for(identity).reserve(r.prompt for r in wanted)
        # The model loads in the engine thread; wait here, so that a run's execution starts
        # with the model ready (and HELM's timing of it leaves the loading out, as it does for
        # its own clients). A failed load raises, and each request reports it.
        self._server_for(identity).wait_ready()
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

