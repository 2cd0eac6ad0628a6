"""The Python API's ``evaluate(..., runner="ray")``: a suite's requests executed on a Ray actor of
the model, the same :class:`~.ray_worker.RunWorker` the Ray runner uses, and the items scored in
the calling process as usual.

One actor per (model deployment, ``local_path``, ``cache_dir``, ``num_threads``), named after them
and kept for the life of the calling process's Ray session: later calls on the same model find it
with its weights loaded. The cluster and what the actor asks for come from ``local_path``'s
``runner_config.yaml`` as for the runner (:mod:`.settings`); without an address a Ray is started on
this machine. Nothing is written but the request cache ``cache_dir`` names (None: none), and, on
the actor's node, a temporary folder.
"""

from __future__ import annotations

import hashlib
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from syntaxgym_helm.helm_compat import registry_snapshot
from syntaxgym_helm.runners.ray_cluster import alive_nodes, connect, fits, largest_node
from syntaxgym_helm.runners.ray_worker import CONFIG_FILES, RunWorker, WorkerSpec, forwarded_env
from syntaxgym_helm.runners.selection import RAY_RUNNER
from syntaxgym_helm.runners.settings import actor_resources, read_settings

_LOCK = threading.Lock()
_ACTORS: dict[tuple[str, str, str, int], Any] = {}


def execute_on_ray(adapter_spec: Any, instances: list[Any], local_path: Path,
                   cache_dir: str | Path | None, num_threads: int) -> list[Any]:
    """The instances' requests, adapted and executed by the model's actor; its request states."""
    from syntaxgym_helm.runners.ray_cluster import RayClusterError

    ray = _connected(local_path)
    actor = _actor(ray, adapter_spec.model_deployment, local_path, cache_dir, num_threads)
    try:
        return list(ray.get(actor.execute_requests.remote(adapter_spec, instances)))
    except ray.exceptions.RayTaskError as error:
        cause = getattr(error, "cause", None)
        raise cause if isinstance(cause, Exception) else error from None
    except ray.exceptions.RayError as error:  # the actor is gone (its node): a new one next time
        with _LOCK:
            for key, value in list(_ACTORS.items()):
                if value is actor:
                    del _ACTORS[key]
        raise RayClusterError(f"the Ray actor of {adapter_spec.model_deployment} died "
                              f"({type(error).__name__}); call again to start another") from None


def _connected(local_path: Path) -> Any:
    from syntaxgym_helm.runners.ray_cluster import import_ray

    ray = import_ray()
    if not ray.is_initialized():
        settings = read_settings(str(local_path))
        connect(settings.address, settings.connect_timeout_s, forwarded_env())
    return ray


def _actor(ray: Any, deployment: str, local_path: Path, cache_dir: str | Path | None,
           num_threads: int) -> Any:
    from helm.common.authentication import Authentication
    from helm.common.cache_backend_config import SqliteCacheBackendConfig

    from syntaxgym_helm.runners.ray_cluster import RayClusterError

    key = (deployment, str(local_path.resolve()),
           str(Path(cache_dir).resolve()) if cache_dir else "", num_threads)
    with _LOCK:
        if key in _ACTORS:
            return _ACTORS[key]
        from helm.benchmark.executor import ExecutionSpec

        settings = read_settings(str(local_path))
        nodes = alive_nodes(ray)
        resources = actor_resources(settings, deployment, nodes)
        if not fits(resources.ray_options(), nodes):
            raise RayClusterError(f"no node of the Ray cluster can hold an actor of "
                                  f"{deployment} ({resources.describe()}; {largest_node(nodes)})")
        if cache_dir:
            Path(cache_dir).mkdir(parents=True, exist_ok=True)
        execution = ExecutionSpec(
            url=None, auth=Authentication(""), local_path=key[1], parallelism=num_threads,
            sqlite_cache_backend_config=SqliteCacheBackendConfig(key[2]) if cache_dir else None)
        spec = WorkerSpec(
            execution_spec=execution, output_path="", suite="api", skip_instances=False,
            cache_instances=False, cache_instances_only=False,
            session=f"api-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:8]}",
            shared_output=False, output_token=("", ""), request_cache="as_given",
            config_files={name: (local_path / name).read_bytes() for name in CONFIG_FILES
                          if (local_path / name).is_file()},
            runner=RAY_RUNNER,
            registries=registry_snapshot() if settings.configs == "driver" else None)
        name = "syntaxgym_helm:" + hashlib.sha256(repr(key).encode()).hexdigest()[:16]
        _ACTORS[key] = ray.remote(RunWorker).options(
            name=name, get_if_exists=True, max_restarts=0, **resources.ray_options(),
        ).remote(spec)
        return _ACTORS[key]
