"""One checkpoint's runs in a process of their own: a sweep forks a child for each checkpoint
(where the platform can fork), which loads the model, runs the checkpoint's HELM runs, writes
their run folders and ends.

Why: a process that loads and frees model after model keeps some of each (the allocators' free
lists, caches that grow with each run), so its peak creeps up by checkpoint; a child starts from the
parent's state every time, so a sweep's peak memory does not grow with its checkpoints. And a
checkpoint that ends its process (the kernel's out-of-memory killer, a crash in native code) is
recorded as failed with the signal, while the sweep goes on with the next.

The child is forked, not spawned: it has every module and registration the parent has (HELM's model
registry, the plugin's run spec function), so it starts at once. The modules a child imports
(transformers' model classes, the engine) are then imported in the parent, so that the next children
start with them too. The parent loads no model, so it forks with no compute threads running.

The child ends with the parent, however the parent ends: the parent stops it where it can (Ctrl-C,
SIGTERM, an exception), and where it cannot (``kill -9``, the out-of-memory killer), the kernel
tells the child (Linux's parent-death signal, :func:`_end_with_parent`), which then saves what it
computed and ends as on the parent's SIGTERM. Otherwise the child would go on loading and scoring
unseen, and a sweep started again would have two processes writing the same run folders and
request cache.
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any, TypeVar

T = TypeVar("T")

#: Where a sweep runs each checkpoint in a child process (needs ``fork``).
CAN_FORK = sys.platform.startswith("linux") and hasattr(os, "fork")


class ChildFailed(RuntimeError):
    """The child's work raised (its exception's text), or the child ended before it returned
    (the signal or status it ended with)."""


def run_in_child(work: Callable[[], T]) -> T:
    """Run ``work`` in a forked child and return what it returned (it must pickle); a
    :class:`ChildFailed` where it raised or its process ended first.

    The child ignores Ctrl-C: the parent answers it (:mod:`~syntaxgym_helm.clients.interruption`)
    and stops the child, which saves what it computed as an interrupted command does and says
    so in the parent's one line."""
    from syntaxgym_helm.clients import interruption

    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(work, send, os.getpid()),
                            name="syntaxgym-checkpoint")
    child.start()
    send.close()
    remove = interruption.add_remote_work(lambda deadline: _stop(child, receive, deadline))
    try:
        try:
            outcome: tuple[Any, ...] | None = receive.recv()
        except EOFError:  # the child ended without a word
            outcome = None
        child.join()
    finally:
        remove()
        receive.close()
        if child.is_alive():  # interrupted: the checkpoint's work ends with the sweep
            child.terminate()
            child.join(10)
            if child.is_alive():
                child.kill()
                child.join()
    if outcome is None:
        raise ChildFailed(f"its process ended {_ending(child.exitcode)} before the runs "
                          "finished")
    if outcome[0] == _INTERRUPTED:  # a signal from elsewhere
        raise ChildFailed(f"its process was stopped: {outcome[1]}")
    if outcome[0] == _FAILED:
        raise ChildFailed(outcome[1])
    _, result, imported = outcome
    _import_here(imported)
    return result


def _stop(child: multiprocessing.process.BaseProcess, receive: Connection, deadline: float
          ) -> str:
    """Stop the child (SIGTERM: it saves its answers, as an interrupted command does) by
    ``deadline``; what it said, for the parent's line."""
    child.terminate()
    said = ""
    try:
        if receive.poll(max(0.0, deadline - time.monotonic())):
            message = receive.recv()
            if message[0] == _INTERRUPTED:
                said = message[1]
    except (EOFError, OSError):  # it ended with nothing to save
        pass
    child.join(max(0.0, deadline - time.monotonic()))
    if child.is_alive():
        child.kill()
        return "the checkpoint's process did not stop in time and was killed"
    return f"the checkpoint's process stopped{': ' + said if said else ''}"


def _child(work: Callable[[], Any], send: Connection, parent: int) -> None:
    from syntaxgym_helm.clients import interruption

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the terminal's Ctrl-C: the parent answers
    interruption.install(end_process=True)  # SIGTERM from the parent: save, then end
    interruption.forward_words(lambda said: _tell_parent(send, parent, said))
    _end_with_parent(parent)
    before = set(sys.modules)
    try:
        result = work()
    except BaseException as error:  # noqa: BLE001 - every failure goes back to the parent
        send.send((_FAILED, "".join(traceback.format_exception_only(type(error),
                                                                    error)).strip()))
    else:
        send.send((_DONE, result, [name for name in sys.modules if name not in before]))
    send.close()


def _tell_parent(send: Connection, parent: int, said: str) -> None:
    """Give the parent what an interrupt kept, in words, for its line; raises where the parent
    has ended (the child holds the pipe's other end too, so the words would go nowhere without
    an error), so that the child says its line itself, on the output it shares with the parent."""
    if _orphaned or os.getppid() != parent:
        raise ConnectionError("the sweep's process has ended")
    send.send((_INTERRUPTED, said))


#: Linux's ``prctl`` option that asks for a signal when the parent ends (``<sys/prctl.h>``).
_PR_SET_PDEATHSIG = 1
#: Whether the kernel said that the parent has ended (:func:`_parent_ended`).
_orphaned = False


def _end_with_parent(parent: int) -> None:
    """Have the kernel signal this child when its parent ``parent`` ends, however it ends
    (``kill -9``, the out-of-memory killer: no handler of the parent runs), so that it saves
    and ends (:func:`_parent_ended`); end at once where the parent ended before that was asked.

    The signal is SIGUSR2, not SIGTERM: Linux sends it each time the child's parent *thread*
    ends, first the one that forked it, then each of the parent's other threads the child is
    handed to while a killed process ends (the last of them unmaps the process's memory first,
    which takes a while), and a second SIGTERM while saving ends the process at once, unsaved.
    The thread that forked the child waits in :func:`run_in_child` until the child has ended, so
    no signal comes while the parent lives. Where ``prctl`` cannot be called (not Linux, no C
    library), the child goes on as before: a sweep forks only on Linux (:data:`CAN_FORK`)."""
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (ImportError, OSError, AttributeError):
        return
    signal.signal(signal.SIGUSR2, _parent_ended)
    if prctl(_PR_SET_PDEATHSIG, int(signal.SIGUSR2), 0, 0, 0) != 0:
        signal.signal(signal.SIGUSR2, signal.SIG_DFL)
        return
    if os.getppid() != parent:  # the parent ended between the fork and prctl: nothing to save
        os._exit(128 + signal.SIGTERM)


def _parent_ended(signum: int, frame: Any) -> None:
    """The parent has ended: save and end as on the parent's SIGTERM (the interruption handler,
    status 143), the line said here, and only once (the signal comes again as each of the
    parent's threads ends)."""
    global _orphaned
    from syntaxgym_helm.clients import interruption

    signal.signal(signum, signal.SIG_IGN)
    _orphaned = True
    interruption.leaves(f"the sweep's process has ended; {interruption.AGAIN}")
    signal.raise_signal(signal.SIGTERM)


#: The kinds of a child's message: its work's result (and the modules it imported), its work's
#: exception, or that it was interrupted (what it kept, in words).
_DONE, _FAILED, _INTERRUPTED = "done", "failed", "interrupted"


def _import_here(names: list[str]) -> None:
    """Import ``names`` (in the order a child imported them) where they are not yet imported;
    one that cannot be imported on its own is left to the children."""
    for name in names:
        if name not in sys.modules:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 - a module made only by its package
                continue


def _ending(exitcode: int | None) -> str:
    if exitcode is None:
        return "in an unknown way"
    if exitcode < 0:
        number = -exitcode
        name = signal.Signals(number).name if number in signal.valid_signals() else str(number)
        why = " (the out-of-memory killer sends it, as does kill -9)" if name == "SIGKILL" else ""
        return f"by signal {name}{why}"
    return f"with status {exitcode}"
