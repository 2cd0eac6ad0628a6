"""Give :class:`~.client.SyntaxGymClient` all of a run's requests up front.

HELM's executor sends requests from ``--num-threads`` worker threads (default 4), each waiting
for its answer before sending the next, so a client that batches what arrives sees at most that
many requests at a time. This module wraps ``Executor.execute`` so that, before HELM starts
sending, every request of the run whose model deployment is served by a ``SyntaxGymClient`` is
handed to that client's :meth:`~.client.SyntaxGymClient.prefetch`: the client queues the uncached
prompts, and its model server computes them in full, prefix-sharing batches while HELM's threads
collect the answers. Results, caching and HELM's own bookkeeping are unchanged: HELM still makes
every request through the client; the answers are just ready sooner.

Both the wrapping and the lookup of the run's clients rely on HELM's internals (there is no public
hook): :mod:`syntaxgym_helm.helm_compat` checks them and stops with a clear error when a HELM
release changes them, rather than letting the run fall back silently to unbatched requests. A
remote (proxy) context, whose clients run elsewhere, gets no prefetch; a client that cannot be
made or cannot prefetch is left to HELM, which reports its error itself.
``SYNTAXGYM_HELM_PREFETCH=0`` turns it off; so does the client argument ``prefetch: false``. After
each run the wrapper logs what each SyntaxGymClient's engine computed (prompts, tokens, positions,
forward passes).

Importing this module is cheap (no torch): it is installed when the plugin loads.
"""

from __future__ import annotations

import functools
import os
import sys
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

from syntaxgym_helm.clients.class_paths import LOCAL_CLIENT, PREFETCHING_CLIENTS
from syntaxgym_helm.helm_compat import (
    HelmCompatibilityError,
    auto_client_of,
    client_for_deployment,
    wrap_executor_execute,
)

_MARK = "__syntaxgym_prefetch__"


def install_executor_prefetch() -> bool:
    """Wrap HELM's ``Executor.execute`` (once); returns whether the wrapper is in place.

    The wrapper hands SyntaxGymClients their run's requests first (unless
    ``SYNTAXGYM_HELM_PREFETCH=0``) and logs what they computed for the run afterwards.
    """
    return wrap_executor_execute(_prefetching, _MARK)


def _prefetching(original: Callable) -> Callable:
    @functools.wraps(original)
    def execute(self, scenario_state):
        if getattr(self.execution_spec, "dry_run", False):
            return original(self, scenario_state)
        clients = syntaxgym_clients(self, scenario_state)
        before = {name: client.engine_counts() for name, (client, _) in clients.items()}
        if prefetch_enabled():
            prefetch_requests(clients)
        try:
            return original(self, scenario_state)
        finally:
            flush(clients)
            log_counts(clients, before)

    return execute


def prefetch_enabled() -> bool:
    return os.environ.get("SYNTAXGYM_HELM_PREFETCH", "1").strip().lower() not in (
        "0", "false", "no", "off")


def _is_syntaxgym_client_class(class_name: str) -> bool:
    """Whether a deployment's client class is SyntaxGymClient or a subclass (only classes from
    this package or from modules already imported are looked at: nothing new is imported)."""
    if class_name == LOCAL_CLIENT or class_name in PREFETCHING_CLIENTS:
        return True
    module_name, _, attribute = class_name.rpartition(".")
    if module_name not in sys.modules and not module_name.startswith("syntaxgym_helm."):
        return False
    try:
        from helm.common.object_spec import get_class_by_name

        from syntaxgym_helm.clients.local.client import SyntaxGymClient

        cls = get_class_by_name(class_name)
        return isinstance(cls, type) and issubclass(cls, SyntaxGymClient)
    except Exception:  # noqa: BLE001 - a class that does not load is not ours: HELM reports it
        return False


def syntaxgym_clients(executor: Any, scenario_state: Any) -> dict[str, tuple[Any, list]]:
    """deployment name -> (its SyntaxGymClient, its requests in the run), made through the
    executor's own HELM client factory. Raises only :class:`HelmCompatibilityError` (HELM
    changed); any other failure only means no head start."""
    from helm.common.hierarchical_logger import hwarn

    found: dict[str, tuple[Any, list]] = {}
    auto_client = auto_client_of(executor)
    if auto_client is None:
        return found  # a remote context: its clients run in the proxy server
    try:
        from helm.benchmark.model_deployment_registry import get_model_deployment

        by_deployment: dict[str, list] = defaultdict(list)
        for state in scenario_state.request_states:
            by_deployment[state.request.model_deployment].append(state.request)
        for name, requests in by_deployment.items():
            try:
                deployment = get_model_deployment(name)
            except Exception:  # noqa: BLE001 - unknown deployment: HELM reports it itself
                continue
            if _is_syntaxgym_client_class(deployment.client_spec.class_name):
                client = client_for_deployment(auto_client, name)
                if hasattr(client, "prefetch"):
                    found[name] = (client, requests)
    except HelmCompatibilityError:
        raise
    except Exception as exc:  # noqa: BLE001 - an optimisation: warned, and the run goes on
        hwarn(f"syntaxgym prefetch: could not find the run's SyntaxGymClients "
              f"({type(exc).__name__}: {exc}); their requests are computed as HELM sends them")
    return found


def prefetch_requests(clients: dict[str, tuple[Any, list]]) -> int:
    """Hand each client its requests; returns how many prompts were queued. Never raises."""
    from helm.common.hierarchical_logger import hwarn

    queued = 0
    for name, (client, requests) in clients.items():
        if not getattr(client, "prefetch_enabled", False):
            continue
        try:
            queued += client.prefetch(requests)
        except Exception as exc:  # noqa: BLE001 - an optimisation: warned, and the run goes on
            hwarn(f"syntaxgym prefetch: could not prefetch the requests of {name} "
                  f"({type(exc).__name__}: {exc}); they are computed as HELM sends them")
    return queued


def flush(clients: dict[str, tuple[Any, list]]) -> None:
    """Commit what the clients wrote to HELM's request cache during the run."""
    from helm.common.hierarchical_logger import hwarn

    for name, (client, _) in clients.items():
        try:
            client.flush()
        except Exception as exc:  # noqa: BLE001 - warned; the answers stand
            hwarn(f"syntaxgym prefetch: could not commit the request cache of {name} "
                  f"({type(exc).__name__}: {exc})")


def log_counts(clients: dict[str, tuple[Any, list]], before: dict[str, Any]) -> None:
    """One line per client: what its engine computed for this run."""
    from helm.common.hierarchical_logger import hlog

    for name, (client, _) in clients.items():
        counts = client.engine_counts() - before.get(name, Counter())
        if counts:
            hlog(f"syntaxgym local engine ({name}): this run scored {counts['prompts']} prompts "
                 f"({counts['tokens']} tokens) computing {counts['positions']} positions in "
                 f"{counts['passes']} forward passes ({counts['reused']} outputs read from "
                 "stored prefixes)")
