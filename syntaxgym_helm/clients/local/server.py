"""The model server: one thread per loaded model that owns it and computes the prompts HELM's
worker threads ask for in batches (:class:`ModelServer`), and the process-wide factory that makes
one server per model and settings, loading each model once (:class:`ModelServerFactory`).

Shaped like HELM's ``HuggingFaceServer`` and ``HuggingFaceServerFactory``
(``helm/clients/huggingface_client.py``); the thin HELM client is :mod:`.client`.

Why one thread owns a model: with OpenMP, as PyTorch's CPU builds use, a second thread that has
run parallel work keeps a team of worker threads of its own; with more such threads than cores,
all teams stop spinning between parallel regions, which cost a sixth of the computing time on two
cores.
"""

from __future__ import annotations

import gc
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, ClassVar

from syntaxgym_helm.clients.local.freed_memory import trim_heaps
from syntaxgym_helm.clients.local.logprob_engine import LogprobEngine
from syntaxgym_helm.clients.local.prompt_encoding import PromptError, PromptLogprobs
from syntaxgym_helm.clients.local.server_lifecycle import ServerLifecycle

if TYPE_CHECKING:
    from tqdm import tqdm


class ModelServer(ServerLifecycle):
    """A model's server: one engine thread that owns the model and computes, in batches, the
    prompts any number of threads ask for.

    :meth:`prompt_logprobs` blocks until a prompt is computed. The engine thread takes everything
    queued when either ``batch_size`` prompts wait, every thread that recently asked is waiting
    (HELM's threads cannot send more until answered), or ``max_wait_s`` passed since the oldest
    arrived. :meth:`reserve` queues prompts ahead of the requests that will ask for them (the
    results are kept until asked for). A prompt queued, being computed or computed lately is not
    computed again.

    ``make_engine`` makes the :class:`~.logprob_engine.LogprobEngine` (loads the model) first
    thing in the engine thread, so that every torch computation of the model happens on that one
    thread (see the module doc); :meth:`wait_ready` waits for it. :meth:`close` ends it
    (:class:`.ServerLifecycle`).
    """

    CALLER_TTL_S = 2.0

    def __init__(self, make_engine: Callable[[], LogprobEngine], *, max_wait_s: float = 0.02,
                 progress: bool = True, memo_size: int = 4096) -> None:
        self.engine: LogprobEngine | None = None  # made in the engine thread
        self._make_engine = make_engine
        self._ready = threading.Event()
        self._setup_error: BaseException | None = None
        self.max_wait_s = max_wait_s
        self.progress = progress
        self.memo_size = memo_size
        self.prompts_computed = 0  # answers the engine gave (errors included)
        self.forward_passes = 0
        self._cond = threading.Condition()
        self._queue: list[str] = []
        self._pending: dict[str, Future] = {}
        self._reserved: Counter[str] = Counter()
        # Results of reserved prompts not yet asked for.
        self._kept: dict[str, PromptLogprobs | PromptError] = {}
        self._memo: OrderedDict[str, PromptLogprobs | PromptError] = OrderedDict()
        self._waiting: set[threading.Thread] = set()
        self._callers: dict[threading.Thread, float] = {}
        self._bar: tqdm[Any] | None = None
        self._closed: str | None = None  # why the server was closed
        self._thread = threading.Thread(target=self._run, name="syntaxgym-local-engine",
                                        daemon=True)
        self._thread.start()

    def wait_ready(self) -> LogprobEngine:
        """The engine, once made (the model loaded); raises what making it raised."""
        self._ready.wait()
        if self._setup_error is not None:
            raise RuntimeError(f"could not load the model: {type(self._setup_error).__name__}: "
                               f"{self._setup_error}") from self._setup_error
        assert self.engine is not None
        return self.engine

    # -- callers --------------------------------------------------------------------------------

    def prompt_logprobs(self, prompt: str) -> PromptLogprobs:
        """The prompt's token logprobs (blocking); raises PromptError when it cannot have any."""
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

    def finished_results(self, timeout_s: float) -> dict[str, PromptLogprobs | PromptError]:
        """The results computed and still held (asked for lately, or reserved and not yet asked
        for); empty when the engine's lock is not free within ``timeout_s`` (an interrupted run
        must not wait on a busy engine)."""
        if not self._cond.acquire(timeout=timeout_s):
            return {}
        found = {**self._memo, **self._kept}
        self._cond.release()
        return found

    def _submit(self, prompt: str) -> Future:
        future = self._pending.get(prompt)
        if future is None:
            future = Future()
            if self._closed is not None:
                future.set_exception(RuntimeError(self._closed))
                return future
            self._pending[prompt] = future
            self._queue.append(prompt)
        return future

    def _remember(self, prompt: str, result: PromptLogprobs | PromptError) -> None:
        remember(self._memo, prompt, result, self.memo_size)

    # -- engine thread --------------------------------------------------------------------------

    def _all_callers_waiting(self) -> bool:
        if not self._waiting:
            return False
        now = time.monotonic()
        for thread, seen in list(self._callers.items()):
            if thread not in self._waiting and (not thread.is_alive()
                                                or now - seen > self.CALLER_TTL_S):
                del self._callers[thread]
        return len(self._waiting) >= len(self._callers)

    def _gather_batch(self) -> list[str] | None:
        """The next batch of prompts; None once the server is closed."""
        with self._cond:
            while not self._queue and self._closed is None:
                self._cond.wait()
            if self._closed is not None:
                return None
            deadline = time.monotonic() + self.max_wait_s
            batch_size = self.engine.batch_size if self.engine is not None else 1
            while len(self._queue) < batch_size and not self._all_callers_waiting():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._cond.wait(remaining)
            prompts, self._queue = self._queue, []
            return prompts

    def _run(self) -> None:
        try:
            self.engine = self._make_engine()
        except BaseException as exc:  # noqa: BLE001 - every request will report it
            self._setup_error = exc
        self._ready.set()
        while (prompts := self._gather_batch()) is not None:
            try:
                if self._setup_error is not None:
                    raise self._setup_error
                self._compute_batch(prompts)
            except BaseException as exc:  # noqa: BLE001 - hand every failure to the callers
                failure = RuntimeError(f"computing logprobs failed: {type(exc).__name__}: "
                                       f"{exc}")
                failure.__cause__ = exc
                with self._cond:
                    futures = [self._pending.pop(p) for p in prompts if p in self._pending]
                for future in futures:
                    if not future.done():
                        future.set_exception(failure)
        self.engine = None  # closed: the model goes with its last reference

    def _compute_batch(self, prompts: list[str]) -> None:
        """Encode ``prompts``, answer those that cannot be computed, and run the engine's forward
        passes over the rest, answering each pass's prompts as soon as it is done."""
        assert self.engine is not None
        if self.progress:
            self._bar = grown_progress_bar(self._bar, len(prompts))
        encoded = self.engine.encoder.encode_many(prompts)
        errors = [
            (p, e) for p, e in zip(prompts, encoded, strict=False) if isinstance(e, PromptError)
        ]
        if errors:
            self._complete(errors)
        usable = [e for e in encoded if not isinstance(e, PromptError)]
        # Each pass's seconds (the first's with the batch's encoding), shared by its prompts:
        # a prompt's own cost, which the time a request waits for its answer is not. With several
        # workers (called one at a time), the time since any worker's last pass ended: the
        # passes' seconds still add up to the batch's wall time.
        last_pass_end = time.perf_counter()

        def pass_done(indices: list[int], logprobs: list[list[float]]) -> None:
            nonlocal last_pass_end
            now = time.perf_counter()
            seconds, last_pass_end = now - last_pass_end, now
            self.forward_passes += 1
            self._complete([(usable[i].prompt, PromptLogprobs(usable[i].prompt, usable[i].texts,
                                                            tuple(lp), seconds, len(indices)))
                            for i, lp in zip(indices, logprobs, strict=False)])

        if usable:
            self.engine.logprobs_of_encoded(usable, on_pass=pass_done)
        if self._bar is not None and errors:
            self._bar.update(len(errors))

    def _complete(self, results: Sequence[tuple[str, PromptLogprobs | PromptError]]) -> None:
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
            self.prompts_computed += len(results)
        for future, result in futures:
            future.set_result(result)
        if self._bar is not None:
            self._bar.update(sum(1 for _, r in results if isinstance(r, PromptLogprobs)))



def remember(memo: OrderedDict, prompt: str, result: Any, size: int) -> None:
    """Keep ``result`` as the latest of ``memo``'s at most ``size`` entries."""
    memo[prompt] = result
    memo.move_to_end(prompt)
    while len(memo) > size:
        memo.popitem(last=False)


def grown_progress_bar(bar: tqdm[Any] | None, count: int) -> tqdm[Any]:
    """``bar`` (made on first use) with ``count`` more prompts to go."""
    if bar is None:
        from tqdm import tqdm

        # disable=None: shown on a terminal, silent when the output goes to a file.
        bar = tqdm(total=0, desc="syntaxgym local engine", unit=" prompts", disable=None,
                   dynamic_ncols=True)
    bar.total = (bar.total or 0) + count
    bar.refresh()
    return bar


class ModelServerFactory:
    """The process's model servers, one per model and settings, and their loaded models, one per
    checkpoint whatever the settings (as HELM's ``HuggingFaceServerFactory``).

    A model key names a checkpoint as loaded: its path and identity first
    (:mod:`~syntaxgym_helm.clients.checkpoint_identity`: what its files hold), then the settings
    that change the loaded weights. A server made for a path's new identity (the folder was saved
    again) closes those of its earlier identities, and their models are dropped: their files are
    gone, and a model whose weights map the file would read a mix of old and new bytes.
    """

    _servers: ClassVar[dict[tuple, ModelServer]] = {}
    _servers_lock: ClassVar[threading.Lock] = threading.Lock()
    _models: ClassVar[dict[tuple, tuple[Any, Any]]] = {}  # model key -> (model, tokenizer)
    _models_lock: ClassVar[threading.Lock] = threading.Lock()

    @classmethod
    def get_server(cls, model_key: tuple, load: Callable[[], tuple[Any, Any]],
                   engine_args: Mapping[str, Any], server_args: Mapping[str, Any]) -> ModelServer:
        """The server for this model with these :class:`LogprobEngine` and :class:`ModelServer`
        arguments; a new one loads the model (with ``load``, unless this process has it already)
        in its own thread."""
        key = (model_key, tuple(sorted(engine_args.items())),
               tuple(sorted(server_args.items())))

        def make_engine() -> LogprobEngine:
            return LogprobEngine(*cls.loaded_model(model_key, load), **engine_args)

        with cls._servers_lock:
            server = cls._servers.get(key)
            if server is None:
                cls._forget_other_versions(model_key)
                server = ModelServer(make_engine, **server_args)
                cls._servers[key] = server
            return server

    @classmethod
    def _forget_other_versions(cls, model_key: tuple) -> None:
        """Close the servers, and drop the models, of ``model_key``'s path under another
        identity (called with the servers' lock held)."""
        path, identity = model_key[:2]

        def stale(key: tuple) -> bool:
            return key[0] == path and key[1] != identity

        for key in [key for key in cls._servers if stale(key[0])]:
            cls._servers.pop(key).close(f"{path}: its files changed (checkpoint {key[0][1]}, "
                                        f"now {identity}); the model was loaded again")
        with cls._models_lock:
            for key in [key for key in cls._models if stale(key)]:
                del cls._models[key]

    @classmethod
    def release(cls, sources: Iterable[str] | None = None) -> int:
        """Close the servers of the models loaded from ``sources`` (their
        ``pretrained_model_name_or_path``; None: every model), forget those models and hand
        their memory back (a sweep keeps one checkpoint in memory at a time); returns how many
        servers were closed. A later request for such a model loads it again. A model holds
        reference cycles (methods installed on its modules), which only the collector frees:
        a collection follows, then the C heaps' free pages are handed back (the reach
        ``malloc_trim``, :func:`~.freed_memory.trim_heaps`)."""
        wanted = None if sources is None else set(sources)

        def chosen(model_key: tuple) -> bool:
            return wanted is None or model_key[0] in wanted

        with cls._servers_lock:
            servers = [cls._servers.pop(key) for key in list(cls._servers) if chosen(key[0])]
        for server in servers:
            server.close("its model was released", timeout_s=30.0)
        closed = len(servers)
        with cls._models_lock:
            for key in [key for key in cls._models if chosen(key)]:
                del cls._models[key]
        del servers[:]
        gc.collect()
        if closed:
            trim_heaps()  # the reach malloc_trim (freed_memory.py)
        return closed

    @classmethod
    def setup_failure(cls) -> str | None:
        """Why a model of this process could not be loaded (the first such server's error);
        None when every server's model loaded (or none was asked for)."""
        with cls._servers_lock:
            for server in cls._servers.values():
                if server.setup_error is not None:
                    error = server.setup_error
                    return f"could not load the model: {type(error).__name__}: {error}"
        return None

    @classmethod
    def loaded_model(cls, model_key: tuple, load: Callable[[], tuple[Any, Any]]) -> tuple[Any, Any]:
        """(model, tokenizer) for ``model_key``, loaded with ``load`` the first time."""
        with cls._models_lock:
            if model_key not in cls._models:
                cls._models[model_key] = load()
            return cls._models[model_key]


def engine_at_work(server: ModelServer) -> bool:
    """Whether ``server``'s engine thread runs torch code now: loading the model, or computing
    prompts asked for or reserved (Python's exit must not meet it:
    :mod:`~syntaxgym_helm.clients.interruption`)."""
    return not server._ready.is_set() or bool(server._pending)
