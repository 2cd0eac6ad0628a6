"""Served models: prompt logprobs from any OpenAI-compatible ``/v1/completions`` endpoint.

SyntaxGym needs, for every sentence, the logprob of each of its tokens: an *echo* request
(``echo=true, logprobs=1, max_tokens=0``). vLLM, Together, OpenAI's legacy completions and
llama-cpp-python's server all answer such requests, and HELM's own
``OpenAILegacyCompletionsClient`` sends them (its ``VLLMClient`` would too, but cannot be built in
crfm-helm 0.5.16: it passes ``tokenizer`` on to ``openai.OpenAI()``); the scenario and the metric
work with it as it is, whatever the token texts look like (``Ġ``, ``▁``, ``bytes:\\xNN``, ``�``).
Where the server behaves exactly like vLLM (honours ``max_tokens=0`` with echo, returns the prompt's
logprobs in ``choices[0].logprobs``) and never fails, that is enough.

:class:`EchoCompletionsClient` is for everything else. It is HELM's ``OpenAILegacyCompletionsClient``
(same constructor arguments, same request) with these differences:

1. **Every failure is one request's failure.** HELM 0.5.16's executor discards a whole run when one
   request fails (unless the failure is flagged non-fatal), after retrying it 5 times with 10 to 80 s
   waits. This client returns a non-fatal, non-retriable error instead (the OpenAI library has
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
4. **Together's echo format.** Together returns the prompt's tokens in ``prompt[0].logprobs``, not in
   ``choices[0].logprobs`` (which HELM's ``TogetherCompletionClient`` reads, so it only ever sees
   the generated token). This client reads whichever the response has.
5. **Only possible values.** A logprob above 0 (a probability above 1; up to
   :data:`LOGPROB_ROUNDING` is rounding and reads as 0.0), a JSON boolean or string fails the
   request, naming the token and the value. An answer that is not JSON (an HTML page: ``base_url``
   points at a web UI) or whose JSON is cut off says what came back.
6. **A deadline on the whole request.** ``timeout`` bounds each try in all, connect to last byte
   (:mod:`syntaxgym_helm.clients.served_deadline`), not each read: a server that trickles its
   answer is cut off.
7. **The cache tells servers apart.** HELM's cache key is the raw request, which names the model
   but not the server; here it also holds ``base_url``.

A defective answer is never cached: it is checked inside the cached computation, which raises.

Deployment YAML examples: ``configs/model_deployments/``.
"""

from __future__ import annotations

import json
import math
from typing import Any, Mapping, Optional

import httpx
from helm.clients.openai_client import OpenAILegacyCompletionsClient
from helm.common.cache import CacheConfig
from helm.common.request import (
    GeneratedOutput,
    Request,
    RequestResult,
    Token,
    wrap_request_time,
)

from syntaxgym_helm.core.alignment import align
from syntaxgym_helm.core.errors import AlignmentError
from syntaxgym_helm.clients.failed_request import failed_request
from syntaxgym_helm.clients.served_deadline import Call, RequestDeadline
from syntaxgym_helm.helm_compat import require, require_attributes

try:
    import openai
except ModuleNotFoundError:  # pragma: no cover - HELM's openai_client import fails first
    openai = None  # type: ignore[assignment]


# A logprob above 0 is a probability above 1. Up to this much (nats) is rounding (a float32 or
# float16 log-softmax of a near-certain token) and is read as 0.0; more is a defective answer.
LOGPROB_ROUNDING = 1e-3


class EchoResponseError(ValueError):
    """A completions response that does not hold the echoed prompt's tokens and logprobs."""


class EchoCompletionsClient(OpenAILegacyCompletionsClient):
    """Echo requests to an OpenAI-compatible ``/v1/completions`` endpoint; see the module doc.

    Arguments (``client_spec.args`` of a model deployment): ``base_url`` (e.g.
    ``http://127.0.0.1:8000/v1``), ``openai_model_name`` (the model name the server knows; default:
    the deployment's engine), ``api_key`` (normally from ``prod_env/credentials.conf``, see the
    README), ``timeout`` (seconds each try of a request may take in all, connect to last byte,
    default 60; see :mod:`syntaxgym_helm.clients.served_deadline`), ``max_retries`` (the OpenAI
    library's retries of connection errors, timeouts, 408/409/429 and 5xx answers, default 2),
    ``max_tokens_for_echo`` (what to send instead of ``max_tokens=0``; ``1`` for llama-cpp-python
    and Together).
    """

    def __init__(
        self,
        cache_config: CacheConfig,
        api_key: Optional[str] = None,
        org_id: Optional[str] = None,
        base_url: Optional[str] = None,
        openai_model_name: Optional[str] = None,
        max_tokens_for_echo: Optional[int] = None,
        timeout: float = 60.0,
        max_retries: int = 2,
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
            # Checked before HELM caches it: a defective answer is asked again on the next run.
            echoed_prompt_tokens(response, request.prompt)
            return response

        try:
            response, cached = self.cache.get(self._get_cache_key(raw_request, request),
                                              wrap_request_time(do_it))
        except EchoResponseError as exc:
            return failed_request(f"unusable response from {self.base_url}: {exc}")
        except Exception as exc:  # noqa: BLE001
            return failed_request(self._describe(exc, call))
        tokens = echoed_prompt_tokens(response, request.prompt)
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

    def _describe_status(self, exc: "openai.APIStatusError") -> str:
        body = exc.body
        detail = body.get("message") if isinstance(body, dict) else None
        if detail is None and not _is_json(exc.response):
            detail = f"not JSON: {_what_came_back(exc.response)}; {_CHECK_BASE_URL}"
        hint = ""
        if exc.status_code == 429:
            hint = (f" (rate limited after {self.max_retries} retries: run with fewer "
                    "`--num-threads`, or raise `max_retries` in the client_spec args)")
        return (f"the server at {self.base_url} answered HTTP {exc.status_code}: "
                f"{detail or exc.message}{hint}")


_CHECK_BASE_URL = ("check the deployment's base_url: it should end in /v1 of an "
                   "OpenAI-compatible API (e.g. http://127.0.0.1:8000/v1)")


def _is_json(response: httpx.Response) -> bool:
    content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
    return content_type == "application/json" or content_type.endswith("+json")


def _what_came_back(response: httpx.Response) -> str:
    content_type = response.headers.get("content-type") or "no content type"
    return (f"{content_type}, {len(response.content)} bytes, beginning "
            f"{response.content[:80].decode('utf-8', 'replace')!r}")


def json_answer(response: httpx.Response) -> dict[str, Any]:
    """The JSON object of a successful answer; :class:`EchoResponseError` saying what came back
    instead (an HTML page, cut-off JSON, a JSON value that is not an object)."""
    if not _is_json(response):
        raise EchoResponseError(f"HTTP {response.status_code} came back with "
                                f"{_what_came_back(response)}, not JSON; {_CHECK_BASE_URL}")
    try:
        answer = json.loads(response.content)
    except ValueError as exc:
        raise EchoResponseError(f"its JSON is malformed or cut off ({exc}; "
                                f"{len(response.content)} bytes came back)") from exc
    if not isinstance(answer, dict):
        raise EchoResponseError(f"its JSON is a {type(answer).__name__}, not an object")
    return answer


def echoed_prompt_tokens(response: Mapping[str, Any], prompt: str) -> list[Token]:
    """The echoed prompt's tokens and logprobs in a ``/v1/completions`` response (first choice).

    Reads OpenAI's format (``choices[0].logprobs``: prompt tokens, then generated ones) and
    Together's (``prompt[0].logprobs``: the prompt's tokens alone). The first token's ``null``
    logprob becomes ``0.0`` (as in HELM's clients; see the module doc); any other ``null`` is an
    error. Raises :class:`EchoResponseError` saying what is missing.
    """
    choices = response.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        raise EchoResponseError("it has no choices")
    choice = choices[0]
    parts = response.get("prompt")
    if (isinstance(parts, list) and parts and isinstance(parts[0], Mapping)
            and parts[0].get("logprobs")):
        # Together: the echoed prompt has its own entry; choices[0] holds only generated tokens.
        texts, logprobs = _token_lists(parts[0]["logprobs"], "prompt[0].logprobs")
        _check_echo(parts[0].get("text"), prompt, "prompt[0].text")
        return _tokens(texts, logprobs)
    raw = choice.get("logprobs")
    if not raw:
        raise EchoResponseError(
            "it has no logprobs (choices[0].logprobs is null): the server ignored logprobs=1; "
            "llama-cpp-python's server needs --logits_all true, other servers an equivalent")
    texts, logprobs = _token_lists(raw, "choices[0].logprobs")
    text = choice.get("text")
    _check_echo(text, prompt, "choices[0].text")
    if isinstance(text, str) and len(text) > len(prompt):
        # The server generated text after the prompt: keep the prompt's tokens (module doc, 3).
        usage = response.get("usage")
        count = usage.get("prompt_tokens") if isinstance(usage, Mapping) else None
        if not isinstance(count, int) or count <= 0:
            raise EchoResponseError(
                f"it has generated text after the echoed prompt ({text[len(prompt):][:40]!r}) "
                "but no usage.prompt_tokens, so the prompt's tokens cannot be told from the "
                "generated ones")
        texts, logprobs = _prompt_part(texts, logprobs, count, prompt)
    return _tokens(texts, logprobs)


def _prompt_part(texts: list[Any], logprobs: list[Any], count: int,
                 prompt: str) -> tuple[list[Any], list[Any]]:
    """The first ``count`` tokens, or ``count - 1``, whichever spell exactly ``prompt``."""
    problems: list[str] = []
    for keep in (count, count - 1):
        if not 0 < keep <= len(texts):
            continue
        try:
            align([], texts[:keep], prefix=prompt)
        except AlignmentError as exc:
            problems.append(f"the first {keep}: {exc}")
            continue
        return texts[:keep], logprobs[:keep]
    if not problems:
        raise EchoResponseError(f"only {len(texts)} tokens came back for usage.prompt_tokens="
                                f"{count}: the echoed prompt's tokens are missing")
    raise EchoResponseError(f"neither the first usage.prompt_tokens={count} tokens nor one fewer "
                            f"spell the prompt ({'; '.join(problems)})")


def _token_lists(raw: Any, where: str) -> tuple[list[Any], list[Any]]:
    if not isinstance(raw, Mapping):
        raise EchoResponseError(f"{where} is {type(raw).__name__}, not an object")
    texts, logprobs = raw.get("tokens"), raw.get("token_logprobs")
    if not isinstance(texts, list) or not isinstance(logprobs, list):
        raise EchoResponseError(f"{where} lacks its tokens or token_logprobs list")
    if len(texts) != len(logprobs):
        raise EchoResponseError(
            f"{where} has {len(texts)} tokens but {len(logprobs)} token_logprobs")
    if not texts:
        raise EchoResponseError(f"{where} has no tokens")
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise EchoResponseError(f"{where}: token {index} has no text ({text!r})")
    if all(logprob is None for logprob in logprobs):
        raise EchoResponseError(f"{where}.token_logprobs are all null: the server returned no "
                                "logprobs")
    return texts, logprobs


def _check_echo(text: Any, prompt: str, where: str) -> None:
    if text is None:
        return  # nothing to check against; the alignment will check the tokens themselves
    if not isinstance(text, str) or not text.startswith(prompt):
        shown = text[:60] if isinstance(text, str) else text
        raise EchoResponseError(
            f"it does not echo the prompt ({where} begins {shown!r}, the prompt is "
            f"{prompt[:60]!r}): the server ignored echo=true")


def _tokens(texts: list[Any], logprobs: list[Any]) -> list[Token]:
    tokens: list[Token] = []
    for index, (text, logprob) in enumerate(zip(texts, logprobs)):
        if logprob is None and index == 0:
            logprob = 0.0  # no context: never a value (the metric's first-token policy)
        tokens.append(Token(text=text, logprob=_checked_logprob(index, text, logprob)))
    return tokens


def _checked_logprob(index: int, text: str, logprob: Any) -> float:
    """A token's logprob as a float, or :class:`EchoResponseError` naming the token and value."""
    where = f"token {index} {text!r}"
    if logprob is None:
        raise EchoResponseError(f"{where} has no logprob (null)")
    # JSON true/false arrive as bool, which Python counts as an int: never a logprob.
    if isinstance(logprob, bool) or not isinstance(logprob, (int, float)):
        raise EchoResponseError(f"{where} has logprob {json.dumps(logprob)} (a JSON "
                                f"{_json_kind(logprob)}, not a number)")
    if not math.isfinite(logprob):
        raise EchoResponseError(f"{where} has logprob {logprob!r}")
    if logprob > LOGPROB_ROUNDING:
        raise EchoResponseError(
            f"{where} has logprob {logprob!r}, above 0: a probability of {math.exp(logprob):.3g}, "
            f"more than 1 (up to {LOGPROB_ROUNDING:g} is taken for rounding)")
    return min(float(logprob), 0.0)


def _json_kind(value: Any) -> str:
    kinds = {bool: "boolean", str: "string", list: "array", dict: "object"}
    return kinds.get(type(value), type(value).__name__)


def _tries(count: int) -> str:
    return "1 try" if count == 1 else f"{count} tries"
