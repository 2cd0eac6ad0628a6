"""Benchmark: the embedded models on every paradigm of CLAMS, RuBLiMP, TurBLiMP and SLING through
``helm-run``, beside the papers' figures.

One ``helm-run`` per model (default: Gemma-3-270M, trained on many languages, and SmolLM2-135M,
English-centred), each over a run-entries file of every suite of the chosen data sets (187 in
all), timed as a whole process under ``/usr/bin/time -v``. ``--pairs N`` scores N pairs per
paradigm: HELM's own sample (``--max-eval-instances N``: ``numpy`` seeded with 0, drawn without
replacement, so a larger N holds a smaller N's pairs; a paradigm with at most N pairs is run
whole). Then it writes, per data set, the accuracy per paradigm and its means per language and
group (CLAMS: per language and construction; RuBLiMP: per level; TurBLiMP: base and
experimental; SLING: per phenomenon) with 95% intervals, as ``syntaxgym-helm report`` computes
them (:mod:`syntaxgym_helm.report.pairs_summary`), beside CLAMS's published figures (the other
papers' are cited); into ``--output`` (docs/multilingual.md, between this script's markers) and
into the report (``<workdir>/report/<run suite>/summary.md``, with the region plots).

Accuracy is the whole-sentence comparison, ``(*;%good%) < (*;%bad%)``, as the papers count it.
Not a test. From the project root, e.g. (a tiny check: 3 pairs of 3 paradigms of each
data set, spread over its languages and groups)::

    python benchmarks/bench_pairs_models.py --data ../shared/multilingual --workdir /tmp/pairs \\
        --pairs 3 --paradigms 3

and the full run (about an hour on 2 cores with ``--pairs 50``)::

    python benchmarks/bench_pairs_models.py --data ../shared/multilingual --workdir /tmp/pairs \\
        --pairs 50 --output docs/multilingual.md

``--reuse`` writes the section from the finished runs in ``--workdir`` without running again.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import subprocess
import sys
from pathlib import Path

from markdown_sections import commit, machine, write_section

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from syntaxgym_helm.core.minimal_pairs.catalogue import DATASETS, LANGUAGE_NAMES  # noqa: E402
from syntaxgym_helm.core.uncertainty import (  # noqa: E402
    bootstrap_interval,
    mean_of_means,
    wilson_interval,
)
from syntaxgym_helm.harness.leaderboard import run_entries_conf  # noqa: E402
from syntaxgym_helm.report.build import write_report  # noqa: E402
from syntaxgym_helm.report.pairs_summary import (  # noqa: E402
    PairResults,
    dataset_summary_markdown,
)
from syntaxgym_helm.report.runs import assign_labels, find_run_dirs, load_runs  # noqa: E402

SCRIPT = "benchmarks/bench_pairs_models.py"
BIN = Path(sys.executable).parent
MODELS = ("syntaxgym/gemma-3-270m-q4_k_m", "syntaxgym/smollm2-135m-instruct-q4_1")
DATA_SETS = ("clams", "rublimp", "turblimp", "sling")
RUN_SUITE = "pairs_models"


def suites(datasets: list[str], paradigms: int | None) -> list[str]:
    """Every suite of ``datasets`` (or ``paradigms`` of each, evenly spaced in the tables' order,
    so a quick check meets several languages and groups)."""
    chosen = []
    for name in datasets:
        files = DATASETS[name].files()
        step = max(1, len(files) // paradigms) if paradigms else 1
        chosen += [f.suite for f in files[::step][:paradigms]]
    return chosen


def language_table(runs: list, datasets: list[str]) -> str:
    """Per language, over every data set: each model's mean paradigm accuracy (95% interval as
    the report's: Wilson for one paradigm, else a bootstrap with items resampled within
    paradigms) and how many paradigms that is."""
    outcomes: dict[str, dict[str, list[list[float]]]] = {}
    models: list[str] = []
    for name in datasets:
        results = PairResults.of(runs, DATASETS[name])
        files = results.files
        for model in results.models:
            models += [model] if model not in models else []
            for key, values in results.outcomes[model].items():
                if values:
                    language = LANGUAGE_NAMES[files[key].language]
                    outcomes.setdefault(language, {}).setdefault(model, []).append(values)
    lines = ["| language | " + " | ".join(models) + " |", "|---|" + "---:|" * len(models)]
    order = list(LANGUAGE_NAMES.values())
    for language, by_model in sorted(outcomes.items(), key=lambda kv: order.index(kv[0])):
        cells = []
        for model in models:
            groups = by_model.get(model, [])
            interval = (wilson_interval(int(sum(groups[0])), len(groups[0])) if len(groups) == 1
                        else bootstrap_interval(groups)) if groups else None
            cells.append(f"{mean_of_means(groups):.3f} {interval.text()} ({len(groups)})"
                         if interval else "–")
        lines.append(f"| {language} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def run(workdir: Path, model: str, names: list[str], pairs: int, data: Path) -> tuple[float, float]:
    """One helm-run of ``model`` on ``names``; its whole-process wall seconds and peak GB."""
    workdir.mkdir(parents=True, exist_ok=True)
    conf = workdir / "pairs.conf"
    conf.write_text(run_entries_conf(names, model=model))
    tag = model.split("/")[-1]
    timing = workdir / f"time_{tag}.txt"
    env = {**os.environ, **{DATASETS[n].env_var: str(data / n) for n in DATA_SETS}}
    command = [str(BIN / "helm-run"), "--conf-paths", str(conf), "--suite", RUN_SUITE,
               "--max-eval-instances", str(pairs)]
    (workdir / f"command_{tag}").write_text(" ".join(command))
    with open(workdir / f"log_{tag}", "w") as log:
        subprocess.run(["/usr/bin/time", "-v", "-o", str(timing), *command], cwd=workdir,
                       stdout=log, stderr=subprocess.STDOUT, check=True, env=env)
    return whole_process(timing)


def whole_process(timing: Path) -> tuple[float, float]:
    text = timing.read_text()
    clock = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", text)
    hours, minutes, seconds = (float(part or 0) for part in clock.groups())  # type: ignore[union-attr]
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    return hours * 3600 + minutes * 60 + seconds, int(peak.group(1)) / 1e6 if peak else 0.0


def section(workdir: Path, args: argparse.Namespace) -> str:
    runs = assign_labels(load_runs(find_run_dirs(workdir / "benchmark_output", RUN_SUITE),
                                   progress=False))
    files = write_report(runs, workdir / "report" / RUN_SUITE)
    started = (workdir / "started").read_text().strip() if (workdir / "started").exists() else "?"
    lines = [
        f"## Minimal pairs beyond English: {', '.join(DATASETS[n].title for n in args.datasets)}"
        " on the embedded models, beside the papers", "",
        f"Run {started} with `python {SCRIPT} --data {args.data} --workdir {workdir} --pairs "
        f"{args.pairs}" + (f" --paradigms {args.paradigms}" if args.paradigms else "")
        + f" --models {' '.join(args.models)}`: one `helm-run` per model over every paradigm "
        f"({len(suites(args.datasets, args.paradigms))} suites), {args.pairs} pairs each "
        "(HELM's sample: numpy seeded with 0, without replacement; a paradigm with fewer pairs "
        f"whole). The report of the same runs: `{files.summary}`.", "",
        f"Commit {commit()}. Machine: {machine()}.", "",
        "| model | whole process | peak memory |", "|---|---:|---:|",
    ]
    for model in args.models:
        timing = workdir / f"time_{model.split('/')[-1]}.txt"
        if timing.exists():
            wall, peak = whole_process(timing)
            lines.append(f"| {model} | {wall / 60:.1f} min | {peak:.2f} GB |")
    lines += ["", "### Per language, over the data sets", "",
              "Each model's mean paradigm accuracy, its 95% interval (Wilson for one paradigm, "
              "else a bootstrap with pairs resampled within paradigms) and (in brackets) the "
              "number of paradigms.", "",
              language_table(runs, args.datasets), ""]
    for name in args.datasets:
        text = dataset_summary_markdown(runs, DATASETS[name])
        # The report's pointer to its region plots: here they are in the report folder.
        text = re.sub(r"\n\nWhere in the sentence the pairs differ[^\n]*", "", text)
        lines.append(re.sub(r"^(#+) ", lambda m: "#" * (len(m.group(1)) + 2) + " ", text,
                            flags=re.MULTILINE))
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS))
    parser.add_argument("--datasets", nargs="+", default=list(DATA_SETS), choices=DATA_SETS)
    parser.add_argument("--pairs", type=int, default=50, help="pairs per paradigm (HELM's sample)")
    parser.add_argument("--paradigms", type=int, help="only N paradigms of each data set, evenly "
                        "spaced (a quick check); default: all")
    parser.add_argument(
        "--data",
        type=Path,
        default=ROOT.parent / "shared" / "multilingual",
        help="a folder of <data set>/ offline folders (default ../shared/multilingual)",
    )
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--reuse", action="store_true",
                        help="write the section from the finished runs in --workdir")
    parser.add_argument("--output", type=Path, help="write the section into this Markdown file")
    args = parser.parse_args()
    args.data = args.data.resolve()
    if not args.reuse:
        names = suites(args.datasets, args.paradigms)
        args.workdir.mkdir(parents=True, exist_ok=True)
        (args.workdir / "started").write_text(dt.datetime.now().isoformat(timespec="seconds"))
        for model in args.models:
            run(args.workdir, model, names, args.pairs, args.data)
    text = section(args.workdir, args)
    if args.output:
        write_section(args.output, text, SCRIPT)
    print(text)


if __name__ == "__main__":
    main()
