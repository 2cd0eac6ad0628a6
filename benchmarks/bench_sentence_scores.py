"""Benchmark: BLiMP's accuracy under each sentence score, beside lm-evaluation-harness's ``acc``,
``acc_norm`` and ``acc_bytes`` on the same pairs and GGUF.

One helm-run of the paradigms (``syntaxgym/smollm2-135m-instruct-q4_1``), then lm-eval twice on
the same pairs and weights in fp32 (its own BLiMP template, with ``acc``, ``acc_norm`` and
``acc_bytes``): under its stock settings (context ``<|im_start|>``, a space before the sentence)
and ``matched`` (``prefix_token_id`` = ``<|endoftext|>`` and ``target_delimiter: ""``, so that it
scores the tokens we score). Our accuracy under every sentence score
(:mod:`syntaxgym_helm.core.sentence_scores`) is worked out from the run's token surprisals alone,
as ``syntaxgym-helm report --sentence-score`` does, and set beside lm-eval's three; ``char`` is
lm-eval's ``acc_norm`` (the log-likelihood over the sentence's length in characters) and ``byte``
its ``acc_bytes``, so under ``matched`` settings they must agree pair for pair, except where lm-eval
breaks a tie in favour of the good sentence (``numpy.argmax`` takes the first) and we count a tie
as a failure. From the project root (uses bench_field_scale.py's helm-run and lm-eval parts)::

    .venv/bin/python benchmarks/bench_sentence_scores.py --workdir /tmp/sscores \\
        --lmeval-venv ../venvs/lmeval --output BENCHMARKS.md

``--reuse`` writes the section from ``--workdir``'s ``results.json`` without running anything;
``--keep-ours`` keeps the paradigms an earlier helm-run finished in ``--workdir`` and runs the rest.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path
from typing import Any

from bench_field_scale import RUN_SUITE, helm_run, lmeval_run
from markdown_sections import commit, machine, write_section

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SCRIPT = "benchmarks/bench_sentence_scores.py"
#: The 4 paradigms of bench_field_scale.py's comparison and 2 where the sentences of a pair
#: often differ in their number of words (a verb's argument dropped or added), where the
#: normalisations differ most.
DEFAULT_PARADIGMS = ("anaphor_number_agreement", "determiner_noun_agreement_2",
                     "only_npi_licensor_present", "superlative_quantifiers_2",
                     "drop_argument", "intransitive")
SCORES = ("sum", "mean", "char", "byte", "zhoblimp")
LMEVAL_METRICS = ("acc", "acc_norm", "acc_bytes")
VARIANTS = {"stock": "stock BLiMP settings (context `<|im_start|>`, a space before the sentence)",
            "matched": "`prefix_token_id` = `<|endoftext|>`, `target_delimiter: \"\"` (the tokens "
                       "we score)"}


def lmeval_samples(folder: Path) -> dict[tuple[str, int], dict[str, Any]]:
    """(paradigm, pairID) -> lm-eval's log-likelihoods of the good and the bad sentence and its
    verdict under each of :data:`LMEVAL_METRICS`, from its logged samples."""
    found = {}
    for path in (folder / "output").rglob("samples_*.jsonl"):
        with open(path, encoding="utf-8") as lines:
            for line in lines:
                sample = json.loads(line)
                doc = sample["doc"]
                good, bad = (float(resp[0]) for resp in sample["filtered_resps"])
                found[(doc["UID"], int(doc["pairID"]))] = {
                    "good": good, "bad": bad, **{m: bool(sample[m]) for m in LMEVAL_METRICS}}
    return found


def our_verdicts(folder: Path, alpha: float) -> dict[str, dict[tuple[str, int], Any]]:
    """Score name -> (paradigm, pairID) -> whether the good sentence won under it (None: the
    item is unscorable), worked out from the run's kept token surprisals; and ``"logprob"`` ->
    (paradigm, pairID) -> the good and the bad sentence's log-probability (nats)."""
    from syntaxgym_helm.core.sentence_scores import parse_sentence_score, rescore_item
    from syntaxgym_helm.harness.scored_items import FILE_NAME, read_scored_items

    found: dict[str, dict[tuple[str, int], Any]] = {
        name: {} for name in (*SCORES, "logprob", "tokens")}
    output = folder / "benchmark_output" / "runs" / RUN_SUITE
    for path in sorted(output.glob(f"syntaxgym:*/{FILE_NAME}")):
        scored = read_scored_items(path)
        if isinstance(scored, tuple):
            _, suite, _, evaluations = scored
        else:  # the run format's reader gives an object
            suite, evaluations = scored.suite, scored.evaluations
        uid = suite.name.removeprefix("blimp_")
        for evaluation in evaluations:
            if evaluation.scorable:
                found["tokens"][(uid, evaluation.item_number)] = tuple(
                    len(values.region_surprisals(None)) for values in evaluation.conditions)
                found["logprob"][(uid, evaluation.item_number)] = tuple(
                    -math.fsum(values.region_surprisals(None)) * math.log(2)
                    for values in sorted(evaluation.conditions,
                                         key=lambda v: v.condition_name != "good"))
        for name in SCORES:
            score = parse_sentence_score(f"{name}:{alpha}" if name == "zhoblimp" else name)
            for item, evaluation in zip(suite.items, evaluations, strict=True):
                rescored = rescore_item(suite, item, evaluation, score)
                found[name][(uid, item.item_number)] = (
                    rescored.predictions[0].holds if rescored.scorable else None)
    return found


def compare(results: dict[str, Any], alpha: float) -> dict[str, Any]:
    """Accuracies per paradigm and overall: ours under each score, lm-eval's under each metric
    and settings, and how many pairs' verdicts differ between ours and lm-eval's matched run."""
    ours: dict[str, dict[tuple[str, int], Any]] = {}
    for run in results["ours"]:
        for name, found in our_verdicts(Path(run["folder"]), alpha).items():
            ours.setdefault(name, {}).update(found)
    theirs = {variant: lmeval_samples(Path(results[f"lmeval-{variant}"]["folder"]))
              for variant in VARIANTS if f"lmeval-{variant}" in results}
    paradigms = results["paradigms"]
    table: dict[str, dict[str, float]] = {}
    for uid in [*paradigms, "all"]:
        row: dict[str, float] = {}
        keys = [k for k in ours["sum"] if uid in ("all", k[0])]
        for name in SCORES:
            row[f"ours {name}"] = sum(bool(ours[name][k]) for k in keys) / len(keys)
        for variant, samples in theirs.items():
            mine = [k for k in samples if uid in ("all", k[0])]
            for metric in LMEVAL_METRICS:
                row[f"lm-eval {variant} {metric}"] = (sum(samples[k][metric] for k in mine)
                                                      / len(mine))
        table[uid] = row
    matched = theirs.get("matched", {})
    agreement = {}
    for name, metric in (("sum", "acc"), ("char", "acc_norm"), ("byte", "acc_bytes")):
        common = sorted(set(ours[name]) & set(matched))
        differ = [k for k in common if bool(ours[name][k]) != matched[k][metric]]
        ties = [k for k in differ if _tie(matched[k], metric, results["lengths"].get(_key(k)))]
        if not matched:
            break
        agreement[name] = {"lmeval": metric, "pairs": len(common), "differ": len(differ),
                           "of_which_ties": len(ties), "examples": [list(k) for k in differ[:5]]}
    deltas = [abs(mine - theirs) for key, pair in ours["logprob"].items() if key in matched
              for mine, theirs in zip(pair, (matched[key]["good"], matched[key]["bad"]),
                                      strict=True)]
    unequal = {"tokens": sum(len(set(counts)) > 1 for counts in ours["tokens"].values()),
               "characters": sum(lengths[0][0] != lengths[0][1]
                                 for lengths in results["lengths"].values()),
               "bytes": sum(lengths[1][0] != lengths[1][1]
                            for lengths in results["lengths"].values())}
    return {"table": table, "agreement": agreement, "pairs": len(ours["sum"]), "unequal": unequal,
            "max_delta": max(deltas, default=math.nan)}


def _key(key: tuple[str, int]) -> str:
    return f"{key[0]}/{key[1]}"


def _tie(sample: dict[str, Any], metric: str, lengths: list[int] | None) -> bool:
    """Whether lm-eval's two normalised log-likelihoods under ``metric`` are equal."""
    if metric == "acc" or lengths is None:
        return sample["good"] == sample["bad"]
    index = 0 if metric == "acc_norm" else 1
    return sample["good"] / lengths[index][0] == sample["bad"] / lengths[index][1]


def sentence_lengths(blimp_dir: Path, paradigms: list[str]) -> dict[str, list[list[int]]]:
    """pair key -> [[characters good, bad], [UTF-8 bytes good, bad]], as lm-eval counts them."""
    from bench_field_scale import pairs

    found = {}
    for record in pairs(blimp_dir, paradigms):
        good, bad = record["sentence_good"], record["sentence_bad"]
        found[f"{record['UID']}/{record['pairID']}"] = [
            [len(good), len(bad)], [len(good.encode("utf-8")), len(bad.encode("utf-8"))]]
    return found


def render(results: dict[str, Any], alpha: float) -> str:
    found = compare(results, alpha)
    table = found["table"]
    ran = [v for v in VARIANTS if f"lmeval-{v}" in results]
    columns = [*(f"ours {n}" for n in SCORES),
               *(f"lm-eval {v} {m}" for v in ran for m in LMEVAL_METRICS)]
    headers = [*(f"ours `{n}`" + (f" (α={alpha:g})" if n == "zhoblimp" else "") for n in SCORES),
               *(f"lm-eval {v} `{m}`" for v in ran for m in LMEVAL_METRICS)]
    meta = results["meta"]
    count = len(results["paradigms"])
    lines = [
        f"## BLiMP under each sentence score, beside lm-evaluation-harness ({count} paradigms)",
        "",
        f"{machine()}; commit {meta['commit']}; {meta['started']}. Load before: "
        f"`{meta['load_before']}`; after: `{meta['load_after']}` (accuracies do not depend "
        "on the load). `python benchmarks/bench_sentence_scores.py` "
        f"(`{' '.join(meta['arguments'])}`).",
        "",
        f"{found['pairs']:,} pairs scored by helm-run ("
        + "; ".join(f"`{run['command']}`" for run in results["ours"])
        + ") on "
        "`syntaxgym/smollm2-135m-instruct-q4_1`; our accuracy under each sentence score is "
        "worked out from the token surprisals the run kept (`syntaxgym-helm report "
        "--sentence-score NAME`: no second scoring). lm-eval 0.4.13 on the same pairs and "
        "GGUF in fp32 (its BLiMP template with `acc`, `acc_norm`, `acc_bytes`): "
        + "; ".join(f"**{v}**: {text}" for v, text in VARIANTS.items() if v in ran)
        + "."
        + (
            ""
            if len(ran) == len(VARIANTS)
            else " Not in this run (`--variants`): "
            + ", ".join(v for v in VARIANTS if v not in ran) + "."
        ),
        "",
        "| paradigm | " + " | ".join(headers) + " |",
        "|---|" + "---:|" * len(headers),
    ]
    for uid, row in table.items():
        name = "**all**" if uid == "all" else uid
        lines.append(f"| {name} | " + " | ".join(f"{row[c]:.3f}" for c in columns) + " |")
    unequal = found["unequal"]
    lines += ["", f"Pairs whose two sentences differ in length: {unequal['tokens']:,} in tokens, "
              f"{unequal['characters']:,} in characters, {unequal['bytes']:,} in UTF-8 bytes (a "
              "score can change a verdict only there)."]
    if not found["agreement"]:
        return "\n".join(lines) + "\n"
    lines += ["", "Our verdicts beside lm-eval's under matched settings, pair for pair (the "
              "sentences' log-probabilities differ by at most "
              f"{found['max_delta']:.2g} nats between the two):", "",
              "| ours | lm-eval | pairs | verdicts differ | of which lm-eval's values tie |",
              "|---|---|---:|---:|---:|"]
    for name, row in found["agreement"].items():
        lines.append(f"| `{name}` | `{row['lmeval']}` | {row['pairs']:,} | {row['differ']} | "
                     f"{row['of_which_ties']} |")
    lines += ["", "A tie (the two sentences' scores exactly equal) fails our comparison and passes "
              "lm-eval's (`numpy.argmax` picks the first choice, the good sentence). Under stock "
              "settings lm-eval scores other tokens (the sentence after `<|im_start|>`, with a "
              "leading space), so its figures differ from ours by that, not by the score; "
              "docs/blimp.md says how each score is computed."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--paradigms", default=",".join(DEFAULT_PARADIGMS))
    parser.add_argument("--blimp-dir", type=Path, default=ROOT.parent / "shared" / "blimp")
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--lmeval-venv", type=Path, default=ROOT.parent / "lmeval-venv")
    parser.add_argument("--lmeval-batch-size", type=int, default=32)
    parser.add_argument("--alpha", type=float, default=0.5, help="ZhoBLiMP's α (default 0.5)")
    parser.add_argument("--reuse", action="store_true")
    parser.add_argument("--variants", default=",".join(VARIANTS),
                        help="lm-eval's settings to run (default: all of them)")
    parser.add_argument("--merge", type=Path, action="append", default=[],
                        help="with --reuse: also take the lm-eval parts of this results.json")
    parser.add_argument("--keep-ours", action="store_true",
                        help="keep the paradigms an earlier run finished in WORKDIR/ours and run "
                             "only the others")
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()
    # What bench_field_scale's parts read from their arguments (its defaults: the embedded
    # model, CPU).
    args.device, args.device_given, args.our_dtype = "cpu", False, None
    args.batch_size = args.prefix_cache_mb = args.workers = args.max_batch_positions = None
    args.cold_weights = False
    args.workdir = args.workdir.resolve()
    args.workdir.mkdir(parents=True, exist_ok=True)
    path = args.workdir / "results.json"
    if args.reuse:
        results = json.loads(path.read_text())
        for other in args.merge:
            results.update({key: value for key, value in json.loads(other.read_text()).items()
                            if key.startswith("lmeval-")})
    else:
        paradigms = args.paradigms.split(",")
        results = {"paradigms": paradigms,
                   "meta": {"commit": commit(), "arguments": sys.argv[1:],
                            "load_before": _load(), "started": _now()}}
        results["ours"] = []
        done = _paradigms_run(args.workdir / "ours") if args.keep_ours else set()
        if done:  # an earlier run's finished paradigms, kept
            results["ours"].append({"folder": str(args.workdir / "ours"),
                                    "command": "(an earlier run of "
                                               + ", ".join(sorted(done)) + ")"})
        missing = [uid for uid in paradigms if uid not in done]
        if missing:
            results["ours"].append(helm_run(args, "ours-more" if done else "ours", missing))
        results["lengths"] = sentence_lengths(args.blimp_dir, paradigms)
        for variant in args.variants.split(","):  # kept after each part: --reuse shows them
            results["meta"]["load_after"] = _load()
            path.write_text(json.dumps(results, indent=1))
            results[f"lmeval-{variant}"] = lmeval_run(args, f"lmeval-{variant}", paradigms,
                                                      variant, samples=True,
                                                      metrics=LMEVAL_METRICS)
        results["meta"]["load_after"] = _load()
        path.write_text(json.dumps(results, indent=1))
    text = render(results, args.alpha)
    print(text)
    if args.output:
        write_section(args.output, text, SCRIPT)


def _paradigms_run(folder: Path) -> set[str]:
    """The paradigms whose runs finished in ``folder`` (their scored items were written)."""
    output = folder / "benchmark_output" / "runs" / RUN_SUITE
    return {path.parent.name.split(",")[0].removeprefix("syntaxgym:suite=blimp_")
            for path in output.glob("syntaxgym:*/syntaxgym_scored_items.json")}


def _load() -> str:
    return " ".join(os.popen("uptime").read().split()[-5:])


def _now() -> str:
    import datetime as dt

    return dt.datetime.now().isoformat(timespec="seconds")


if __name__ == "__main__":
    main()
