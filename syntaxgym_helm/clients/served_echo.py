"""Reading an OpenAI-compatible ``/v1/completions`` answer to an echo request: its JSON, and the
echoed prompt's tokens and logprobs, checked (see :mod:`syntaxgym_helm.clients.served`, points 2, 3,
5 and 8: the first token's ``null``, only the prompt's tokens, only possible values, tokens that
spell the prompt). Every defect raises :class:`EchoResponseError` saying what came back.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import httpx
from helm.common.request import Token

from syntaxgym_helm.core.alignment import align
from syntaxgym_helm.core.errors import AlignmentError
from syntaxgym_helm.core.logprobs import LOGPROB_ROUNDING


class EchoResponseError(ValueError):
    """A completions response that does not hold the echoed prompt's tokens and logprobs."""



CHECK_BASE_URL = ("check the deployment's base_url: it should end in /v1 of an "
                   "OpenAI-compatible API (e.g. http://127.0.0.1:8000/v1)")


def is_json(response: httpx.Response) -> bool:
    content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
    return content_type == "application/json" or content_type.endswith("+json")


def what_came_back(response: httpx.Response) -> str:
    content_type = response.headers.get("content-type") or "no content type"
    return (f"{content_type}, {len(response.content)} bytes, beginning "
            f"{response.content[:80].decode('utf-8', 'replace')!r}")


def json_answer(response: httpx.Response) -> dict[str, Any]:
    """The JSON object of a successful answer; :class:`EchoResponseError` saying what came back
    instead (an HTML page, cut-off JSON, a JSON value that is not an object)."""
    if not is_json(response):
        raise EchoResponseError(f"HTTP {response.status_code} came back with "
                                f"{what_came_back(response)}, not JSON; {CHECK_BASE_URL}")
    try:
        answer = json.loads(response.content)
    except ValueError as exc:
        raise EchoResponseError(f"its JSON is malformed or cut off ({exc}; "
                                f"{len(response.content)} bytes came back)") from exc
    if not isinstance(answer, dict):
        raise EchoResponseError(f"its JSON is a {type(answer).__name__}, not an object")
    return answer


def echoed_prompt_tokens(response: Mapping[str, Any], prompt: str,
                         case_insensitive: bool = False) -> list[Token]:
    """The echoed prompt's tokens and logprobs in a ``/v1/completions`` response (first choice).

    Reads OpenAI's format (``choices[0].logprobs``: prompt tokens, then generated ones) and
    Together's (``prompt[0].logprobs``: the prompt's tokens alone). The first token's ``null``
    logprob becomes ``0.0`` (as in HELM's clients; see the module doc); any other ``null`` is an
    error. The tokens must spell the prompt (``case_insensitive``: up to ASCII case). Raises
    :class:`EchoResponseError` saying what is missing or wrong.
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
        _check_spelling(texts, prompt, case_insensitive)
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
    _check_spelling(texts, prompt, case_insensitive)
    return _tokens(texts, logprobs)


def _check_spelling(texts: list[Any], prompt: str, case_insensitive: bool) -> None:
    try:
        folded = align([], texts, prefix=prompt).case_insensitive
    except AlignmentError as exc:
        raise EchoResponseError(f"its tokens do not spell the prompt ({exc})") from exc
    if folded and not case_insensitive:
        raise EchoResponseError(
            "its tokens spell the prompt only if case is ignored: the server scored another text "
            "(a tokenizer or proxy that lowercases); set case_insensitive_echo: true in the "
            "deployment's client args if the model lowercases its input by design")


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
    for index, (text, logprob) in enumerate(zip(texts, logprobs, strict=False)):
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
