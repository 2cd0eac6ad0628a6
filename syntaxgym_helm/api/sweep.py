"""``sweep``: a model's checkpoints scored on the same suites, one after another, as learning curves
(the Python twin of ``syntaxgym-helm sweep``; docs/sweeps.md).

The checkpoints are folders or Hub revisions (:mod:`syntaxgym_helm.clients.checkpoint_sources`),
ordered by their place in training (:mod:`syntaxgym_helm.core.training_axis`: read from their
names as BabyLM's pipeline reads them, or given). Before anything runs, every checkpoint's config
is read: checkpoints of two architectures are refused, and one that lacks files is reported and
left out. Then, one checkpoint at a time:

1. its identity: the digest of its files (``checkpoint_identity``) and, for a Hub revision, the
   commit it was fetched at;
2. it is registered with HELM under ``<model>@<revision>`` (``resolve_model``, which checks it),
   and every run entry of the sweep is run on it by a HELM ``Runner`` (:mod:`.sweep_specs`), so
   the checkpoint is loaded once for all its suites and each run is a run folder ``helm-run``
   would write (``benchmark_output/runs/<run suite>/``; ``helm-summarize`` makes a leaderboard
   row of each checkpoint);
3. with HELM's own runner, in a forked child process (:mod:`.checkpoint_process`), else here,
   the model released before the next is loaded (a sweep holds one checkpoint in memory);
4. what its runs scored is read once and kept in the sweep's state file
   (``benchmark_output/sweeps/<run suite>/<model>/checkpoints.json``).

A sweep is resumable: run again, it skips every checkpoint finished with the same identity and the
same runs (without loading it), completes a half-done one, or one given suites since (HELM's
Runner skips its finished runs), and runs again a checkpoint whose files changed (its old runs are
removed first). A checkpoint that fails (its files, its load, a run, its process) is recorded with
the reason; the others go on. The outputs (:mod:`syntaxgym_helm.report.sweep_report`) are written
at the end of every sweep from the state.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from syntaxgym_helm.api.sweep_specs import (
    RunSettings,
    install_run_spec_hooks,
    run_checkpoint_specs,
    run_specs_for,
    runner_class,
    sweep_entries,
)
from syntaxgym_helm.api.sweep_state import (
    other_sample_runs,
    read_state,
    remove_runs,
    runs_complete,
    save_state,
)
from syntaxgym_helm.clients import interruption
from syntaxgym_helm.clients.checkpoint_sources import (
    CheckpointSource,
    folder_checkpoints,
    hub_checkpoints,
    local_folder,
)
from syntaxgym_helm.core.download import write_atomically
from syntaxgym_helm.core.run_options import RunOptions
from syntaxgym_helm.core.training_axis import given_values, training_axis
from syntaxgym_helm.report.sweep_report import SweepOutputs, write_sweep_outputs
from syntaxgym_helm.report.sweep_tables import counts_json

DEFAULT_RUN_SUITE = "sweep"
STATE_FILE = "checkpoints.json"


class SweepError(ValueError):
    """A sweep that cannot start: nothing found, two architectures, no x; the message says what
    to do."""


@dataclass
class SweepCheckpoint:
    """One checkpoint's place in the sweep and what became of it (a row of the state file)."""

    name: str
    x: float
    folder: str | None = None
    repo: str | None = None
    revision: str | None = None
    commit: str | None = None
    identity: str = ""
    model: str = ""  # its HELM model name
    status: str = "pending"  # done, failed
    error: str = ""
    seconds: float = 0.0
    peak_mb: float | None = None  # its process's peak memory, where it had a process of its own
    runs: list[str] = field(default_factory=list)
    counts: list[dict[str, Any]] = field(default_factory=list)
    word_surprisals: list[float] | None = None

    @property
    def source(self) -> CheckpointSource:
        return CheckpointSource(self.name, self.folder, self.repo, self.revision, self.commit)


@dataclass(frozen=True)
class SweepResult:
    """A finished sweep: its model, x unit, checkpoints in training order, and the outputs."""

    model: str
    unit: str
    checkpoints: tuple[SweepCheckpoint, ...]
    outputs: SweepOutputs

    @property
    def failed(self) -> list[SweepCheckpoint]:
        return [c for c in self.checkpoints if c.status != "done"]


def sweep(checkpoints: str | Path | Sequence[str | Path], suites: Sequence[str | Path], *,
          revisions: str | None = None, name: str | None = None, x_unit: str | None = None,
          x_values: Mapping[str, float] | str | Path | None = None,
          pairs_per_paradigm: int | None = None,
          words: str | Path | None = None, options: RunOptions | None = None,
          runner: str | type | None = None, output_path: str | Path = "benchmark_output",
          run_suite: str = DEFAULT_RUN_SUITE, local_path: str | Path | None = None,
          num_threads: int = 4, cache: bool = True, plots: bool = True, isolate: bool = True,
          log: Callable[[str], None] | None = None, **option_values: Any) -> SweepResult:
    """Score every checkpoint of a model on ``suites`` (see the module doc and docs/sweeps.md).

    ``checkpoints``: folders (a glob such as ``out/checkpoint-*``, a folder of checkpoint
    folders, checkpoint folders), or with ``revisions`` a Hub repository (``revisions``: a list,
    a pattern such as ``chck_*M`` or ``step*``, or ``all``). ``suites``: suite names, data set
    names (``blimp``), suite files or run-entry files (``.conf``). ``name``: the model's name
    (default: the folder holding the checkpoints, or the repository). ``x_unit``: ``words``,
    ``tokens`` or ``steps`` (default: read from the names); ``x_values``: each checkpoint's x by
    name, instead of its name's (a mapping, or as ``--x-values``: ``NAME=X,NAME=X`` or the path
    of a CSV file of name,x). ``pairs_per_paradigm``: at most this many items per suite, the
    same sample at every checkpoint (HELM's seeded draw). ``words``: a words-in-contexts file
    (:mod:`syntaxgym_helm.core.word_contexts`) for each word's age of acquisition. The run
    options (``ties``, ``prefix``, ...) as keywords or ``options``. ``runner``: HELM's Runner
    (``helm``, default) or a Runner class or class path. ``cache``: HELM's request cache in
    ``local_path/cache`` (as ``helm-run``). ``isolate``: with HELM's own runner, each
    checkpoint in a forked child process (:mod:`.checkpoint_process`); False: all in this
    process. ``log``: where progress lines go (default: none)."""
    from syntaxgym_helm.api.evaluate import api_options
    from syntaxgym_helm.api.helm_engine import local_path_of

    say = log or (lambda _line: None)
    run_options = api_options(options, option_values)
    label, sources = find_checkpoints(checkpoints, revisions, name)
    if isinstance(x_values, (str, Path)):  # as --x-values: a file of name,x or NAME=X pairs
        x_values = given_values(str(x_values))
    axis = training_axis([s.name for s in sources], x_unit, x_values)
    folder = Path(output_path) / "sweeps" / run_suite / label
    if pairs_per_paradigm is not None and pairs_per_paradigm < 1:
        raise ValueError(f"pairs_per_paradigm={pairs_per_paradigm} must be 1 or more (None: "
                         "every item)")
    planned = plan(sources, axis.values, folder / STATE_FILE)
    unstartable = check_architectures(planned)
    install_run_spec_hooks()
    entries = sweep_entries(suites, run_options)
    # The words in contexts are each scored, never sampled: their rows are the words' contexts.
    whole = sweep_entries(_word_suite(words, folder), run_options) if words is not None else []
    runner_cls = runner_class(runner)
    settings = RunSettings(label, entries, pairs_per_paradigm, runner_cls,
                           local_path_of(local_path), Path(output_path), run_suite, num_threads,
                           cache, isolate, whole)
    say(f"sweep of {label}: {len(planned)} checkpoints by {axis.unit} "
        f"({', '.join(c.name for c in planned)}), {len(entries) + len(whole)} run entries each")
    state = folder / STATE_FILE
    try:
        for index, checkpoint in enumerate(planned):
            _say_what_an_interrupt_leaves(planned, state)
            if checkpoint.name in unstartable:
                error = f"not started: {unstartable[checkpoint.name]}"
                planned[index] = replace(checkpoint, status="failed", error=error)
                say(f"[{index + 1}/{len(planned)}] {checkpoint.name}: {error}")
                continue
            planned[index] = run_checkpoint(checkpoint, settings, say,
                                            f"[{index + 1}/{len(planned)}]")
            save_state(state, label, axis.unit, planned)
        save_state(state, label, axis.unit, planned)
        interruption.leaves(f"every checkpoint is recorded in {state}; the sweep's outputs in "
                            f"{folder} may be incomplete: run the same command again to write "
                            "them")
        outputs = write_sweep_outputs(folder, label, axis.unit, planned, run_options,
                                      pairs_per_paradigm, words, plots)
    finally:
        interruption.leaves("")
    return SweepResult(label, axis.unit, tuple(planned), outputs)


def _say_what_an_interrupt_leaves(planned: Sequence[SweepCheckpoint], state: Path) -> None:
    """An interrupt between checkpoints (or during one) keeps what the state file records: its
    line says how much, and that the same command goes on from there."""
    done = sum(c.status == "done" for c in planned)
    interruption.leaves(f"{done} of {len(planned)} checkpoints finished, recorded in {state}; "
                        f"{interruption.AGAIN}")


def find_checkpoints(checkpoints: str | Path | Sequence[str | Path], revisions: str | None,
                     name: str | None) -> tuple[str, list[CheckpointSource]]:
    """The model's name and its checkpoints (see :func:`sweep`)."""
    given = [checkpoints] if isinstance(checkpoints, (str, Path)) else list(checkpoints)
    if not given:
        raise SweepError("no checkpoints given: a glob, a folder or a Hub repository")
    if revisions is not None:
        if len(given) != 1:
            raise SweepError("with revisions, give one Hub repository")
        repo = str(given[0])
        return _label(name or repo.rsplit("/", 1)[-1]), hub_checkpoints(repo, revisions)
    found: dict[str, CheckpointSource] = {}
    for where in given:
        for source in folder_checkpoints(str(where)):
            found.setdefault(source.folder or source.name, source)
    sources = list(found.values())
    names = [s.name for s in sources]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise SweepError(f"two checkpoints are named {', '.join(twice)} (in "
                         f"{', '.join(s.folder or '' for s in sources if s.name in twice)}): a "
                         "sweep is one training run; sweep each run on its own (same "
                         "run suite: their curves are drawn together)")
    folders = [Path(s.folder or "") for s in sources]
    holders = {folder.parent for folder in folders}  # a Trainer's output folder holds the others
    parents = {folder.parent.name for folder in folders if folder not in holders}
    default = parents.pop() if len(parents) == 1 else "model"
    return _label(name or default), sources


def _label(text: str) -> str:
    return re.sub(r"[^\w.-]+", "-", text).strip("-") or "model"


def plan(sources: Sequence[CheckpointSource], xs: Mapping[str, float], state: Path
         ) -> list[SweepCheckpoint]:
    """The checkpoints in training order, each with what a previous sweep recorded of it."""
    recorded = {c["name"]: c for c in read_state(state)}
    planned = []
    for source in sorted(sources, key=lambda s: (xs[s.name], s.name)):
        before = recorded.get(source.name)
        checkpoint = SweepCheckpoint(source.name, xs[source.name], source.folder, source.repo,
                                     source.revision, source.commit)
        if before is not None:
            _check_same_run(before, source, state)
            checkpoint = replace(checkpoint, **{k: v for k, v in before.items()
                                                if k in ("identity", "model", "status", "error",
                                                         "seconds", "peak_mb", "runs", "counts",
                                                         "word_surprisals")})
        planned.append(checkpoint)
    return planned


def _check_same_run(before: Mapping[str, Any], source: CheckpointSource, state: Path) -> None:
    """A :class:`SweepError` where the state file records a checkpoint of this name from another
    training run (another folder or repository, with other files): two runs whose checkpoint
    folders have one name (``run1/out/checkpoint-500``, ``run2/out/checkpoint-500``) swept
    under one label would take each other's runs for their own. A folder moved with its files
    unchanged is the same checkpoint."""
    from syntaxgym_helm.clients.checkpoint_identity import checkpoint_identity

    was = before.get("repo") or before.get("folder")
    now = source.repo or source.folder
    if not was or not now:
        return
    if before.get("repo") or source.repo:  # a Hub revision: its commit is checked when it runs
        other = (before.get("repo") or None) != source.repo
    elif Path(was).resolve() == Path(now).resolve():
        return
    else:
        try:
            other = checkpoint_identity(now) != before.get("identity")
        except Exception:  # noqa: BLE001 - unreadable here: not shown to be the same checkpoint
            other = True
    if other:
        raise SweepError(
            f"{state} records {source.name} from {was}, not {now}: another training run with "
            "checkpoints of the same names; give this sweep its own name (--name, or name= in "
            "Python) or another --output-path")


def check_architectures(planned: Sequence[SweepCheckpoint]) -> dict[str, str]:
    """Read each checkpoint's config; returns why each one that cannot be read cannot start (by
    name). Checkpoints of two architectures are a :class:`SweepError`."""
    from syntaxgym_helm.clients.model_kind import CheckpointError, inspect_checkpoint

    kinds: dict[str, list[str]] = {}
    unstartable = {}
    for checkpoint in planned:
        try:
            if checkpoint.folder is None:
                kind = _hub_architecture(checkpoint.source)
            else:
                found = inspect_checkpoint(checkpoint.folder)
                kind = found.model_type or ("gguf" if found.gguf_file else found.kind)
        except (CheckpointError, OSError, ValueError) as error:
            unstartable[checkpoint.name] = str(error)
            continue
        kinds.setdefault(kind, []).append(checkpoint.name)
    if len(kinds) > 1:
        raise SweepError("the checkpoints are of " + ", ".join(
            f"{kind} ({', '.join(names[:3])}{' ...' if len(names) > 3 else ''})"
            for kind, names in kinds.items())
            + ": a sweep is one model's training run; sweep each model on its own")
    return unstartable


def _hub_architecture(source: CheckpointSource) -> str:
    from huggingface_hub import hf_hub_download

    try:
        path = hf_hub_download(source.repo or "", "config.json",
                               revision=source.commit or source.revision)
    except Exception as error:  # noqa: BLE001 - offline, missing file: say which revision
        raise ValueError(f"{source.where}: its config.json cannot be read ({error})") from None
    return str(json.loads(Path(path).read_text(encoding="utf-8")).get("model_type", ""))


def _word_suite(words: str | Path | None, folder: Path) -> list[str]:
    """The words-in-contexts file as a suite file in the sweep's folder (written when it
    changed), to run beside the other suites."""
    if words is None:
        return []
    from syntaxgym_helm.core.suite import dumps_suite
    from syntaxgym_helm.core.word_contexts import read_word_contexts, word_suite

    text = dumps_suite(word_suite(read_word_contexts(words)))
    target = folder / "word_contexts.json"
    if not target.is_file() or target.read_text(encoding="utf-8") != text:
        write_atomically(target, text.encode())
    return [str(target.resolve())]


def run_checkpoint(checkpoint: SweepCheckpoint, settings: RunSettings,
                   say: Callable[[str], None], step: str) -> SweepCheckpoint:
    """Run the sweep's entries on one checkpoint (see the module doc); never raises for a
    checkpoint that fails, which is returned with status ``failed`` and the reason."""
    from syntaxgym_helm.api.model_resolution import resolve_model
    from syntaxgym_helm.clients.checkpoint_identity import checkpoint_identity

    started = time.perf_counter()
    try:
        source = local_folder(checkpoint.source)
        identity = checkpoint_identity(source.folder)
    except Exception as error:  # noqa: BLE001 - a download or read failure: this one only
        say(f"{step} {checkpoint.name}: failed to fetch: {error}")
        return replace(checkpoint, status="failed", error=f"could not fetch it: {error}")
    checkpoint = replace(checkpoint, folder=source.folder)
    if checkpoint.identity and checkpoint.identity != identity:
        say(f"{step} {checkpoint.name}: its files changed since it was swept: its runs again")
        remove_runs(settings.runs_folder, checkpoint.runs)
        checkpoint = replace(checkpoint, status="pending", runs=[], counts=[],
                             word_surprisals=None)
    checkpoint = replace(checkpoint, identity=identity)
    try:  # registering it reads its config, not its weights
        model = resolve_model(source.folder or "", name=_model_name(settings.label, checkpoint),
                              replace=True)  # the name is this checkpoint's, its files now
        specs = [*run_specs_for(settings.entries, model, settings.max_eval_instances),
                 *run_specs_for(settings.whole_entries, model, None)]
    except Exception as error:  # noqa: BLE001 - a checkpoint the plugin refuses: say why
        say(f"{step} {checkpoint.name}: refused: {error}")
        return replace(checkpoint, status="failed", error=str(error),
                       seconds=time.perf_counter() - started)
    runs = [spec.name for spec in specs]
    resampled = other_sample_runs(settings.runs_folder, specs)
    if resampled:
        say(f"{step} {checkpoint.name}: {len(resampled)} of its runs scored another number of "
            "items (pairs per paradigm): run again with this sweep's")
        remove_runs(settings.runs_folder, resampled)
    if (checkpoint.status == "done" and sorted(runs) == sorted(checkpoint.runs)
            and not resampled and runs_complete(settings.runs_folder, runs)):
        say(f"{step} {checkpoint.name}: done before (same files, same runs), not run again")
        return checkpoint
    say(f"{step} {checkpoint.name} (x={checkpoint.x:g}): {len(specs)} runs as {model}")
    failure, counts, surprisals, peak = run_checkpoint_specs(settings, specs, runs)
    seconds = time.perf_counter() - started
    say(f"{step} {checkpoint.name}: {'done' if failure is None else 'failed: ' + failure} in "
        f"{seconds:.1f} s" + (f", peak memory {peak:.0f} MB" if peak else ""))
    return replace(checkpoint, model=model, runs=runs, counts=counts_json(counts), peak_mb=peak,
                   word_surprisals=surprisals, seconds=checkpoint.seconds + seconds,
                   status="done" if failure is None else "failed", error=failure or "")


def _model_name(label: str, checkpoint: SweepCheckpoint) -> str:
    owner = checkpoint.repo if checkpoint.repo else label
    # HELM splits a model name at "/": a revision refs/pr/1 would be read as the model pr/1.
    return f"{owner}@{checkpoint.name.replace('/', '_')}"
