"""Benchmark: ZhoBLiMP and the Mandarin suites of Wang et al. (2021) on the embedded models, and
ZhoBLiMP beside lm-evaluation-harness's ``zhoblimp`` tasks: the same pairs, the same GGUF, the
same context token; per pair, the two verdicts and log-probabilities, and each tool's whole
process time.

From the project root, with this checkout's environment (``make install``) and lm-eval 0.4.13's
(``--lmeval-venv``; ``benchmarks/bench_field_scale.py`` makes one). A quick check (3 pairs of 6
paradigms, SmolLM2 only, a few minutes)::

    .venv/bin/python benchmarks/bench_zhoblimp.py --zhoblimp-dir ../shared/zhoblimp \\
        --workdir /tmp/zb --pairs 3 --paradigms 6 --models syntaxgym/smollm2-135m-instruct-q4_1

and the full run (every pair of the 118 paradigms and the 28 Mandarin suites, both models, on a
quiet machine)::

    .venv/bin/python benchmarks/bench_zhoblimp.py --zhoblimp-dir ../shared/zhoblimp \\
        --workdir /tmp/zb --output BENCHMARKS.md

Parts (``--parts``, default all; each tool's run is a process of its own, timed whole under
``/usr/bin/time -v``: wall time, CPU time, peak resident memory):

- ``ours``: one ``helm-run`` per model of the chosen paradigms (``ties=pass``, as lm-eval counts
  a tie: its ``argmax`` picks the good sentence), in a fresh folder. With every pair
  (``--pairs 300``) the suites are run by name, read from the archive in ``--zhoblimp-dir``
  (``SYNTAXGYM_ZHOBLIMP_DIR``), so the run converts them too; with a sample, the first N pairs
  of each paradigm are written to JSON-lines files, converted here and run by path.
- ``lmeval``: ``lm-eval run`` per model on the same pairs: lm-eval's own ``zhoblimp`` task
  template (``doc_to_choice`` the two sentences, ``target_delimiter: ""``, ``acc`` and
  ``acc_norm``), read from the same JSON-lines files, the same GGUF in fp32 through its ``hf``
  model, ``prefix_token_id`` our context token (SmolLM2 ``<|endoftext|>``, Gemma ``<bos>``:
  lm-eval's own default for SmolLM2 is ``<|im_start|>``), batch 32, a fresh datasets cache.
- ``parity``: per pair, our verdict (good sentence's summed surprisal strictly lower, or equal:
  ``ties=pass``) against lm-eval's ``acc``, and ours under the ``char`` score against its
  ``acc_norm`` (log-likelihood over characters); the largest difference of the sentence
  log-probabilities.
- ``mandarin``: one ``helm-run`` per model of the 28 Mandarin suites (``run_specs/
  syntaxgym_mandarin.conf``); item accuracy and each prediction's accuracy (the paper's figure
  for Classifier is the mean of its four predictions').

``--reuse`` writes the section from ``results.json`` in ``--workdir`` without running anything;
``--output FILE`` writes it into FILE between this script's markers.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import shutil
import sys
import tarfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench_scoring import timed
from markdown_sections import commit, machine, write_section

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from syntaxgym_helm.clients.embedded.catalogue import (  # noqa: E402
    GEMMA3_270M,
    SMOLLM2_135M,
    EmbeddedModel,
)
from syntaxgym_helm.core.minimal_pairs.catalogue import DATASETS, convert_file  # noqa: E402
from syntaxgym_helm.core.minimal_pairs.fetch import write_suite  # noqa: E402

SCRIPT = "benchmarks/bench_zhoblimp.py"
BIN = Path(sys.executable).parent
RUN_SUITE = "zhoblimp_bench"
MANDARIN_SUITE = "mandarin_bench"
MODELS = {SMOLLM2_135M.syntaxgym_name: SMOLLM2_135M, GEMMA3_270M.syntaxgym_name: GEMMA3_270M}
PARTS = ("ours", "lmeval", "parity", "mandarin")
ZHOBLIMP = DATASETS["zhoblimp"]


def tag(model: str) -> str:
    return model.split("/")[-1]


# ------------------------------------------------------------------------------------------------
# The pairs
# ------------------------------------------------------------------------------------------------

def paradigms(count: int | None) -> list[str]:
    """Every paradigm (by UID), or ``count`` of them evenly spaced over the phenomena."""
    uids = [f.paradigm for f in sorted(ZHOBLIMP.files(), key=lambda f: (f.group, f.paradigm))]
    if not count or count >= len(uids):
        return sorted(uids)
    step = len(uids) / count
    return sorted(uids[int(i * step)] for i in range(count))


def write_pairs(args: argparse.Namespace) -> Path:
    """The chosen paradigms' first ``--pairs`` pairs as ``<workdir>/data/ZhoBLiMP/<UID>.jsonl``
    (what lm-eval reads; and ours when they are a sample), unpacked from the archive."""
    folder = args.workdir / "data" / "ZhoBLiMP"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    archive = args.zhoblimp_dir / "ZhoBLiMP.tar.gz"
    with tarfile.open(archive, mode="r:gz") as tar:
        for uid in args.paradigms:
            handle = tar.extractfile(f"ZhoBLiMP/{uid}.jsonl")
            assert handle is not None
            lines = [line for line in handle.read().decode("utf-8").splitlines() if line.strip()]
            (folder / f"{uid}.jsonl").write_text("\n".join(lines[:args.pairs]) + "\n",
                                                 encoding="utf-8")
    human = args.zhoblimp_dir / "human_validation_result.csv"
    if human.is_file():  # beside the sample: its suites' meta takes their human agreement
        shutil.copyfile(human, folder.parent / human.name)
    return folder


def lmeval_tasks(folder: Path, data: Path, uids: Sequence[str]) -> list[str]:
    """lm-eval's zhoblimp template (lm_eval/tasks/zhoblimp/_template_yaml) on local files."""
    folder.mkdir(parents=True, exist_ok=True)
    names = []
    for uid in uids:
        name = f"sgbench_zhoblimp_{uid}"
        (folder / f"{name}.yaml").write_text("\n".join([
            f"task: {name}", "dataset_path: json", "dataset_kwargs:", "  data_files:",
            f"    train: {data / (uid + '.jsonl')}", "output_type: multiple_choice",
            "test_split: train", 'doc_to_text: ""', 'target_delimiter: ""', "doc_to_target: 0",
            'doc_to_choice: "{{[sentence_good, sentence_bad]}}"', "num_fewshot: 0",
            "metric_list:", "  - metric: acc", "    aggregation: mean",
            "    higher_is_better: true", "  - metric: acc_norm", "    aggregation: mean",
            "    higher_is_better: true", "metadata:", "  version: 0"]) + "\n")
        names.append(name)
    return names


# ------------------------------------------------------------------------------------------------
# The runs
# ------------------------------------------------------------------------------------------------

def helm_run(args: argparse.Namespace, kind: str, model: str, entries: list[str],
             run_suite: str) -> dict[str, Any]:
    """One helm-run of ``entries`` (run-entry descriptions) in the fresh folder
    ``<workdir>/<kind>-<model>``, timed whole."""
    folder = args.workdir / f"{kind}-{tag(model)}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    conf = folder / "entries.conf"
    conf.write_text("entries: [\n" + "".join(
        f'  {{description: "{entry},model={model}", priority: 1}}\n' for entry in entries) + "]\n")
    command = [str(BIN / "helm-run"), "--conf-paths", str(conf), "--suite", run_suite,
               "--max-eval-instances", "100000"]
    env = {**os.environ, ZHOBLIMP.env_var: str(args.zhoblimp_dir), "PYTHONPATH": str(ROOT)}
    result = timed(command, folder, env, args.workdir / f"{kind}-{tag(model)}.log")
    result.pop("log")
    result.update(folder=str(folder), model=model, entries=len(entries),
                  command=" ".join(["helm-run", "--conf-paths", "entries.conf", *command[-4:]]))
    return result


def ours_part(args: argparse.Namespace, model: str, data: Path) -> dict[str, Any]:
    if args.pairs >= 300:  # every pair: the suites by name, converted by the run itself
        specs = [f"zhoblimp_{uid}" for uid in args.paradigms]
    else:  # a sample: converted here (a fraction of a second) and run by path
        suites = args.workdir / "suites"
        suites.mkdir(parents=True, exist_ok=True)
        specs = [str(write_suite(convert_file(ZHOBLIMP, data / f"{uid}.jsonl"), suites))
                 for uid in args.paradigms]
    return helm_run(args, "ours", model, [f"syntaxgym:suite={s},ties=pass" for s in specs],
                    RUN_SUITE)


def lmeval_part(args: argparse.Namespace, model: str, data: Path) -> dict[str, Any]:
    from transformers import AutoTokenizer

    embedded: EmbeddedModel = MODELS[model]
    gguf = Path(embedded.gguf_path())
    folder = args.workdir / f"lmeval-{tag(model)}"
    shutil.rmtree(folder, ignore_errors=True)
    tasks = lmeval_tasks(folder / "tasks", data, args.paradigms)
    bos = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name).convert_tokens_to_ids(
        embedded.bos_text)
    model_args = (f"pretrained={gguf.parent},gguf_file={gguf.name},dtype=float32,"
                  f"prefix_token_id={bos}")
    command = [str(args.lmeval_venv / "bin" / "lm-eval"), "run", "--model", "hf",
               "--model_args", model_args, "--tasks", ",".join(tasks), "--include_path",
               str(folder / "tasks"), "--batch_size", "32", "--device", "cpu",
               "--output_path", str(folder / "output"), "--log_samples"]
    cache = folder / "hf-cache"  # cold: a fresh datasets cache
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(HF_HOME=str(cache), HF_DATASETS_CACHE=str(cache / "datasets"),
               HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    result = timed(command, args.workdir, env, args.workdir / f"lmeval-{tag(model)}.log")
    result.pop("log")
    result.update(folder=str(folder), model=model,
                  command=" ".join(["lm-eval", *command[1:]]).replace(str(args.workdir),
                                                                       "WORKDIR"))
    return result


# ------------------------------------------------------------------------------------------------
# Verdicts
# ------------------------------------------------------------------------------------------------

Verdicts = dict[tuple[str, int], dict[str, Any]]


def lmeval_verdicts(folder: Path) -> Verdicts:
    """(UID, pairID) -> log-likelihoods (nats) of the good and bad sentence, acc, acc_norm."""
    found: Verdicts = {}
    for path in (folder / "output").rglob("samples_*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            sample = json.loads(line)
            good, bad = (float(resp[0]) for resp in sample["filtered_resps"])
            doc = sample["doc"]
            found[(doc["UID"], int(doc["pairID"]))] = {
                "good": good, "bad": bad, "acc": bool(sample["acc"]),
                "acc_norm": bool(sample["acc_norm"])}
    return found


def our_verdicts(folder: Path, run_suite: str) -> Verdicts:
    """(UID, pairID) -> log-probabilities (nats) of the good and bad sentence, our verdict
    under the sum (the run's, ``ties=pass``) and under ``char`` (ties passing too)."""
    from syntaxgym_helm.core.sentence_scores import SentenceScore, rescore_item
    from syntaxgym_helm.harness.scored_items import FILE_NAME, read_scored_items

    found: Verdicts = {}
    output = folder / "benchmark_output" / "runs" / run_suite
    for path in output.glob(f"syntaxgym:*/{FILE_NAME}"):
        scored = read_scored_items(path)
        suite = scored.suite
        assert suite is not None, path
        uid = suite.name.removeprefix("zhoblimp_")
        for item, evaluation in zip(suite.items, scored.evaluations, strict=True):
            if not evaluation.scorable:
                continue
            sums = {v.condition_name: -math.fsum(v.region_surprisals(None)) * math.log(2)
                    for v in evaluation.conditions}
            char = rescore_item(suite, item, evaluation, SentenceScore("char"), "pass")
            found[(uid, evaluation.item_number)] = {
                "good": sums["good"], "bad": sums["bad"],
                "acc": bool(evaluation.predictions[0].holds),
                "acc_norm": bool(char.predictions[0].holds)}
    return found


def parity(ours: Verdicts, theirs: Verdicts) -> dict[str, Any]:
    common = sorted(set(ours) & set(theirs))
    deltas = [abs(ours[k][side] - theirs[k][side]) for k in common for side in ("good", "bad")]
    out: dict[str, Any] = {"ours": len(ours), "lmeval": len(theirs), "common": len(common),
                           "max_abs_logprob_difference": max(deltas, default=math.nan)}
    for metric in ("acc", "acc_norm"):
        differ = [k for k in common if ours[k][metric] != theirs[k][metric]]
        out[metric] = {"differ": len(differ), "examples": [list(k) for k in differ[:5]],
                       "ours": sum(ours[k][metric] for k in common) / max(len(common), 1),
                       "lmeval": sum(theirs[k][metric] for k in common) / max(len(common), 1)}
    out["lmeval_ties"] = sum(1 for k in common if theirs[k]["good"] == theirs[k]["bad"])
    return out


# ------------------------------------------------------------------------------------------------
# The section
# ------------------------------------------------------------------------------------------------

def render(results: dict[str, Any], args: argparse.Namespace) -> str:
    from syntaxgym_helm.report.build import write_report
    from syntaxgym_helm.report.pairs_summary import dataset_summary_markdown
    from syntaxgym_helm.report.runs import assign_labels, find_run_dirs, load_runs

    meta = results["meta"]
    lines = [
        "## ZhoBLiMP beside lm-evaluation-harness, and the Mandarin suites", "",
        f"Run {meta['started']} with `python {SCRIPT} {meta['arguments']}`: "
        f"{len(meta['paradigms'])} paradigms, {meta['pairs']} pairs each (the first of each "
        "file). Commit " + meta["commit"] + f". Machine: {meta['machine']}.", "",
        "| model | tool | pairs | whole process | CPU | peak memory |",
        "|---|---|---:|---:|---:|---:|"]
    for model in meta["models"]:
        for tool in ("ours", "lmeval"):
            run = results.get(f"{tool}-{tag(model)}")
            if run:
                scored = results.get(f"parity-{tag(model)}", {}).get(tool, "–")
                lines.append(f"| {tag(model)} | {'syntaxgym-helm' if tool == 'ours' else 'lm-eval'}"
                             f" | {scored} | {run['wall_s']:.1f} s | {run['cpu_s']:.0f} s | "
                             f"{(run['peak_rss_mb'] or 0) / 1024:.2f} GiB |")
        ours, theirs = results.get(f"ours-{tag(model)}"), results.get(f"lmeval-{tag(model)}")
        if ours and theirs:
            lines.append(f"| {tag(model)} | ours / lm-eval | | "
                         f"**{ours['wall_s'] / theirs['wall_s']:.2f}x** | "
                         f"{ours['cpu_s'] / theirs['cpu_s']:.2f}x | |")
    lines += ["", "Verdicts per pair, ours against lm-eval's (`acc`: summed log-probabilities, "
              "a tie counting right in both; `acc_norm`: over characters, ours the `char` "
              "score):", "", "| model | pairs compared | `acc` differ | ours / lm-eval `acc` | "
              "`acc_norm` differ | ours / lm-eval `acc_norm` | lm-eval ties | "
              "largest log-probability difference (nats) |",
              "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for model in meta["models"]:
        found = results.get(f"parity-{tag(model)}")
        if found:
            acc, norm = found["acc"], found["acc_norm"]
            lines.append(f"| {tag(model)} | {found['common']:,} | {acc['differ']} | "
                         f"{acc['ours']:.4f} / {acc['lmeval']:.4f} | {norm['differ']} | "
                         f"{norm['ours']:.4f} / {norm['lmeval']:.4f} | {found['lmeval_ties']} | "
                         f"{found['max_abs_logprob_difference']:.2g} |")
    lines += ["", "Commands: " + "; ".join(
        f"`{results[key]['command']}`" for key in sorted(results)
        if isinstance(results[key], dict) and "command" in results[key]), ""]
    for run_suite, kind, title in ((RUN_SUITE, "ours", "ZhoBLiMP"),
                                   (MANDARIN_SUITE, "mandarin", "Mandarin suites")):
        outputs = [args.workdir / f"{kind}-{tag(model)}" / "benchmark_output"
                   for model in meta["models"]]
        dirs = [d for output in outputs if output.is_dir()
                for d in find_run_dirs(output, run_suite)]
        if not dirs:
            continue
        runs = assign_labels(load_runs(dirs, progress=False))
        files = write_report(runs, args.workdir / "report" / run_suite)
        if run_suite == RUN_SUITE:
            text = dataset_summary_markdown(runs, ZHOBLIMP)
        else:
            text = files.summary.read_text(encoding="utf-8")
        lines += [f"### {title}: the report", "",
                  text.replace("\n# ", "\n#### ").replace("\n## ", "\n#### "), ""]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--zhoblimp-dir", type=Path, default=ROOT.parent / "shared" / "zhoblimp",
                        help="a folder holding ZhoBLiMP.tar.gz (and human_validation_result.csv)")
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--pairs", type=int, default=300, help="the first N pairs of each "
                        "paradigm (300: all, run by name)")
    parser.add_argument("--paradigms", type=int, help="N paradigms evenly spaced over the "
                        "phenomena (default: all 118)")
    parser.add_argument("--parts", default=",".join(PARTS))
    parser.add_argument("--lmeval-venv", type=Path, default=ROOT.parent / "venvs" / "lmeval")
    parser.add_argument("--reuse", action="store_true")
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()
    args.workdir = args.workdir.resolve()
    args.zhoblimp_dir = args.zhoblimp_dir.resolve()
    args.paradigms = paradigms(args.paradigms)
    parts = args.parts.split(",")
    store = args.workdir / "results.json"
    if args.reuse:
        results = json.loads(store.read_text())
    else:
        args.workdir.mkdir(parents=True, exist_ok=True)
        results = {"meta": {
            "started": dt.datetime.now().isoformat(timespec="seconds"), "commit": commit(),
            "machine": machine(), "models": args.models, "pairs": min(args.pairs, 300),
            "paradigms": args.paradigms, "arguments": " ".join(sys.argv[1:])}}
        data = write_pairs(args)
        for model in args.models:
            if "ours" in parts or "parity" in parts:
                results[f"ours-{tag(model)}"] = ours_part(args, model, data)
            if "lmeval" in parts or "parity" in parts:
                results[f"lmeval-{tag(model)}"] = lmeval_part(args, model, data)
            if "mandarin" in parts:
                from syntaxgym_helm.core.registry import converted_suites

                results[f"mandarin-{tag(model)}"] = helm_run(
                    args, "mandarin", model, [f"syntaxgym:suite={s}" for s in converted_suites()],
                    MANDARIN_SUITE)
            store.write_text(json.dumps(results, indent=1))
    for model in results["meta"]["models"]:
        if "parity" in parts and f"ours-{tag(model)}" in results and \
                f"lmeval-{tag(model)}" in results:
            results[f"parity-{tag(model)}"] = parity(
                our_verdicts(Path(results[f"ours-{tag(model)}"]["folder"]), RUN_SUITE),
                lmeval_verdicts(Path(results[f"lmeval-{tag(model)}"]["folder"])))
    store.write_text(json.dumps(results, indent=1))
    text = render(results, args)
    if args.output:
        write_section(args.output, text, SCRIPT)
    print(text)


if __name__ == "__main__":
    main()
