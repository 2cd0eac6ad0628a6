"""Benchmark: the word-boundary correction's effect on accuracy and its cost, for the embedded
models: SG score (Hu et al. 2020 suites), BLiMP and CLAMS-English, each model scored plainly and
as its ``~bow`` variant (docs/scoring.md, "Word boundaries").

Not a test. From the project root, e.g.::

    python benchmarks/bench_word_boundary.py --suites-dir ../shared/suites/hu2020 \\
        --blimp-dir ../shared/blimp/data --clams-dir ../shared/multilingual/clams/en_evalset \\
        --pairs 50 --workdir $TMPDIR/bow-acc --output docs/scoring.md

The accuracy section belongs in docs/scoring.md, beside "Word boundaries"; ``--parts whole``
writes its section into BENCHMARKS.md (``--output BENCHMARKS.md``).

``--parts accuracy`` (the default): per model, one model after the other, ``helm-run`` processes
that run it plainly and as ``~bow`` on the Hu et al. suites (every item) and on the minimal pairs
(BLiMP's first ``--blimp-paradigms K`` paradigms in alphabetical order, 0: all 67, and every
CLAMS-English file; ``--pairs N`` a paradigm, HELM's seeded sample), into one run suite of
``--workdir``. The table is the rows of ``variants.csv`` that ``syntaxgym-helm report`` writes
for those runs (accuracy each way, verdicts changed each way, McNemar's exact p). Runs added to
the same work folder later join the table (``--suites ''`` runs no suite; ``--no-runs`` runs
nothing and reports on what is there).

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
from syntaxgym_helm.core.minimal_pairs.catalogue import DATASETS  # noqa: E402
from syntaxgym_helm.core.registry import HU2020_SUITES  # noqa: E402
from syntaxgym_helm.report.paired_tests import format_p  # noqa: E402
from syntaxgym_helm.report.runs import find_run_dirs, load_runs  # noqa: E402
from syntaxgym_helm.report.variants import VariantRow, variant_rows  # noqa: E402

SCRIPT = "benchmarks/bench_word_boundary.py"
MODELS = ("syntaxgym/smollm2-135m-instruct-q4_1", "syntaxgym/gemma-3-270m-q4_k_m")
WHOLE_BLIMP = ("anaphor_number_agreement", "determiner_noun_agreement_2",
               "only_npi_licensor_present", "superlative_quantifiers_2")
HELM_RUN = Path(sys.executable).with_name("helm-run")
BOW = "~bow"
ACCURACY_SUITE = "bow-accuracy"


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


def whole_lines(models: list[str], env: dict[str, str]) -> list[str]:
    """The ``whole`` part's table."""
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


def data_env(suites_dir: Path, blimp_dir: Path, clams_dir: Path) -> dict[str, str]:
    """The environment of a ``helm-run`` reading the suites and the pairs from these folders
    (resolved: helm-run runs in a folder of its own)."""
    clams_dir = clams_dir.resolve()
    return {**os.environ, "PYTHONPATH": str(ROOT),
            "SYNTAXGYM_SUITES_DIR": str(suites_dir.resolve()),
            "SYNTAXGYM_BLIMP_DIR": str(blimp_dir.resolve()),
            "SYNTAXGYM_CLAMS_DIR": str(clams_dir.parent if clams_dir.name == "en_evalset"
                                       else clams_dir)}


def pair_suite_names(blimp_paradigms: int) -> list[str]:
    """BLiMP's first ``blimp_paradigms`` paradigms in alphabetical order (0: all 67), then every
    CLAMS-English file, as the catalogue names them."""
    blimp = sorted(f.suite for f in DATASETS["blimp"].files())
    clams = sorted(f.suite for f in DATASETS["clams"].files() if f.language == "en")
    return blimp[: blimp_paradigms or None] + clams


def accuracy_commands(model: str, suites: list[str], pairs: list[str],
                      per_paradigm: int) -> list[list[str]]:
    """One model's ``helm-run`` processes, each running it plainly and as ``~bow``: the SyntaxGym
    suites (every item), then the minimal pairs (``per_paradigm`` pairs a paradigm: HELM's
    ``--max-eval-instances``, a seeded sample, the same for both)."""
    def entries(names: list[str]) -> list[str]:
        return [f"syntaxgym:suite={n},model={m}" for n in names for m in (model, model + BOW)]

    return [[str(HELM_RUN), "--run-entries", *entries(names), "--suite", ACCURACY_SUITE,
             "--max-eval-instances", str(limit)]
            for names, limit in ((suites, 100000), (pairs, per_paradigm)) if names]


def read_variants(work: Path) -> list[VariantRow]:
    """The ``~bow`` rows of ``variants.csv`` for the runs in ``work``, as ``syntaxgym-helm
    report`` computes them (:func:`~syntaxgym_helm.report.variants.variant_rows`; the report's
    other files, plots among them, are not written)."""
    runs = load_runs(find_run_dirs(work / "benchmark_output", ACCURACY_SUITE))
    return [row for row in variant_rows(runs) if row.variant.endswith(BOW)]


def _cells(row: VariantRow) -> str:
    return (f"{row.items:,} | {row.accuracy_plain:.3f} | {row.accuracy_variant:.3f} | "
            f"{row.changed:,} (+{row.to_pass:,} / −{row.to_fail:,}) | "
            f"{format_p(row.mcnemar_p)} |")


def _set_name(row: VariantRow) -> str:
    if row.level == "sg_score":
        return f"{row.suite} ({row.suites} suites, all items)"
    each = row.items // row.suites
    return f"{row.suite} ({row.suites} paradigms" + (
        f" × {each} pairs)" if each * row.suites == row.items else f", {row.items:,} pairs)")


def variant_lines(rows: list[VariantRow], top: int) -> list[str]:
    """The table of each model's sets, then its ``top`` suites with the most changed verdicts."""
    header = ["| model | {} | items | accuracy | with `~bow` | verdicts changed (+ / −) | "
              "McNemar p |", "|---|---|---:|---:|---:|---:|---:|"]
    lines = [header[0].format("set"), header[1]]
    lines += [f"| `{row.model}` | {_set_name(row)} | {_cells(row)}"
              for row in rows if row.level != "suite"]
    lines += ["", f"Where the correction changes most: per model, the {top} suites or paradigms "
              "with the most changed verdicts; then how many of all have McNemar p < 0.05 "
              "(uncorrected for the many tests):", "", header[0].format("suite"), header[1]]
    notes = []
    for model in dict.fromkeys(r.model for r in rows):
        suites = [r for r in rows if r.model == model and r.level == "suite"]
        ranked = sorted(suites, key=lambda r: (-r.changed, r.mcnemar_p))
        lines += [f"| `{model}` | {r.suite} | {_cells(r)}" for r in ranked[:top]]
        below = [f"{r.suite} ({format_p(r.mcnemar_p)})" for r in suites if r.mcnemar_p < 0.05]
        notes.append(f"- `{model}`: {len(below)} of {len(suites)} suites with p < 0.05"
                     + (f": {', '.join(below)}" if below else ""))
    return lines + ["", *notes]


def accuracy_lines(args: argparse.Namespace, env: dict[str, str]) -> list[str]:
    """The ``accuracy`` part: each model's ``helm-run`` processes, one model after the other,
    then the report on all the runs in the work folder."""
    work = args.workdir.resolve()
    work.mkdir(parents=True, exist_ok=True)
    suites = sorted(HU2020_SUITES) if args.suites == "all" else [
        s for s in args.suites.split(",") if s]
    pairs = pair_suite_names(args.blimp_paradigms)
    spent = []
    for model in args.models.split(",") if not args.no_runs else []:
        for command in accuracy_commands(model, suites, pairs, args.pairs):
            load = os.getloadavg()[0]
            log = work / f"helm-run-{model.replace('/', '_')}-{command[-1]}.log"
            done = timed(command, work, env, log)
            what = "suites" if command[-1] == "100000" else "pairs"
            spent.append(f"`{model}` {what} {done['wall_s'] / 60:.0f} min (load {load:.1f} "
                         "before)")
            print(model, command[-1], done["wall_s"], flush=True)
    rows = read_variants(work)
    return [
        "Through `helm-run`, each model plainly and as `~bow` in the same processes (per model: "
        "`helm-run --run-entries syntaxgym:suite=SUITE,model=MODEL "
        f"syntaxgym:suite=SUITE,model=MODEL~bow ... --suite {ACCURACY_SUITE} "
        "--max-eval-instances 100000` for the Hu et al. (2020) suites, all items; the same "
        "with `--max-eval-instances N` for the BLiMP paradigms and the CLAMS-English files: "
        "HELM's seeded sample of N pairs a paradigm, the same pairs both ways); the figures are "
        f"the rows of `variants.csv` that `syntaxgym-helm report benchmark_output --suite "
        f"{ACCURACY_SUITE}` writes (the section \"Scoring variants beside the plain model\" of "
        "its summary.md). Accuracy: SG score, the mean over the suites of the share of items whose "
        "predictions all hold (the suites of the paper's circuits: fgd-embed3, fgd-embed4 and "
        "nn-nv-rpl count only as suites); BLiMP and CLAMS, the mean over paradigms of the share "
        "of pairs whose good sentence is the less surprising; verdicts changed: + passed only with "
        "`~bow`, − only without; McNemar p: exact, over the items.",
        "",
        *variant_lines(rows, args.top),
        "",
        "The helm-run processes took " + (", ".join(spent) or "(runs read, not made)")
        + ": times on a shared machine, not results (the cost of the correction is measured "
        "in the next section).",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--suites-dir", type=Path, required=True)
    parser.add_argument("--suites", default="all", help="comma-separated Hu et al. suites")
    parser.add_argument("--blimp-dir", type=Path, required=True)
    parser.add_argument("--blimp-paradigms", type=int, default=0, help="the first K; 0: all 67")
    parser.add_argument("--clams-dir", type=Path, required=True)
    parser.add_argument("--pairs", type=int, default=50, help="pairs a paradigm (accuracy)")
    parser.add_argument("--parts", default="accuracy",
                        help="accuracy (the three sets through helm-run and the report) and/or "
                             "whole (whole helm-run processes, plain then ~bow, timed); each "
                             "writes its own section")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "bow-acc",
                        help="accuracy: where helm-run writes (its runs stay, for the report)")
    parser.add_argument("--no-runs", action="store_true",
                        help="accuracy: report on the runs already in --workdir, run nothing")
    parser.add_argument("--top", type=int, default=4,
                        help="accuracy: suites per model in the table of the most changed")
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args()
    env = data_env(args.suites_dir, args.blimp_dir, args.clams_dir)
    parts = args.parts.split(",")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    header = [f"{time.strftime('%Y-%m-%d')}, commit {commit()}, {machine()}; load before: {load}.",
              f"`python {SCRIPT} {' '.join(sys.argv[1:])}`"]
    if "accuracy" in parts:
        report(["## Word-boundary correction: accuracy on the embedded models", "", *header, ""]
               + accuracy_lines(args, env), args.output, SCRIPT)
    if "whole" in parts:
        report(["## Word-boundary correction: what a whole run costs", "", *header]
               + whole_lines(args.models.split(","), env),
               args.output, f"{SCRIPT} (whole runs)")


def report(lines: list[str], output: Path | None, section: str) -> None:
    text = "\n".join(lines) + "\n"
    print(text)
    if output is not None:
        write_section(output, text, section)


if __name__ == "__main__":
    main()
