"""What a sweep runs at each checkpoint, as ``helm-run`` would: run entries made into HELM run specs
by HELM's own ``run_entries_to_run_specs`` (the ``model=`` expander names the checkpoint; the
``syntaxgym`` run spec function, ``prefix=auto`` resolved for the model), run by a HELM
``Runner`` class (HELM's own by default, or any class with its constructor, as
``helm-run --runner-class-name``).

What to run (:func:`sweep_entries`): suite names (as ``syntaxgym:suite=``), data set names
(``blimp``, ``clams``, ...: every suite of the data set), suite files, and run-entry files
(``.conf``, as ``helm-run --conf-paths``; their entries are run as written, their ``model=``
replaced by the checkpoint's). ``pairs_per_paradigm`` is HELM's ``--max-eval-instances``: a
run of more items scores a sample of them drawn with HELM's fixed seed (0), the same items at
every checkpoint (the instances are the same, so the draw is).

How (:func:`run_checkpoint_specs`): one runner for all of a checkpoint's run specs, in a child
process forked for the checkpoint (:mod:`.checkpoint_process`) or in this one, and what the
runs scored read back from their folders.
"""

from __future__ import annotations

import contextlib
import gc
import io
import resource
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from syntaxgym_helm.api.sweep_state import read_counts, runs_complete
from syntaxgym_helm.core.minimal_pairs.catalogue import DATASETS
from syntaxgym_helm.core.options import changed_fields
from syntaxgym_helm.core.run_options import RunOptions

#: ``runner=`` names HELM's own Runner so.
DEFAULT_RUNNER = "helm"


def install_run_spec_hooks() -> None:
    """What ``helm-run`` has once the plugin is loaded: the ``syntaxgym`` run spec function, the
    plugin's ``model=`` expander, the run hooks (embedded models, prefetch)."""
    from syntaxgym_helm.harness.run_spec import (
        SyntaxGymModelRunExpander,
        register_run_spec_function,
    )
    from syntaxgym_helm.helm_compat import install_model_run_expander

    register_run_spec_function()
    install_model_run_expander(SyntaxGymModelRunExpander)


def sweep_entries(suites: Sequence[str | Path], options: RunOptions) -> list[Any]:
    """HELM ``RunEntry`` objects for ``suites`` (see the module doc); ``options`` go into the
    entries made from suite and data set names (a run-entry file's entries keep their own)."""
    from helm.benchmark.presentation.run_entry import RunEntry, read_run_entries

    from syntaxgym_helm.core.registry import check_suite_name

    arguments = "".join(f",{name}={_text(value)}"
                        for name, value in changed_fields(options).items())
    entries: list[RunEntry] = []
    for suite in suites:
        text = str(suite)
        if text.endswith(".conf"):
            if not Path(text).is_file():
                raise FileNotFoundError(f"{text}: no such run-entry file")
            entries += read_run_entries([text]).entries
            continue
        if text not in DATASETS:
            check_suite_name(text)  # a misspelt name stops the sweep here, not at each checkpoint
        names = sorted(DATASETS[text].by_suite()) if text in DATASETS else [text]
        entries += [RunEntry(description=f"syntaxgym:suite={name}{arguments}", priority=1,
                             groups=None) for name in names]
    if not entries:
        raise ValueError("nothing to run: give suites, data sets or a run-entry file")
    return entries


def _text(value: Any) -> str:
    text = str(value)
    if any(mark in text for mark in ",=:"):
        raise ValueError(f"the run option value {text!r} contains , = or :, which a run entry "
                         "cannot hold; use a path without them")
    return text


def run_specs_for(entries: Sequence[Any], model: str, max_eval_instances: int | None
                  ) -> list[Any]:
    """The run specs of ``entries`` for ``model`` (as ``helm-run --models-to-run MODEL
    --max-eval-instances N``)."""
    from helm.benchmark.run import run_entries_to_run_specs

    return run_entries_to_run_specs(list(entries), max_eval_instances=max_eval_instances,
                                    models_to_run=[model])


def runner_class(runner: str | type | None) -> type:
    """The HELM Runner class ``runner`` names: ``helm`` or None (HELM's own), a class, or what
    :func:`syntaxgym_helm.runners.runner_class` takes (``default``, ``ray``, ``multi_gpu``,
    ``slurm``, or a Runner's class path)."""
    from syntaxgym_helm.runners import runner_class as named_runner

    if isinstance(runner, type):
        return runner
    return named_runner("default" if runner in (None, DEFAULT_RUNNER) else runner)


def make_runner(cls: type, local_path: Path, output_path: Path, run_suite: str,
                num_threads: int, cache: bool, options: Mapping[str, Any] | None = None) -> Any:
    """A runner of ``cls`` as ``helm-run`` makes one (its request cache in
    ``local_path/cache``, as ``helm-run``'s; completed runs skipped, a failed run not ending the
    others)."""
    from helm.benchmark.executor import ExecutionSpec
    from helm.common.authentication import Authentication
    from helm.common.cache_backend_config import SqliteCacheBackendConfig

    cache_config = None
    if cache:
        (local_path / "cache").mkdir(parents=True, exist_ok=True)
        cache_config = SqliteCacheBackendConfig(str(local_path / "cache"))
    execution = ExecutionSpec(url=None, auth=Authentication(""), local_path=str(local_path),
                              parallelism=num_threads, dry_run=False,
                              sqlite_cache_backend_config=cache_config)
    # HELM prints where it looks for credentials.conf: not what a sweep's user asked to see.
    with contextlib.redirect_stdout(io.StringIO()):
        return cls(execution, str(output_path), run_suite, skip_instances=False,
                   cache_instances=False, cache_instances_only=False, skip_completed_runs=True,
                   exit_on_error=False, **(options or {}))


@dataclass(frozen=True)
class RunSettings:
    """What every checkpoint of a sweep is run with."""

    label: str
    entries: list[Any]
    max_eval_instances: int | None
    runner: type
    local_path: Path
    output_path: Path
    run_suite: str
    num_threads: int
    cache: bool
    isolate: bool = True
    #: Entries run on every item whatever ``max_eval_instances`` (the words in contexts).
    whole_entries: list[Any] = field(default_factory=list)

    @property
    def runs_folder(self) -> Path:
        return self.output_path / "runs" / self.run_suite


def run_checkpoint_specs(settings: RunSettings, specs: list[Any], runs: list[str]
                         ) -> tuple[str | None, list[Any], list[float] | None, float | None]:
    """Run ``specs`` with a fresh runner and read what they scored (what failed, each suite's
    counts, the word surprisals, the child's peak memory in MB): in a child process where the
    sweep isolates its checkpoints (so the parent parses no run files, which would grow the
    heap later children start from), else here, the model released after."""
    from helm.benchmark.runner import Runner

    from syntaxgym_helm.api.checkpoint_process import CAN_FORK, ChildFailed, run_in_child

    if settings.isolate and CAN_FORK and settings.runner is Runner:
        try:
            return run_in_child(lambda: (*_run_and_read(settings, specs, runs),
                                         resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))
        except ChildFailed as error:
            return (str(error), *read_counts(settings.runs_folder, runs), None)
    try:
        return (*_run_and_read(settings, specs, runs), None)
    finally:
        release_models()


def _run_and_read(settings: RunSettings, specs: list[Any], runs: list[str]
                  ) -> tuple[str | None, list[Any], list[float] | None]:
    from helm.benchmark.runner import RunnerError

    runner = make_runner(settings.runner, settings.local_path, settings.output_path,
                         settings.run_suite, settings.num_threads, settings.cache)
    try:
        runner.run_all(specs)
        failure = None
    except RunnerError as error:
        failure = _load_failure() or str(error)
    del runner
    incomplete = failure is None and not runs_complete(settings.runs_folder, runs)
    return ("some runs did not finish" if incomplete else failure,
            *read_counts(settings.runs_folder, runs))


def _load_failure() -> str | None:
    """Why the last model could not be loaded, where that is why its runs failed."""
    server = sys.modules.get("syntaxgym_helm.clients.local.server")
    return server.ModelServerFactory.setup_failure() if server is not None else None


def release_models() -> None:
    """Free every model the plugin's clients loaded in this process (the next request loads
    again): a model holds reference cycles, which only the collector frees."""
    server = sys.modules.get("syntaxgym_helm.clients.local.server")
    if server is not None:
        server.ModelServerFactory.release()
    else:  # no local engine ran: a masked or encoder-decoder LM's client went with the runner
        from syntaxgym_helm.clients.local.freed_memory import trim_heaps

        gc.collect()  # the model's reference cycles
        trim_heaps()
