"""Cache keys name the checkpoint: a model name pointed at other weights is never answered from
the first weights' entries (HELM's keys name the model only)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest
import yaml

from fault_helpers import BIN, overwrite, private_env, save_tiny_checkpoint
from script_processes import run_script
from syntaxgym_helm.clients.checkpoint_identity import checkpoint_identity, identify


def test_the_identity_follows_the_files_not_the_name(tmp_path: Path) -> None:
    gguf = tmp_path / "a" / "model.gguf"
    gguf.parent.mkdir()
    gguf.write_bytes(bytes(range(256)) * 8192)  # 2 MiB
    first = checkpoint_identity(str(gguf.parent), "model.gguf")
    assert first == checkpoint_identity(str(gguf.parent), "model.gguf")  # stable
    copy = tmp_path / "b" / "model.gguf"
    copy.parent.mkdir()
    shutil.copy2(gguf, copy)
    # What the files hold, not where they are: a copy is the same checkpoint (its answers too).
    assert checkpoint_identity(str(copy.parent), "model.gguf") == first
    stat = gguf.stat()
    overwrite(gguf, 1 << 20, b"other weights")  # past the first MiB, same size and times
    os.utime(gguf, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert checkpoint_identity(str(gguf.parent), "model.gguf") != first
    # A hub name that neither the Hub nor the local cache knows: its name and revision.
    assert checkpoint_identity("org/model") == checkpoint_identity("org/model")
    assert checkpoint_identity("org/model", revision="v2") != checkpoint_identity("org/model")


def test_a_folder_checkpoint_is_named_by_its_weights_and_tokenizer(tmp_path: Path) -> None:
    folder = save_tiny_checkpoint(tmp_path / "tiny")
    first = checkpoint_identity(str(folder))
    (folder / "README.md").write_text("notes about the model")  # says nothing about weights
    assert checkpoint_identity(str(folder)) == first
    overwrite(folder / "model.safetensors", 2000, b"\x01\x02\x03\x04")
    assert checkpoint_identity(str(folder)) != first


def test_two_deployments_of_one_name_on_two_checkpoints_have_different_keys(tmp_path: Path) -> None:
    from helm.common.cache import BlackHoleCacheConfig
    from helm.common.request import Request

    from syntaxgym_helm.clients.local.client import SyntaxGymClient

    first = save_tiny_checkpoint(tmp_path / "first")
    second = save_tiny_checkpoint(tmp_path / "second")
    overwrite(second / "model.safetensors", 4000, bytes(64))  # other weights, same layout
    request = Request(model="mylab/model", model_deployment="mylab/model", prompt="the keys",
                      echo_prompt=True, max_tokens=0)
    keys = [SyntaxGymClient(BlackHoleCacheConfig(), str(folder), progress=False,
                            model_name="mylab/model")._cache_key(request)
            for folder in (first, first, second)]
    assert keys[0] == keys[1] and keys[0] != keys[2]


#: ``python -c`` code that runs helm-run (its arguments after the report path) and writes the
#: names of the modules imported by then into the report (a JSON list) when the process exits.
_LIST_MODULES_AT_EXIT = """
import atexit, json, sys
report = sys.argv.pop(1)
atexit.register(lambda: open(report, "w").write(json.dumps(sorted(sys.modules))))
sys.argv[0] = "helm-run"
from helm.benchmark.run import main
sys.exit(main())
"""


def _prod_env(folder: Path, checkpoint: Path) -> None:
    """A local deployment ``mylab/tiny`` of ``checkpoint`` (the local-checkpoint example)."""
    folder.mkdir(parents=True, exist_ok=True)
    deployments = {"model_deployments": [{
        "name": "mylab/tiny", "model_name": "mylab/tiny", "tokenizer_name": "mylab/tiny",
        "max_sequence_length": 64,
        "window_service_spec": {"class_name": "helm.benchmark.window_services."
                                              "no_tokenizer_window_service.NoTokenizerWindowService"},
        "client_spec": {"class_name": "syntaxgym_helm.clients.local.client.SyntaxGymClient",
                        "args": {"pretrained_model_name_or_path": str(checkpoint),
                                 "bos_text": "<s>", "device": "cpu"}}}]}
    tokenizers = {"tokenizer_configs": [{
        "name": "mylab/tiny", "end_of_text_token": "<s>", "prefix_token": "<s>",
        "tokenizer_spec": {"class_name": "syntaxgym_helm.clients.huggingface."
                                         "CheckedHuggingFaceTokenizer",
                           "args": {"pretrained_model_name_or_path": str(checkpoint)}}}]}
    metadata = {"models": [{"name": "mylab/tiny", "display_name": "tiny", "description": "tiny",
                            "creator_organization_name": "mylab", "access": "open",
                            "release_date": date(2024, 1, 1), "tags": ["TEXT_MODEL_TAG"]}]}
    for name, data in (("model_deployments", deployments), ("tokenizer_configs", tokenizers),
                       ("model_metadata", metadata)):
        (folder / f"{name}.yaml").write_text(yaml.safe_dump(data))


@pytest.mark.slow
@pytest.mark.limit(1500)
def test_helm_run_repointed_at_another_checkpoint_computes_again(tmp_path: Path) -> None:
    """The issue's case: a local deployment pointed at another checkpoint under the same model
    name reused the first one's cached scores (12 queries, 0 computes)."""
    first = save_tiny_checkpoint(tmp_path / "first")
    second = save_tiny_checkpoint(tmp_path / "second")
    overwrite(second / "model.safetensors", 4000, bytes(64))  # other weights, same layout
    command = [str(BIN / "helm-run"), "--run-entries",
               "syntaxgym:suite=number_prep,model=mylab/tiny", "--suite", "keys",
               "--max-eval-instances", "3"]
    env = private_env(tmp_path / "cache")
    listed = tmp_path / "modules.json"
    logs = []
    for index, checkpoint in enumerate((first, first, second)):
        _prod_env(tmp_path / "prod_env", checkpoint)
        if index == 1:
            # The run answered from the cache, in an interpreter of its own (not forked from one
            # that has torch already), which lists at exit the modules it has imported.
            done = subprocess.run([sys.executable, "-c", _LIST_MODULES_AT_EXIT, str(listed),
                                   *command[1:]], cwd=tmp_path, capture_output=True,
                                  text=True, timeout=900, env=env)
        else:
            done = run_script(command, cwd=tmp_path, env=env, timeout=900)
        assert done.returncode == 0, done.stderr[-3000:]
        logs.append(done.stdout + done.stderr)
    assert "12 queries, 12 computes" in logs[0]
    assert "12 queries, 0 computes" in logs[1]  # the same checkpoint: from the cache
    assert "12 queries, 12 computes" in logs[2]  # another checkpoint: computed again
    # Nothing to compute, no model to load: torch, transformers and the engine stay unimported.
    imported = set(json.loads(listed.read_text()))
    assert "syntaxgym_helm.clients.local.client" in imported
    assert not {"torch", "transformers", "syntaxgym_helm.clients.local.model_loading"} & imported
    (run,) = (tmp_path / "benchmark_output" / "runs" / "keys").glob("syntaxgym:*")
    assert json.loads((run / "stats.json").read_text())
    # The run keeps what it scored: the identity of the second checkpoint's files.
    kept = json.loads((run / "syntaxgym_scored_items.json").read_text())["run"]["checkpoint"]
    assert (kept["digest"], kept["source"]) == (identify(second).digest, str(second))
    assert kept["files"]["model.safetensors"] == dict(identify(second).files)["model.safetensors"]
