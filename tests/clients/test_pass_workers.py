"""Prefix-shared passes on several workers (:mod:`syntaxgym_helm.clients.local.pass_workers`): how
a call's prompts are cut into stretches, and the engine with two workers against one (real
SmolLM2-135M, no mocks of the model)."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from syntaxgym_helm.clients.local.logprob_engine import LogprobEngine
from syntaxgym_helm.clients.local.pass_workers import stretches
from syntaxgym_helm.clients.local.prompt_encoding import EncodedPrompt
from test_local_client import (  # noqa: F401 (the embedded SmolLM2, loaded once)
    BOS,
    TOLERANCE,
    fewer_sentences,
    items_sentences,
    loaded,
    max_difference,
)


def encoded(*sequences: tuple[int, ...]) -> list[EncodedPrompt]:
    return [EncodedPrompt(prompt=str(ids), ids=tuple(ids), texts=tuple(str(t) for t in ids))
            for ids in sequences]


def added_positions(prompts: list[EncodedPrompt], indices: list[int]) -> int:
    """The positions ``indices`` (in this order) add after the prefixes of the ones before."""
    seen: set[tuple[int, ...]] = set()
    for i in indices:
        ids = prompts[i].ids
        seen.update(tuple(ids[:j]) for j in range(1, len(ids) + 1))
    return len(seen)


def test_stretches_are_contiguous_in_lexicographic_order_and_share_out_the_work() -> None:
    prompts = encoded(*[(0, a, b, c) for a in range(4) for b in range(5) for c in range(3)])
    prompts = prompts[::-1]  # the order asked for does not matter
    parts = stretches(prompts, 2)
    assert len(parts) == 2 and sorted(i for part in parts for i in part) == list(range(60))
    order = sorted(range(len(prompts)), key=lambda i: prompts[i].ids)
    assert parts[0] + parts[1] == order  # contiguous, lexicographic
    work = [added_positions(prompts, part) for part in parts]
    assert abs(work[0] - work[1]) <= 4  # within one prompt's work of even


def test_stretches_of_few_or_no_prompts() -> None:
    assert stretches([], 2) == []
    one = encoded((0, 5, 6))
    assert stretches(one, 2) == [[0]]
    assert stretches(encoded((0, 1), (0, 2), (0, 3)), 1) == [[0, 1, 2]]
    # More workers than prompts: no empty stretch.
    parts = stretches(encoded((0, 1), (0, 2)), 8)
    assert sorted(i for part in parts for i in part) == [0, 1] and all(parts)


def test_a_prefix_shared_by_a_stretch_is_not_cut_where_it_need_not_be() -> None:
    """Two families of prompts of equal work: each family goes to one worker whole."""
    first = [(0, 1, 1, t) for t in range(10)]
    second = [(0, 2, 2, t) for t in range(10)]
    prompts = encoded(*(second + first))
    parts = stretches(prompts, 2)
    assert {prompts[i].ids[1] for i in parts[0]} == {1}
    assert {prompts[i].ids[1] for i in parts[1]} == {2}


def test_workers_must_be_positive(loaded) -> None:
    model, tokenizer = loaded
    with pytest.raises(ValueError, match="workers must be at least 1"):
        LogprobEngine(model, tokenizer, bos_text=BOS, workers=0)


@pytest.mark.slow
def test_two_workers_score_as_one_does_and_each_prompt_once(loaded, fewer_sentences) -> None:
    import torch

    model, tokenizer = loaded
    one = LogprobEngine(model, tokenizer, bos_text=BOS, workers=1)
    two = LogprobEngine(model, tokenizer, bos_text=BOS, workers=2, max_batch_positions=64)
    assert two.prefix_sharing and len(two._workers) == 2
    expected = one.prompt_logprobs(fewer_sentences)

    threads_before = torch.get_num_threads()
    encoded_prompts = two.encoder.encode_many(fewer_sentences)
    answered: list[int] = []
    callers: set[str] = set()

    def on_pass(indices: list[int], logprobs: list[list[float]]) -> None:
        callers.add(threading.current_thread().name)
        answered.extend(indices)
        for i, values in zip(
            indices, logprobs, strict=False
        ):  # the indices are the call's, not a stretch's
            assert len(values) == len(encoded_prompts[i].ids)

    computed = two.logprobs_of_encoded(encoded_prompts, on_pass=on_pass)
    assert torch.get_num_threads() == threads_before  # the workers' share is given back
    assert sorted(answered) == list(range(len(fewer_sentences)))  # each prompt once
    assert len(callers) == 2  # both workers answered passes
    for a, values in zip(expected, computed, strict=False):
        assert max_difference(a.logprobs, values) < TOLERANCE
    # Each worker's store holds its stretch's prefixes, and the counts add up both workers'.
    assert all(len(store.index) > 1 for store in two._workers.stores)
    assert two.counts["prompts"] == len(fewer_sentences)
    assert two.counts["passes"] >= 2

    # Again: each prompt goes to the same worker, whose store has it all: no pass.
    passes = two.counts["passes"]
    again = two.prompt_logprobs(fewer_sentences)
    assert two.counts["passes"] == passes and two.counts["reused"] > 0
    for a, b in zip(again, computed, strict=False):
        assert max_difference(a.logprobs, b) < TOLERANCE


@pytest.mark.slow
def test_a_failing_worker_fails_the_call_and_gives_the_threads_back(loaded, fewer_sentences,
                                                                     monkeypatch) -> None:
    import torch

    model, tokenizer = loaded
    engine = LogprobEngine(model, tokenizer, bos_text=BOS, workers=2)
    second = engine._workers.passes[1]

    def broken(*args, **kwargs):
        raise RuntimeError("worker 1 broke")

    monkeypatch.setattr(second, "run", broken)
    threads_before = torch.get_num_threads()
    with pytest.raises(RuntimeError, match="worker 1 broke"):
        engine.prompt_logprobs(fewer_sentences)
    assert torch.get_num_threads() == threads_before
    # The engine is still usable (its lock was released), and one prompt needs one worker only.
    monkeypatch.undo()
    assert engine.prompt_logprobs(fewer_sentences[:1])[0].texts[0] == BOS
