"""Benchmark: word surprisal on real reading times, the Natural Stories corpus (Futrell et al.
2021).

Every word of the 10 stories (10,256 words) is scored by both embedded models with
``syntaxgym-helm surprisal`` (the stories as ``all_stories.tok`` segments them: ``--tsv
--text-column item --index-column zone --word-column word``), with and without the word-boundary
correction (one run gives both columns), timed as a whole process beside minicons'
``word_score_tokenized`` (its own virtual environment, ``minicons_words_driver.py``) on the same
words and GGUF, with and without its ``bow_correction``; the two tools' word surprisals are
compared word by word.

Then reading times: per word, the mean self-paced reading time over readers
(``processed_wordinfo.tsv``: the authors' filtering, RTs of 100-3,000 ms, readers with at least 5
of 6 comprehension questions right) is fitted by ordinary least squares (statsmodels) on a
baseline of word length and frequency (``wordfreq``'s Zipf frequency of the word without its
punctuation, lower-cased) and the same two for the one and two words before (spill-over), then on
the baseline plus a surprisal and its spill-over (the one and two words before). ΔLL is the gain
in log-likelihood per word over the baseline: in-sample, and on held-out words (10-fold
cross-validation by story position, each fold's Gaussian fit scored on its held-out words). One
row per model and correction, and GPT-3 (davinci) from the corpus' own token log-probabilities
(``probs/all_stories_gpt3.csv``: each token counts for the word its first non-space character
falls in). Words left out of the fits (the same for every row): the first and the last word of
each sentence (a sentence ends at a word ending in ``.``, ``?`` or ``!``, before closing quotes),
words with any character other than a letter or an inner apostrophe or hyphen (punctuation,
digits), and words without two words before them in their story.

The corpus is CC BY-NC-SA: it is read from ``--naturalstories`` (default ``../shared/
naturalstories``) and nothing of it is written outside ``--workdir``. From the project root::

    .venv/bin/python benchmarks/bench_naturalstories.py --workdir /tmp/ns \\
        --minicons-venv ../venvs/minicons --output BENCHMARKS.md

Parts (``--parts``): ``ours``, ``minicons``, ``fit``. ``--reuse`` writes the section from
``--workdir``'s ``results.json`` without running anything.
The section's "Fit to reading times" part belongs on docs/python_api.md ("Measured: fit to
Natural Stories reading times"): move it there from what ``--output`` receives.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from pathlib import Path
from typing import Any

from bench_scoring import timed
from markdown_sections import commit, machine, write_section

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SCRIPT = "benchmarks/bench_naturalstories.py"
BIN = Path(sys.executable).parent
MODELS = ("smollm2-135m-instruct-q4_1", "gemma-3-270m-q4_k_m")
LN2 = math.log(2)
_SENTENCE_END = re.compile(r"[.?!][\"'”’)\]]*$")
_PLAIN_WORD = re.compile(r"^[A-Za-z]+(?:['’-][A-Za-z]+)*$")
FOLDS = 10


# ------------------------------------------------------------------------------------------------
# The corpus
# ------------------------------------------------------------------------------------------------

def load_words(corpus: Path):
    """One row per word, in story and position order: ``item``, ``zone``, ``word``, ``rt`` (mean
    reading time, ms), ``readers``, ``first``/``last`` (of its sentence), ``plain``."""
    import pandas as pd

    words = pd.read_csv(corpus / "naturalstories_RTS" / "all_stories.tok", sep="\t")
    times = pd.read_csv(corpus / "naturalstories_RTS" / "processed_wordinfo.tsv", sep="\t")
    words = words.merge(times[["item", "zone", "meanItemRT", "nItem"]], on=["item", "zone"],
                        how="left").rename(columns={"meanItemRT": "rt", "nItem": "readers"})
    words = words.sort_values(["item", "zone"]).reset_index(drop=True)
    words["last"] = words["word"].map(lambda w: bool(_SENTENCE_END.search(w)))
    previous_last = words.groupby("item")["last"].shift(1, fill_value=True)
    words["first"] = previous_last.astype(bool)
    words["plain"] = words["word"].map(lambda w: bool(_PLAIN_WORD.match(w)))
    return words


def story_texts(words) -> dict[int, str]:
    """Story item -> its text: its words in order, joined by single spaces."""
    return {int(item): " ".join(group["word"]) for item, group in words.groupby("item")}


def gpt3_surprisal(corpus: Path, words) -> list[float]:
    """GPT-3's surprisal (bits) of every word from the corpus' token log-probabilities; NaN for a
    word one of whose tokens has none (each story's first token)."""
    import pandas as pd

    tokens = pd.read_csv(corpus / "probs" / "all_stories_gpt3.csv", keep_default_na=False)
    found: list[float] = []
    for item, text in story_texts(words).items():
        starts, position = [], 0
        for word in text.split(" "):
            starts.append(position)
            position += len(word) + 1
        totals = [0.0] * len(starts)
        story = tokens[tokens["story"] == item - 1]
        for token, logprob, offset in zip(
            story["token"], story["logprob"], story["offset"], strict=False
        ):
            first = int(offset) + len(token) - len(token.lstrip())
            index = _word_at(starts, first)
            totals[index] += math.nan if logprob == "" else -float(logprob) / LN2
        found += totals
    return found


def _word_at(starts: list[int], position: int) -> int:
    import bisect

    return max(bisect.bisect_right(starts, position) - 1, 0)


# ------------------------------------------------------------------------------------------------
# Scoring: ours and minicons, each a whole process
# ------------------------------------------------------------------------------------------------

def ours(args: argparse.Namespace, model: str) -> dict[str, Any]:
    """``syntaxgym-helm surprisal`` on every word of the stories, timed whole."""
    folder = args.workdir / f"ours-{model}"
    folder.mkdir(parents=True, exist_ok=True)
    output = folder / "surprisal.tsv"
    command = [str(BIN / "syntaxgym-helm"), "surprisal",
               str(args.naturalstories / "naturalstories_RTS" / "all_stories.tok"), "--tsv",
               "--text-column", "item", "--index-column", "zone", "--word-column", "word",
               "--model", f"syntaxgym/{model}", "-o", str(output)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = timed(command, folder, env, args.workdir / f"ours-{model}.log")
    result.pop("log")
    result.update(command=" ".join(["syntaxgym-helm", *command[1:]]).replace(
        str(args.naturalstories), "NATURALSTORIES").replace(str(args.workdir), "WORKDIR"),
        output=str(output), load=_load())
    return result


def read_ours(path: Path):
    import pandas as pd

    return pd.read_csv(path, sep="\t", comment="#", keep_default_na=False,
                       na_values={"surprisal_bits": [""], "surprisal_corrected_bits": [""]})


def minicons(args: argparse.Namespace, model: str, words) -> dict[str, Any]:
    """minicons' ``word_score_tokenized`` on the same stories and GGUF, without and with its
    ``bow_correction``, timed whole."""
    from syntaxgym_helm.clients.embedded.catalogue import embedded_model

    embedded = embedded_model(model)
    path = embedded.gguf_path()
    folder = args.workdir / f"minicons-{model}"
    folder.mkdir(parents=True, exist_ok=True)
    request = {"folder": str(path.parent), "gguf_file": path.name,
               "bos": None if embedded.tokenizer_adds_bos else embedded.bos_text,
               "corrections": [False, True], "texts": list(story_texts(words).values())}
    (folder / "request.json").write_text(json.dumps(request))
    command = [str(args.minicons_venv / "bin" / "python"), str(ROOT / "benchmarks" /
               "minicons_words_driver.py"), str(folder / "request.json"),
               str(folder / "words.jsonl")]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    result = timed(command, folder, env, args.workdir / f"minicons-{model}.log")
    log = result.pop("log")
    result.update(output=str(folder / "words.jsonl"), load=_load(),
                  inner=re.findall(r"bow_correction=(\w+): \d+ texts in ([\d.]+) s", log))
    return result


def read_minicons(path: Path) -> dict[bool, list[float]]:
    """bow_correction -> every word's surprisal, stories in order."""
    found: dict[bool, dict[int, list[float]]] = {False: {}, True: {}}
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            found[row["bow_correction"]][row["index"]] = row["surprisals"]
    return {key: [s for index in sorted(rows) for s in rows[index]]
            for key, rows in found.items()}


# ------------------------------------------------------------------------------------------------
# Reading times
# ------------------------------------------------------------------------------------------------

def predictors(words):
    """The frame the regressions read: length, frequency, their spill-over, and which rows count."""
    from wordfreq import zipf_frequency

    frame = words.copy()
    bare = frame["word"].map(lambda w: re.sub(r"[^\w'’-]", "", w).lower())
    frame["length"] = bare.str.len()
    frame["freq"] = bare.map(lambda w: zipf_frequency(w, "en"))
    for column in ("length", "freq"):
        for lag in (1, 2):
            frame[f"{column}_{lag}"] = frame.groupby("item")[column].shift(lag)
    frame["kept"] = (~frame["first"] & ~frame["last"] & frame["plain"]
                     & frame["length_2"].notna() & frame["rt"].notna())
    return frame


BASELINE = "rt ~ length + freq + length_1 + freq_1 + length_2 + freq_2"


def fit(frame, surprisal: str) -> dict[str, float]:
    """ΔLL per word of ``surprisal`` and its spill-over over the baseline: in-sample and on
    held-out folds; the rows are those kept (with every surprisal of the comparison defined)."""
    import numpy as np
    import statsmodels.formula.api as smf

    data = frame.copy()
    for lag in (1, 2):
        data[f"s_{lag}"] = data.groupby("item")[surprisal].shift(lag)
    data["s_0"] = data[surprisal]
    data = data[data["kept"]]
    full = BASELINE + " + s_0 + s_1 + s_2"
    base_fit = smf.ols(BASELINE, data).fit()
    full_fit = smf.ols(full, data).fit()
    n = len(data)
    folds = np.arange(n) % FOLDS
    held_out = 0.0
    for fold in range(FOLDS):
        train, test = data[folds != fold], data[folds == fold]
        for formula, sign in ((full, 1.0), (BASELINE, -1.0)):
            model = smf.ols(formula, train).fit()
            sigma = math.sqrt(model.ssr / model.nobs)
            residual = test["rt"] - model.predict(test)
            held_out += sign * float(np.sum(-0.5 * np.log(2 * math.pi * sigma ** 2)
                                            - residual ** 2 / (2 * sigma ** 2)))
    return {"words": n, "delta_ll": (full_fit.llf - base_fit.llf) / n,
            "delta_ll_cv": held_out / n, "coef": float(full_fit.params["s_0"]),
            "coef_t": float(full_fit.tvalues["s_0"])}


# ------------------------------------------------------------------------------------------------
# Report
# ------------------------------------------------------------------------------------------------

def surprisal_columns(args: argparse.Namespace, results: dict[str, Any], words):
    """The word frame with every surprisal column: GPT-3's, ours and minicons' per model."""
    frame = predictors(words)
    frame["gpt3"] = gpt3_surprisal(args.naturalstories, words)
    for model in MODELS:
        if f"ours-{model}" in results:
            table = read_ours(Path(results[f"ours-{model}"]["output"]))
            if len(table) != len(frame) or list(table["word"]) != list(frame["word"]):
                raise SystemExit(f"{model}: our table's words are not the corpus' words")
            frame[f"{model} uncorrected"] = table["surprisal_bits"].astype(float).values
            frame[f"{model} corrected"] = table["surprisal_corrected_bits"].astype(float).values
        if f"minicons-{model}" in results:
            scored = read_minicons(Path(results[f"minicons-{model}"]["output"]))
            for correction, name in ((False, "uncorrected"), (True, "corrected")):
                if len(scored[correction]) == len(frame):
                    frame[f"{model} minicons {name}"] = scored[correction]
    return frame


def analyse(args: argparse.Namespace, results: dict[str, Any], words) -> dict[str, Any]:
    import numpy as np

    frame = surprisal_columns(args, results, words)
    columns = ["gpt3", *(c for c in frame.columns if c.startswith(MODELS))]
    # Every row is fitted on the same words: those kept where every surprisal is defined.
    defined = frame[columns].notna().all(axis=1)
    for lag in (1, 2):
        defined &= frame.groupby("item")["gpt3"].shift(lag).notna() | ~frame["kept"]
    frame["kept"] &= defined
    fits = {column: fit(frame, column) for column in columns}
    agreement = {}
    for model in MODELS:
        for name in ("uncorrected", "corrected"):
            ours_column, theirs = f"{model} {name}", f"{model} minicons {name}"
            if ours_column in frame and theirs in frame:
                diff = (frame[ours_column] - frame[theirs]).abs()
                agreement[ours_column] = {"max": float(np.nanmax(diff)),
                                          "over_0.01": int((diff > 0.01).sum()),
                                          "words": int(diff.notna().sum())}
    return {"fits": fits, "agreement": agreement, "words": len(frame),
            "kept": int(frame["kept"].sum())}


def render(args: argparse.Namespace, results: dict[str, Any]) -> str:
    words = load_words(args.naturalstories)
    found = analyse(args, results, words)
    meta = results["meta"]
    lines = ["## Natural Stories: word surprisal on real reading times", "",
             f"{machine()}; commit {meta['commit']}; {meta['started']}. "
             f"`python {SCRIPT} {' '.join(meta['arguments'])}`. "
             "**The machine was shared with other work** (load shown per run): the times must "
             "be measured again on a quiet machine.", "",
             "### Scoring every word: whole process, ours against minicons", "",
             "| model | tool | what it computes | wall | CPU | peak memory | load at the end |",
             "|---|---|---|---:|---:|---:|---|"]
    for model in MODELS:
        mine, theirs = results.get(f"ours-{model}"), results.get(f"minicons-{model}")
        if mine:
            lines.append(f"| {model} | ours (`syntaxgym-helm surprisal`) | both columns, one "
                         f"pass | {mine['wall_s']:.1f} s | {mine['cpu_s']:.0f} s | "
                         f"{mine['peak_rss_mb'] / 1024:.2f} GiB | {mine['load']} |")
        if theirs:
            inner = ", ".join(f"bow_correction={c}: {s} s" for c, s in theirs["inner"])
            lines.append(f"| {model} | minicons `word_score_tokenized` | both columns, a pass "
                         f"each ({inner}) | {theirs['wall_s']:.1f} s | {theirs['cpu_s']:.0f} s | "
                         f"{theirs['peak_rss_mb'] / 1024:.2f} GiB | {theirs['load']} |")
        if mine and theirs:
            lines.append(
                f"| {model} | **ours / minicons** | | **{mine['wall_s'] / theirs['wall_s']:.2f}x** "
                "| | | |"
            )
    if found["agreement"]:
        lines += ["", "Word surprisals, ours against minicons' on the same words and GGUF:", "",
                  "| model, column | words | largest difference (bits) | words over 0.01 bits |",
                  "|---|---:|---:|---:|"]
        for column, row in found["agreement"].items():
            lines.append(f"| {column} | {row['words']:,} | {row['max']:.2g} | "
                         f"{row['over_0.01']} |")
    lines += ["", "### Fit to reading times (ΔLL per word over length and frequency)", "",
              f"{found['kept']:,} of {found['words']:,} words fitted (the rules in the "
              "script's docstring). ΔLL: in-sample, and on held-out words (10 folds).", "",
              "| surprisal | ΔLL per word | ΔLL per word, held out | coefficient (ms/bit) | t |",
              "|---|---:|---:|---:|---:|"]
    for column, row in found["fits"].items():
        name = "GPT-3 davinci (the corpus' log-probabilities)" if column == "gpt3" else column
        lines.append(f"| {name} | {row['delta_ll']:.4f} | {row['delta_ll_cv']:.4f} | "
                     f"{row['coef']:.2f} | {row['coef_t']:.1f} |")
    lines += ["", PUBLISHED]
    return "\n".join(lines) + "\n"


PUBLISHED = """Published figures, and where the setups differ. Wilcox, Gauthier, Hu, Qian and
Levy (2020, CogSci; arXiv:2006.01912) measure psychometric predictive power as ΔLogLik per word \
over a baseline,
on Natural Stories among other corpora, and find that better next-word prediction (lower perplexity)
generally gives more of it; Oh and Schuler (2023, TACL 11:336-350) find the reverse for the larger
Transformers (GPT-Neo, OPT): "a strictly monotonic, positive log-linear relationship between
perplexity and fit to reading times" on two data sets, Natural Stories among them; Oh and Schuler
(2024, arXiv:2406.10851v2) find that the word-boundary correction gives "poorer fits to naturalistic
reading times". Their ΔLL values are not set beside ours (only the papers' abstracts could be
read offline). Their regressions,
predictors, exclusions and spill-over windows are their own (see each paper); ours fits per-word
mean reading times with OLS, which changes the size of ΔLL. So compare the rows here with each
other (the correction, the models, GPT-3), and with the papers only in direction, not in
magnitudes."""


def _load() -> str:
    return " ".join(os.popen("uptime").read().split()[-5:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--naturalstories", type=Path,
                        default=ROOT.parent / "shared" / "naturalstories")
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--minicons-venv", type=Path, default=ROOT.parent / "minicons-venv")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--parts", default="ours,minicons,fit")
    parser.add_argument("--reuse", action="store_true")
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()
    args.workdir = args.workdir.resolve()
    args.workdir.mkdir(parents=True, exist_ok=True)
    path = args.workdir / "results.json"
    results: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    if not args.reuse:
        import datetime as dt

        results["meta"] = {"commit": commit(), "arguments": sys.argv[1:],
                           "started": dt.datetime.now().isoformat(timespec="seconds")}
        parts = args.parts.split(",")
        words = load_words(args.naturalstories)
        for model in args.models.split(","):
            # Back to back, ours first, so that the two see the same load.
            if "ours" in parts:
                results[f"ours-{model}"] = ours(args, model)
                path.write_text(json.dumps(results, indent=1))
            if "minicons" in parts:
                results[f"minicons-{model}"] = minicons(args, model, words)
                path.write_text(json.dumps(results, indent=1))
    text = render(args, results)
    print(text)
    if args.output:
        write_section(args.output, text, SCRIPT)


if __name__ == "__main__":
    main()
