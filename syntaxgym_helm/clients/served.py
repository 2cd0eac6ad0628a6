"""Served models: prompt logprobs from any OpenAI-compatible ``/v1/completions`` endpoint.

SyntaxGym needs, for every sentence, the logprob of each of its tokens: an *echo* request
(``echo=true, logprobs=1, max_tokens=0``). vLLM, Together, OpenAI's legacy completions and
llama-cpp-python's server all answer such requests, and HELM's own
``OpenAILegacyCompletionsClient`` sends them (its ``VLLMClient`` would too, but cannot be built in
crfm-helm 0.5.16: it passes ``tokenizer`` on to ``openai.OpenAI()``); the scenario and the metric
work with it as it is, whatever the token texts look like (``Ġ``, ``▁``, ``bytes:\\xNN``, ``�``).
Where the server behaves exactly like vLLM (honours ``max_tokens=0`` with echo, returns the prompt's
logprobs in ``choices[0].logprobs``) and never fails, that is enough.

:class:`EchoCompletionsClient` is for everything else. It is HELM's
``OpenAILegacyCompletionsClient`` (same constructor arguments, same request) with these differences:

1. **Every failure is one request's failure.** HELM 0.5.16's executor discards a whole run when one
   request fails (unless the failure is flagged non-fatal), after retrying it 5 times with 10 to
   80 s waits. This client returns a non-fatal, non-retriable error instead (the OpenAI library has
   already retried ``max_retries`` times), so the run goes on and the metric reports the item as
   ``syntaxgym_unscorable`` with the reason: server down, timeout, HTTP error, a response without
   logprobs or without the echoed prompt, a malformed response.
2. **No silent zeros.** HELM's clients turn every ``null`` logprob into ``0.0`` (a certainty).
   Here only the first token's ``null`` becomes ``0.0`` (every server sends it: that token has no
   context, and the metric's first-token policy never reads it as a value); a ``null`` anywhere
   else fails the request with the token named, instead of scoring 0 bits for it.
3. **Only the prompt's tokens.** Servers that read ``max_tokens=0`` as "no limit"
   (llama-cpp-python) or refuse it need ``max_tokens_for_echo: 1``. When the echoed text then
   goes on after the prompt, only the prompt's tokens are kept: the first ``usage.prompt_tokens``
   of them, or one fewer when the server counted a beginning-of-text token of its own that it does
   not echo (llama-cpp-python with ``add_bos_token``), whichever spells exactly the prompt (checked
   with :func:`syntaxgym_helm.core.alignment.align`). The generated tokens' own count is no guide
   (``usage.completion_tokens`` counts them, but llama-cpp-python returns the last one only when it
   added a beginning-of-text token; vLLM and OpenAI always do). Without ``usage``, or when neither
   count spells the prompt, the request fails: tokens are never guessed.
4. **Together's echo format.** Together returns the prompt's tokens in ``prompt[0].logprobs``, not
   in ``choices[0].logprobs`` (which HELM's ``TogetherCompletionClient`` reads, so it only ever sees
   the generated token). This client reads whichever the response has.
5. **Only possible values.** A logprob above 0 (a probability above 1; up to
   :data:`~syntaxgym_helm.core.logprobs.LOGPROB_ROUNDING` is rounding and reads as 0.0), NaN, a
   JSON boolean or string fails the request, naming the token and the value. An answer that is
   not JSON (an HTML page: ``base_url`` points at a web UI) or whose JSON is cut off says what
   came back.
6. **A deadline on the whole request.** ``timeout`` bounds each try in all, connect to last byte
   (:mod:`syntaxgym_helm.clients.served_deadline`), not each read: a server that trickles its
   answer is cut off.
7. **The cache tells servers apart.** HELM's cache key is the raw request, which names the model
   but not the server; here it also holds ``base_url``, and ``checkpoint`` when the deployment
   gives it (what names the served weights: the client cannot see them, so a server restarted
   with other weights under the same name and URL needs it, or another model name).
8. **The tokens must spell the prompt**, checked with :func:`syntaxgym_helm.core.alignment.align`;
   spelling it only if case is ignored is refused too (the server scored another text: a
   lowercasing tokenizer or proxy), unless the deployment sets ``case_insensitive_echo: true``
   for a model that lowercases its input by design.

A defective answer is never cached: it is checked inside the cached computation, which raises,
and an answer cached by an earlier version that fails today's checks is asked for again. The cache
is the plugin's (:mod:`syntaxgym_helm.clients.request_cache`: its SQLite file cannot hang a run).

Deployment YAML examples: ``configs/model_deployments/``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx
from helm.clients.openai_client import OpenAILegacyCompletionsClient
from helm.common.cache import CacheConfig
from helm.common.request import (
    GeneratedOutput,
    Request,
    RequestResult,
    wrap_request_time,
)

from syntaxgym_helm.clients.failed_request import failed_request
from syntaxgym_helm.clients.request_cache import RequestCache
from syntaxgym_helm.clients.served_deadline import Call, RequestDeadline
from syntaxgym_helm.clients.served_echo import (
    CHECK_BASE_URL,
    EchoResponseError,
    echoed_prompt_tokens,
    is_json,
    json_answer,
    what_came_back,
)
from syntaxgym_helm.core.logprobs import LOGPROB_ROUNDING  # noqa: F401 - part of this API
from syntaxgym_helm.helm_compat import require, require_attributes

try:
    import openai
except ModuleNotFoundError:  # pragma: no cover - HELM's openai_client import fails first
    openai = None  # type: ignore[assignment]  # a module or None: each use checks which




class EchoCompletionsClient(OpenAILegacyCompletionsClient):
    """Echo requests to an OpenAI-compatible ``/v1/completions`` endpoint; see the module doc.

    Arguments (``client_spec.args`` of a model deployment): ``base_url`` (e.g.
    ``http://127.0.0.1:8000/v1``), ``openai_model_name`` (the model name the server knows; default:
    the deployment's engine), ``api_key`` (normally from ``prod_env/credentials.conf``, see
    docs/served.md), ``timeout`` (seconds each try of a request may take in all, connect to last
    byte, default 60; see :mod:`syntaxgym_helm.clients.served_deadline`), ``max_retries`` (the
    OpenAI library's retries of connection errors, timeouts, 408/409/429 and 5xx answers, default
    2), ``max_tokens_for_echo`` (what to send instead of ``max_tokens=0``; ``1`` for
    llama-cpp-python and Together).
    """

    cache: RequestCache  # HELM's CachingClient declares its plain Cache

    def __init__(
        self,
        cache_config: CacheConfig,
        api_key: str | None = None,
        org_id: str | None = None,
        base_url: str | None = None,
        openai_model_name: str | None = None,
        max_tokens_for_echo: int | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
        checkpoint: str | None = None,
        case_insensitive_echo: bool = False,
        **kwargs: Any,
    ) -> None:
        if max_tokens_for_echo is not None and max_tokens_for_echo < 0:
            raise ValueError("max_tokens_for_echo must be 0 or more")
        require("openai_legacy_completions")  # the private methods used below
        self.deadline = RequestDeadline(timeout)
        super().__init__(
            cache_config=cache_config,
            # Local servers (vLLM without --api-key, llama-cpp-python) need no key, but the OpenAI
            # library refuses to start without one.
            api_key=api_key or "EMPTY",
            org_id=org_id,
            base_url=base_url,
            openai_model_name=openai_model_name,
            timeout=timeout,
            max_retries=max_retries,
            # httpx's timeout bounds each read, not the request: this bounds each try in all.
            http_client=self.deadline.http_client(),
            **kwargs,
        )
        require_attributes(self, ("client",), "openai_legacy_completions")
        self.base_url = base_url or "https://api.openai.com/v1"
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_tokens_for_echo = max_tokens_for_echo
        self.case_insensitive_echo = bool(case_insensitive_echo)
        self.cache = RequestCache(cache_config,
                                  key_fields={"checkpoint": checkpoint} if checkpoint else None)

    def make_request(self, request: Request) -> RequestResult:
        with self.deadline.call() as call:
            try:
                return self._make_echo_request(request, call)
            except Exception as exc:  # noqa: BLE001 - whatever happens, it is this request's failure
                return failed_request(f"{type(exc).__name__}: {exc}")

    def _get_cache_key(self, raw_request: dict[str, Any], request: Request) -> Mapping[str, Any]:
        """HELM's key (the raw request) plus the server: two deployments that send the same
        ``openai_model_name`` to two servers share HELM's cache file (one per organisation) and
        would otherwise get each other's answers. Entries cached before this key was used are
        recomputed once."""
        key = dict(super()._get_cache_key(raw_request, request))
        key["base_url"] = self.base_url.rstrip("/")
        return key

    def _make_echo_request(self, request: Request, call: Call) -> RequestResult:
        if not request.echo_prompt:
            # Not an echo request (some other benchmark): HELM's behaviour, unchanged.
            return super().make_request(request)
        raw_request = self._to_raw_completion_request(request)
        if request.max_tokens == 0 and self.max_tokens_for_echo is not None:
            raw_request["max_tokens"] = self.max_tokens_for_echo

        def do_it() -> dict[str, Any]:
            answer = self.client.completions.with_raw_response.create(**raw_request)
            # Parsed here, not by the library: it returns an HTML page as a string, and coerces
            # nothing we could check afterwards.
            response = json_answer(answer.http_response)
            # Checked before it is cached: a defective answer is asked again on the next run.
            echoed_prompt_tokens(response, request.prompt, self.case_insensitive_echo)
            return response

        def problem(cached: Mapping[str, Any]) -> str | None:  # of an answer found in the cache
            try:
                echoed_prompt_tokens(cached, request.prompt, self.case_insensitive_echo)
            except EchoResponseError as exc:
                return str(exc)
            return None

        try:
            response, cached = self.cache.get(self._get_cache_key(raw_request, request),
                                              wrap_request_time(do_it), check=problem)
        except EchoResponseError as exc:
            return failed_request(f"unusable response from {self.base_url}: {exc}")
        except Exception as exc:  # noqa: BLE001 - whatever happens, it is this request's failure
            return failed_request(self._describe(exc, call))
        tokens = echoed_prompt_tokens(response, request.prompt, self.case_insensitive_echo)
        return RequestResult(
            success=True,
            cached=cached,
            request_time=response["request_time"],
            request_datetime=response.get("request_datetime"),
            completions=[GeneratedOutput(
                text=request.prompt,
                logprob=sum(t.logprob for t in tokens),
                tokens=tokens,
                finish_reason={"reason": "echo"},
            )],
            embedding=[],
        )

    def _describe(self, exc: Exception, call: Call) -> str:
        tries = len(call.attempts)
        if call.expired and (openai is None or isinstance(exc, openai.APIConnectionError)):
            return (f"no complete answer from {self.base_url} within {self.timeout:g} s "
                    f"(timeout: the whole request, {call.expired} of {_tries(tries)} cut off, "
                    f"{call.elapsed():.1f} s in all; raise `timeout` in the deployment's "
                    "client_spec args if the server is just slow)")
        if openai is not None:
            if isinstance(exc, openai.APITimeoutError):
                return (f"no answer from {self.base_url} within {self.timeout:g} s (timeout; "
                        "raise `timeout` in the deployment's client_spec args if the server is "
                        "just slow)")
            if isinstance(exc, openai.APIConnectionError):
                cause = exc.__cause__ or exc
                if isinstance(cause, (httpx.ConnectError, httpx.ConnectTimeout)):
                    return (f"cannot reach the server at {self.base_url} "
                            f"({type(cause).__name__}: {cause}); is it running?")
                return (f"the connection to the server at {self.base_url} broke before a "
                        f"complete answer ({type(cause).__name__}: {cause}; {_tries(tries)}); "
                        "is it running, and is anything between (a proxy) cutting answers?")
            if isinstance(exc, openai.APIStatusError):
                return self._describe_status(exc)
        return f"{type(exc).__name__}: {exc}"

    def _describe_status(self, exc: openai.APIStatusError) -> str:
        body = exc.body
        detail = body.get("message") if isinstance(body, dict) else None
        if detail is None and not is_json(exc.response):
            detail = f"not JSON: {what_came_back(exc.response)}; {CHECK_BASE_URL}"
        hint = ""
        if exc.status_code == 429:
            hint = (f" (rate limited after {self.max_retries} retries: run with fewer "
                    "`--num-threads`, or raise `max_retries` in the client_spec args)")
        return (f"the server at {self.base_url} answered HTTP {exc.status_code}: "
                f"{detail or exc.message}{hint}")


def _tries(count: int) -> str:
    return "1 try" if count == 1 else f"{count} tries"
