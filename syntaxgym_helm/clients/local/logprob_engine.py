"""Token logprobs of prompts with a loaded model: beginning-of-text token + prompt, one logprob
per token, each distinct prefix computed once (:class:`LogprobEngine`; one caller at a time).

The prompts of a forward pass are packed as prefix trees (:mod:`.prefix_trie`,
:mod:`.pass_packing`): each distinct prefix is one position, which its descendants alone see
through a tree-shaped 4D attention mask with explicit position ids. Prefixes computed in earlier
passes (the same item's other conditions, the next suite's identical beginnings) are not
recomputed but read from a store of their keys, values, final hidden states and softmax
normalisers (:mod:`.prefix_store`). The results equal plain one-prompt-at-a-time passes up to
float rounding;
that is checked on every model load, and a model that ignores custom masks, position ids or past
keys and values gets plain padded batches (:mod:`.forward_passes`).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace

import torch
from helm.common.hierarchical_logger import hlog, hwarn

from syntaxgym_helm.clients.local.forward_passes import (
    OnPass,
    PassLimits,
    PlainPasses,
    SharedPasses,
)
from syntaxgym_helm.clients.local.output_layer import OutputLayer
from syntaxgym_helm.clients.local.pass_workers import PassWorkers
from syntaxgym_helm.clients.local.prefix_store import PrefixStore, layer_tensors, returned_cache
from syntaxgym_helm.clients.local.prompt_encoding import (
    EncodedPrompt,
    PromptEncoder,
    PromptError,
    PromptLogprobs,
    context_length,
)
from syntaxgym_helm.clients.local.word_boundary import (
    corrected_logprobs_of_encoded,
    engine_boundary_mask,
)

LOG = "syntaxgym local engine:"
"""How the engine's log lines begin (it runs under any HELM client that wraps it)."""

PROBE_PROMPTS = (
    "The keys to the cabinet are on the table.",
    "The keys to the cabinet is on the table.",
    "The author that the guards like laughs.",
    "The author that the guards like laugh.",
    "No",
)
"""Prompts computed with and without prefix sharing on every model load: they must agree."""


class LogprobEngine:
    """Token logprobs of prompts with a loaded model: beginning-of-text token + prompt, one each.

    With ``prefix_sharing`` (default), each forward pass packs its prompts' distinct prefixes as
    trees, and prefixes computed in earlier passes are reused from a store of their keys and
    values (``prefix_cache_mb`` of memory; 0: no reuse across passes). Limits of one forward
    pass: ``batch_size`` prompts and ``max_batch_positions`` distinct positions, laid out in rows
    of about ``max_row_nodes`` positions (cut between independent subtrees; attention costs the
    square of a row's length, padding to the longest row costs linear layers). With ``workers``
    above 1 (default 1), a call's prompts are cut into that many stretches of their order, each
    computed by a worker thread with its own store (``prefix_cache_mb`` shared out among them)
    and its share of torch's threads (:mod:`.pass_workers`). Calls are serialised by a lock.

    With ``word_boundary``, the logprobs are corrected for word boundaries (:mod:`.word_boundary`;
    a tokenizer that marks no word beginnings is refused; ``boundary_end_of_text=False``: the end
    of text is not a word boundary, as in minicons).
    """

    def __init__(
        self,
        model,
        tokenizer,
        *,
        bos_text: str | None = None,
        batch_size: int = 128,
        prefix_sharing: bool = True,
        prefix_cache_mb: float = 160,
        max_batch_positions: int = 384,
        max_row_nodes: int = 128,
        max_sequence_length: int | None = None,
        check_prefix_sharing: bool = True,
        workers: int = 1,
        word_boundary: bool = False,
        boundary_end_of_text: bool = True,
    ) -> None:
        if batch_size < 1 or max_row_nodes < 1 or max_batch_positions < 1:
            raise ValueError("batch_size, max_row_nodes and max_batch_positions must be positive")
        if workers < 1:
            raise ValueError(f"workers must be at least 1 (got {workers})")
        self.model = model
        self.limits = PassLimits(batch_size, max_batch_positions, max_row_nodes)
        self.device = next(model.parameters()).device
        self.dtype = next(model.parameters()).dtype
        self.encoder = PromptEncoder(tokenizer, bos_text,
                                     max_sequence_length or context_length(model, tokenizer))
        self.boundary_mask = (engine_boundary_mask(model, tokenizer, self.encoder.bos_id,
                                                   boundary_end_of_text)
                              if word_boundary else None)
        self.counts: Counter[str] = Counter()
        """Totals of ``prompts``, ``tokens`` (with the beginning-of-text token), ``positions``
        (computed, padding included), ``reused`` (positions served by the store), forward
        ``passes``, over :meth:`logprobs_of_encoded` calls."""
        self._lock = threading.Lock()
        self._plain = PlainPasses(model, self.encoder.bos_id, self.counts)
        self._plain.boundary_mask = self.boundary_mask
        self._shared: SharedPasses | None = None
        self._workers: PassWorkers | None = None
        self.workers = int(workers)
        self.prefix_store: PrefixStore | None = None
        self.prefix_sharing = prefix_sharing and self._set_up_prefix_sharing(
            prefix_cache_mb, check_prefix_sharing)
        if prefix_sharing:
            self.counts.clear()  # the probe's passes are not the caller's

    @property
    def batch_size(self) -> int:
        """Most prompts in one forward pass (the server gathers that many before it starts)."""
        return self.limits.batch_size

    @property
    def bos_text(self) -> str:
        """The beginning-of-text token's text: the first token of every result."""
        return self.encoder.bos_text

    def _set_up_prefix_sharing(self, cache_mb: float, check: bool) -> bool:
        """Find the model's parts and key/value shapes, then compute probe prompts with prefix
        sharing (small store, several passes, evictions) and without: a model that ignores
        custom 4D masks, explicit position ids or past keys/values, or post-processes its logits,
        disagrees and gets plain batches instead.

        The beginning-of-text position is computed in a pass of all the probes (MKL computes a
        matrix of one or two rows with other kernels, which move its huge activations by 5e-4
        nats) and stored for every later pass."""
        try:
            base = self.model.base_model
            head = self.model.get_output_embeddings()
            if head is None or base is self.model:
                raise ValueError("no separate linear output layer")
            output_layer = OutputLayer(head)
            output_layer.set_boundary_mask(self.boundary_mask)
            with torch.inference_mode():
                out = base(input_ids=torch.tensor([[self.encoder.bos_id] * 2], device=self.device),
                           use_cache=True)
            shapes = [(keys.shape[1], keys.shape[3])
                      for keys, _ in map(layer_tensors, returned_cache(out).layers)]
            hidden_size = out.last_hidden_state.shape[-1]

            def store(budget: float) -> PrefixStore:
                return PrefixStore.sized(shapes, hidden_size, int(budget), self.dtype,
                                         self.device)

            shared = SharedPasses(base, output_layer, self.device, self.dtype, self.counts)
            probes = [self.encoder.encode(prompt) for prompt in PROBE_PROMPTS]
            # One prompt a pass: its logits span the vocabulary at each position (a set-up peak).
            plain = [self._plain.one_pass([probe])[0] for probe in probes] if check else []
            worker_budget = cache_mb * 2**20 / self.workers
            prefix_store = store(worker_budget)  # the first worker's
            if prefix_store.index.capacity:  # (none: every pass computes it)
                shared.run(probes, prefix_store, self.limits)
            if check:
                tolerance = 1e-3 if self.dtype == torch.float32 else 5e-2
                worst = self._probe_disagreement(shared, store, probes, plain, prefix_store)
                if worst > tolerance:
                    raise ValueError(f"its logprobs differ by up to {worst:.3g} nats from plain "
                                     "scoring")
            self.prefix_store = prefix_store
            self._shared = shared
            self._workers = self._make_workers(shared, prefix_store,
                                               lambda: store(worker_budget))
            hlog(f"{LOG} prefix sharing on ({self.workers} worker(s), "
                 f"{self.prefix_store.index.capacity} prefixes stored at most by each)")
            return True
        except Exception as exc:  # noqa: BLE001 - plain batches score any model the same
            hwarn(f"{LOG} prefix sharing is off for this model, which is scored in "
                  f"plain batches ({type(exc).__name__}: {exc})")
            return False

    def _make_workers(self, shared: SharedPasses, first_store: PrefixStore,
                      new_store: Callable[[], PrefixStore]) -> PassWorkers:
        """The workers: the first with ``first_store``, the others with new stores (of the same
        size) that start with its beginning-of-text position; all with ``shared``'s model
        parts."""
        passes, stores = [], [first_store]
        for worker in range(self.workers):
            passes.append(SharedPasses(shared.base, shared.output_layer, self.device, self.dtype,
                                       Counter()))
            if worker:
                other = new_store()
                other.copy_root(first_store, self.encoder.bos_id)
                stores.append(other)
        return PassWorkers(passes, stores, self.counts)

    def _probe_disagreement(self, shared: SharedPasses, store: Callable[[float], PrefixStore],
                            probes: list[EncodedPrompt], plain: list[list[float]],
                            prefix_store: PrefixStore) -> float:
        """Largest logprob difference between plain (``plain``) and prefix-shared passes over
        the probe prompts, with a store so small that prefixes are evicted (nats). The store
        starts with ``prefix_store``'s beginning-of-text position, as every scoring pass does."""
        slots_per_mb = store(2**20).hidden.shape[0]
        scratch = store(2**20 * 12 / max(slots_per_mb, 1))  # 12 slots: evictions happen
        scratch.copy_root(prefix_store, self.encoder.bos_id)
        # Several passes of a few prompts (each row holds two sentences' branches under the
        # custom mask; later passes start after stored prefixes, the last reads its one output
        # from the store). Once: a second time would repeat the same passes (each reads every
        # weight, however few its positions) and add nothing it checks.
        limits = replace(self.limits, batch_size=2, max_row_nodes=4)
        computed = shared.run(probes, scratch, limits)
        pairs = zip(computed, plain, strict=True)
        return max(abs(a - b) for x, y in pairs for a, b in zip(x, y, strict=True))

    # -- logprobs -------------------------------------------------------------------------------

    def prompt_logprobs(self, prompts: Sequence[str]) -> list[PromptLogprobs]:
        """The token logprobs of ``prompts`` (raises PromptError for the first unusable one)."""
        encoded = self.encoder.encode_many(prompts)
        for item in encoded:
            if isinstance(item, PromptError):
                raise item
        usable = [item for item in encoded if not isinstance(item, PromptError)]  # (all of them)
        scored = zip(usable, self.logprobs_of_encoded(usable), strict=True)
        return [PromptLogprobs(e.prompt, e.texts, tuple(lp)) for e, lp in scored]

    def logprobs_of_encoded(self, encoded: Sequence[EncodedPrompt],
                            on_pass: OnPass | None = None) -> list[list[float]]:
        """Logprobs of each encoded prompt's tokens (0.0 first, for the beginning-of-text token),
        corrected for word boundaries with ``word_boundary``.

        ``on_pass(indices, logprobs)`` is called after each forward pass with what it finished.
        """
        if self.boundary_mask is not None:
            return corrected_logprobs_of_encoded(self, encoded, on_pass)
        return self.uncorrected_logprobs(encoded, on_pass)

    def uncorrected_logprobs(self, encoded: Sequence[EncodedPrompt],
                             on_pass: OnPass | None = None) -> list[list[float]]:
        """:meth:`logprobs_of_encoded` without the word-boundary correction."""
        with self._lock:
            if self.prefix_sharing:
                assert self._workers is not None
                return self._workers.run(encoded, self.limits, on_pass)
            return self._plain.run(encoded, self.limits, on_pass)

