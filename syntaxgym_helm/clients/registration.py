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

from syntaxgym_helm.clients.embedded.catalogue import register_embedded_models
from syntaxgym_helm.clients.local.prefetch import install_executor_prefetch

_LOCK = threading.Lock()
_REGISTERED: list[str] | None = None


def register_with_helm() -> list[str]:
    """Register the installed embedded models and install the prefetch hook (the first call in
    a process; later calls change nothing). Returns the HELM model names registered."""
    global _REGISTERED
    with _LOCK:
        if _REGISTERED is None:
            _REGISTERED = register_embedded_models()
            install_executor_prefetch()  # the local engine gets each run's requests up front
        return list(_REGISTERED)
