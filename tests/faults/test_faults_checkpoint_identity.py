"""A name made from a path never points at another checkpoint, a folder saved again is loaded
again, and ``model add`` never re-points a name in silence: the faults of issue 55 reproduced on
real checkpoints (``save_pretrained``'s folders), as a user meets them."""

from __future__ import annotations

import math
import shutil
from datetime import date
from pathlib import Path

import pytest

from fault_helpers import overwrite, save_tiny_checkpoint

SENTENCES = ["the keys to the cabinet are on the table .", "the key to the cabinet is ."]


def _figures(scores) -> list[tuple[float, ...]]:
    """Each sentence's token surprisals, exactly (NaN, a token counted for no region: 0.0)."""
    return [tuple(0.0 if math.isnan(s) else s for s in score.surprisals) for score in scores]


def _two_namesakes(tmp_path: Path) -> tuple[Path, Path]:
    """Two checkpoints in folders of the same name (as a Trainer's ``checkpoint-500``)."""
    first = save_tiny_checkpoint(tmp_path / "first" / "gptA")
    other = save_tiny_checkpoint(tmp_path / "other" / "gptA")
    overwrite(other / "model.safetensors", 4000, bytes(64))  # other weights, same layout
    return first, other


@pytest.mark.slow
@pytest.mark.limit(600)
def test_a_path_is_never_scored_as_a_deployed_namesake(tmp_path: Path) -> None:
    """The issue's case: with ``local/gptA`` deployed in prod_env/ from another folder named
    gptA, ``score_sentences(S, model=".../other/gptA")`` returned the first gptA's figures
    (139.59 bits instead of 160.47) and ``evaluate(...).model`` said ``local/gptA``, with no
    warning. Now the path gets a name of its own, with a warning that names both."""
    from syntaxgym_helm import evaluate, score_sentences
    from syntaxgym_helm.cli.main import main
    from syntaxgym_helm.clients.checkpoint_identity import identify

    first, other = _two_namesakes(tmp_path)
    prod_env = tmp_path / "prod_env"
    assert main(["model", "add", str(first), "--local-path", str(prod_env)]) == 0
    deployed = _figures(score_sentences(SENTENCES, "local/gptA", local_path=prod_env))
    own = _figures(score_sentences(SENTENCES, str(shutil.copytree(other, tmp_path / "gptB"))))
    assert own != deployed
    digest = identify(other).digest
    with pytest.warns(UserWarning, match=rf"local/gptA already names checkpoint "
                                         rf"{identify(first).digest} \({first}\); checkpoint "
                                         rf"{digest} \({other}\) is named local/gptA-{digest[:8]}"):
        scored = _figures(score_sentences(SENTENCES, str(other), local_path=prod_env))
    assert scored == own
    result = evaluate("sgh_agreement_pp", str(other), local_path=prod_env, max_items=1)
    assert (result.model, result.checkpoint) == (f"local/gptA-{digest[:8]}", digest)
    # The deployed one keeps its name and its checkpoint.
    assert evaluate("sgh_agreement_pp", str(first), local_path=prod_env,
                    max_items=1).model == "local/gptA"


@pytest.mark.slow
@pytest.mark.limit(600)
def test_a_folder_saved_again_in_the_same_process_is_loaded_again(tmp_path: Path) -> None:
    """The issue's case (train, save, score, in a notebook): a folder saved again was scored
    with the weights loaded first. Now it is scored as its files are, by its path and by a
    name deployed in YAML, and the model server of its earlier files is closed."""
    import torch
    from transformers import LlamaForCausalLM

    from syntaxgym_helm import score_sentences
    from syntaxgym_helm.cli.main import main
    from syntaxgym_helm.clients.checkpoint_identity import identify
    from syntaxgym_helm.clients.local.server import ModelServerFactory

    folder = save_tiny_checkpoint(tmp_path / "notebook" / "gptN")
    prod_env = tmp_path / "prod_env"
    assert main(["model", "add", str(folder), "--name", "lab/nb", "--local-path",
                 str(prod_env)]) == 0
    before = _figures(score_sentences(SENTENCES, str(folder)))
    assert _figures(score_sentences(SENTENCES, "lab/nb", local_path=prod_env)) == before
    first = identify(folder).digest
    model = LlamaForCausalLM.from_pretrained(folder)
    with torch.no_grad():  # a training step's worth of change
        for parameter in model.parameters():
            parameter.add_(0.05 * torch.randn_like(parameter))
    model.save_pretrained(folder)
    now = identify(folder).digest
    # Its name stood for the files scored first: the new files get a name of their own.
    with pytest.warns(UserWarning, match=rf"local/gptN already names checkpoint {first} "
                                         rf"\({folder}\); checkpoint {now} \({folder}\) is "
                                         rf"named local/gptN-{now[:8]}"):
        by_path = _figures(score_sentences(SENTENCES, str(folder)))
    by_name = _figures(score_sentences(SENTENCES, "lab/nb", local_path=prod_env))
    fresh = _figures(score_sentences(SENTENCES, str(shutil.copytree(folder,
                                                                    tmp_path / "gptFresh"))))
    assert by_path == by_name == fresh != before
    served = {key[0][1] for key in ModelServerFactory._servers if key[0][0] == str(folder)}
    assert served == {identify(folder).digest}  # the earlier files' servers closed


def test_model_add_never_repoints_a_name_in_silence(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture) -> None:
    """The issue's case: a second ``model add`` of another checkpoint with the same folder name
    re-pointed ``local/<name>`` to it without a word, and one leaderboard row then mixed two
    checkpoints. Now it is refused, naming both and the two ways on; ``--replace`` re-points."""
    import yaml

    from syntaxgym_helm.cli.main import main
    from syntaxgym_helm.clients.checkpoint_identity import identify

    first, other = _two_namesakes(tmp_path)
    prod_env = tmp_path / "prod_env"
    deployments = prod_env / "model_deployments.yaml"

    def deployed() -> str:
        (entry,) = yaml.safe_load(deployments.read_text())["model_deployments"]
        return entry["client_spec"]["args"]["pretrained_model_name_or_path"]

    assert main(["model", "add", str(first), "--local-path", str(prod_env)]) == 0
    assert main(["model", "add", str(first), "--local-path", str(prod_env)]) == 0  # the same
    capsys.readouterr()
    assert main(["model", "add", str(other), "--local-path", str(prod_env)]) == 2
    error = capsys.readouterr().err
    theirs, ours = identify(first).digest, identify(other).digest
    assert (f"local/gptA already deploys checkpoint {theirs} ({first}) in "
            f"{deployments}, not checkpoint {ours} ({other})") in error
    assert f"--name local/gptA-{ours[:8]}" in error and "--replace" in error
    assert deployed() == str(first)
    assert main(["model", "add", str(other), "--local-path", str(prod_env), "--replace"]) == 0
    assert f"local/gptA: re-pointed from checkpoint {theirs} ({first})" in capsys.readouterr().out
    assert deployed() == str(other)


def _helm_hf_deployment(folder: Path, name: str, checkpoint: Path) -> Path:
    """``folder`` with YAML deploying ``checkpoint`` as ``name`` on HELM's own HuggingFaceClient
    (the plugin's subclass, as configs/local_checkpoint/ does); returns ``folder``."""
    import yaml

    from syntaxgym_helm.clients.class_paths import HF_CLIENT, HF_TOKENIZER

    folder.mkdir(parents=True)
    files = {
        "model_deployments": {"model_deployments": [{
            "name": name, "model_name": name, "tokenizer_name": name,
            "max_sequence_length": 64,
            "client_spec": {"class_name": HF_CLIENT,
                            "args": {"pretrained_model_name_or_path": str(checkpoint),
                                     "apply_chat_template": False}}}]},
        "tokenizer_configs": {"tokenizer_configs": [{
            "name": name, "end_of_text_token": "<s>", "prefix_token": "<s>",
            "tokenizer_spec": {"class_name": HF_TOKENIZER,
                               "args": {"pretrained_model_name_or_path": str(checkpoint)}}}]},
        "model_metadata": {"models": [{
            "name": name, "display_name": name, "description": name,
            "creator_organization_name": "lab", "access": "open",
            "release_date": date(2024, 1, 1), "tags": ["TEXT_MODEL_TAG"]}]}}
    for file, data in files.items():
        (folder / f"{file}.yaml").write_text(yaml.safe_dump(data))
    return folder


@pytest.mark.slow
@pytest.mark.limit(600)
def test_helms_own_client_loads_a_folder_saved_again(tmp_path: Path) -> None:
    """HELM's HuggingFaceClient keeps one model per model name and one tokenizer per tokenizer
    name for the process: a folder saved again was scored with the first weights. Now the
    plugin's subclass sees the files change and has HELM load them again."""
    import torch
    from transformers import LlamaForCausalLM

    from syntaxgym_helm import score_sentences

    folder = save_tiny_checkpoint(tmp_path / "notebook" / "gptH")
    prod_env = _helm_hf_deployment(tmp_path / "prod_env", "lab/hf", folder)
    before = _figures(score_sentences(SENTENCES, "lab/hf", local_path=prod_env))
    model = LlamaForCausalLM.from_pretrained(folder)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(0.05 * torch.randn_like(parameter))
    model.save_pretrained(folder)
    after = _figures(score_sentences(SENTENCES, "lab/hf", local_path=prod_env))
    fresh_env = _helm_hf_deployment(tmp_path / "fresh_env", "lab/hf-fresh",
                                    shutil.copytree(folder, tmp_path / "fresh" / "gptH"))
    fresh = _figures(score_sentences(SENTENCES, "lab/hf-fresh", local_path=fresh_env))
    assert after == fresh != before


@pytest.mark.slow
@pytest.mark.limit(600)
def test_leaderboard_config_warns_where_a_models_row_would_mix_checkpoints(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A folder saved again between two runs into one run suite: the report gives each
    checkpoint a column, but HELM's leaderboard has one row per model name, which averaged them
    in silence. ``leaderboard config`` now names the model and both checkpoints."""
    from fault_helpers import BIN, private_env
    from script_processes import run_script
    from syntaxgym_helm.cli.main import main
    from syntaxgym_helm.clients.checkpoint_identity import identify
    from syntaxgym_helm.harness.leaderboard import write_config

    folder = save_tiny_checkpoint(tmp_path / "ck" / "gptA")
    prod_env, output = tmp_path / "prod_env", tmp_path / "benchmark_output"
    assert main(["model", "add", str(folder), "--local-path", str(prod_env)]) == 0
    env = private_env(tmp_path / "cache")
    digests = []
    for suite in ("number_prep", "mvrr"):
        digests.append(identify(folder).digest)
        done = run_script([str(BIN / "helm-run"), "--run-entries",
                           f"syntaxgym:suite={suite},model=local/gptA", "--suite", "s",
                           "--max-eval-instances", "2", "-o", str(output), "--local-path",
                           str(prod_env)], cwd=tmp_path, env=env, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        overwrite(folder / "model.safetensors", 4000, bytes(64))  # saved again, other weights
    written = write_config(output, "s", local_path=prod_env)
    assert written.mixed == {"local/gptA": tuple(sorted(digests))} and len(set(digests)) == 2
    (warning,) = written.warnings()
    assert warning.startswith("the runs of local/gptA scored 2 checkpoints ("), warning
    assert main(["leaderboard", "config", str(output), "--suite", "s", "--local-path",
                 str(prod_env)]) == 0
    assert f"warning: {warning}\n" in capsys.readouterr().err
