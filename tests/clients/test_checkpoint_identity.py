"""A checkpoint is what its files hold: its identity is a digest of its files' bytes (kept per
version of a file, so a later run reads no weights), a Hub id is pinned to the commit its revision
resolves to, a masked LM folder saved again is scored as a fresh process scores it, and a
tokenizer that cannot read the model's text is refused.

Every checkpoint here is a real one written by ``save_pretrained`` (:mod:`tiny_checkpoints`,
``fault_helpers.save_tiny_checkpoint``); the Hub is a local cache laid out as huggingface_hub
lays it out (``models--ORG--NAME/refs``, ``snapshots/COMMIT``), read offline.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tiny_checkpoints import build_checkpoint

transformers = pytest.importorskip("transformers")

from syntaxgym_helm.api.evaluate import score_sentences  # noqa: E402
from syntaxgym_helm.cli.main import main  # noqa: E402
from syntaxgym_helm.clients import content_digest  # noqa: E402
from syntaxgym_helm.clients.checkpoint_identity import (  # noqa: E402
    CheckpointWatch,
    files_digest,
    identify,
)
from syntaxgym_helm.clients.model_kind import CheckpointError  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SENTENCES = ["The keys to the cabinet are on the table.", "No student has ever passed that exam."]


def _figures(scores) -> list[tuple[float, ...]]:
    """Each sentence's token surprisals, exactly (NaN, a token counted for no region: 0.0)."""
    return [tuple(0.0 if math.isnan(s) else s for s in score.surprisals) for score in scores]


def test_a_folder_is_named_by_the_sha256_of_each_file_it_is_scored_from(tmp_path: Path) -> None:
    folder = build_checkpoint("bert", tmp_path / "bert", steps=2)
    identity = identify(folder)
    expected = {path.name: hashlib.sha256(path.read_bytes()).hexdigest()
                for path in folder.iterdir()}
    assert dict(identity.files) == expected
    assert identity.digest == files_digest(expected.items()) and identity.pinned
    # A Trainer's state and notes are not the model; a copy elsewhere is the same checkpoint.
    for name in ("optimizer.pt", "scheduler.pt", "rng_state.pth", "trainer_state.json",
                 "training_args.bin", "README.md"):
        (folder / name).write_bytes(os.urandom(64))
    copy = shutil.copytree(folder, tmp_path / "elsewhere" / "renamed")
    assert identify(folder).digest == identify(copy).digest == identity.digest
    # Its tokenizer is part of it: a tokenizer saved again with another entry is another one.
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    tokenizer.add_special_tokens({"additional_special_tokens": ["[NEW]"]})
    tokenizer.save_pretrained(copy)
    assert identify(copy).digest != identity.digest


def test_a_weights_files_digest_is_read_once_and_kept_per_version(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Weights of 1 MiB or more: hashed once, then read from the kept digest (a memo that
    holds another digest shows it was read instead of the file); a changed file (its bytes
    and times set back) is hashed again. Smaller files leave no memo."""
    memos = tmp_path / "cache"
    monkeypatch.setenv("SYNTAXGYM_HELM_CACHE", str(memos))
    folder = build_checkpoint("bert", tmp_path / "bert", steps=1)
    weights = folder / "model.safetensors"
    with weights.open("ab") as stream:  # safetensors ignores what follows its tensors
        stream.write(os.urandom(2 << 20))
    first = identify(folder)
    assert not (memos / "digests").exists()  # written just now: not kept (racy)
    monkeypatch.setattr(content_digest, "RACY_SECONDS", 0.0)  # as if written long ago
    assert identify(folder) == first
    (memo,) = (memos / "digests").iterdir()  # the weights' only: the small files keep none
    memo.write_text("0" * 64 + "\n")
    assert dict(identify(folder).files)["model.safetensors"] == "0" * 64
    stat = weights.stat()
    with weights.open("r+b") as stream:
        stream.seek(1 << 20)
        stream.write(b"changed")
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    again = dict(identify(folder).files)["model.safetensors"]
    assert again == hashlib.sha256(weights.read_bytes()).hexdigest() != dict(first.files)[
        "model.safetensors"]


def test_a_watch_sees_a_folder_saved_again(tmp_path: Path) -> None:
    folder = build_checkpoint("bert", tmp_path / "bert", steps=1)
    watch = CheckpointWatch(str(folder))
    before = watch.current()
    assert watch.current() == before
    build_checkpoint("bert", folder, steps=3)  # trained further, saved over it
    assert watch.current() != before and watch.current() == identify(folder)


def _fresh_process_figures(model: str, cwd: Path) -> list[list[float]]:
    """``score_sentences`` in a new Python process: what a fresh kernel would print."""
    code = ("import json, math, sys; from syntaxgym_helm import score_sentences; "
            "print(json.dumps([[0.0 if math.isnan(s) else s for s in c.surprisals] "
            "for c in score_sentences(json.loads(sys.argv[2]), sys.argv[1])]))")
    done = subprocess.run([sys.executable, "-c", code, model, json.dumps(SENTENCES)], cwd=cwd,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_a_masked_lm_copied_over_in_place_scores_as_a_fresh_process(tmp_path: Path) -> None:
    """The issue's case: a masked LM scored, new weights copied over its file (the same inode,
    so memory that maps the old file reads the new bytes), scored again in the same process.
    Before, the model loaded first was kept by path: a mix of old and new weights. Now the
    second score is exactly a fresh process's, by a path and by a name deployed in YAML."""
    folder = build_checkpoint("bert", tmp_path / "work" / "mlm", steps=4)
    prod_env = tmp_path / "prod_env"
    assert main(["model", "add", str(folder), "--name", "lab/mlm", "--pll", "original",
                 "--local-path", str(prod_env)]) == 0
    before = _figures(score_sentences(SENTENCES, str(folder)))
    assert _figures(score_sentences(SENTENCES, "lab/mlm", local_path=prod_env)) == before
    trained = build_checkpoint("bert", tmp_path / "trained" / "mlm", steps=12)
    shutil.copyfile(trained / "model.safetensors", folder / "model.safetensors")
    by_path = _figures(score_sentences(SENTENCES, str(folder)))
    by_name = _figures(score_sentences(SENTENCES, "lab/mlm", local_path=prod_env))
    fresh = [tuple(values) for values in _fresh_process_figures(str(folder), tmp_path)]
    assert by_path == by_name == fresh != before


def test_a_masked_lm_without_tokenizer_files_is_refused(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture) -> None:
    """The issue's case: without its tokenizer files, transformers made up an empty tokenizer
    and every word was scored as [UNK] (72.50 bits instead of 37.29), the tokens printed
    looking normal; ``model add`` accepted it. Now both refuse it, saying what to do, and a
    deployment written by hand fails each request (not the run) with the same reason."""
    from helm.common.cache import BlackHoleCacheConfig
    from helm.common.request import Request

    from syntaxgym_helm.clients.masked.client import MaskedLMClient

    folder = build_checkpoint("bert", tmp_path / "no_tokenizer", steps=1, save_tokenizer=False)
    with pytest.raises(CheckpointError, match=r"no_tokenizer: no tokenizer files .*"
                                              r"tokenizer\.save_pretrained\("):
        score_sentences(SENTENCES, str(folder))
    assert main(["model", "add", str(folder), "--local-path", str(tmp_path / "prod_env")]) == 2
    assert "no tokenizer files" in capsys.readouterr().err
    assert not (tmp_path / "prod_env").exists()
    client = MaskedLMClient(BlackHoleCacheConfig(), str(folder))
    result = client.make_request(Request(model="lab/x", model_deployment="lab/x",
                                         prompt=SENTENCES[0], echo_prompt=True, max_tokens=0))
    assert not result.success and "no tokenizer files" in (result.error or "")
    assert result.error_flags is not None and not result.error_flags.is_fatal


def test_a_tokenizer_with_ids_past_the_embeddings_is_refused(tmp_path: Path) -> None:
    folder = build_checkpoint("bert", tmp_path / "grown", steps=1)
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    rows = transformers.AutoConfig.from_pretrained(folder).vocab_size
    tokenizer.add_tokens(["cabinetry", "exam-taker"])  # the model's embeddings not resized
    tokenizer.save_pretrained(folder)
    with pytest.raises(CheckpointError, match=rf"grown: the tokenizer gives token ids up to "
                                              rf"{rows + 1}, but the model has {rows} embedding "
                                              r"rows .*2 token\(s\) past them: 'cabinetry'"):
        score_sentences(SENTENCES, str(folder))


def _hub_cache(root: Path) -> dict[str, Path]:
    """A Hub cache holding model ``lab/tiny`` at two commits: ``main`` (trained longer) and the
    tag ``v1``; returns each revision's checkpoint folder (the same files, outside the cache)."""
    repo = root / "hub" / "models--lab--tiny"
    folders = {}
    for revision, commit, steps in (("v1", "1" * 40, 1), ("main", "2" * 40, 6)):
        folder = build_checkpoint("bert", root / revision / "tiny", steps=steps)
        shutil.copytree(folder, repo / "snapshots" / commit)
        (repo / "refs").mkdir(parents=True, exist_ok=True)
        (repo / "refs" / revision).write_text(commit)
        folders[revision] = folder
    return folders


#: Run in a process of its own: huggingface_hub reads HF_HUB_CACHE and HF_HUB_OFFLINE on import.
_HUB_CHECKS = """
import json, math, sys, yaml
from syntaxgym_helm import score_sentences
from syntaxgym_helm.api.model_resolution import resolve_model
from syntaxgym_helm.cli.main import main
from syntaxgym_helm.clients.checkpoint_identity import identify
from helm.benchmark.model_deployment_registry import get_model_deployment

def figures(model):
    return [[0.0 if math.isnan(s) else s for s in c.surprisals]
            for c in score_sentences(json.loads(sys.argv[1]), model)]

names = [resolve_model("lab/tiny"), resolve_model("lab/tiny@v1"),
         resolve_model("lab/tiny", revision="v1")]
assert main(["model", "add", "lab/tiny", "--local-path", "prod_env"]) == 0
added = yaml.safe_load(open("prod_env/model_deployments.yaml"))["model_deployments"]
print(json.dumps({
    "names": names,
    "commits": [identify("lab/tiny").commit, identify("lab/tiny", revision="v1").commit],
    "deployed": [get_model_deployment(name).client_spec.args.get("revision") for name in names],
    "added": [entry["client_spec"]["args"].get("revision") for entry in added],
    "main": figures("lab/tiny"), "v1": figures("lab/tiny@v1")}))
"""


@pytest.mark.slow
def test_a_hub_id_is_pinned_to_the_commit_its_revision_resolves_to(tmp_path: Path) -> None:
    folders = _hub_cache(tmp_path)
    env = {**os.environ, "HF_HUB_CACHE": str(tmp_path / "hub"), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", _HUB_CHECKS, json.dumps(SENTENCES)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["names"] == ["lab/tiny", "lab/tiny@v1", "lab/tiny@v1"]
    assert found["commits"] == ["2" * 40, "1" * 40]
    # Each deployment loads the commit it resolved to, and model add writes it down.
    assert found["deployed"] == ["2" * 40, "1" * 40, "1" * 40]
    assert set(found["added"]) == {"2" * 40}  # both PLL variants
    main_scores = [list(values) for values in _figures(score_sentences(SENTENCES,
                                                                       str(folders["main"])))]
    v1_scores = [list(values) for values in _figures(score_sentences(SENTENCES,
                                                                     str(folders["v1"])))]
    assert found["main"] == main_scores and found["v1"] == v1_scores != main_scores
