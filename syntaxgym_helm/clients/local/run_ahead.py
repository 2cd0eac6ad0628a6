"""Score ahead of HELM: give each :class:`~.client.SyntaxGymClient` the requests of every run of a
``helm-run`` before the first run executes.

HELM's ``Runner.run_all`` takes one run at a time: scenario, adaptation, execution, metrics,
writing. With only one run's requests (:mod:`.prefetch`), the engine waits while HELM computes
a run's metrics and writes its files, and the first run also waits for the model to load. This
module wraps ``Runner.run_all`` so that, first, each run whose model deployment is served by a
SyntaxGymClient is planned with HELM's own pieces, as ``Runner.run_one`` does (the scenario's
instances, HELM's instance ids and downsampling, the data preprocessor, the run's adapter), and
the client queues all of the planned requests at once (:meth:`~.client.SyntaxGymClient.
prefetch_ahead`). The model starts loading then, and the engine scores the runs in their order,
in full batches that share prefixes across suites, while HELM goes on. HELM still makes every
request through the client, and each answer is the same as without this; a run whose requests
were not all planned gets the rest computed when it executes.

Only scenarios that can hand HELM the instances they made for the plan are planned (a
``get_instances_ahead`` method, as :class:`~syntaxgym_helm.harness.scenario.SyntaxGymScenario`
has), so no suite is read twice. Planning never fails a run: a run it cannot plan is left to
HELM. ``SYNTAXGYM_HELM_RUN_AHEAD=0`` turns it off (``SYNTAXGYM_HELM_PREFETCH=0`` turns it off with
the per-run prefetch); so does a dry run.
HELM's parallel runners call ``run_one`` in their workers, not ``run_all``, so their runs keep
the per-run prefetch.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
from collections import defaultdict
from typing import Any

from syntaxgym_helm.clients.local.prefetch import (
    _is_syntaxgym_client_class,
    log_counts,
    prefetch_enabled,
)

_MARK = "__syntaxgym_run_ahead__"
#: Runs are planned until their requests reach this many: minutes of scoring ahead of HELM,
#: while a long helm-run (BLiMP's 67 paradigms: 134,000 requests) does not hold every run's
#: instances and requests in memory at once. Later runs are prefetched when they execute.
MAX_REQUESTS_AHEAD = 20_000


def install_runner_run_ahead() -> bool:
    """Wrap HELM's ``Runner.run_all`` (once); returns whether the wrapper is in place."""
    try:
        from helm.benchmark.runner import Runner
    except Exception:  # noqa: BLE001 - no HELM runner, nothing to speed up
        return False
    original = Runner.run_all
    if getattr(original, _MARK, False):
        return True

    @functools.wraps(original)
    def run_all(self, run_specs):
        clients: dict[str, Any] = {}
        if run_ahead_enabled() and not getattr(self, "dry_run", False):
            clients = queue_runs_ahead(self, run_specs)
        try:
            return original(self, run_specs)
        finally:
            log_counts(clients, after_last_run=True)

    setattr(run_all, _MARK, True)
    Runner.run_all = run_all
    return True


def run_ahead_enabled() -> bool:
    """Off with ``SYNTAXGYM_HELM_RUN_AHEAD=0`` (each run's requests are still prefetched when it
    executes, and the engine's log lines count each run's own work) or with the prefetch."""
    setting = os.environ.get("SYNTAXGYM_HELM_RUN_AHEAD", "1").strip().lower()
    return prefetch_enabled() and setting not in ("0", "false", "no", "off")


class _PlanningLogFilter(logging.Filter):
    """Drops the INFO lines HELM writes while one thread plans runs (the plan repeats what each
    run will log when it runs); warnings and errors pass, as do other threads' lines."""

    def __init__(self, thread_id: int) -> None:
        super().__init__()
        self.thread_id = thread_id

    def filter(self, record: logging.LogRecord) -> bool:
        return record.thread != self.thread_id or record.levelno >= logging.WARNING


def queue_runs_ahead(runner: Any, run_specs: list) -> dict[str, Any]:
    """Plan the runs served by SyntaxGymClients and hand each client its requests, in run order;
    returns deployment name -> client. Never raises."""
    from helm.common.hierarchical_logger import hlog, hwarn

    try:
        get_client = runner.executor.context.client._get_client
        from helm.benchmark.model_deployment_registry import get_model_deployment
    except Exception:  # noqa: BLE001 - another HELM: each run is prefetched on its own
        return {}
    requests: dict[str, list] = defaultdict(list)
    runs: dict[str, int] = defaultdict(int)
    clients: dict[str, Any] = {}
    helm_logger = logging.getLogger("helm")
    quiet = _PlanningLogFilter(threading.get_ident())
    helm_logger.addFilter(quiet)
    try:
        for run_spec in run_specs:
            if sum(len(planned) for planned in requests.values()) >= MAX_REQUESTS_AHEAD:
                break
            name = run_spec.adapter_spec.model_deployment
            try:
                if name not in clients:
                    deployment = get_model_deployment(name)
                    if not _is_syntaxgym_client_class(deployment.client_spec.class_name):
                        continue
                    client = get_client(name)
                    if not (hasattr(client, "prefetch_ahead")
                            and getattr(client, "prefetch_enabled", False)):
                        continue  # another client, or one told not to prefetch
                    clients[name] = client
                    client.server  # noqa: B018 - its model starts loading now, in its thread
                planned = planned_requests(runner, run_spec)
            except Exception:  # noqa: BLE001 - HELM runs it and reports what is wrong
                continue
            if planned:
                requests[name].extend(planned)
                runs[name] += 1
    finally:
        helm_logger.removeFilter(quiet)
    for name, client in clients.items():
        try:
            client.prefetch_ahead(requests[name], runs[name])
        except Exception as exc:  # noqa: BLE001
            hwarn(f"syntaxgym run-ahead: could not queue the requests of {name} "
                  f"({type(exc).__name__}: {exc}); each run's are queued when it executes")
    if clients:
        hlog(f"syntaxgym run-ahead: planned {sum(runs.values())} of {len(run_specs)} runs for "
             f"{len(clients)} local model(s)")
    return clients


def planned_requests(runner: Any, run_spec: Any) -> list:
    """The requests HELM's ``Runner.run_one`` will make for ``run_spec`` (its steps up to the
    adapter, with HELM's functions); empty for a run that is complete and skipped, or whose
    scenario cannot hand its instances on."""

    from helm.benchmark.adaptation.adapters.adapter_factory import AdapterFactory
    from helm.benchmark.data_preprocessor import DataPreprocessor
    from helm.benchmark.runner import downsample_eval_instances
    from helm.benchmark.scenarios.scenario import (
        EVAL_SPLITS,
        create_scenario,
        get_scenario_cache_path,
        with_instance_ids,
    )

    if runner.skip_completed_runs and runner._is_run_completed(runner._get_run_path(run_spec)):
        return []
    if runner.skip_instances or runner.cache_instances:
        return []  # HELM reads or writes its instance files: leave the run to it
    scenario = create_scenario(run_spec.scenario_spec)
    make_ahead = getattr(scenario, "get_instances_ahead", None)
    if make_ahead is None:
        return []
    instances = make_ahead(get_scenario_cache_path(runner.output_path, scenario.name))
    if any(instance.id is None for instance in instances):
        instances = with_instance_ids(instances)
    adapter_spec = run_spec.adapter_spec
    if adapter_spec.max_eval_instances is not None:
        instances = downsample_eval_instances(instances, adapter_spec.max_eval_instances,
                                              adapter_spec.eval_splits or EVAL_SPLITS)
    parallelism = runner.executor.execution_spec.parallelism
    instances = DataPreprocessor(run_spec.data_augmenter_spec).preprocess(instances, parallelism)
    adapter = AdapterFactory.get_adapter(adapter_spec, runner.tokenizer_service)
    return [state.request for state in adapter.adapt(instances, parallelism)]
