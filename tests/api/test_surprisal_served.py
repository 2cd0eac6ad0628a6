"""Word surprisals of a served model (an ``EchoCompletionsClient`` deployment): the uncorrected
column only, with the header saying why; the server's tokens assigned to words; a failed or
impossible answer flags its text's words and keeps the rest.

Real answers of llama-cpp-python's server (``tests/fixtures/served/``) replayed by the loopback
server of ``tests/clients/test_served.py`` (fast), and (``served``, opt-in: ``pytest -m served``)
the real server on the embedded SmolLM2 GGUF against the local engine on the same file.
"""

from __future__ import annotations

import math
import statistics
import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "clients"))
from syntaxgym_helm.api.surprisal import word_surprisals, write_surprisal_tsv
from test_served import (
    ALIAS,
    Replay,
    _served_compare,
    free_port,
    needs_smollm2,
    recorded,
    served_opt_in,  # noqa: F401 (a fixture)
)

SENTENCE = "The pilot behind the teachers brings love to people"  # recorded: number_prep item 2
LOCAL_MODEL = "syntaxgym/smollm2-135m-instruct-q4_1"
TEXTS = ["The keys to the cabinet are on the table.",
         "The author that the guards like laughs at the old man's jokes.",
         "No student has ever passed that exam, and nobody will."]


def deployment(tmp_path: Path, base_url: str, name: str) -> Path:
    """A ``prod_env`` with one ``EchoCompletionsClient`` deployment of the served SmolLM2."""
    prod_env = tmp_path / "prod_env"
    prod_env.mkdir()
    (prod_env / "model_deployments.yaml").write_text(yaml.safe_dump({"model_deployments": [{
        "name": name, "model_name": name,
        "tokenizer_name": "helmhf/smollm2-135m-instruct-q4_1", "max_sequence_length": 128,
        "client_spec": {"class_name": "syntaxgym_helm.clients.served.EchoCompletionsClient",
                        "args": {"base_url": base_url, "openai_model_name": ALIAS,
                                 "max_tokens_for_echo": 1, "timeout": 5, "max_retries": 0}},
    }]}))
    return prod_env


@pytest.fixture
def replay():
    server = Replay()
    yield server
    server.close()


def _answer(name: str, prompt: str) -> dict:
    return next(e for e in recorded(name) if e["request"]["prompt"] == prompt)


@needs_smollm2
def test_served_words_are_the_servers_logprobs_and_the_corrected_column_is_empty(
        tmp_path, replay):
    exchange = _answer("llamacpp_bos_echo_max_tokens_1", SENTENCE)  # the server adds the BOS
    replay.add([exchange])
    local_path = deployment(tmp_path, replay.url, "replay-words/smollm2")
    table = word_surprisals([SENTENCE], "replay-words/smollm2", local_path=local_path,
                            prefix="none")
    logprobs = exchange["response"]["choices"][0]["logprobs"]["token_logprobs"]
    rows = table.rows
    assert [r.word for r in rows] == SENTENCE.split()
    assert rows[0].surprisal_bits is None and rows[0].flag == "no-context"
    for row, logprob in zip(rows[1:], logprobs[1:9], strict=True):  # one token a word here
        assert not row.flag and row.surprisal_bits == pytest.approx(-logprob / math.log(2))
        assert row.tokens == " " + row.word
    assert all(r.surprisal_corrected_bits is None for r in rows)
    assert rows[3].previous_1_bits == rows[2].surprisal_bits  # spill-over: uncorrected
    assert rows[3].previous_2_bits == rows[1].surprisal_bits
    assert "replay-words/smollm2" in table.header["served"] and replay.url in table.header["served"]
    assert table.header["surprisal_corrected_bits"].startswith("empty: the word-boundary "
                                                               "correction needs the whole")
    assert "nothing sent before each text" in table.header["first_word_context"]
    assert "# served: by deployment replay-words/smollm2" in write_surprisal_tsv(table, None)
    with pytest.raises(ValueError, match="window apply to local models only"):
        word_surprisals([SENTENCE], "replay-words/smollm2", local_path=local_path, window=8)


@needs_smollm2
def test_a_prefix_measures_the_first_word_and_its_tokens_are_left_out(tmp_path, replay):
    """prefix=auto sends the tokenizer's prefix token <|endoftext|>; llama-cpp-python echoes it
    as "" (the server as it comes: its logprobs one position late, the format is what counts)."""
    exchange = _answer("llamacpp_echo_max_tokens_1", "<|endoftext|>" + SENTENCE)
    replay.add([exchange])
    local_path = deployment(tmp_path, replay.url, "replay-prefix/smollm2")
    table = word_surprisals([SENTENCE], "replay-prefix/smollm2", local_path=local_path)
    logprobs = exchange["response"]["choices"][0]["logprobs"]["token_logprobs"]
    assert table.rows[0].tokens == "The" and not table.rows[0].flag
    assert table.rows[0].surprisal_bits == pytest.approx(-logprobs[1] / math.log(2))
    assert "'<|endoftext|>' sent before each text" in table.header["first_word_context"]


@needs_smollm2
def test_an_impossible_or_failed_answer_flags_its_words_and_keeps_the_rest(tmp_path, replay):
    exchange = _answer("llamacpp_bos_echo_max_tokens_1", SENTENCE)
    other = "The pilots behind the teacher brings love to people"
    broken = _answer("llamacpp_bos_echo_max_tokens_1", other)
    broken["response"]["choices"][0]["logprobs"]["token_logprobs"][3] = 0.5
    replay.add([exchange, broken])
    local_path = deployment(tmp_path, replay.url, "replay-broken/smollm2")
    table = word_surprisals([SENTENCE, other, "Nobody recorded this text"],
                            "replay-broken/smollm2", local_path=local_path, prefix="none")
    by_text: dict[str, list] = {}
    for row in table.rows:
        by_text.setdefault(row.text_id, []).append(row)
    assert sum(r.surprisal_bits is not None for r in by_text["1"]) == 8
    assert all(r.flag == "request-failed" and r.surprisal_bits is None
               for r in by_text["2"] + by_text["3"])
    assert "logprob 0.5, above 0" in by_text["2"][0].reason
    assert "HTTP 404" in by_text["3"][0].reason


@needs_smollm2
def test_a_server_that_is_down_flags_every_word(tmp_path, capsys):
    from syntaxgym_helm.cli.main import main

    local_path = deployment(tmp_path, f"http://127.0.0.1:{free_port()}/v1", "down/smollm2")
    (tmp_path / "texts.txt").write_text("The cat sat.\n")
    assert main(["surprisal", str(tmp_path / "texts.txt"), "--model", "down/smollm2",
                 "--local-path", str(local_path), "--prefix", "none"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line.split("\t") for line in lines if not line.startswith("#")][1:]
    assert [row[8] for row in rows] == ["request-failed"] * 3  # and nothing else on stdout
    assert "cannot reach the server at http://127.0.0.1:" in rows[0][9]
    assert any(line.startswith("# surprisal_corrected_bits: empty") for line in lines)


@pytest.mark.served
@needs_smollm2
def test_real_server_word_surprisals_equal_the_local_engine(served_opt_in, tmp_path):  # noqa: F811
    """llama-cpp-python serving the embedded GGUF (putting <|endoftext|> before each prompt
    itself) against the local engine on the same file (dequantised, fp32): the same words, the
    same tokens, the same surprisals up to llama.cpp's quantised arithmetic."""
    served = _served_compare()
    with served.llama_server(tmp_path / "server.log", bos_override=True, n_ctx=128) as url:
        local_path = deployment(tmp_path, url, "llamacpp-words/smollm2")
        remote = word_surprisals(TEXTS, "llamacpp-words/smollm2", local_path=local_path,
                                 prefix="none", num_threads=1)
    local = word_surprisals(TEXTS, LOCAL_MODEL, device="cpu")
    pairs = []
    for a, b in zip(remote.rows, local.rows, strict=True):
        assert (a.text_id, a.word, a.tokens) == (b.text_id, b.word, b.tokens)
        if a.word_index == 0:
            assert a.flag == "no-context" and a.surprisal_bits is None
            continue
        assert not a.flag and a.surprisal_bits is not None and b.surprisal_bits is not None
        pairs.append((a.surprisal_bits, b.surprisal_bits))
    differences = [abs(a - b) for a, b in pairs]
    r = statistics.correlation([a for a, _ in pairs], [b for _, b in pairs])
    print(f"{len(pairs)} words: served - local max abs {max(differences):.4f} bits, mean "
          f"{statistics.mean(differences):.4f}, r {r:.5f}")
    assert max(differences) < 1.0 and statistics.mean(differences) < 0.25 and r > 0.99
