"""How an interrupted run ends: within seconds, with one line and status 130, keeping its work.

Python turns Ctrl-C (SIGINT) into a ``KeyboardInterrupt`` in the main thread, which then unwinds
HELM's executor: its thread pool waits for its workers, which wait for answers the model server
goes on computing (possibly for long), and then the interpreter exits while the engine thread runs
torch code, which ends in a C++ abort (``terminate called without an active exception``, status
134). The request cache's last batch of answers is lost, and so is everything the engine computed
ahead of HELM's requests.

:func:`install` (called where a run starts, in the main thread: :mod:`.registration`) handles SIGINT
and SIGTERM instead, in a process where the plugin's clients are at work or that is ``helm-run``:
it stores what the local engines computed for the run but HELM has not asked for yet
(:meth:`~syntaxgym_helm.clients.local.client.SyntaxGymClient.save_computed`), commits every open
request cache (:func:`~syntaxgym_helm.clients.request_cache.commit_open_caches`), each step
bounded by a deadline, and writes one line saying what was kept. In ``helm-run`` it then ends
the process at once (``os._exit``: no thread is waited for, no C++ destructor runs under a busy
engine) with status 128 + the signal (130 for SIGINT, 143 for SIGTERM); a second Ctrl-C while
saving ends it without waiting. Running the same command again takes every saved answer from the
cache and computes the rest.

A signal while HELM writes a run's files (the metric has called :func:`output_phase`) must not
leave a folder that passes for complete: the plugin's metric removed the previous run's
``stats.json`` and ``per_instance_stats.json`` before HELM began, and ``per_instance_stats.json``
is the file HELM writes last. So if that file is not whole JSON when the signal comes (not yet
written, or half written: the process ends before its last buffer is flushed), the handler
removes what there is of it: the folder is then incomplete, which ``syntaxgym-helm report`` names
and ``helm-run --skip-completed-runs`` runs again, and the line printed says so. In any other
process (a script or notebook using the Python API, a test runner, HELM's parallel workers) the
signal then goes on as before (a ``KeyboardInterrupt`` the caller may catch; SIGTERM's default),
with the answers already saved; where nothing of ours is at work, it is handled as before,
untouched.

Every ``syntaxgym-helm`` command installs it too, ending the process as ``helm-run`` does
(:mod:`syntaxgym_helm.cli.main`), so that a Ctrl-C at any moment (a model loading in the engine
thread included, which Python's own exit would abort) ends it with status 130 and one line; the
command says what an interrupt would leave (:func:`leaves`: e.g. that its output file was not
written), so that the line is true at every stage. Processes forked from such a process (the
report's pool workers) ignore SIGINT, which a terminal sends to every process of the command: the
parent alone answers it, and ends them.

Work the process runs elsewhere (:class:`~syntaxgym_helm.runners.RayRunner`'s actors on a
cluster) is registered with :func:`add_remote_work`: the handler stops it first, and says so in
the same line.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from syntaxgym_helm.core.output_files import remove_partial_outputs

#: How long saving may take in all before the process ends anyway (seconds).
SAVE_DEADLINE_S = 10.0
#: The advice an interrupted command's line gives once, after what it kept.
AGAIN = "run the same command again to go on"

_CLIENTS: weakref.WeakSet[Any] = weakref.WeakSet()
#: Work this process started elsewhere (a Ray cluster's actors), by key: each callable stops it
#: before a deadline (time.monotonic()) and says what it stopped.
_REMOTE: dict[int, Callable[[float], str]] = {}
_PREVIOUS: dict[int, Any] = {}
_ending = threading.Event()
_end_process = False
_fork_hook = False
_exit_hook = False
#: The last file HELM writes for the run whose output phase has begun (None: none has).
_output_file: Path | None = None
#: What an interrupt now leaves, in words, for its line ("" when there is nothing to say).
_leaves = ""
#: Where what was kept goes instead of a line on standard error (a sweep's checkpoint process:
#: to its parent, which says it in its own line).
_forward: Callable[[str], None] | None = None
#: Scratch folders, by the process that made them, removed when a signal ends that process
#: (``os._exit`` runs no ``atexit`` function, which removes them on a normal exit).
_SCRATCH: dict[Path, int] = {}


def leaves(text: str) -> None:
    """Say what an interrupt from now on leaves (e.g. ``words.tsv was not written``), in the line
    it prints; "" to say nothing."""
    global _leaves
    _leaves = text


def _request_caches() -> Any:
    """The request-cache module when loaded (no cache can be open before: it imports HELM, which
    a command that uses no cache need not load)."""
    return sys.modules.get("syntaxgym_helm.clients.request_cache")


def _open_caches() -> list[Any]:
    module = _request_caches()
    return module.open_caches() if module is not None else []


def forward_words(send: Callable[[str], None]) -> None:
    """In a process whose parent speaks for it (a sweep's checkpoint process): what an interrupt
    kept, in words (the part of its line after the signal's name), is given to ``send``
    instead of a line printed here, for the parent's one line; what the process leaves and what
    to do next are the parent's to say."""
    global _forward, _leaves
    _forward = send
    _leaves = ""


def scratch_folder(path: Path) -> None:
    """A temporary folder of this process's own, to be removed however it ends: at exit
    (``atexit``) and when an interrupt ends it (:func:`_exit`); not by a process forked from
    this one, which ends while this one may go on using it."""
    import atexit

    if not _SCRATCH:
        atexit.register(_remove_scratch)
    _SCRATCH[path] = os.getpid()


def _remove_scratch() -> None:
    import shutil

    for path, owner in list(_SCRATCH.items()):
        if owner == os.getpid():
            shutil.rmtree(path, ignore_errors=True)


def _exit(status: int) -> None:
    """End the process at once with ``status`` (no thread waited for, no C++ destructor run),
    its scratch folders removed first."""
    _remove_scratch()
    os._exit(status)


def register(client: Any) -> None:
    """A client whose engine may hold computed answers (it has ``save_computed()``)."""
    _CLIENTS.add(client)


def add_remote_work(stop: Callable[[float], str]) -> Callable[[], None]:
    """Work this process runs elsewhere (:class:`~syntaxgym_helm.runners.RayRunner`'s actors):
    on SIGINT or SIGTERM ``stop(deadline)`` ends it and its words go into the one line printed.
    Returns the function that removes it (call it when the work is over)."""
    key = id(stop)
    _REMOTE[key] = stop

    def remove() -> None:
        _REMOTE.pop(key, None)
    return remove


def output_phase(last_file: Path) -> None:
    """HELM is about to write a run's files, ``last_file`` last (see the module doc)."""
    global _output_file
    _output_file = Path(last_file)


def _leave_output_incomplete() -> str:
    """When a run's output phase was cut short, remove its half-written last file; what was
    done, in words ("" when no output phase was under way)."""
    global _output_file
    last, _output_file = _output_file, None
    if last is None:
        return ""
    try:
        import json

        json.loads(last.read_bytes())
        return ""  # HELM finished writing the run's files
    except FileNotFoundError:
        pass
    except (OSError, ValueError):
        try:
            last.unlink()
        except OSError as exc:
            return (f"; the run folder {last.parent} is incomplete and its {last.name} could "
                    f"not be removed ({exc}): run it again without --skip-completed-runs")
    return (f"; the run folder {last.parent} is incomplete (HELM was writing its files): "
            "`syntaxgym-helm report` names it and `helm-run --skip-completed-runs` runs it again")


def install(end_process: bool | None = None) -> bool:
    """Handle SIGINT and SIGTERM as the module doc says, where their handlers are Python's
    defaults and this is the main thread; returns whether they are handled. ``end_process``:
    end the process after saving (default: in ``helm-run``, or where an earlier call said so)."""
    global _end_process, _fork_hook
    if threading.current_thread() is not threading.main_thread():
        return False
    if not _fork_hook and hasattr(os, "register_at_fork"):  # POSIX
        os.register_at_fork(after_in_child=_restore_previous_handlers)
        _fork_hook = True
    # A later call with no choice (the run hooks') keeps what an earlier one chose.
    _end_process = (_end_process or _is_helm_run()) if end_process is None else end_process
    installed = False
    for signum, default in ((signal.SIGINT, signal.default_int_handler),
                            (signal.SIGTERM, signal.SIG_DFL)):
        current = signal.getsignal(signum)
        if current is _handle:
            installed = True
        elif current is default:
            _PREVIOUS[signum] = current
            signal.signal(signum, _handle)
            installed = True
    return installed


def _restore_previous_handlers() -> None:
    """In a process forked from this one (a ``multiprocessing`` pool worker, e.g. the report's),
    give SIGINT and SIGTERM back what they did before :func:`install`. The child has none of the
    threads our caches and engines wait on, so saving there would wait for ever; and a Python
    handler can be lost there: a SIGTERM that arrives just before the worker blocks on its
    queue's lock only marks the handler as due, and the worker sleeps on (Pool.terminate then
    waits for it for ever: a test run hung so). With SIGTERM's default the kernel ends it.
    Where the parent ends the process on a signal (``helm-run``, a command), the child ignores
    SIGINT: a terminal's Ctrl-C reaches every process of the command, and the parent, which
    answers it, ends its children (a child's own KeyboardInterrupt would print a traceback)."""
    for signum, previous in _PREVIOUS.items():
        if signal.getsignal(signum) is _handle:
            ignore = _end_process and signum == signal.SIGINT
            signal.signal(signum, signal.SIG_IGN if ignore else previous)


def _end_children() -> None:
    """End the processes this one forked and still runs (a pool's workers: they ignore SIGINT)."""
    import multiprocessing

    for child in multiprocessing.active_children():
        try:
            child.terminate()
        except Exception:  # noqa: BLE001 - the process is ending anyway
            continue




def _is_helm_run() -> bool:
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    return (os.path.basename(sys.argv[0] if sys.argv else "").startswith("helm-run")
            or getattr(spec, "name", "") == "helm.benchmark.run")


def _previous(signum: int, frame: Any) -> None:
    """What the signal did before: raise ``KeyboardInterrupt``, or its default action."""
    previous = _PREVIOUS.get(signum, signal.SIG_DFL)
    if callable(previous):
        previous(signum, frame)
        return
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def _ours_at_work() -> bool:
    return bool(_end_process or _CLIENTS or _REMOTE or _open_caches())


def _handle(signum: int, frame: Any) -> None:
    incomplete = _leave_output_incomplete() if not _ending.is_set() else ""
    if incomplete and not _ours_at_work():
        _say(f"syntaxgym-helm: interrupted ({signal.Signals(signum).name}){incomplete}")
    if not _ours_at_work() or _ending.is_set():
        if _ending.is_set() and _end_process:  # a second signal while saving: end now
            _exit(128 + signum)
        _previous(signum, frame)
        return
    _ending.set()
    started = time.monotonic()
    name = signal.Signals(signum).name
    # The advice is given once: not where a parent speaks, nor where _leaves gives it.
    advise = _forward is None and AGAIN not in _leaves
    try:
        saved = "; ".join(part for part in (_stop_remote(started + SAVE_DEADLINE_S),
                                            _save(started + SAVE_DEADLINE_S, advise)) if part)
    except BaseException as exc:  # noqa: BLE001 - the process ends whatever happened
        saved = f"saving failed ({type(exc).__name__}: {exc})"
    said = ("; ".join(part for part in (saved, _leaves) if part) or "nothing was saved"
            ) + incomplete
    line = f"syntaxgym-helm: interrupted ({name}); {said} ({time.monotonic() - started:.1f} s)"
    if _end_process:
        _end_children()
        remove_partial_outputs()
        if not _forwarded(said):
            _say(line)
        _exit(128 + signum)
    _say(line)
    _ending.clear()
    _end_at_exit_if_working()
    _previous(signum, frame)


def _end_at_exit_if_working() -> None:
    """After an interrupt that goes on as Python's own: if the process then exits while an
    engine thread still runs torch code (loading the model, computing a batch), end it at once
    with status 130 instead of letting Python's exit meet that thread, which aborts the process
    ("terminate called without an active exception", status 134)."""
    global _exit_hook
    if _exit_hook:
        return
    import atexit

    def end_if_working() -> None:
        module = sys.modules.get("syntaxgym_helm.clients.local.server")  # none: no engine
        servers = [getattr(client, "_server", None) for client in list(_CLIENTS)]
        if module is not None and any(module.engine_at_work(server) for server in servers
                                      if server is not None):
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except Exception:  # noqa: BLE001 - a closed stream: the process ends anyway
                    pass
            _exit(128 + signal.SIGINT)

    atexit.register(end_if_working)
    _exit_hook = True


def _stop_remote(deadline: float) -> str:
    """Stop the work this process runs elsewhere; what was stopped, in words ("" for none)."""
    said = []
    for stop in list(_REMOTE.values()):
        try:
            said.append(stop(deadline))
        except Exception as exc:  # noqa: BLE001 - the others are still stopped
            said.append(f"stopping work elsewhere failed ({type(exc).__name__}: {exc})")
    return "; ".join(text for text in said if text)


def _save(deadline: float, advise: bool) -> str:
    """Store and commit what was computed; what was kept, in words ("" when nothing), with
    :data:`AGAIN` where ``advise`` (and the process ends: a command)."""
    extra = 0
    for client in list(_CLIENTS):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        try:
            extra += client.save_computed(timeout_s=min(2.0, remaining))
        except Exception:  # noqa: BLE001 - keep saving the others
            continue
    caches = _request_caches()
    saved = caches.commit_open_caches(timeout_s=max(0.1, min(2.0, deadline - time.monotonic()))
                                      ) if caches is not None else []
    if not saved:
        return ""
    kept = ", ".join(f"{path} ({count} answers saved by this process)" for path, count in saved)
    ahead = f", {extra} of them computed ahead of HELM's requests" if extra else ""
    again = f"; {AGAIN}" if _end_process and advise else ""
    return f"kept in the request cache: {kept}{ahead}{again}"


def _say(line: str) -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed or broken stream: the other is still tried
            pass
    try:
        # A progress bar may hold the current line (on a terminal, or in a log file).
        os.write(2, ("\n" + line + "\n").encode())
    except OSError:
        pass


def _forwarded(said: str) -> bool:
    """Whether ``said`` went to the parent that speaks for this process (:func:`forward_words`)."""
    if _forward is None:
        return False
    try:
        _forward(said)
    except Exception:  # noqa: BLE001 - the parent has gone: the line is said here
        return False
    return True
