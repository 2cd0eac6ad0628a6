"""The body of :class:`~syntaxgym_helm.runners.RayRunner`'s actors: one per model deployment (and
replica), on some node of the cluster, running that model's run specs one after another with HELM's
own ``Runner.run_one``, so the model's weights load once for all of them.

An actor sets itself up as ``helm-run`` does: the ``helm`` entry-point plugins, this one included,
and HELM's configs: the model deployments, metadata and tokenizer configs the driver registered,
sent with the actor (``ray: {configs: driver}``, the default: the actor parses no YAML), or HELM's
built-in YAML and ``--local-path``'s (its files, sent by the driver, where this node does not see
that folder) read again (``configs: files``). Its request cache is the node's own (``request_cache:
node``, the default: ``<plugin cache>/ray_request_cache``), HELM's ``<--local-path>/cache``
(``request_cache: local_path``), or the MongoDB of ``--mongo-uri``. Each run is written apart and
moved into place whole (:mod:`.run_folders`); where the node does not see the output path, the run's
files go back to the driver instead. The class is plain Python: the driver makes it a Ray actor
(``ray.remote``), so importing this module needs no Ray.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import resource
import shutil
import socket
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import syntaxgym_helm.runners.run_folders as run_folders

#: Where a node keeps what it cannot put in the shared output path (in its temporary folder).
NODE_FOLDER = "syntaxgym_helm_ray"
#: Environment variables the workers get from the driver (suite folders, caches, HELM's own).
FORWARDED_PREFIXES = ("SYNTAXGYM_", "HELM_", "HF_", "TRANSFORMERS_")
#: ``--local-path`` files sent to nodes that do not see that folder.
CONFIG_FILES = ("model_deployments.yaml", "model_metadata.yaml", "tokenizer_configs.yaml",
                "credentials.conf", "runner_config.yaml")


def forwarded_env() -> dict[str, str]:
    """The driver's variables of :data:`FORWARDED_PREFIXES`, for every worker."""
    return {name: value for name, value in os.environ.items()
            if name.startswith(FORWARDED_PREFIXES)}


def config_files(local_path: str | Path | None) -> dict[str, bytes]:
    """``local_path``'s files of :data:`CONFIG_FILES`, for nodes that do not see it."""
    if not local_path:
        return {}
    return {name: Path(local_path, name).read_bytes() for name in CONFIG_FILES
            if Path(local_path, name).is_file()}


@dataclass(frozen=True)
class WorkerSpec:
    """What every actor of one ``run_all`` needs from the driver (picklable)."""

    execution_spec: Any  # HELM's ExecutionSpec, as helm-run built it (absolute local_path)
    output_path: str  # absolute
    suite: str
    skip_instances: bool
    cache_instances: bool
    cache_instances_only: bool
    session: str  # this run_all's name: its staging folders
    shared_output: str | bool  # "auto", or whether workers see the output path
    output_token: tuple[str, str]  # (path, text) of a file the driver wrote in the output path
    request_cache: str  # "node", "local_path", or "as_given" (the execution spec's, the API's)
    config_files: Mapping[str, bytes]  # --local-path's YAML and credentials, by file name
    runner: str  # the runner's class path, recorded in each run
    registries: Any = None  # the driver's HELM config registries (None: read the YAML files)


class RunWorker:
    """One model's actor: HELM's ``Runner`` on this node, running whole runs into place."""

    def __init__(self, spec: WorkerSpec) -> None:
        from helm.benchmark.config_registry import (
            RUNNER_CONFIG_FILE,
            register_builtin_configs_from_helm_package,
            register_configs_from_directory,
        )
        from helm.benchmark.run import load_entry_point_plugins
        from helm.benchmark.runner import Runner, set_benchmark_output_path
        from helm.benchmark.runner_config_registry import register_runner_config_from_path

        from syntaxgym_helm.helm_compat import require, require_attributes, restore_registries

        self.spec = spec
        # One folder per output path on each node, kept between sessions (its suite downloads
        # are reused); each session stages its runs in a folder of its own there.
        key = hashlib.sha256(f"{spec.output_path}|{spec.suite}".encode()).hexdigest()[:16]
        node = Path(tempfile.gettempdir()) / NODE_FOLDER / key
        self.shared = _sees_output(spec)
        local_path = spec.execution_spec.local_path
        if local_path and not os.path.isdir(local_path):  # this node does not see --local-path
            local_path = str(node / "local_path")
            for name, data in spec.config_files.items():
                Path(local_path, name).parent.mkdir(parents=True, exist_ok=True)
                Path(local_path, name).write_bytes(data)
        if spec.registries is None:
            register_builtin_configs_from_helm_package()
            if local_path:
                register_configs_from_directory(local_path)
        elif local_path and os.path.isfile(os.path.join(local_path, RUNNER_CONFIG_FILE)):
            register_runner_config_from_path(os.path.join(local_path, RUNNER_CONFIG_FILE))
        load_entry_point_plugins()  # this plugin among them: the run hooks, the embedded models
        if spec.registries is not None:  # what the driver's registries hold, plugins' included
            restore_registries(spec.registries)
        output = spec.output_path if self.shared else str(node / "output")
        set_benchmark_output_path(output)
        execution = dataclasses.replace(spec.execution_spec, local_path=local_path,
                                        sqlite_cache_backend_config=self._cache(local_path))
        require("runner")
        self.runner = Runner(execution, output, spec.suite, spec.skip_instances,
                             spec.cache_instances, spec.cache_instances_only,
                             skip_completed_runs=False, exit_on_error=True)
        require_attributes(self.runner, ("runs_path", "eval_cache_path", "executor"), "runner")
        self.staging = (run_folders.staging_root(spec.output_path, spec.suite, spec.session)
                        if self.shared else node / "staging" / spec.session)

    def _cache(self, local_path: str | None) -> Any:
        """The SQLite request cache of this node (None where HELM's cache is off or MongoDB)."""
        from helm.common.cache_backend_config import SqliteCacheBackendConfig

        from syntaxgym_helm.clients.cache_dirs import cache_root

        given = self.spec.execution_spec.sqlite_cache_backend_config
        if given is None:
            return None
        if self.spec.request_cache == "as_given":
            folder = Path(given.path)
        elif self.spec.request_cache == "local_path" and local_path:
            folder = Path(local_path) / "cache"
        else:
            folder = cache_root() / "ray_request_cache"
        folder.mkdir(parents=True, exist_ok=True)
        return SqliteCacheBackendConfig(str(folder))

    def where(self) -> dict[str, Any]:
        """This actor's node, host, process and whether it writes into the shared output."""
        import ray

        context = ray.get_runtime_context()
        return {"node_id": context.get_node_id(), "node_ip": ray.util.get_node_ip_address(),
                "hostname": socket.gethostname(), "pid": os.getpid(),
                "actor_id": context.get_actor_id(), "shared_output": self.shared}

    def run(self, run_spec: Any, attempt: int) -> dict[str, Any]:
        """Run ``run_spec`` (HELM's ``Runner.run_one``) into a staging folder, record where it
        ran, and move it into ``runs/<suite>/`` (or return its files where this node does not
        see the output path): ``{"record": ..., "files": {path: bytes} | None}``."""
        stage = run_folders.new_stage(self.staging)
        folder = stage / run_spec.name
        record = {"runner": self.spec.runner, "run": run_spec.name, "attempt": attempt,
                  "model_deployment": run_spec.adapter_spec.model_deployment,
                  "state": "running", "started": time.time(), **self.where()}
        try:
            run_folders.write_record(folder, record)
            self.runner.runs_path = str(stage)
            self.runner.eval_cache_path = str(stage / "eval_cache")
            os.makedirs(self.runner.eval_cache_path, exist_ok=True)
            self.runner.run_one(run_spec)
            finished = time.time()
            record.update(state="done", finished=finished,
                          seconds=round(finished - record["started"], 3),
                          max_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
            run_folders.write_record(folder, record)
            files = None
            if self.shared:
                run_folders.move_into_place(folder, Path(self.spec.output_path, "runs",
                                                         self.spec.suite, run_spec.name))
            else:
                files = run_folders.pack(folder)
            return {"record": record, "files": files}
        finally:
            shutil.rmtree(stage, ignore_errors=True)

    def execute_requests(self, adapter_spec: Any, instances: list[Any]) -> list[Any]:
        """The instances' requests as HELM's adapter makes them, executed by this actor's
        executor (the Python API's ``evaluate(..., runner="ray")``)."""
        from syntaxgym_helm.api.helm_engine import run_requests

        return run_requests(adapter_spec, instances, self.runner.executor)


def _sees_output(spec: WorkerSpec) -> bool:
    """Whether this node writes into the driver's output path: as configured, else whether the
    file the driver wrote there is here with the same text."""
    if isinstance(spec.shared_output, bool):
        return spec.shared_output
    path, text = spec.output_token
    try:
        return Path(path).read_text(encoding="utf-8") == text
    except OSError:
        return False
