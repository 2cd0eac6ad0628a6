"""The Ray runner's parts that need no cluster: runner names, ``runner_config.yaml``'s ``ray:``
section, what an actor asks for, run folders moved into place whole, the package without Ray,
and a dead cluster address (a clear error in seconds, not Ray's minutes of retries)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from syntaxgym_helm.runners import RayRunner, RunnerNameError, run_folders, runner_class
from syntaxgym_helm.runners.settings import (
    MEMORY_FLOOR_BYTES,
    RaySettingsError,
    actor_resources,
    checkpoint_parameters,
    read_settings,
)


def test_runner_names_and_class_paths() -> None:
    from helm.benchmark.multi_gpu_runner import MultiGPURunner
    from helm.benchmark.runner import Runner

    assert runner_class() is Runner and runner_class("default") is Runner
    assert runner_class("ray") is RayRunner
    assert runner_class("syntaxgym_helm.runners.RayRunner") is RayRunner
    assert runner_class("multi_gpu") is MultiGPURunner
    with pytest.raises(RunnerNameError, match="'dask' is not one of default, ray"):
        runner_class("dask")
    with pytest.raises(RunnerNameError, match="is not a HELM Runner"):
        runner_class("pathlib.Path")
    with pytest.raises(RunnerNameError, match="cannot import no.such.Runner"):
        runner_class("no.such.Runner")


def test_the_package_imports_without_ray_and_says_how_to_get_it() -> None:
    code = ("import sys; sys.modules['ray'] = None\n"
            "from syntaxgym_helm.runners import RayRunner, runner_class\n"
            "from syntaxgym_helm.runners.ray_cluster import RayClusterError, import_ray\n"
            "assert runner_class('ray') is RayRunner\n"
            "try:\n    import_ray()\nexcept RayClusterError as error:\n    print(error)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "pip install 'syntaxgym-helm[ray]'" in done.stdout


def _config(tmp_path: Path, text: str) -> Path:
    (tmp_path / "runner_config.yaml").write_text(text, encoding="utf-8")
    return tmp_path


def test_runner_config_ray_section(tmp_path: Path) -> None:
    assert read_settings(str(tmp_path)).max_attempts == 2  # no file: the defaults
    settings = read_settings(str(_config(tmp_path, (
        "helm_max_concurrent_workers: 2\n"  # HELM's own keys stay HELM's
        "ray:\n  address: 10.0.0.1:6379\n  replicas: 2\n  num_cpus: '3'\n"
        "  models:\n    org/big: {memory_gb: 40, num_gpus: 1}\n"))))
    assert (settings.address, settings.replicas, settings.num_cpus) == ("10.0.0.1:6379", 2, 3.0)
    big = settings.for_model("org/big", None)
    assert (big.memory_gb, big.num_gpus, big.replicas, big.num_cpus) == (40, 1, 2, 3.0)
    resources = actor_resources(settings, "org/big", [{"CPU": 8, "GPU": 1, "memory": 2**36}])
    assert resources.ray_options() == {"num_cpus": 3.0, "num_gpus": 1, "memory": 40 * 2**30}


@pytest.mark.parametrize(("text", "message"), [
    ("ray:\n  max_attempts: 0\n", r"runner_config.yaml, ray: max_attempts=0 is too small"),
    ("ray:\n  num_cpus: many\n", r"runner_config.yaml, ray: num_cpus='many' is not a number"),
    ("ray:\n  shared_output: maybe\n", r"shared_output='maybe' is not one of auto or true or"),
    ("ray:\n  adress: x:1\n", r"ray: unknown argument adress; the options are: num_cpus"),
    ("ray:\n  models:\n    m: {cpus: 2}\n", r"models.m: unknown argument cpus"),
    ("ray: [1, 2]\n", r"runner_config.yaml: ray: is \[1, 2\], not a mapping"),
    ("ray: {\n", r"runner_config.yaml: not valid YAML"),
])
def test_a_bad_ray_setting_names_the_file_and_key(tmp_path: Path, text: str,
                                                  message: str) -> None:
    with pytest.raises(RaySettingsError, match=message):
        read_settings(str(_config(tmp_path, text)))


def test_actor_resources_by_default_one_actor_a_node_memory_from_the_model_size() -> None:
    from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M
    from syntaxgym_helm.clients.registration import install_run_hooks
    from syntaxgym_helm.runners.settings import RaySettings

    install_run_hooks()
    name = SMOLLM2_135M.syntaxgym_name
    cpu_nodes = [{"CPU": 16, "memory": 2**35}, {"CPU": 4, "memory": 2**34}]
    on_cpus = actor_resources(RaySettings(), name, cpu_nodes)
    assert (on_cpus.num_cpus, on_cpus.num_gpus, on_cpus.replicas) == (4, 0, 1)
    assert on_cpus.memory_bytes == MEMORY_FLOOR_BYTES + 2 * 4 * 135_000_000
    on_gpus = actor_resources(RaySettings(), name, [{"CPU": 32, "GPU": 8}])
    assert (on_gpus.num_cpus, on_gpus.num_gpus) == (4, 1)


def test_checkpoint_parameters_are_read_from_safetensors_headers(tmp_path: Path) -> None:
    import torch
    from safetensors.torch import save_file

    save_file({"a": torch.zeros(3, 5, dtype=torch.bfloat16), "b": torch.zeros(7)},
              str(tmp_path / "model.safetensors"))
    assert checkpoint_parameters(tmp_path) == 22
    (tmp_path / "model.safetensors").unlink()
    (tmp_path / "pytorch_model.bin").write_bytes(bytes(400))
    assert checkpoint_parameters(tmp_path) == 100  # its bytes read as fp32


def test_a_run_moves_into_place_whole_replacing_the_previous_one(tmp_path: Path) -> None:
    target = tmp_path / "runs" / "s" / "run"
    target.mkdir(parents=True)
    (target / "stats.json").write_text("old")
    stage = run_folders.new_stage(tmp_path / "staging")
    files = {name: name.encode() for name in (*run_folders.COMPLETED_FILES, "sub/x.json")}
    run_folders.unpack(files, stage / "run")
    run_folders.move_into_place(stage / "run", target)
    assert run_folders.is_complete(target) and run_folders.pack(target) == files
    assert sorted(p.name for p in target.parent.iterdir()) == ["run"]  # the old one removed
    with pytest.raises(ValueError, match="outside its run folder"):
        run_folders.unpack({"../escape.json": b""}, stage / "other")


def test_a_dead_cluster_address_is_a_clear_error_within_seconds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from helm.benchmark.executor import ExecutionSpec
    from helm.common.authentication import Authentication

    from syntaxgym_helm.core.run_options import RunOptions
    from syntaxgym_helm.harness.run_spec import run_spec_of
    from syntaxgym_helm.runners.ray_cluster import RayClusterError

    pytest.importorskip("ray", reason="Ray is the [ray] extra")
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{port}")
    runner = RayRunner(ExecutionSpec(url=None, auth=Authentication(""),
                                     local_path=str(tmp_path / "prod_env"), parallelism=1),
                       str(tmp_path / "out"), "s", False, False, False, False, False)
    started = time.monotonic()
    with pytest.raises(RayClusterError, match=rf"no Ray cluster at 127.0.0.1:{port} "
                                              r"\(\$RAY_ADDRESS\).*ray start --head"):
        runner.run_all([run_spec_of("sgh_agreement_pp", RunOptions())])
    assert time.monotonic() - started < 10


def test_a_wrong_runner_name_is_an_error_before_any_work(
        capsys: pytest.CaptureFixture[str]) -> None:
    from syntaxgym_helm import evaluate
    from syntaxgym_helm.cli.main import main

    with pytest.raises(RunnerNameError, match="'dask' is not one of"):
        evaluate("sgh_agreement_pp", "no/such-model", runner="dask")
    with pytest.raises(ValueError, match="MultiGPURunner runs helm-run's run specs"):
        evaluate("sgh_agreement_pp", "syntaxgym/smollm2-135m-instruct-q4_1", max_items=0,
                 runner="multi_gpu")
    assert main(["evaluate", "sgh_agreement_pp", "--model", "no/such-model",
                 "--runner", "dask"]) == 2
    assert "syntaxgym-helm evaluate: runner 'dask' is not one of" in capsys.readouterr().err
