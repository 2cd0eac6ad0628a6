"""Connecting to Ray with a deadline, and what the cluster's nodes hold.

``ray.init`` given an address where nothing answers keeps retrying for minutes (GCS connection
attempts of 5 s each, logged one by one). :func:`connect` first opens a TCP connection to a
``host:port`` address (refused or silent: a :class:`RayClusterError` within the timeout, naming
the address and where it came from), then runs ``ray.init`` in a thread it waits for no longer
than the timeout. Without an address (none in ``runner_config.yaml``, no ``RAY_ADDRESS``), a Ray is
started for the run on this machine and stopped at its end.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from syntaxgym_helm.core.errors import SyntaxGymError

#: Ray's own variable for the cluster to join (read by ``ray.init`` too).
ADDRESS_VARIABLE = "RAY_ADDRESS"


class RayClusterError(SyntaxGymError, RuntimeError):
    """No Ray cluster could be reached (or Ray is not installed); the message says what to do
    (a command ends with it in one line)."""


@dataclass(frozen=True)
class Connection:
    """A connection made by :func:`connect`: whether this process started (and so stops) it."""

    address: str
    started_here: bool


def import_ray() -> Any:
    """The ``ray`` module, or a :class:`RayClusterError` saying how to install it."""
    try:
        import ray
    except ImportError:
        raise RayClusterError("the Ray runner needs Ray: pip install 'syntaxgym-helm[ray]' "
                              "(or make install)") from None
    return ray


def cluster_address(configured: str | None) -> tuple[str | None, str]:
    """The address to join and where it came from (``runner_config.yaml``, ``$RAY_ADDRESS``);
    None: start a Ray here."""
    if configured:
        return configured, "runner_config.yaml's ray.address"
    if os.environ.get(ADDRESS_VARIABLE):
        return os.environ[ADDRESS_VARIABLE], f"${ADDRESS_VARIABLE}"
    return None, "none given: a Ray started on this machine"


def connect(configured: str | None, timeout_s: float, env_vars: Mapping[str, str]) -> Connection:
    """Join the cluster (or start a Ray here) within ``timeout_s``; ``env_vars`` go to every
    worker. Where Ray is already initialised in this process (a notebook), that is used as is."""
    ray = import_ray()
    if ray.is_initialized():
        return Connection(str(ray.get_runtime_context().gcs_address), started_here=False)
    address, source = cluster_address(configured)
    runtime_env = {"env_vars": dict(env_vars)} if env_vars else None
    previous_sigterm = signal.getsignal(signal.SIGTERM)
    try:
        if address in (None, "local"):  # a Ray of this process's own: Ray bounds its start
            ray.init(address="local", include_dashboard=False, runtime_env=runtime_env,
                     logging_level="WARNING")
            return Connection("local", started_here=True)
        if address != "auto":
            _probe(address, source, timeout_s)
        _init_within(ray, address, source, timeout_s, runtime_env)
        return Connection(address, started_here=False)
    finally:
        if threading.current_thread() is threading.main_thread():
            # ray.init sets a SIGTERM handler of its own: the plugin's (stop, one line) stays.
            signal.signal(signal.SIGTERM, previous_sigterm)


def _init_within(ray: Any, address: str, source: str, timeout_s: float,
                 runtime_env: dict[str, Any] | None) -> None:
    """``ray.init(address)`` in a thread waited for ``timeout_s`` at most (a port that answers
    but is no Ray would have it retry for minutes)."""
    done: list[Any] = []

    def init() -> None:
        try:
            ray.init(address=address, runtime_env=runtime_env, logging_level="WARNING")
            done.append(None)
        except Exception as exc:  # noqa: BLE001 - reported below, with the address
            done.append(exc)

    quiet = _NotMainThreadWarning()
    logging.getLogger("ray._private.worker").addFilter(quiet)
    thread = threading.Thread(target=init, name="ray-connect", daemon=True)
    thread.start()
    thread.join(timeout_s)
    logging.getLogger("ray._private.worker").removeFilter(quiet)
    if not done:
        raise RayClusterError(
            f"{address} ({source}) answers, but Ray did not let this driver join within "
            f"{timeout_s:g} s: a cluster whose head `ray start --head` started asks for its "
            "token (set RAY_AUTH_MODE=token, the token in ~/.ray/auth_token or "
            "RAY_AUTH_TOKEN), or the port is not a Ray head's")
    if isinstance(done[0], BaseException):
        raise RayClusterError(f"could not join the Ray cluster at {address} ({source}): "
                              f"{type(done[0]).__name__}: {str(done[0]).splitlines()[0]}")


class _NotMainThreadWarning(logging.Filter):
    """Ray's warning that it sets no SIGTERM handler from a thread (the plugin keeps its own)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "SIGTERM handler is not set" not in record.getMessage()


def _probe(address: str, source: str, timeout_s: float) -> None:
    """Open a TCP connection to ``address`` (``host:port`` or ``ray://host:port``)."""
    host, _, port = address.split("://", 1)[-1].rpartition(":")
    try:
        number = int(port)
    except ValueError:
        raise RayClusterError(f"the Ray address {address!r} ({source}) is not host:port, auto "
                              "or ray://host:port") from None
    try:
        with socket.create_connection((host or "127.0.0.1", number), timeout=min(timeout_s, 5)):
            return
    except OSError as exc:
        raise RayClusterError(f"no Ray cluster at {address} ({source}): {exc.strerror or exc}; "
                              "start one (ray start --head) or fix the address") from None


def alive_nodes(ray: Any) -> list[dict[str, float]]:
    """The resource totals (CPU, GPU, memory, ...) of each alive node."""
    return [dict(node.get("Resources", {})) for node in ray.nodes() if node.get("Alive")]


def fits(request: Mapping[str, float], nodes: list[dict[str, float]]) -> bool:
    """Whether some node's totals hold all of ``request`` (Ray's resource names)."""
    names = {"num_cpus": "CPU", "num_gpus": "GPU", "memory": "memory"}
    return any(all(node.get(names[key], 0) >= value for key, value in request.items() if value)
               for node in nodes)


def largest_node(nodes: list[dict[str, float]]) -> str:
    """The biggest node's CPUs, GPUs and memory, in words."""
    if not nodes:
        return "no node is alive"
    best = max(nodes, key=lambda node: (node.get("memory", 0), node.get("CPU", 0)))
    return (f"the largest node has {best.get('CPU', 0):g} CPU, {best.get('GPU', 0):g} GPU, "
            f"{best.get('memory', 0) / 2**30:.1f} GiB")
