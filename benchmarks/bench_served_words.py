"""Benchmark: word surprisal from a served model against the local engine, word by word.

Every word of the Natural Stories corpus (10 stories, 10,256 words, segmented as
``all_stories.tok`` ships them) is scored twice by ``syntaxgym-helm surprisal``: once on the
embedded SmolLM2 GGUF through the local engine (dequantised, float32), once through
llama-cpp-python's OpenAI-compatible server on the same file (an ``EchoCompletionsClient``
deployment; the server puts ``<|endoftext|>`` before each text itself, as the local engine does,
so both condition the first word alike). Printed: the words compared, the largest and mean
absolute difference in bits, Pearson's r, the words over 0.5 and 1 bit, the words either side
flagged, and each side's whole-process time. The difference is llama.cpp's arithmetic on the
quantised weights (Q4_1 kernels) against float32 on the dequantised ones.

llama-cpp-python[server] must be importable by this interpreter (``make test-served`` installs
it). The corpus is CC BY-NC-SA: read from ``--naturalstories``, nothing of it written outside
``--workdir``. From the project root::

    .venv/bin/python benchmarks/bench_served_words.py --workdir /tmp/sw [--stories N] \\
        --output BENCHMARKS.md
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from bench_scoring import timed
from markdown_sections import commit, machine, write_section
from served_compare import ALIAS, llama_server

ROOT = Path(__file__).resolve().parents[1]
#: The console scripts: this interpreter's, or the project's virtual environment's when this
#: interpreter is another one that only adds llama-cpp-python (the server runs on it).
BIN = next((folder for folder in (Path(sys.executable).parent, ROOT / ".venv" / "bin")
            if (folder / "syntaxgym-helm").exists()), Path(sys.executable).parent)
LOCAL = "syntaxgym/smollm2-135m-instruct-q4_1"
SERVED = "llamacpp-words/smollm2"


def deployment(folder: Path, base_url: str, context: int, timeout: int) -> Path:
    """A ``prod_env`` with one ``EchoCompletionsClient`` deployment of the served SmolLM2."""
    prod_env = folder / "prod_env"
    prod_env.mkdir(parents=True, exist_ok=True)
    (prod_env / "model_deployments.yaml").write_text(yaml.safe_dump({"model_deployments": [{
        "name": SERVED, "model_name": SERVED,
        "tokenizer_name": "helmhf/smollm2-135m-instruct-q4_1", "max_sequence_length": context,
        "client_spec": {"class_name": "syntaxgym_helm.clients.served.EchoCompletionsClient",
                        "args": {"base_url": base_url, "openai_model_name": ALIAS,
                                 "max_tokens_for_echo": 1, "timeout": timeout, "max_retries": 0}},
    }]}))
    return prod_env


def words_file(corpus: Path, workdir: Path, stories: int | None) -> Path:
    """The corpus' words file, or (``stories``) its first stories' rows, written to ``workdir``."""
    source = corpus / "naturalstories_RTS" / "all_stories.tok"
    if stories is None:
        return source
    lines = source.read_text(encoding="utf-8").splitlines()
    kept = [line for line in lines[1:] if int(line.split("\t")[2]) <= stories]
    target = workdir / f"stories-1-{stories}.tok"
    target.write_text("\n".join([lines[0], *kept]) + "\n", encoding="utf-8")
    return target


def surprisal_command(words: Path, model: str, output: Path, *extra: str) -> list[str]:
    return [str(BIN / "syntaxgym-helm"), "surprisal", str(words), "--tsv",
            "--text-column", "item", "--index-column", "zone", "--word-column", "word",
            "--model", model, "-o", str(output), *extra]


def read_rows(path: Path) -> dict[tuple[str, str], dict[str, str]]:
    lines = [line for line in path.read_text(encoding="utf-8").splitlines()
             if not line.startswith("#")]
    return {(row["text_id"], row["word_index"]): row
            for row in csv.DictReader(lines, delimiter="\t")}


def compare(local: dict, served: dict) -> dict[str, Any]:
    """Word-by-word figures over the words both sides measured; the flags each side gave."""
    pairs: list[tuple[float, float]] = []
    flags: dict[str, Counter[str]] = {"local": Counter(), "served": Counter()}
    assert local.keys() == served.keys(), "the two tables hold different words"
    for key, row in local.items():
        other = served[key]
        assert row["word"] == other["word"], key
        for side, flag in (("local", row["flag"]), ("served", other["flag"])):
            if flag:
                flags[side][flag] += 1
        if row["surprisal_bits"] and other["surprisal_bits"]:
            assert row["tokens"] == other["tokens"], key  # the same tokens where both measured
            pairs.append((float(other["surprisal_bits"]), float(row["surprisal_bits"])))
    differences = [abs(a - b) for a, b in pairs]
    return {"words": len(local), "compared": len(pairs), "max": max(differences),
            "mean": statistics.mean(differences),
            "r": statistics.correlation([a for a, _ in pairs], [b for _, b in pairs]),
            "over_half": sum(d > 0.5 for d in differences),
            "over_one": sum(d > 1.0 for d in differences),
            "flags": {side: dict(found) for side, found in flags.items()}}


def flag_words(flags: dict[str, int]) -> str:
    return ", ".join(f"{count:,} {flag}" for flag, count in sorted(flags.items())) or "none"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--naturalstories", type=Path,
                        default=ROOT.parent / "shared" / "naturalstories")
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--context", type=int, default=4096,
                        help="the server's context (tokens): longer than the longest story")
    parser.add_argument("--timeout", type=int, default=1800,
                        help="the deployment's deadline for one story's request (seconds)")
    parser.add_argument("--reuse", action="store_true",
                        help="compare the tables already in --workdir; run nothing")
    parser.add_argument("--stories", type=int, help="the first N stories only (default: all)")
    parser.add_argument("--output", type=Path, help="write the result as a BENCHMARKS.md section")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    load = os.getloadavg()
    local_out, served_out = args.workdir / "local.tsv", args.workdir / "served.tsv"
    times = "not run (`--reuse`)"
    if not args.reuse:
        words = words_file(args.naturalstories, args.workdir, args.stories)
        local_run = timed(surprisal_command(words, LOCAL, local_out), args.workdir,
                          env, args.workdir / "local.log")
        with llama_server(args.workdir / "server.log", bos_override=True,
                          n_ctx=args.context) as url:
            prod_env = deployment(args.workdir, url, args.context, args.timeout)
            served_run = timed(surprisal_command(words, SERVED, served_out, "--local-path",
                                                 str(prod_env), "--prefix", "none"),
                               args.workdir, env, args.workdir / "served.log")
        times = f"local {local_run['wall_s']:.0f} s, served {served_run['wall_s']:.0f} s"
    found = compare(read_rows(local_out), read_rows(served_out))
    text = (
        "| words | compared | max abs (bits) | mean abs | r | over 0.5 bit | over 1 bit |\n"
        "|---|---|---|---|---|---|---|\n"
        f"| {found['words']:,} | {found['compared']:,} | {found['max']:.3f} | "
        f"{found['mean']:.4f} | {found['r']:.5f} | {found['over_half']} | {found['over_one']} |"
        f"\n\nWords flagged: local {flag_words(found['flags']['local'])}; served "
        f"{flag_words(found['flags']['served'])}. Whole processes: {times}.\n")
    print(text)
    if args.output:
        stories = f"stories 1 to {args.stories}" if args.stories else "the 10 stories"
        header = (f"## Served vs local word surprisal: Natural Stories on SmolLM2-135M\n\n"
                  f"{time.strftime('%Y-%m-%d')}, commit {commit()}, {machine()}; load before: "
                  f"{', '.join(f'{x:.2f}' for x in load)}. `python benchmarks/"
                  f"bench_served_words.py {' '.join(sys.argv[1:])}`.\n\n"
                  f"`syntaxgym-helm surprisal` on every word of {stories}: the local engine "
                  f"(`{LOCAL}`, float32) and llama-cpp-python's server on the same GGUF (putting "
                  "`<|endoftext|>` before each story itself; `--prefix none`), the uncorrected "
                  "surprisal compared word by word (a story's first word has no logprob from a "
                  "server: flagged `no-context`, not compared; a flagged word is not compared). "
                  "Times are whole processes beside other work: not results.\n\n")
        write_section(args.output, header + text, "benchmarks/bench_served_words.py")


if __name__ == "__main__":
    main()
