"""What a sweep runs at each checkpoint: run entries from suite names, data set names and
run-entry files, and the HELM Runner class it runs them with."""

from __future__ import annotations

from pathlib import Path

import pytest

from syntaxgym_helm.api.sweep_specs import make_runner, runner_class, sweep_entries
from syntaxgym_helm.core.minimal_pairs.catalogue import DATASETS
from syntaxgym_helm.core.run_options import RunOptions


def test_entries_from_names_data_sets_and_run_entry_files(tmp_path: Path) -> None:
    conf = tmp_path / "mine.conf"
    conf.write_text('entries: [\n  {description: "syntaxgym:suite=number_prep,prefix=none,'
                    'model=text", priority: 1}\n]\n')
    entries = sweep_entries(["sgh_agreement_pp", "blimp", str(conf)], RunOptions(ties="pass"))
    descriptions = [entry.description for entry in entries]
    blimp = sorted(DATASETS["blimp"].by_suite())
    assert descriptions[0] == "syntaxgym:suite=sgh_agreement_pp,ties=pass"
    assert descriptions[1:1 + len(blimp)] == [f"syntaxgym:suite={s},ties=pass" for s in blimp]
    assert descriptions[-1] == "syntaxgym:suite=number_prep,prefix=none,model=text"  # as written
    assert len(descriptions) == 2 + len(blimp)


def test_entries_that_cannot_be_written_are_refused() -> None:
    with pytest.raises(FileNotFoundError, match="no such run-entry file"):
        sweep_entries(["missing.conf"], RunOptions())
    with pytest.raises(ValueError, match="contains , = or :"):
        sweep_entries(["number_prep"], RunOptions(context="/a,b.txt"))
    with pytest.raises(ValueError, match="nothing to run"):
        sweep_entries([], RunOptions())


def test_the_runner_is_helm_s_by_default_or_any_runner_class(tmp_path: Path) -> None:
    from helm.benchmark.runner import Runner

    assert runner_class(None) is Runner and runner_class("helm") is Runner
    assert runner_class("helm.benchmark.runner.Runner") is Runner

    class Mine(Runner):
        pass

    assert runner_class(Mine) is Mine
    with pytest.raises(ValueError, match="cannot import helm.benchmark.no_such.Runner"):
        runner_class("helm.benchmark.no_such.Runner")
    # The short names docs/scaling.md gives (sweep refused "ray": "no such class").
    from syntaxgym_helm.runners import RayRunner

    assert runner_class("ray") is RayRunner and runner_class("default") is Runner
    with pytest.raises(ValueError, match="'dask' is not one of default, ray, multi_gpu, slurm"):
        runner_class("dask")
    runner = make_runner(Mine, tmp_path / "prod_env", tmp_path / "out", "sweep", 2, cache=True)
    assert isinstance(runner, Mine) and runner.skip_completed_runs and not runner.exit_on_error
    assert (tmp_path / "prod_env" / "cache").is_dir()
    assert runner.runs_path == str(tmp_path / "out" / "runs" / "sweep")
