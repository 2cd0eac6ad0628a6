"""A Ray actor given the driver's parsed HELM configs (``ray: {configs: driver}``, the default)
holds the registries it would have made by reading HELM's YAML and ``--local-path``'s itself, as
``helm-run`` does, plugins included: tested in fresh processes, as actors start."""

from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from syntaxgym_helm.helm_compat import registry_snapshot

#: Run in a fresh process: set HELM's registries up one way (argv[1]: "files" or a pickled
#: snapshot), then print them pickled, as (name, object) pairs per registry.
ACTOR = textwrap.dedent("""
    import pickle, sys
    from helm.benchmark.config_registry import (
        register_builtin_configs_from_helm_package, register_configs_from_directory)
    from helm.benchmark.run import load_entry_point_plugins
    from syntaxgym_helm.helm_compat import _REGISTRIES, registry_snapshot, restore_registries

    how, local_path, out = sys.argv[1:]
    if how == "files":
        register_builtin_configs_from_helm_package()
        register_configs_from_directory(local_path)
        load_entry_point_plugins()
    else:
        load_entry_point_plugins()
        with open(how, "rb") as stream:
            restore_registries(pickle.load(stream))
    with open(out, "wb") as stream:
        pickle.dump(registry_snapshot(), stream)
""")


def _actor(how: str, local_path: Path, out: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", ACTOR, how, str(local_path), str(out)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return pickle.loads(out.read_bytes())


#: ``--local-path``'s configs, as ``syntaxgym-helm model add`` writes them for a checkpoint.
LOCAL = {
    "model_metadata.yaml": """
        models:
          - name: local/tiny
            display_name: tiny
            description: a checkpoint
            creator_organization_name: local
            access: open
            release_date: 2026-11-29
            tags: [TEXT_MODEL_TAG, FULL_FUNCTIONALITY_TEXT_MODEL_TAG]
        """,
    "tokenizer_configs.yaml": """
        tokenizer_configs:
          - name: local/tiny
            tokenizer_spec:
              class_name: helm.tokenizers.huggingface_tokenizer.HuggingFaceTokenizer
              args: {pretrained_model_name_or_path: /checkpoints/tiny}
            end_of_text_token: "</s>"
            prefix_token: "<s>"
        """,
    "model_deployments.yaml": """
        model_deployments:
          - name: local/tiny
            model_name: local/tiny
            tokenizer_name: local/tiny
            max_sequence_length: 2048
            client_spec:
              class_name: helm.clients.huggingface_client.HuggingFaceClient
              args: {pretrained_model_name_or_path: /checkpoints/tiny}
        """,
}


@pytest.mark.slow
def test_an_actor_given_the_drivers_configs_holds_what_reading_the_yaml_gives(
        tmp_path: Path) -> None:
    local_path = tmp_path / "prod_env"
    local_path.mkdir()
    for name, text in LOCAL.items():
        (local_path / name).write_text(textwrap.dedent(text), encoding="utf-8")
    # The driver: helm-run's set-up, in a process of its own.
    driver = _actor("files", local_path, tmp_path / "driver.pickle")
    snapshot = tmp_path / "snapshot.pickle"
    snapshot.write_bytes(pickle.dumps(driver))
    given = _actor(str(snapshot), local_path, tmp_path / "given.pickle")
    for module, (every, by_name) in driver.items():
        assert given[module][1] == by_name, module  # every name, and what it names
        assert len(given[module][0]) == len(every), module  # the plugin's registered once
        assert given[module][0] == every, module
    deployments = driver["helm.benchmark.model_deployment_registry"][1]
    assert "local/tiny" in deployments and "huggingface/gpt2" in deployments
    assert any(name.startswith("syntaxgym/") for name in deployments)  # the embedded models
    # This process's own registries are a snapshot a driver would send.
    assert set(registry_snapshot()) == set(driver)
