"""Give :class:`~syntaxgym_helm.client.SyntaxGymClient` all of a run's requests up front.

HELM's executor sends requests from ``--num-threads`` worker threads (default 4), each waiting
for its answer before sending the next, so a client that batches what arrives sees at most that
many requests at a time. This module wraps ``Executor.execute`` so that, before HELM starts
sending, every request of the run whose model deployment is served by a ``SyntaxGymClient`` is
handed to that client's :meth:`~syntaxgym_helm.client.SyntaxGymClient.prefetch`: the client
queues the uncached prompts and scores them in full, prefix-sharing batches while HELM's threads
collect the answers. Results, caching and HELM's own bookkeeping are unchanged: HELM still makes
every request through the client; the answers are just ready sooner.

Anything unexpected (another HELM version, a remote proxy context) skips the prefetch and leaves
HELM's execution as it is. ``SYNTAXGYM_HELM_PREFETCH=0`` turns it off; so does the client
argument ``prefetch: false``.

Importing this module is cheap (no torch): it is installed when the plugin loads.
"""

from __future__ import annotations

import functools
import os
import sys
from collections import defaultdict
from typing import Any

CLIENT_CLASS = "syntaxgym_helm.client.SyntaxGymClient"
_MARK = "__syntaxgym_prefetch__"


def install_executor_prefetch() -> bool:
    """Wrap HELM's ``Executor.execute`` (once); returns whether the wrapper is in place."""
    if os.environ.get("SYNTAXGYM_HELM_PREFETCH", "1").strip().lower() in ("0", "false", "no"):
        return False
    try:
        from helm.benchmark.executor import Executor
    except Exception:  # noqa: BLE001 - no HELM executor, nothing to speed up
        return False
    original = Executor.execute
    if getattr(original, _MARK, False):
        return True

    @functools.wraps(original)
    def execute(self, scenario_state):
        if not getattr(self.execution_spec, "dry_run", False):
            prefetch_requests(self, scenario_state)
        return original(self, scenario_state)

    setattr(execute, _MARK, True)
    Executor.execute = execute
    return True


def _is_syntaxgym_client_class(class_name: str) -> bool:
    """Whether a deployment's client class is SyntaxGymClient or a subclass (only classes from
    this package or from modules already imported are looked at: nothing new is imported)."""
    if class_name == CLIENT_CLASS:
        return True
    module_name, _, attribute = class_name.rpartition(".")
    if module_name not in sys.modules and not module_name.startswith("syntaxgym_helm."):
        return False
    try:
        from helm.common.object_spec import get_class_by_name

        from syntaxgym_helm.client import SyntaxGymClient

        cls = get_class_by_name(class_name)
        return isinstance(cls, type) and issubclass(cls, SyntaxGymClient)
    except Exception:  # noqa: BLE001
        return False


def prefetch_requests(executor: Any, scenario_state: Any) -> int:
    """Hand each SyntaxGymClient its requests of ``scenario_state``; returns how many prompts were
    queued. Never raises: a failure only means HELM runs without the head start."""
    from helm.common.hierarchical_logger import hwarn

    try:
        auto_client = getattr(getattr(executor, "context", None), "client", None)
        get_client = getattr(auto_client, "_get_client", None)
        if get_client is None:
            return 0
        from helm.benchmark.model_deployment_registry import get_model_deployment

        by_deployment: dict[str, list] = defaultdict(list)
        for state in scenario_state.request_states:
            by_deployment[state.request.model_deployment].append(state.request)
        queued = 0
        for name, requests in by_deployment.items():
            try:
                deployment = get_model_deployment(name)
            except Exception:  # noqa: BLE001 - unknown deployment: HELM reports it itself
                continue
            if not _is_syntaxgym_client_class(deployment.client_spec.class_name):
                continue
            client = get_client(name)
            if getattr(client, "prefetch_enabled", False):
                queued += client.prefetch(requests)
        return queued
    except Exception as exc:  # noqa: BLE001
        hwarn(f"SyntaxGym: could not prefetch the run's requests ({type(exc).__name__}: {exc}); "
              "they are scored as HELM sends them")
        return 0
