"""Benchmark: the word-boundary correction's effect on accuracy and its cost, for the embedded
models: SG score (Hu et al. 2020 suites), BLiMP and CLAMS-English, each model scored plainly and
as its ``~bow`` variant (docs/scoring.md, "Word boundaries") through the Python API (the code of
a ``helm-run``), back to back in one process.

Not a test. From the project root, e.g.::

    python benchmarks/bench_word_boundary.py --suites-dir ../shared/suites/hu2020 \\
        --blimp-dir ../shared/blimp/data --clams-dir ../shared/multilingual/clams/en_evalset \\
        --blimp-paradigms 6 --pairs 100 --output BENCHMARKS.md

``--pairs N``: each BLiMP paradigm's and CLAMS file's first N pairs; ``--blimp-paradigms K``: the
first K paradigms in alphabetical order. Times are of the scoring calls (the model loaded and each
engine set up first, by one item of one suite per variant).

``--parts whole``: what a user waits for, per model: whole ``helm-run`` processes, plain then
``~bow`` back to back, of the 34 Hu et al. suites (``run_specs/syntaxgym_hu2020.conf``) and of
:data:`WHOLE_BLIMP` (all pairs), with their wall and CPU time, peak memory and the positions the
engine computed (from the run's log). The correction needs one more position per sentence (the
one after its last token, for the last word's P(next token begins a word)), so the positions
computed set the least it can cost.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_scoring import timed  # noqa: E402
from markdown_sections import commit, machine, write_section  # noqa: E402
from syntaxgym_helm import evaluate  # noqa: E402
from syntaxgym_helm.core.minimal_pairs.catalogue import DATASETS, convert_file  # noqa: E402
from syntaxgym_helm.core.registry import HU2020_SUITES, load_named_suite  # noqa: E402
from syntaxgym_helm.core.suite import Suite  # noqa: E402

SCRIPT = "benchmarks/bench_word_boundary.py"
MODELS = ("syntaxgym/smollm2-135m-instruct-q4_1", "syntaxgym/gemma-3-270m-q4_k_m")
WHOLE_BLIMP = ("anaphor_number_agreement", "determiner_noun_agreement_2",
               "only_npi_licensor_present", "superlative_quantifiers_2")
HELM_RUN = Path(sys.executable).with_name("helm-run")


def whole_run(selection: list[str], env: dict[str, str]) -> dict[str, float]:
    """One ``helm-run`` in a fresh folder, timed whole (:func:`bench_scoring.timed`): wall and
    CPU seconds, peak MiB, and the prompts and positions the engine reported."""
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as folder:
        done = timed([str(HELM_RUN), *selection, "--suite", "bow", "--max-eval-instances",
                      "100000"], Path(folder), env, Path(tempfile.gettempdir()) / "bow-run.log")
    counts = re.findall(r"this run scored (\d+) prompts \(\d+ tokens\) computing (\d+) positions",
                        done["log"])
    return {"wall": done["wall_s"], "cpu": done["cpu_s"], "peak": done["peak_rss_mb"],
            "prompts": sum(int(a) for a, _ in counts),
            "positions": sum(int(b) for _, b in counts), "load": load}


def whole_lines(models: list[str], suites_dir: Path, blimp_dir: Path) -> list[str]:
    """The ``--whole`` part's table."""
    suites_dir, blimp_dir = suites_dir.resolve(), blimp_dir.resolve()  # helm-run runs elsewhere
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SYNTAXGYM_SUITES_DIR": str(suites_dir),
           "SYNTAXGYM_BLIMP_DIR": str(blimp_dir.parent if blimp_dir.name == "data"
                                      else blimp_dir)}
    lines = ["", "Whole `helm-run` processes, plain then `~bow` right after (fresh folders, HELM's "
             "request cache empty; the dequantised weights cached), `/usr/bin/time`:", "",
             "| model | runs | wall plain / `~bow` | ratio | CPU plain / `~bow` | peak MiB | "
             "prompts | positions plain / `~bow` | load before |",
             "|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for model in models:
        sets = {
            "34 suites of Hu et al. (2020)": lambda m: [
                "--conf-paths", str(ROOT / "run_specs" / "syntaxgym_hu2020.conf"),
                "--models-to-run", m],
            f"BLiMP, {len(WHOLE_BLIMP)} paradigms": lambda m: [
                "--run-entries", *(f"syntaxgym:suite=blimp_{p},model={m}" for p in WHOLE_BLIMP)],
        }
        for name, selection in sets.items():
            plain = whole_run(selection(model), env)
            bow = whole_run(selection(model + "~bow"), env)
            print(model, name, plain, bow, flush=True)
            lines.append(
                f"| `{model}` | {name} | {plain['wall']:.1f} s / {bow['wall']:.1f} s | "
                f"**{bow['wall'] / plain['wall']:.2f}x** | "
                f"{plain['cpu']:.0f} s / {bow['cpu']:.0f} s | "
                f"{plain['peak']:,.0f} / {bow['peak']:,.0f} | {plain['prompts']:,} | "
                f"{plain['positions']:,} / {bow['positions']:,} "
                f"({bow['positions'] / max(1, plain['positions']):.2f}x) | "
                f"{plain['load']:.2f} / {bow['load']:.2f} |")
    return lines


def pair_suites(dataset: str, folder: Path, pattern: str, count: int | None) -> list[Suite]:
    files = sorted(folder.glob(pattern))[: count or None]
    return [Suite.from_trusted_json(convert_file(DATASETS[dataset], f).suite, str(f))
            for f in files]


def accuracy(results) -> float:
    """Mean over suites of the share of items that pass."""
    return sum(r.accuracy for r in results) / len(results)


def score(model: str, sets: dict[str, list[Suite]], pairs: int) -> tuple[dict, dict, float]:
    results, items = {}, {}
    started = time.perf_counter()
    for name, suites in sets.items():
        limit = None if name == "SG score" else pairs
        results[name] = [evaluate(s, model, max_items=limit, cache_dir=None) for s in suites]
        items[name] = sum(len(r.items) for r in results[name])
    return results, items, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--suites-dir", type=Path, required=True)
    parser.add_argument("--suites", default="all", help="comma-separated Hu et al. suites")
    parser.add_argument("--blimp-dir", type=Path, required=True)
    parser.add_argument("--blimp-paradigms", type=int, default=6, help="0: all 67")
    parser.add_argument("--clams-dir", type=Path, required=True)
    parser.add_argument("--pairs", type=int, default=100)
    parser.add_argument("--parts", default="accuracy",
                        help="accuracy (the three sets through the Python API) and/or whole "
                             "(whole helm-run processes, plain then ~bow); each writes its own "
                             "section")
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args()
    parts = args.parts.split(",")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    header = [f"{time.strftime('%Y-%m-%d')}, commit {commit()}, {machine()}; load before: {load}.",
              f"`python {SCRIPT} {' '.join(sys.argv[1:])}`"]
    if "accuracy" in parts:
        report(["## Word-boundary correction: accuracy on the embedded models", "", *header, ""]
               + accuracy_lines(args), args.output, SCRIPT)
    if "whole" in parts:
        report(["## Word-boundary correction: what a whole run costs", "", *header]
               + whole_lines(args.models.split(","), args.suites_dir, args.blimp_dir),
               args.output, f"{SCRIPT} (whole runs)")


def report(lines: list[str], output: Path | None, section: str) -> None:
    text = "\n".join(lines) + "\n"
    print(text)
    if output is not None:
        write_section(output, text, section)


def accuracy_lines(args: argparse.Namespace) -> list[str]:
    """The ``accuracy`` part: each model plainly and as ``~bow`` on the three sets."""
    names = sorted(HU2020_SUITES) if args.suites == "all" else args.suites.split(",")
    sets = {
        "SG score": [load_named_suite(n, "/tmp/sgh_suites", args.suites_dir) for n in names],
        "BLiMP": pair_suites("blimp", args.blimp_dir, "*.jsonl", args.blimp_paradigms),
        "CLAMS-en": pair_suites("clams", args.clams_dir, "*.txt", None),
    }
    rows = []
    for model in args.models.split(","):
        for variant in ("", "~bow"):  # the model loaded and each engine set up first
            evaluate(sets["BLiMP"][0], model + variant, max_items=1, cache_dir=None)
        plain, counts, plain_s = score(model, sets, args.pairs)
        bow, _, bow_s = score(model + "~bow", sets, args.pairs)
        changed = {name: sum(bool(a.passed) != bool(b.passed)
                             for x, y in zip(plain[name], bow[name], strict=False)
                             for a, b in zip(x.items, y.items, strict=False)) for name in sets}
        rows.append((model, plain, bow, counts, changed, plain_s, bow_s))
        print(model, plain_s, bow_s, flush=True)
    paradigms = sets["BLiMP"]
    lines = [
        f"SG score: the {len(sets['SG score'])} suites of Hu et al. (2020), all items; BLiMP: "
        f"the first {args.pairs} pairs of "
        + (f"each of its {len(paradigms)} paradigms" if args.blimp_paradigms == 0 else
           f"its first {len(paradigms)} paradigms ({', '.join(s.name for s in paradigms)})")
        + f"; CLAMS-English: the first {args.pairs} pairs of each of its "
        f"{len(sets['CLAMS-en'])} files. Accuracy: the mean over suites of the share of items "
        "passed. `~bow`: the same model under the word-boundary correction.",
        "",
        "| model | set | items | accuracy | with `~bow` | items whose verdict changes |",
        "|---|---|---|---|---|---|",
    ]
    for model, plain, bow, counts, changed, _, _ in rows:
        for name in sets:
            lines.append(f"| `{model}` | {name} | {counts[name]:,} | {accuracy(plain[name]):.3f} "
                         f"| {accuracy(bow[name]):.3f} | {changed[name]:,} |")
    lines += ["", "Scoring time of all three sets through the Python API, plain then `~bow`, back "
              "to back in one process (the model loaded and each engine set up before):", ""]
    lines += [f"- `{m}`: {p:.0f} s and {b:.0f} s ({b / p:.2f}x)"
              for m, _, _, _, _, p, b in rows]
    return lines


if __name__ == "__main__":
    main()
