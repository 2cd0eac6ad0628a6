"""HELM's runs on a Ray cluster: ``helm-run ... --runner-class-name
syntaxgym_helm.runners.RayRunner``.

:class:`RayRunner` is a HELM ``Runner`` (HELM's eight constructor arguments), so ``helm-run``,
``syntaxgym-helm sweep`` and the Python API construct it as they construct HELM's own runners.
Its ``run_all`` joins the cluster ``runner_config.yaml``'s ``ray.address`` or ``$RAY_ADDRESS``
names (else starts a Ray on this machine), skips the completed runs under
``--skip-completed-runs`` (HELM's own check), and runs the rest on one actor per model deployment
(:mod:`.ray_worker`, :mod:`.ray_schedule`), each asking for the resources of
:mod:`.settings`. Runs land in ``runs/<suite>/`` whole (:mod:`.run_folders`), each with a
``syntaxgym_runner.json`` saying on which node, process and attempt it ran; the reports and the
leaderboard read them as any run. Failed runs end ``run_all`` with HELM's ``RunnerError`` listing
them, as HELM's runner does. Ctrl-C on the driver (or SIGTERM) ends every actor of the run, prints
one line and exits with 130 (143) in ``helm-run`` (:mod:`syntaxgym_helm.clients.interruption`).

Ray is an optional dependency (``pip install 'syntaxgym-helm[ray]'``): this module imports without
it, and only ``run_all`` needs it.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

from helm.benchmark.executor import ExecutionSpec
from helm.benchmark.runner import Runner, RunnerError
from helm.common.hierarchical_logger import hlog

import syntaxgym_helm.runners.run_folders as run_folders
from syntaxgym_helm.helm_compat import registry_snapshot
from syntaxgym_helm.runners.ray_cluster import (
    RayClusterError,
    alive_nodes,
    connect,
    fits,
    import_ray,
    largest_node,
)
from syntaxgym_helm.runners.ray_schedule import ClusterRuns, StopRuns, stop_callback
from syntaxgym_helm.runners.ray_worker import RunWorker, WorkerSpec, config_files, forwarded_env
from syntaxgym_helm.runners.selection import RAY_RUNNER
from syntaxgym_helm.runners.settings import actor_resources, read_settings


class RayRunner(Runner):
    """HELM's runner, each model deployment's runs on a Ray actor of its own (module doc)."""

    def __init__(self, execution_spec: ExecutionSpec, output_path: str, suite: str,
                 skip_instances: bool, cache_instances: bool, cache_instances_only: bool,
                 skip_completed_runs: bool, exit_on_error: bool) -> None:
        local_path = execution_spec.local_path
        if local_path:
            execution_spec = replace(execution_spec, local_path=os.path.abspath(local_path))
        super().__init__(execution_spec, os.path.abspath(output_path), suite, skip_instances,
                         cache_instances, cache_instances_only, skip_completed_runs,
                         exit_on_error)
        self.suite = suite
        self.settings = read_settings(execution_spec.local_path)

    @classmethod
    def execute_requests(cls, adapter_spec: Any, instances: list[Any], local_path: Path,
                         cache_dir: str | Path | None, num_threads: int) -> list[Any]:
        """The Python API's ``evaluate(..., runner="ray")``: the instances' requests executed
        on the model's Ray actor (:mod:`.ray_requests`); their request states."""
        from syntaxgym_helm.runners.ray_requests import execute_on_ray

        return execute_on_ray(adapter_spec, instances, local_path, cache_dir, num_threads)

    def run_all(self, run_specs: list[Any]) -> None:
        """Run ``run_specs`` on the cluster (the completed ones skipped under
        ``--skip-completed-runs``); HELM's ``RunnerError`` lists the runs that failed."""
        todo = [spec for spec in run_specs if not (
            self.skip_completed_runs and self._is_run_completed(self._get_run_path(spec)))]
        if len(todo) < len(run_specs):
            hlog(f"Skipping {len(run_specs) - len(todo)} completed runs (--skip-completed-runs)")
        if not todo:
            return
        ray = import_ray()
        connection = connect(self.settings.address, self.settings.connect_timeout_s,
                             forwarded_env())
        session = f"{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:8]}"
        staging = run_folders.staging_root(self.output_path, self.suite, session)
        runs = None
        remove_stop = None
        try:
            staging.mkdir(parents=True, exist_ok=True)
            runs = self._cluster_runs(ray, todo, session, staging)
            hlog(f"Ray ({connection.address}): {len(todo)} runs of {len(runs.resources)} model "
                 f"deployments on {len(alive_nodes(ray))} nodes")
            from syntaxgym_helm.clients import interruption

            remove_stop = interruption.add_remote_work(stop_callback(runs))
            try:
                runs.run(todo)
            except StopRuns as stop:
                runs.stop()
                raise RunnerError(f"A run failed and --exit-on-error was set: {stop}") from None
            except BaseException:
                runs.stop()
                raise
            nodes = sorted({record["node_ip"] for record in runs.records})
            hlog(f"Ray: {len(runs.records)} runs done on {len(nodes)} nodes ({', '.join(nodes)})")
        finally:
            if remove_stop is not None:
                remove_stop()
            shutil.rmtree(staging, ignore_errors=True)
            for folder in (staging.parent, staging.parent.parent):  # ray_staging/<suite>, itself
                with contextlib.suppress(OSError):
                    folder.rmdir()  # where no other session's runs are being written
            if connection.started_here:
                ray.shutdown()
        if runs is not None and runs.failed:
            for name, reason in runs.failed:
                hlog(f"Failed run {name}: {reason}")
            failed = ", ".join(f'"{name}"' for name, _ in runs.failed)
            # Why, too: the caller (a sweep's row) has no other way to know it, the model having
            # been loaded in the cluster's actors, not here.
            reasons = list(dict.fromkeys(str(reason)[:300] for _, reason in runs.failed))
            raise RunnerError(f"Failed runs: [{failed}] ({'; '.join(reasons[:3])}"
                              f"{'; ...' if len(reasons) > 3 else ''})")

    def _cluster_runs(self, ray: Any, todo: list[Any], session: str,
                      staging: Path) -> ClusterRuns:
        """The runs' schedule: each model's actor resources checked against the alive nodes,
        and what every actor needs from here."""
        nodes = alive_nodes(ray)
        resources = {}
        for deployment in sorted({spec.adapter_spec.model_deployment for spec in todo}):
            needed = actor_resources(self.settings, deployment, nodes)
            if not fits(needed.ray_options(), nodes):
                raise RayClusterError(
                    f"no node of the Ray cluster can hold an actor of {deployment} "
                    f"({needed.describe()}; {largest_node(nodes)}): give it less in "
                    "runner_config.yaml (ray: models: ...), or add a larger node")
            resources[deployment] = needed
        token = (str(staging / ".driver"), secrets.token_hex(16))
        Path(token[0]).write_text(token[1], encoding="utf-8")
        spec = WorkerSpec(
            execution_spec=self.executor.execution_spec, output_path=self.output_path,
            suite=self.suite, skip_instances=self.skip_instances,
            cache_instances=self.cache_instances, cache_instances_only=self.cache_instances_only,
            session=session, shared_output=self.settings.shared_output, output_token=token,
            request_cache=self.settings.request_cache,
            config_files=config_files(self.executor.execution_spec.local_path), runner=RAY_RUNNER,
            registries=registry_snapshot() if self.settings.configs == "driver" else None)
        return ClusterRuns(ray=ray, actor_class=ray.remote(RunWorker), worker_spec=spec,
                           resources=resources, max_attempts=self.settings.max_attempts,
                           exit_on_error=self.exit_on_error, runs_path=Path(self.runs_path),
                           staging=staging)
