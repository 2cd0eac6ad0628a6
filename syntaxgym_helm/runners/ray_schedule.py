"""How :class:`~syntaxgym_helm.runners.RayRunner` hands run specs to its actors and what it does
when a run or a node fails.

Run specs are grouped by model deployment; each deployment gets ``replicas`` actors (1 by
default, never more than it has runs), created at once (Ray places them as resources free up),
and each actor is handed one run at a time from its deployment's queue, so that a run is never
tied to an actor that is gone. When a run ends:

- done: the run is in place (or its files, sent back, are put in place here); the actor gets the
  next run of its model, or is ended when there is none (its resources go to other models);
- the run raised (a bad suite, a client error): the run is failed, its error kept for the end;
  the actor lives on and takes the next run (one failing run takes no other down); with
  ``--exit-on-error`` everything stops;
- the actor died (its node lost, its process killed, out of memory): the run goes back to the
  front of its model's queue, for a new actor on whatever node Ray finds, until it has been tried
  ``max_attempts`` times; then it is failed. Its staging folder never reaches ``runs/``.

A new actor is probed (a call that returns where it runs) before it is handed a run: one that
never starts (Ray placed it on a node that was dying, which Ray learns of only seconds later)
costs its run no attempt; a model whose actor's set-up raises fails its runs with that error.

Every few seconds the alive nodes are checked: a model whose actor no alive node can hold fails
its runs (a message naming what it asks for and the largest node) instead of waiting for ever.
"""

from __future__ import annotations

import shutil
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from helm.common.hierarchical_logger import hlog, hwarn

import syntaxgym_helm.runners.run_folders as run_folders
from syntaxgym_helm.runners.ray_cluster import alive_nodes, fits, largest_node
from syntaxgym_helm.runners.settings import ActorResources

#: Seconds between checks that some alive node can hold each model's actors.
NODE_CHECK_S = 5.0
#: How long one wait for a finished run lasts (a Ctrl-C is handled between two).
WAIT_S = 0.5
#: How often a model's actor may fail to start (its node lost before it ran) before its runs fail.
START_TRIES = 3


class StopRuns(Exception):
    """A run failed under ``--exit-on-error``: every other run is stopped."""


@dataclass
class _Slot:
    """One actor place of a model deployment (its actor None once ended or dead)."""

    deployment: str
    actor: Any = None


@dataclass
class _Flight:
    slot: _Slot
    run_spec: Any
    attempt: int
    starting: bool = False  # the new actor's probe, before its run is handed over


@dataclass
class ClusterRuns:
    """One ``run_all``'s runs on the cluster: queues per model, actors, runs in flight."""

    ray: Any
    actor_class: Any  # ray.remote(RunWorker)
    worker_spec: Any
    resources: dict[str, ActorResources]
    max_attempts: int
    exit_on_error: bool
    runs_path: Path
    staging: Path
    queues: dict[str, deque[tuple[Any, int]]] = field(default_factory=dict)
    flights: dict[Any, _Flight] = field(default_factory=dict)
    slots: list[_Slot] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)
    failed_starts: dict[str, int] = field(default_factory=dict)
    total: int = 0

    def run(self, run_specs: list[Any]) -> None:
        """Run every run spec; failures are in :attr:`failed` (name, reason)."""
        for run_spec in run_specs:
            deployment = run_spec.adapter_spec.model_deployment
            self.queues.setdefault(deployment, deque()).append((run_spec, 1))
        self.total = len(run_specs)
        for deployment, queue in self.queues.items():
            for _ in range(min(self.resources[deployment].replicas, len(queue))):
                slot = _Slot(deployment)
                self.slots.append(slot)
                self._next(slot)
        checked = time.monotonic()
        while self.flights:
            ready, _ = self.ray.wait(list(self.flights), num_returns=1, timeout=WAIT_S)
            for ref in ready:
                self._finished(ref)
            if time.monotonic() - checked > NODE_CHECK_S:
                checked = time.monotonic()
                self._fail_what_no_node_holds()

    def _next(self, slot: _Slot, lost: bool = False) -> None:
        """Hand ``slot`` the next run of its model; end its actor where there is none left. A
        slot without an actor gets a new one, probed first (:meth:`_started`); a ``lost`` slot
        (its actor died) only where its model has more runs waiting than live actors."""
        queue = self.queues[slot.deployment]
        live = sum(1 for other in self.slots
                   if other.deployment == slot.deployment and other.actor is not None)
        if not queue or (lost and live and len(queue) <= live):
            self._end(slot)
            return
        run_spec, attempt = queue.popleft()
        if slot.actor is None:
            options = self.resources[slot.deployment].ray_options()
            slot.actor = self.actor_class.options(
                **options, max_restarts=0, max_task_retries=0, scheduling_strategy="SPREAD",
            ).remote(self.worker_spec)
            self.flights[slot.actor.where.remote()] = _Flight(slot, run_spec, attempt, True)
            return
        self.flights[slot.actor.run.remote(run_spec, attempt)] = _Flight(slot, run_spec, attempt)

    def _end(self, slot: _Slot) -> None:
        if slot.actor is not None:
            actor, slot.actor = slot.actor, None
            try:
                self.ray.kill(actor, no_restart=True)
            except self.ray.exceptions.RayError:  # already gone with its node
                pass

    def _finished(self, ref: Any) -> None:
        flight = self.flights.pop(ref)
        if flight.starting:
            self._started(ref, flight)
            return
        name = flight.run_spec.name
        lost = False
        try:
            outcome = self.ray.get(ref)
        except self.ray.exceptions.RayTaskError as error:
            cause = getattr(error, "cause", None) or error
            hlog(f"Error when running {name} (Ray worker):\n{error}")
            self._fail(name, f"{type(cause).__name__}: {_last_line(str(cause))}")
        except self.ray.exceptions.RayError as error:  # the actor is gone: its node, its process
            self._end(flight.slot)  # or unreachable ("may or may not have run"): ended for good
            lost = True
            reason = f"its Ray worker died ({type(error).__name__}: {_last_line(str(error))})"
            if flight.attempt < self.max_attempts:
                hwarn(f"{name}: {reason}; running it again (attempt {flight.attempt + 1} of "
                      f"{self.max_attempts})")
                self.queues[flight.slot.deployment].appendleft((flight.run_spec,
                                                                flight.attempt + 1))
            else:
                self._fail(name, f"{reason} on attempt {flight.attempt} of {self.max_attempts}")
        else:
            if outcome["files"] is not None:
                self._place(flight.run_spec.name, outcome["files"])
            record = outcome["record"]
            self.records.append(record)
            hlog(f"[{len(self.records)}/{self.total}] {name}: done on {record['hostname']} "
                 f"({record['node_ip']}) in {record['seconds']:.1f} s")
        self._next(flight.slot, lost)

    def _started(self, ref: Any, flight: _Flight) -> None:
        """A new actor's probe came back: hand it its run; or, where it never started, put the
        run back (not an attempt: it never ran) for a new actor, :data:`START_TRIES` times for a
        model, or fail the model's runs where its set-up raised (it would raise again)."""
        try:
            self.ray.get(ref)
        except self.ray.exceptions.RayError as error:
            self._end(flight.slot)
            deployment = flight.slot.deployment
            reason = f"its Ray worker did not start ({type(error).__name__}: " \
                     f"{_last_line(str(error))})"
            self.failed_starts[deployment] = self.failed_starts.get(deployment, 0) + 1
            queue = self.queues[deployment]
            queue.appendleft((flight.run_spec, flight.attempt))
            if (getattr(error, "actor_init_failed", False)
                    or self.failed_starts[deployment] >= START_TRIES):
                for run_spec, _ in queue:
                    self._fail(run_spec.name, reason)
                queue.clear()
            else:
                hwarn(f"{deployment}: {reason}; starting another")
            self._next(flight.slot, lost=True)
            return
        run = flight.slot.actor.run.remote(flight.run_spec, flight.attempt)
        self.flights[run] = _Flight(flight.slot, flight.run_spec, flight.attempt)

    def _fail(self, name: str, reason: str) -> None:
        self.failed.append((name, reason))
        if self.exit_on_error:
            raise StopRuns(f"{name}: {reason}")

    def _place(self, run_name: str, files: dict[str, bytes]) -> None:
        """Put a run whose files came back from its node into ``runs/`` whole."""
        stage = run_folders.new_stage(self.staging)
        try:
            run_folders.unpack(files, stage / run_name)
            run_folders.move_into_place(stage / run_name, self.runs_path / run_name)
        finally:
            shutil.rmtree(stage, ignore_errors=True)

    def _fail_what_no_node_holds(self) -> None:
        nodes = alive_nodes(self.ray)
        for deployment, resources in self.resources.items():
            if fits(resources.ray_options(), nodes):
                continue
            slots = [slot for slot in self.slots if slot.deployment == deployment]
            waiting = [f for f in self.flights.values() if f.slot.deployment == deployment]
            if not waiting:
                continue
            reason = (f"no alive node can hold its actor ({resources.describe()}; "
                      f"{largest_node(nodes)})")
            for ref, flight in list(self.flights.items()):
                if flight.slot.deployment == deployment:
                    del self.flights[ref]
                    self.failed.append((flight.run_spec.name, reason))
            for run_spec, _ in self.queues[deployment]:
                self.failed.append((run_spec.name, reason))
            self.queues[deployment].clear()
            for slot in slots:
                self._end(slot)

    def stop(self) -> str:
        """End every actor (Ctrl-C, an error) and remove the staging folders: what was
        stopped, in words."""
        running = len(self.flights)
        for slot in self.slots:
            try:
                self._end(slot)
            except Exception:  # noqa: BLE001 - the others are still ended
                slot.actor = None
        self.flights.clear()
        shutil.rmtree(self.staging, ignore_errors=True)  # what the ended actors were writing
        done = len(self.records)
        return (f"stopped {running} run{'s' if running != 1 else ''} on the Ray cluster "
                f"({done} run{'s' if done != 1 else ''} done this time in place; "
                "--skip-completed-runs skips them)")


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


def stop_callback(runs: ClusterRuns) -> Callable[[float], str]:
    """For :func:`syntaxgym_helm.clients.interruption.add_remote_work`."""
    def stop(deadline: float) -> str:
        del deadline  # ray.kill only asks the cluster; it does not wait
        return runs.stop()
    return stop
