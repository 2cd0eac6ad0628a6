"""Prefix-shared passes on several worker threads at once (:class:`PassWorkers`): a call's prompts
are cut into stretches of their lexicographic order (:func:`stretches`), and each stretch is
computed by a worker of its own, with its own store of computed prefixes and its share of torch's
threads.

Why: a pass's matrix products keep every core busy, but the rest of a pass does not: its Python
(planning, packing, the store, the results) runs on one core, and its many small tensor
operations (norms, rotary embeddings, activations, copies, the attention of a few rows) gain
little from a second thread. Two workers of one thread each keep both cores of a 2-core machine
busy through those parts, at the cost of a second pass's activations in memory. The engine alone
gains from it; inside ``helm-run`` the gain is smaller (docs/scaling.md, BENCHMARKS.md), so one
worker stays the default.

The stretches are contiguous in lexicographic order, so the prompts that share a prefix go to the
same worker and the prefix is computed once (only where two stretches meet is a prefix computed
by both); each worker's store keeps the prefixes of its part of the order, which the next call's
prompts of that part share. Results equal one worker's up to float rounding, as any change of
the passes' composition does (:mod:`.forward_passes`).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence

import torch

from syntaxgym_helm.clients.local.forward_passes import OnPass, PassLimits, SharedPasses
from syntaxgym_helm.clients.local.prefix_store import PrefixStore
from syntaxgym_helm.clients.local.prompt_encoding import EncodedPrompt


def stretches(encoded: Sequence[EncodedPrompt], count: int) -> list[list[int]]:
    """Indices of ``encoded`` cut into at most ``count`` contiguous stretches of their
    lexicographic order (of token ids) with about equal work each: a prompt's work is its tokens
    after the prefix it shares with the prompt before it (the positions it adds). Empty
    stretches are left out."""
    order = sorted(range(len(encoded)), key=lambda i: encoded[i].ids)
    work = []
    previous: Sequence[int] = ()
    for i in order:
        ids = encoded[i].ids
        shared = 0
        for a, b in zip(ids, previous, strict=False):
            if a != b:
                break
            shared += 1
        work.append(len(ids) - shared)
        previous = ids
    total = sum(work)
    cuts: list[list[int]] = [[] for _ in range(max(1, count))]
    done = 0
    for i, w in zip(order, work, strict=False):
        # The stretch this prompt's work starts in, so each holds about total / count.
        part = min(len(cuts) - 1, done * len(cuts) // max(total, 1))
        cuts[part].append(i)
        done += w
    return [cut for cut in cuts if cut]


class PassWorkers:
    """Workers computing prefix-shared passes at once, each with its own :class:`SharedPasses`
    (and so its own counts) and :class:`PrefixStore`. ``counts`` (the engine's) gets each
    call's totals when it ends."""

    def __init__(self, passes: list[SharedPasses], stores: list[PrefixStore],
                 counts: Counter[str]) -> None:
        if len(passes) != len(stores) or not passes:
            raise ValueError("one store per worker, and at least one worker")
        self.passes = passes
        self.stores = stores
        self.counts = counts

    def __len__(self) -> int:
        return len(self.passes)

    def run(self, encoded: Sequence[EncodedPrompt], limits: PassLimits,
            on_pass: OnPass | None = None) -> list[list[float]]:
        """Logprobs of each prompt's tokens (as :meth:`SharedPasses.run`); ``on_pass`` is called
        from the workers' threads, one call at a time."""
        parts = stretches(encoded, len(self.passes)) if len(self.passes) > 1 else []
        if len(parts) <= 1:  # one worker, or one worker's work: all of torch's threads for it
            try:
                return self.passes[0].run(encoded, self.stores[0], limits, on_pass)
            finally:
                self._collect_counts()
        results: list[list[float]] = [[] for _ in encoded]
        failures: list[BaseException] = []
        lock = threading.Lock()

        def work(worker: int, indices: list[int]) -> None:
            def answered(done: list[int], logprobs: list[list[float]]) -> None:
                if on_pass is not None:
                    with lock:
                        on_pass([indices[i] for i in done], logprobs)

            try:
                computed = self.passes[worker].run([encoded[i] for i in indices],
                                                   self.stores[worker], limits, answered)
                for i, logprobs in zip(indices, computed, strict=True):
                    results[i] = logprobs
            except BaseException as exc:  # noqa: BLE001 - raised in the caller's thread below
                failures.append(exc)

        threads_before = torch.get_num_threads()
        torch.set_num_threads(max(1, threads_before // len(parts)))
        try:
            helpers = [threading.Thread(target=work, args=(w, indices), daemon=True,
                                        name=f"syntaxgym-pass-worker-{w}")
                       for w, indices in enumerate(parts) if w]
            for helper in helpers:
                helper.start()
            work(0, parts[0])  # the first stretch in this thread
            for helper in helpers:
                helper.join()
        finally:
            torch.set_num_threads(threads_before)
            self._collect_counts()
        if failures:
            raise failures[0]
        return results

    def _collect_counts(self) -> None:
        for passes in self.passes:
            self.counts.update(passes.counts)
            passes.counts.clear()
