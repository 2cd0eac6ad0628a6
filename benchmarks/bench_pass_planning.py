"""How many positions the engine's planner computes on all of BLiMP, by the order it takes a
call's sequences in and the store's eviction rule: the planning alone (pure Python, no model), as
``helm-run`` of ``run_specs/syntaxgym_blimp.conf`` calls the engine (each paradigm one call, its
distinct sentences in the order HELM sends them, after ``<|endoftext|>``; SmolLM2's tokenizer;
the engine's default pass limits and a store of its default 160 MB).

Counts: positions computed (rows padded to the longest row of their pass), the prefixes computed
among them (padding left out), forward passes; beside the floor (distinct prefixes over all of
BLiMP) and the distinct prefixes counted within each paradigm alone. A run's figures equal this
planning's (the engine logs them per run; BENCHMARKS.md's field-scale sections)::

    .venv/bin/python benchmarks/bench_pass_planning.py --output BENCHMARKS.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import inspect
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_field_scale import BOS, all_paradigms, data_folder, distinct_prefixes  # noqa: E402
from markdown_sections import commit, machine, write_section  # noqa: E402
from syntaxgym_helm.clients.local.forward_passes import PassLimits  # noqa: E402
from syntaxgym_helm.clients.local.prefix_trie import (  # noqa: E402
    ROOT as NO_PARENT,
    STREAMS,
    PrefixIndex,
    insert_rows,
    plan_passes,
)

SCRIPT = "benchmarks/bench_pass_planning.py"


class LeastRecentlyUsedIndex(PrefixIndex):
    """The store's index without the several-calls rule: the least recently used evicted first."""

    def eviction_rank(self, slot: int) -> tuple[bool, int, int]:
        return False, self.last_used[slot], -self.depth[slot]


class SeveralCallsLastIndex(PrefixIndex):
    """The engine's rule until 2026-11-27: one call's slots before several calls', the least
    recently used first (the deepest only among equals)."""

    def eviction_rank(self, slot: int) -> tuple[bool, int, int]:
        return self.several_calls[slot], self.last_used[slot], -self.depth[slot]


def paradigm_sequences(blimp_dir: Path) -> list[list[list[int]]]:
    """Per paradigm (HELM's run order), its distinct sentences as token ids after the BOS."""
    from transformers import AutoTokenizer

    from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M
    from syntaxgym_helm.clients.embedded.clients import converted_tokenizer_folder

    tokenizer = AutoTokenizer.from_pretrained(converted_tokenizer_folder(SMOLLM2_135M))
    bos = tokenizer.convert_tokens_to_ids(BOS)
    runs = []
    for uid in all_paradigms(blimp_dir):
        sentences: dict[str, None] = {}
        with open(data_folder(blimp_dir) / f"{uid}.jsonl", encoding="utf-8") as lines:
            for line in lines:
                if line.strip():
                    record = json.loads(line)
                    sentences.setdefault(record["sentence_good"])
                    sentences.setdefault(record["sentence_bad"])
        encoded = tokenizer(list(sentences), add_special_tokens=False)["input_ids"]
        runs.append([[bos, *ids] for ids in encoded])
    return runs


def engine_defaults() -> tuple[PassLimits, int]:
    """The engine's default pass limits, and how many prefixes its default store holds for
    SmolLM2-135M in float32 (as ``PrefixStore.sized`` counts them)."""
    import torch
    from transformers import AutoConfig

    from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M
    from syntaxgym_helm.clients.local.logprob_engine import LogprobEngine
    from syntaxgym_helm.clients.local.prefix_store import slots_in

    defaults = {name: parameter.default
                for name, parameter in inspect.signature(LogprobEngine).parameters.items()}
    limits = PassLimits(defaults["batch_size"], defaults["max_batch_positions"],
                        defaults["max_row_nodes"])
    config = AutoConfig.from_pretrained(SMOLLM2_135M.directory(), gguf_file=SMOLLM2_135M.gguf_file)
    head_dim = config.hidden_size // config.num_attention_heads
    shapes = [(config.num_key_value_heads, head_dim)] * config.num_hidden_layers
    capacity = slots_in(defaults["prefix_cache_mb"] * 2**20, shapes, config.hidden_size,
                        torch.float32)
    return limits, capacity


def plan(runs: Sequence[list[list[int]]], index: PrefixIndex, limits: PassLimits,
         streams: int | None) -> dict[str, int]:
    """Plan every run's passes, storing each pass's new prefixes as the engine does."""
    index.insert(NO_PARENT, runs[0][0][0], 0)  # the beginning-of-text position, stored at set-up
    positions = computed = passes = 0
    for sequences in runs:
        index.begin_call()
        for rows, _ in plan_passes(sequences, index, limits.max_batch_positions,
                                   limits.batch_size, limits.max_row_nodes, streams=streams):
            rows = [row for row in rows if len(row)]
            if not rows:
                continue
            positions += max(len(row) for row in rows) * len(rows)
            computed += sum(len(row) for row in rows)
            passes += 1
            insert_rows(index, rows)
    return {"positions": positions, "computed": computed, "passes": passes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blimp-dir", type=Path, default=ROOT.parent / "shared" / "blimp")
    parser.add_argument("--output", type=Path, help="put the report in this Markdown file")
    args = parser.parse_args()
    started = dt.datetime.now()
    load_before = os.getloadavg()
    runs = paradigm_sequences(args.blimp_dir)
    limits, capacity = engine_defaults()
    floor = distinct_prefixes(seq for run in runs for seq in run)
    per_paradigm = sum(distinct_prefixes(run) for run in runs)
    variants = [("in the order asked for", None), ("lexicographic", 1), ("3 streams", 3),
                (f"{STREAMS} streams (the engine's)", STREAMS)]
    rows = []
    for index_class, rule in ((LeastRecentlyUsedIndex, "least recently used"),
                              (SeveralCallsLastIndex, "one call's first, least recently used"),
                              (PrefixIndex, "one call's first, deepest first (the engine's)")):
        for name, streams in variants:
            clock = time.perf_counter()
            counts = plan(runs, index_class(capacity), limits, streams)
            rows.append((name, rule, counts, time.perf_counter() - clock))
            print(name, rule, counts, flush=True)
    lines = [
        "## Planning the passes: positions computed on all of BLiMP, by order and eviction rule",
        "",
        f"Run {started:%Y-%m-%dT%H:%M} with `python {SCRIPT}"
        + (f" --output {args.output}" if args.output else "") + f"`, commit {commit()}. "
        f"Load average before {' / '.join(f'{x:.2f}' for x in load_before)}.",
        "", f"Machine: {machine()}.", "",
        f"{sum(len(run) for run in runs):,} distinct sentences in {len(runs)} calls (paradigms), "
        f"a store of {capacity:,} prefixes, passes of at most {limits.batch_size} sequences and "
        f"{limits.max_batch_positions} positions in rows of about {limits.max_row_nodes}. "
        f"Distinct prefixes: **{floor:,}** over all of BLiMP (the floor's positions), "
        f"{per_paradigm:,} counted within each paradigm alone.", "",
        "| order | eviction | positions (padding included) | vs the floor | prefixes computed "
        "| passes | planning time |",
        "|---|---|---:|---:|---:|---:|---:|"]
    for name, rule, counts, seconds in rows:
        lines.append(f"| {name} | {rule} | {counts['positions']:,} | "
                     f"{counts['positions'] / floor:.3f}x | {counts['computed']:,} | "
                     f"{counts['passes']:,} | {seconds:.1f} s |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.output:
        write_section(args.output, text, SCRIPT)


if __name__ == "__main__":
    main()
