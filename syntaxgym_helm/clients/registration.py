"""The plugin's models and hooks, registered with HELM once per process, wherever HELM runs.

``helm-run`` loads the plugin (:mod:`syntaxgym_helm.plugin`) through its entry point, but the
worker processes of HELM's parallel runners (``MultiGPURunner``'s forkserver workers, each
``SlurmRunner`` job) load no plugins: they only import the classes a run spec names. So the
scenario module calls :func:`register_with_helm` when it is imported, as the plugin does; then the
embedded ``syntaxgym/`` and ``helmhf/`` models and the local engine's prefetch hook exist in every
process that runs a SyntaxGym run spec, with no YAML.
"""

from __future__ import annotations

import threading

from syntaxgym_helm.clients import interruption
from syntaxgym_helm.clients.embedded.catalogue import register_embedded_models
from syntaxgym_helm.clients.local.prefetch import install_executor_prefetch
from syntaxgym_helm.clients.log_limit import install_log_line_limit

_LOCK = threading.Lock()
_REGISTERED: list[str] | None = None


def register_with_helm() -> list[str]:
    """Register the installed embedded models, install the prefetch hook, the handling of
    Ctrl-C (:mod:`.interruption`) and the bound on log lines (:mod:`.log_limit`), the first time
    in a process (later calls change nothing). Returns the HELM model names registered."""
    global _REGISTERED
    with _LOCK:
        if _REGISTERED is None:
            _REGISTERED = register_embedded_models()
            install_executor_prefetch()  # the local engine gets each run's requests up front
            interruption.install()  # Ctrl-C: save what was computed, end with one line
            install_log_line_limit()  # a truncated prompt is no 145,845-character log line
        return list(_REGISTERED)
