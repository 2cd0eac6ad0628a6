"""Finding finished runs and rebuilding their item scores from what ``helm-run`` wrote.

A run folder is ``benchmark_output/runs/<run suite>/<run name>/``. The metric keeps what it found
for every item there (:mod:`syntaxgym_helm.harness.scored_items`): the run's suite and each item's
region values and outcomes, which is all a report reads. A run whose metric could not keep them
(a full disk: its log says so), or one asked to be scored again (``rescore``), is scored here from
its ``scenario_state.json`` (every request with its tokens and logprobs, every instance carrying
its item: :data:`~syntaxgym_helm.harness.scenario.ITEM_KEY`) with the metric's own code and the
run's own policies. Either way reports see exactly the region values the metric saw, with no
model run, once :mod:`syntaxgym_helm.report.run_checks` has found them to be HELM's run.

A run folder that cannot be read so (a file missing or cut off, files of two runs, a run written
by another version) is still found, and :func:`read_runs` returns it as an :class:`UnreadableRun`
with the reason and what to do, so that reports can name it and mark every aggregate that covers
fewer suites than were run.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import dacite

from syntaxgym_helm.core.context import ContextSpec, spec_from_args
from syntaxgym_helm.core.item_evaluation import ItemEvaluation
from syntaxgym_helm.core.run_options import RunOptions, options_from
from syntaxgym_helm.core.suite import Suite

# The metric module first: HELM's import order needs its metric classes before its adaptation's.
from syntaxgym_helm.harness.metric import evaluate_request_states
from syntaxgym_helm.harness.run_format import FORMAT_KEY, RunFormatError, adapter_digest
from syntaxgym_helm.harness.run_spec import suite_group_name
from syntaxgym_helm.harness.scenario import ITEM_KEY, instance_notes, read_item_payload
from syntaxgym_helm.harness.scored_items import (
    FILE_NAME as SCORED_ITEMS,
    merge_one_item_suites,
    read_scored_items,
)
from syntaxgym_helm.report.heap import collection_paused
from syntaxgym_helm.report.run_checks import (
    RunsError,
    check_against_helm,
    check_format,
    helm_items,
    read_json,
    run_again,
)
from syntaxgym_helm.report.suite_versions import distinguish_suites, separate_cells

SCENARIO_CLASS_SUFFIX = "SyntaxGymScenario"


@dataclass(frozen=True)
class RunRecord:
    """One finished SyntaxGym run: its settings, its suite (the items it ran) and their scores."""

    run_dir: Path
    run_name: str  # HELM's run name (the folder name)
    run_suite: str  # HELM's run suite (``helm-run --suite``), the parent folder name
    model: str  # the HELM model name (``adapter_spec.model``)
    suite_name: str  # the SyntaxGym suite, as the leaderboard names it (file stem for paths)
    suite: Suite  # the items the run scored, in item-number order
    scores: tuple[ItemEvaluation, ...]  # one per item, same order as ``suite.items``
    instance_ids: tuple[str, ...]
    prefix: str  # text put before each sentence (``adapter_spec.global_prefix``)
    first_token: str  # the metric's first-token policy
    label: str = ""  # how reports name the run among others: the model, plus settings if needed
    context: ContextSpec = ContextSpec()  # what was put before each item (none: nothing)
    suite_source: str = ""  # the run entry's suite argument (a name, a path or a URL)
    notes: tuple[tuple[str, ...], ...] = ()  # per item: what was changed in its text
    # The checkpoint scored (syntaxgym_helm.clients.checkpoint_identity) and where it was; empty
    # where the run does not say (a served model, a run whose kept items are gone).
    checkpoint: str = ""
    checkpoint_source: str = ""

    @property
    def weights(self) -> str:
        """What identifies the weights: the model name after its organisation (our models are
        named per weights variant, e.g. ``helmhf/x`` and ``syntaxgym/x`` are the same weights)."""
        return self.model.rsplit("/", 1)[-1]

    @property
    def settings(self) -> str:
        """The scoring settings that change surprisals, for people."""
        return f"prefix={self.prefix or 'none'}, first_token={self.first_token}"

    @property
    def name(self) -> str:
        """The label, or the model when no label was assigned."""
        return self.label or self.model


@dataclass(frozen=True)
class UnreadableRun:
    """A SyntaxGym run folder that could not be read, why, and what its ``run_spec.json`` (or
    else its name) still tells: the model, the suite and the context (None: unknown)."""

    run_dir: Path
    reason: str
    model: str | None = None
    suite_name: str | None = None
    context: ContextSpec | None = None

    def is_of(self, model: str) -> bool:
        """Whether this is a run of ``model`` (a run's name writes its ``/`` as ``_``)."""
        return self.model is not None and (self.model == model
                                           or self.model == model.replace("/", "_"))

    @property
    def describe(self) -> str:
        what = ", ".join(part for part in (self.model, self.suite_name) if part)
        return f"{self.run_dir}" + (f" ({what})" if what else "") + f": {self.reason}"


RUN_NAME_PREFIX = "syntaxgym:"  # HELM's run names of SyntaxGym run entries


def is_run_dir(path: Path) -> bool:
    return (path / "scenario_state.json").is_file() and (path / "run_spec.json").is_file()


def _looks_like_run(path: Path) -> bool:
    """A complete run folder, or what is left of one (either file, or a SyntaxGym run's name)."""
    return path.is_dir() and ((path / "scenario_state.json").is_file()
                              or (path / "run_spec.json").is_file()
                              or path.name.startswith(RUN_NAME_PREFIX))


def find_run_dirs(path: Path, run_suite: str | None = None) -> list[Path]:
    """SyntaxGym run folders under ``path``: a run folder, a run-suite folder
    (``benchmark_output/runs/NAME``) or a ``benchmark_output`` folder (every run suite, or only
    ``run_suite``). Runs of other scenarios are skipped."""
    path = Path(path)
    if is_run_dir(path) or (path.name.startswith(RUN_NAME_PREFIX) and _looks_like_run(path)):
        candidates = [path]
    elif (path / "runs").is_dir():
        suites = [path / "runs" / run_suite] if run_suite else sorted(
            p for p in (path / "runs").iterdir() if p.is_dir())
        if run_suite and not suites[0].is_dir():
            known = ", ".join(sorted(p.name for p in (path / "runs").iterdir() if p.is_dir()))
            raise RunsError(f"no run suite {run_suite!r} in {path / 'runs'} "
                            f"(found: {known or 'none'})")
        candidates = [run for suite in suites for run in sorted(suite.iterdir())
                      if _looks_like_run(run)]
    elif path.is_dir():
        candidates = [run for run in sorted(path.iterdir()) if _looks_like_run(run)]
    else:
        raise RunsError(f"{path} is not a folder")
    runs = [run for run in candidates if _is_syntaxgym(run)]
    if not runs:
        raise RunsError(f"no SyntaxGym run found under {path} (expected a run folder with "
                        "scenario_state.json, benchmark_output/runs/SUITE, or benchmark_output)")
    return runs


def _is_syntaxgym(run_dir: Path) -> bool:
    try:
        spec = json.loads((run_dir / "run_spec.json").read_text())
        return spec["scenario_spec"]["class_name"].endswith(SCENARIO_CLASS_SUFFIX)
    except (OSError, ValueError, KeyError, TypeError):  # damaged: the run's name must tell
        return run_dir.name.startswith(RUN_NAME_PREFIX)


def load_run(run_dir: Path, rescore: bool = False) -> RunRecord:
    """Read one run folder: the items as the metric scored them, or (``rescore``, or a run whose
    metric could not keep them) scored again from its requests' results (no model is run either
    way). Either way the items must be those HELM's ``per_instance_stats.json`` of the run
    describes (:func:`check_against_helm`); a :class:`RunsError` says why not, and a
    :class:`~syntaxgym_helm.harness.run_format.RunFormatError` that another version wrote it."""
    run_dir = Path(run_dir)
    spec = read_json(run_dir / "run_spec.json")
    recorded = helm_items(run_dir)
    record = None
    if not rescore and (run_dir / SCORED_ITEMS).is_file():
        try:
            record = _scored_run(run_dir, spec)
        except (OSError, ValueError, KeyError, TypeError) as error:  # damaged: score again
            if isinstance(error, (RunFormatError, RunsError)):
                raise
            print(f"warning: {run_dir / SCORED_ITEMS} cannot be read ({error}); scoring the "
                  "run again from scenario_state.json", file=sys.stderr)
    if record is None:
        record = _with_checkpoint(_rescored_run(run_dir, spec, warn=not rescore),
                                  _kept_checkpoint(run_dir, spec))
    check_against_helm(record, recorded, spec)
    return record


def _kept_checkpoint(run_dir: Path, spec: dict[str, Any]) -> dict[str, Any]:
    """The checkpoint this run's kept items name (HELM's own files do not); else empty."""
    try:
        kept = read_scored_items(run_dir / SCORED_ITEMS)
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    if (kept.run.get("name"), kept.run.get("adapter_spec_sha256")) != (
            spec.get("name"), adapter_digest(spec["adapter_spec"])):
        return {}
    return dict(kept.run.get("checkpoint") or {})


def _with_checkpoint(record: RunRecord, checkpoint: dict[str, Any]) -> RunRecord:
    """``record`` with the checkpoint a run keeps (``run.checkpoint`` of its scored items)."""
    gguf, commit = checkpoint.get("gguf_file"), checkpoint.get("commit")
    source = str(checkpoint.get("source") or "") + (f" / {gguf}" if gguf else "") + (
        f" at commit {commit}" if commit else "")
    return replace(record, checkpoint=str(checkpoint.get("digest") or ""),
                   checkpoint_source=source)


def _rescored_run(run_dir: Path, spec: dict[str, Any], warn: bool) -> RunRecord:
    """The run scored again from its ``scenario_state.json`` with the metric's own code
    (``warn``: say that its scored items were missing)."""
    from helm.benchmark.adaptation.scenario_state import ScenarioState

    options = _metric_options(spec)
    data = read_json(run_dir / "scenario_state.json")
    if adapter_digest(data.get("adapter_spec") or {}) != adapter_digest(spec["adapter_spec"]):
        model = (data.get("adapter_spec") or {}).get("model")
        raise RunsError(f"its scenario_state.json is of another adapter spec (model {model}, "
                        "prefix or settings) than the run its run_spec.json names: the folder "
                        f"mixes files of two runs; {run_again(run_dir, spec)}")
    # check_types=False: HELM's dataclasses use forward references dacite cannot resolve.
    state = dacite.from_dict(ScenarioState, data, config=dacite.Config(check_types=False))
    by_instance: dict[str, list[Any]] = {}
    for request_state in state.request_states:
        if request_state.instance.id is None:  # HELM's adapter numbers every instance
            raise RunsError(f"{run_dir}: an instance of scenario_state.json has no id")
        by_instance.setdefault(request_state.instance.id, []).append(request_state)
    if not by_instance:
        raise RunsError(f"{run_dir} has no request states")
    for states in by_instance.values():
        extra = states[0].instance.extra_data or {}
        check_format(extra.get(FORMAT_KEY), None, spec, run_dir)
    scored = []
    for instance_id, states in by_instance.items():
        states.sort(key=lambda s: s.reference_index)
        scored.append((evaluate_request_states(states, options),
                       instance_id, read_item_payload(states[0].instance.extra_data[ITEM_KEY]),
                       instance_notes(states[0].instance)))
    scored.sort(key=lambda entry: entry[0].item_number)
    suite = _merge_items([one_item for _, _, one_item, _ in scored], source=str(run_dir))
    return _record(run_dir, spec, suite, tuple(score for score, _, _, _ in scored),
                   tuple(instance_id for _, instance_id, _, _ in scored), options.first_token,
                   tuple(notes for _, _, _, notes in scored))


def _scored_run(run_dir: Path, spec: dict[str, Any]) -> RunRecord:
    """The run as its metric scored it (:mod:`syntaxgym_helm.harness.scored_items`), after its
    format and identity are checked against ``run_spec.json``."""
    kept = read_scored_items(run_dir / SCORED_ITEMS)
    check_format(kept.format_version, kept.written_by, spec, run_dir)
    assert kept.suite is not None  # this run format has one
    name, digest = kept.run.get("name"), kept.run.get("adapter_spec_sha256")
    if name != spec.get("name") or digest != adapter_digest(spec["adapter_spec"]):
        what = ("run " + repr(name) if name != spec.get("name")
                else "another adapter spec (model, prefix or settings)")
        raise RunsError(f"its {SCORED_ITEMS} is of {what}, not of the run its run_spec.json "
                        f"names ({spec.get('name')!r}): the folder mixes files of two runs; "
                        f"{run_again(run_dir, spec)}")
    return _with_checkpoint(_record(run_dir, spec, kept.suite, kept.evaluations,
                                    kept.instance_ids, kept.first_token, kept.notes),
                            dict(kept.run.get("checkpoint") or {}))


def _record(run_dir: Path, spec: dict[str, Any], suite: Suite,
            scores: tuple[ItemEvaluation, ...], instance_ids: tuple[str, ...], first_token: str,
            notes: tuple[tuple[str, ...], ...]) -> RunRecord:
    adapter, args = spec["adapter_spec"], spec["scenario_spec"]["args"]
    return RunRecord(
        run_dir=run_dir,
        run_name=run_dir.name,
        run_suite=run_dir.parent.name,
        model=adapter["model"],
        suite_name=suite_group_name(args["suite"]).removeprefix("syntaxgym_"),
        suite=suite,
        scores=scores,
        instance_ids=instance_ids,
        prefix=adapter.get("global_prefix", ""),
        first_token=first_token,
        context=spec_from_args(args),
        suite_source=str(args["suite"]),
        notes=notes,
    )


def _metric_options(spec: dict[str, Any]) -> RunOptions:
    """The run options the run's metric arguments record (defaults for those not recorded)."""
    for metric in spec.get("metric_specs", []):
        if metric["class_name"].endswith("SyntaxGymMetric"):
            return options_from(metric.get("args", {}), where="run_spec.json: ")
    return RunOptions()


def _merge_items(one_item_suites: Sequence[dict[str, Any]], source: str) -> Suite:
    """The run's suite: the shared fields of the one-item suites and all of their items."""
    # The scenario wrote it from a validated suite: read back without validating it again.
    return Suite.from_trusted_json(merge_one_item_suites(one_item_suites), source=source)


def read_runs(run_dirs: Iterable[Path], progress: bool = True, rescore: bool = False
              ) -> tuple[list[RunRecord], list[UnreadableRun]]:
    """Load runs (with a progress bar: big runs take seconds each) and give them labels; the
    runs that cannot be read (a damaged or missing file, an incompatible version) come back
    apart, each with the reason and a warning on stderr, so one bad folder does not hide the
    others and reports can say what they lack. None readable is an error. ``rescore``: score
    every run again from its requests' results (see :func:`load_run`)."""
    from tqdm import tqdm

    run_dirs = list(run_dirs)
    records: list[RunRecord] = []
    unreadable: list[UnreadableRun] = []
    with collection_paused():  # the runs hold no cycles (see syntaxgym_helm.report.heap)
        for run_dir in tqdm(run_dirs, desc="reading runs", unit="run",
                            disable=not progress or len(run_dirs) < 2):
            try:
                records.append(load_run(run_dir, rescore=rescore))
            except Exception as error:  # noqa: BLE001 (reported, and fatal when nothing loads)
                unreadable.append(unreadable_run(run_dir, error))
                print(f"warning: cannot read {unreadable[-1].describe}", file=sys.stderr)
    if not records:
        raise RunsError(f"none of the {len(run_dirs)} run(s) could be read: "
                        + "; ".join(run.describe for run in unreadable))
    return separate_cells(assign_labels(distinguish_suites(records))), unreadable


def load_runs(run_dirs: Iterable[Path], progress: bool = True,
              rescore: bool = False) -> list[RunRecord]:
    """:func:`read_runs`, without the unreadable ones (warned about on stderr)."""
    return read_runs(run_dirs, progress, rescore)[0]


def unreadable_run(run_dir: Path, error: Exception) -> UnreadableRun:
    """Why ``run_dir`` could not be read, in words, and what its ``run_spec.json`` tells."""
    reason = (str(error) if isinstance(error, (RunsError, RunFormatError))
              else f"{type(error).__name__}: {error}")
    if run_dir.is_dir() and not any(run_dir.iterdir()):
        reason = "its folder is empty: the run did not finish (it was interrupted, or failed)"
    try:
        spec = json.loads((run_dir / "run_spec.json").read_text())
        args = spec["scenario_spec"]["args"]
        return UnreadableRun(run_dir, reason, model=spec["adapter_spec"]["model"],
                             suite_name=suite_group_name(args["suite"]).removeprefix("syntaxgym_"),
                             context=spec_from_args(args))
    except Exception:  # noqa: BLE001 - run_spec.json is damaged too: what the name says
        fields = dict(part.partition("=")[::2] for part in
                      run_dir.name.removeprefix(RUN_NAME_PREFIX).split(","))
        suite = fields.get("suite")
        return UnreadableRun(run_dir, reason, model=fields.get("model"),
                             suite_name=suite_group_name(suite).removeprefix("syntaxgym_")
                             if suite else None)


def assign_labels(runs: Sequence[RunRecord]) -> list[RunRecord]:
    """Name each run by its model, adding its settings (and run suite) where that alone is
    ambiguous: the same model run on the same suite under two settings gets two columns. A run
    with a context always says which (``[context=unrelated, 3 sentences, seed 0]``); a model
    whose runs scored more than one checkpoint (a name re-pointed, a folder saved again) gets a
    column per checkpoint (``[checkpoint 1a2b3c4d]``), never one that mixes them."""
    def clashes(group: Callable[[RunRecord], tuple], key: Callable[[RunRecord], Hashable]
                ) -> set[str]:
        """Models (the second part of a group) with runs in one group that differ in key."""
        seen: dict[tuple, set] = {}
        for run in runs:
            seen.setdefault(group(run), set()).add(key(run))
        return {g[1] for g, values in seen.items() if len(values) > 1}

    by_settings = clashes(lambda run: (run.suite_name, run.model), lambda run: run.settings)
    by_checkpoint = clashes(lambda run: ("", run.model), lambda run: run.checkpoint)
    by_run_suite = clashes(lambda run: (run.suite_name, run.model, run.settings, run.context),
                           lambda run: run.run_suite)
    labelled = []
    for run in runs:
        label = run.model
        if run.model in by_settings:
            label += f" [{run.settings}]"
        if run.model in by_checkpoint:
            label += f" [checkpoint {run.checkpoint[:8] or 'unknown'}]"
        if run.context.active:
            label += f" [context={run.context.describe()}]"
        if run.model in by_run_suite:
            label += f" ({run.run_suite})"
        labelled.append(replace(run, label=label))
    return labelled


def select_runs(runs: Sequence[RunRecord], model: str | None) -> list[RunRecord]:
    """Runs whose model, label or model name after the organisation is ``model``; all when
    None."""
    if model is None:
        return list(runs)
    chosen = [run for run in runs if model in (run.model, run.label, run.weights)]
    if not chosen:
        known = ", ".join(sorted({run.name for run in runs}))
        raise RunsError(f"no run of model {model!r} (runs found: {known})")
    return chosen
