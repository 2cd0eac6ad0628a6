"""One scoring thread per loaded model, gathering prompts from HELM's worker threads into
batches (:class:`ModelServer`), and the process-wide sharing of models and services."""

from __future__ import annotations

import threading
import time
from collections import Counter, OrderedDict
from concurrent.futures import Future
from typing import Any, Callable, Iterable, Mapping, Sequence

from syntaxgym_helm.clients.local.logprob_engine import LogprobEngine, PromptError, PromptLogprobs


class ModelServer:
    """One scoring thread per model that gathers prompts from any number of threads.

    :meth:`result` blocks until a prompt is scored. The scoring thread takes everything queued
    when either ``batch_size`` prompts wait, every thread that recently asked is waiting (HELM's
    threads cannot send more until answered), or ``max_wait_s`` passed since the oldest arrived.
    :meth:`reserve` queues prompts ahead of the requests that will ask for them (the results are
    kept until asked for). A prompt queued, being scored or scored lately is not scored again.

    ``make_scorer`` makes the scorer (loads the model) first thing in the scoring thread, so that
    every torch computation of the model happens on that one thread. (With OpenMP, as PyTorch's
    CPU builds use, a second thread that has run parallel work keeps a team of worker threads of
    its own; with more such threads than cores, all teams stop spinning between parallel
    regions, which cost a sixth of the scoring time on two cores.) :meth:`wait_ready` waits for
    it.
    """

    CALLER_TTL_S = 2.0

    def __init__(self, make_scorer: Callable[[], LogprobEngine], *, max_wait_s: float = 0.02,
                 progress: bool = True, memo_size: int = 4096) -> None:
        self.scorer: LogprobEngine | None = None  # made in the scoring thread
        self._make_scorer = make_scorer
        self._ready = threading.Event()
        self._setup_error: BaseException | None = None
        self.max_wait_s = max_wait_s
        self.progress = progress
        self.memo_size = memo_size
        self.prompts_scored = 0
        self.forward_passes = 0
        self._cond = threading.Condition()
        self._queue: list[str] = []
        self._pending: dict[str, Future] = {}
        self._reserved: Counter[str] = Counter()
        self._kept: dict[str, PromptLogprobs | PromptError] = {}  # reserved results not yet asked for
        self._memo: OrderedDict[str, PromptLogprobs | PromptError] = OrderedDict()
        self._waiting: set[threading.Thread] = set()
        self._callers: dict[threading.Thread, float] = {}
        self._bar = None
        self._thread = threading.Thread(target=self._run, name="syntaxgym-scorer", daemon=True)
        self._thread.start()

    def wait_ready(self) -> LogprobEngine:
        """The scorer, once made (the model loaded); raises what making it raised."""
        self._ready.wait()
        if self._setup_error is not None:
            raise RuntimeError(f"could not load the model: {type(self._setup_error).__name__}: "
                               f"{self._setup_error}") from self._setup_error
        assert self.scorer is not None
        return self.scorer

    # -- callers --------------------------------------------------------------------------------

    def result(self, prompt: str) -> PromptLogprobs:
        """The prompt's scores (blocking); raises PromptError when it cannot be scored."""
        me = threading.current_thread()
        with self._cond:
            self._callers[me] = time.monotonic()
            if self._reserved.get(prompt):
                self._reserved[prompt] -= 1
                if not self._reserved[prompt]:
                    del self._reserved[prompt]
                    kept = self._kept.pop(prompt, None)
                    if kept is not None:
                        self._remember(prompt, kept)
            found = self._kept.get(prompt)
            if found is None:
                found = self._memo.get(prompt)
                if found is not None:
                    self._memo.move_to_end(prompt)
            if found is None:
                future = self._submit(prompt)
                self._waiting.add(me)
                self._cond.notify_all()
        if found is None:
            try:
                found = future.result()
            finally:
                with self._cond:
                    self._waiting.discard(me)
                    self._callers[me] = time.monotonic()
        if isinstance(found, PromptError):
            raise PromptError(str(found))
        return found

    def reserve(self, prompts: Iterable[str]) -> int:
        """Queue ``prompts`` (with repeats: one per request to come) without waiting; returns how
        many distinct prompts were newly queued."""
        counts = Counter(prompts)
        with self._cond:
            # HELM executes one run at a time: what an earlier run reserved and never asked for
            # is released (kept in the ordinary memo).
            for prompt, result in self._kept.items():
                self._remember(prompt, result)
            self._kept.clear()
            self._reserved.clear()
            before = len(self._queue)
            for prompt, count in counts.items():
                self._reserved[prompt] += count
                done = self._memo.pop(prompt, None)
                if done is not None:
                    self._kept[prompt] = done
                elif prompt not in self._kept:
                    self._submit(prompt)
            self._cond.notify_all()
            return len(self._queue) - before

    def score_many(self, prompts: Sequence[str]) -> list[PromptLogprobs | PromptError]:
        """Score ``prompts`` through the service (for scripts and tests): errors are returned."""
        with self._cond:
            futures = [self._memo.get(p) or self._kept.get(p) or self._submit(p) for p in prompts]
            self._cond.notify_all()
        return [f.result() if isinstance(f, Future) else f for f in futures]

    def _submit(self, prompt: str) -> Future:
        future = self._pending.get(prompt)
        if future is None:
            future = Future()
            self._pending[prompt] = future
            self._queue.append(prompt)
        return future

    def _remember(self, prompt: str, result: PromptLogprobs | PromptError) -> None:
        self._memo[prompt] = result
        self._memo.move_to_end(prompt)
        while len(self._memo) > self.memo_size:
            self._memo.popitem(last=False)

    # -- scoring thread -------------------------------------------------------------------------

    def _all_callers_waiting(self) -> bool:
        if not self._waiting:
            return False
        now = time.monotonic()
        for thread, seen in list(self._callers.items()):
            if thread not in self._waiting and (not thread.is_alive()
                                                or now - seen > self.CALLER_TTL_S):
                del self._callers[thread]
        return len(self._waiting) >= len(self._callers)

    def _gather(self) -> list[str]:
        with self._cond:
            while not self._queue:
                self._cond.wait()
            deadline = time.monotonic() + self.max_wait_s
            batch_size = self.scorer.batch_size if self.scorer is not None else 1
            while len(self._queue) < batch_size and not self._all_callers_waiting():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._cond.wait(remaining)
            prompts, self._queue = self._queue, []
            return prompts

    def _run(self) -> None:
        try:
            self.scorer = self._make_scorer()
        except BaseException as exc:  # noqa: BLE001 - every request will report it
            self._setup_error = exc
        self._ready.set()
        while True:
            prompts = self._gather()
            try:
                if self._setup_error is not None:
                    raise self._setup_error
                self._score_round(prompts)
            except BaseException as exc:  # noqa: BLE001 - hand every failure to the callers
                failure = RuntimeError(f"scoring failed: {type(exc).__name__}: {exc}")
                failure.__cause__ = exc
                with self._cond:
                    futures = [self._pending.pop(p) for p in prompts if p in self._pending]
                for future in futures:
                    if not future.done():
                        future.set_exception(failure)

    def _score_round(self, prompts: list[str]) -> None:
        assert self.scorer is not None
        bar = self._progress_bar(len(prompts))
        encoded = self.scorer.encode_many(prompts)
        errors = [(p, e) for p, e in zip(prompts, encoded) if isinstance(e, PromptError)]
        if errors:
            self._complete(errors)
        usable = [e for e in encoded if not isinstance(e, PromptError)]

        def done(indices: list[int], logprobs: list[list[float]]) -> None:
            self.forward_passes += 1
            self._complete([(usable[i].prompt, PromptLogprobs(usable[i].prompt, usable[i].texts,
                                                            tuple(lp)))
                            for i, lp in zip(indices, logprobs)])

        if usable:
            self.scorer.score_encoded(usable, on_batch=done)
        if bar is not None and errors:
            bar.update(len(errors))

    def _complete(self, results: list[tuple[str, PromptLogprobs | PromptError]]) -> None:
        with self._cond:
            futures = []
            for prompt, result in results:
                if self._reserved.get(prompt):
                    self._kept[prompt] = result
                else:
                    self._remember(prompt, result)
                future = self._pending.pop(prompt, None)
                if future is not None:
                    futures.append((future, result))
            self.prompts_scored += len(results)
        for future, result in futures:
            future.set_result(result)
        if self._bar is not None:
            self._bar.update(sum(1 for _, r in results if isinstance(r, PromptLogprobs)))

    def _progress_bar(self, count: int):
        if not self.progress:
            return None
        if self._bar is None:
            from tqdm import tqdm

            # disable=None: shown on a terminal, silent when the output goes to a file.
            self._bar = tqdm(total=0, desc="SyntaxGym scoring", unit=" prompts", disable=None,
                             dynamic_ncols=True)
        self._bar.total += count
        self._bar.refresh()
        return self._bar


_LOCK = threading.Lock()
_MODEL_LOCK = threading.Lock()
_MODELS: dict[tuple, tuple[Any, Any]] = {}
_SERVICES: dict[tuple, ModelServer] = {}


def server_for(model_key: tuple, load: Callable[[], tuple[Any, Any]],
                scorer_args: Mapping[str, Any], service_args: Mapping[str, Any]) -> ModelServer:
    """The process's scoring service for this model and these settings; a new one loads the
    model (once per process, whatever the settings) in its scoring thread."""
    key = (model_key, tuple(sorted(scorer_args.items())), tuple(sorted(service_args.items())))

    def make_scorer() -> LogprobEngine:
        with _MODEL_LOCK:
            if model_key not in _MODELS:
                _MODELS[model_key] = load()
            model, tokenizer = _MODELS[model_key]
        return LogprobEngine(model, tokenizer, **scorer_args)

    with _LOCK:
        service = _SERVICES.get(key)
        if service is None:
            service = ModelServer(make_scorer, **service_args)
            _SERVICES[key] = service
        return service
