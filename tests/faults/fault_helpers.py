"""Helpers of the fault-injection tests (``tests/faults/`` is on ``sys.path`` for its modules)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def save_tiny_checkpoint(folder: Path) -> Path:
    """A real, tiny Llama checkpoint (random weights, a word-level tokenizer) as transformers
    saves it, with the plugin's manifest: what the dequantised-weights cache holds, in
    kilobytes instead of 540 MB."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    from syntaxgym_helm.clients.checked_folders import write_manifest

    words = ["<unk>", "<s>", "the", "keys", "to", "cabinet", "are", "on", "table", "."]
    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(words), hidden_size=64, intermediate_size=128,
                         num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2,
                         max_position_embeddings=64)
    folder.mkdir(parents=True, exist_ok=True)
    LlamaForCausalLM(config).save_pretrained(folder)
    PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="<unk>",
                            bos_token="<s>").save_pretrained(folder)
    write_manifest(folder)
    return folder


def overwrite(path: Path, offset: int, data: bytes) -> None:
    """Write ``data`` over ``path`` at ``offset`` (a damaged page: the size stays the same)."""
    with open(path, "r+b") as stream:
        stream.seek(offset)
        stream.write(data)


def zeros_in_the_middle(path: Path, size: int = 4096) -> None:
    """4 KiB of zeros halfway into ``path``: what a lost page looks like."""
    overwrite(path, path.stat().st_size // 2, bytes(size))


def garbage(size: int, seed: int = 0) -> bytes:
    """Reproducible random bytes."""
    import random

    return random.Random(seed).randbytes(size)


def start_with_default_signals(command: list[str], *, cwd: Path, env: dict[str, str],
                               log: Path) -> subprocess.Popen:
    """Start ``command`` in its own session with SIGINT at its default (a shell's background
    job ignores it), its output to ``log``: as a terminal's Ctrl-C would find it."""
    stream = open(log, "wb")
    return subprocess.Popen(command, cwd=cwd, env=env, stdout=stream, stderr=subprocess.STDOUT,
                            start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def wait_for_text(log: Path, text: str, process: subprocess.Popen, timeout_s: float) -> bool:
    """Whether ``text`` appears in ``log`` within ``timeout_s`` while ``process`` runs."""
    import time

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if text in log.read_text(errors="replace"):
            return True
        if process.poll() is not None:
            return text in log.read_text(errors="replace")
        time.sleep(0.1)
    return False


def private_env(cache: Path, weights: Path | None = None, **extra: str) -> dict[str, str]:
    """The environment of a subprocess with its own plugin cache (weights, assembled GGUF).

    ``weights``: a checked dequantised copy (the ``smollm2_weights`` fixture) linked into the
    private cache first, for tests whose subject is not dequantising: the model then loads in a
    second instead of being dequantised again by each test. Its files are hard links where the
    file system allows (the plugin replaces a cache file whole, never writes into one), so the
    tests do not each hold a copy of the weights on disk."""
    import shutil

    from fixtures import HU2020_DIR

    def link(source: str, target: str) -> None:
        try:
            os.link(source, target)
        except OSError:  # another file system, or one without hard links
            shutil.copy2(source, target)

    if weights is not None:
        shutil.copytree(weights, cache / "weights" / weights.name, copy_function=link)
    return {**os.environ, "SYNTAXGYM_HELM_CACHE": str(cache),
            "SYNTAXGYM_SUITES_DIR": str(HU2020_DIR), **extra}


def syntaxgym_helm(*args: str) -> subprocess.CompletedProcess:
    """``syntaxgym-helm ARGS`` run in this process (its ``main``, as the console script calls
    it), its output captured: what a subprocess would give, without the seconds of starting one
    (``tests/cli/test_cli.py`` runs the console script itself)."""
    import contextlib
    import io

    from script_processes import exit_status
    from syntaxgym_helm.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(list(args))
        except SystemExit as exit_:  # argparse's errors and --help; the status Python gives
            status = exit_status(exit_.code)
    return subprocess.CompletedProcess(["syntaxgym-helm", *args], status, out.getvalue(),
                                       err.getvalue())
