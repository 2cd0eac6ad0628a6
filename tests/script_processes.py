"""The console scripts the end-to-end tests start (``helm-run``, ``helm-summarize``,
``syntaxgym-helm``), each in a process of its own, as from a shell, but forked from a process that
has already imported torch, transformers and HELM (multiprocessing's forkserver with those modules
preloaded), so that each start does not pay those imports again (about 6 s of a ``helm-run``'s
7 to 10 s before it scores anything; once per test worker instead).

A process started here is the console script as a shell would start it, less the imports: its
own memory (nothing of the test process: the forkserver is a fresh interpreter), the environment,
working directory and argv given, its standard output and error captured, and its exit status;
when its ``main`` returns, the threads it left are joined and its ``atexit`` handlers run (the
request cache commits there), as at the end of an interpreter. What is not the same: whatever a
preloaded module read from the environment when it was imported is the test worker's (torch's
thread count, which is the point: the worker's share of the cores), ``PYTHONPATH`` is put
before ``sys.path`` by hand, and ``yaml.safe_load`` parses with PyYAML's libyaml loader where it
has one (:func:`libyaml_safe_load`: the same values, about 8x faster; HELM reads 580 kB of its
own YAML at every start, 1.1 s of each script). Tests whose subject is the process itself
(signals, the installed console script) start the real executable with :mod:`subprocess`.
``tests/`` is on ``sys.path``: import this as ``script_processes``.
"""

from __future__ import annotations

import atexit
import functools
import multiprocessing
import os
import subprocess
import sys
import tempfile
import threading
import traceback
from collections.abc import Mapping, Sequence
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

#: Imported once by the forkserver, in this order: the package first, which sets torch's
#: set-up cache bounds in the environment before torch loads (as ``helm-run`` does); no module
#: of the plugin beyond it, whose imports register models from the environment of each run.
PRELOAD = ("syntaxgym_helm", "torch", "transformers",
           "transformers.models.llama.modeling_llama", "transformers.models.gemma3.modeling_gemma3",
           "helm.benchmark.run", "helm.benchmark.presentation.summarize",
           "helm.clients.huggingface_client",
           # HELM imports every module of helm.benchmark.run_specs to find a run entry's
           # function; one of them imports datasets (1.4 s).
           "datasets")
#: The console scripts started this way (their ``main`` is found by name, as pip's wrapper does).
SCRIPTS = ("helm-run", "helm-summarize", "syntaxgym-helm")


@functools.cache
def _context() -> Any:
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(PRELOAD))
    return context


def run_script(command: Sequence[str | Path], *, timeout: float, cwd: str | Path | None = None,
               env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess:
    """``command`` (its first element one of :data:`SCRIPTS`, by name or path) as
    ``subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
    timeout=timeout)`` would run it, in a process forked from the preloaded forkserver. Past
    ``timeout`` seconds the process is killed and :class:`subprocess.TimeoutExpired` raised."""
    args = [str(part) for part in command]
    name = Path(args[0]).name
    if name not in SCRIPTS:
        raise ValueError(f"{name} is not one of {SCRIPTS}: start it with subprocess")
    with tempfile.TemporaryDirectory(prefix="script_process_") as folder:
        out, err = Path(folder) / "stdout", Path(folder) / "stderr"
        process = _context().Process(
            target=_run_in_child, name=name,
            args=(name, args[1:], str(cwd or os.getcwd()),
                  dict(os.environ if env is None else env), str(out), str(err)))
        process.start()
        try:
            process.join(timeout)
            timed_out = process.exitcode is None
        finally:  # past the deadline, or the test's own time limit struck while waiting
            if process.exitcode is None:
                process.kill()
                process.join()
        if timed_out:
            raise subprocess.TimeoutExpired(args, timeout, output=_text(out), stderr=_text(err))
        return subprocess.CompletedProcess(args, process.exitcode, _text(out), _text(err))


def _text(path: Path) -> str:
    return path.read_bytes().decode("utf-8", errors="replace") if path.is_file() else ""


def _run_in_child(name: str, args: list[str], cwd: str, env: dict[str, str], out: str,
                  err: str) -> None:
    """In the forked process: become the console script ``name``, run it, end as it would."""
    os.environ.clear()
    os.environ.update(env)
    import yaml

    if yaml.__with_libyaml__:
        yaml.safe_load = libyaml_safe_load
    os.chdir(cwd)
    sys.path[:0] = [entry for entry in env.get("PYTHONPATH", "").split(os.pathsep) if entry]
    for stream, path in ((sys.stdout, out), (sys.stderr, err)):
        stream.flush()
        with open(path, "wb") as file:
            os.dup2(file.fileno(), stream.fileno())
    sys.argv = [str(Path(sys.executable).parent / name), *args]
    try:
        (script,) = entry_points(group="console_scripts", name=name)
        status = exit_status(script.load()())  # the wrapper's sys.exit(main())
    except SystemExit as exit_:
        status = exit_status(exit_.code)
    except BaseException:  # noqa: BLE001 - what an uncaught exception does at the top level
        traceback.print_exc()
        status = 1
    for thread in threading.enumerate():  # as the interpreter does before it ends
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def libyaml_safe_load(stream: Any) -> Any:
    """``yaml.safe_load(stream)`` with libyaml's parser (``yaml.CSafeLoader``): the same
    constructors and resolver, so the same values (``tests/test_script_processes.py`` checks
    HELM's configuration files)."""
    import yaml

    return yaml.load(stream, Loader=yaml.CSafeLoader)


def exit_status(code: object) -> int:
    """The status ``sys.exit(code)`` ends a process with (a code that is no number is printed
    to standard error first, as Python does)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1
