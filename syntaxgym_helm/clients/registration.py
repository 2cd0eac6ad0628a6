"""The plugin's models and hooks, installed in HELM where a run starts, once per process.

:func:`install_run_hooks` registers the embedded ``syntaxgym/`` and ``helmhf/`` models and installs
the local engine's prefetch hook on HELM's executor, the handling of SIGINT and SIGTERM
(:mod:`.interruption`) and the bound on HELM's log lines (:mod:`.log_limit`). Importing the package,
the Python API or any of its modules installs none of them: they change HELM and the process, so
they are installed where a run begins:

- ``helm-run`` (and anything else that loads HELM plugins) loads :mod:`syntaxgym_helm.plugin`;
- the ``syntaxgym`` run spec function and
  :class:`~syntaxgym_helm.harness.scenario.SyntaxGymScenario` install them, for the worker
  processes of HELM's parallel runners (``MultiGPURunner``'s forkserver workers, each
  ``SlurmRunner`` job), which load no plugins but construct the scenario a run spec names before
  anything else of the run;
- the Python API installs them before its first run (:mod:`syntaxgym_helm.api.helm_engine`), and
  the leaderboard before it reads HELM's model registry.
"""

from __future__ import annotations

import threading

_LOCK = threading.Lock()
_REGISTERED: list[str] | None = None


def install_run_hooks() -> list[str]:
    """Register the installed embedded models, install the prefetch hook, the handling of
    Ctrl-C and the bound on log lines, the first time in a process (later calls change nothing).
    Returns the HELM model names registered."""
    global _REGISTERED
    with _LOCK:
        if _REGISTERED is None:
            from syntaxgym_helm.clients import interruption
            from syntaxgym_helm.clients.embedded.catalogue import register_embedded_models
            from syntaxgym_helm.clients.local.prefetch import install_executor_prefetch
            from syntaxgym_helm.clients.log_limit import install_log_line_limit

            _REGISTERED = register_embedded_models()
            install_executor_prefetch()  # the local engine gets each run's requests up front
            interruption.install()  # Ctrl-C: save what was computed, end with one line
            install_log_line_limit()  # a truncated prompt is no 145,845-character log line
        return list(_REGISTERED)


def run_hooks_installed() -> bool:
    """Whether :func:`install_run_hooks` has run in this process."""
    return _REGISTERED is not None
