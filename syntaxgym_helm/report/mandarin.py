"""The Mandarin suites of Wang et al. (2021) in the summary: per suite, each model's accuracy as the
paper measures it, beside the paper's models.

The paper's accuracy of a suite is the share of items whose target is more surprising in the
ungrammatical or garden-path condition; Classifier makes four such comparisons (one prediction
each here) and its accuracy is their mean. So ours is the mean over the suite's predictions of
each prediction's accuracy over the scorable items (``syntaxgym_prediction_<i>_accuracy``), with a
95% bootstrap interval over items; a phenomenon's and the overall figure are unweighted means over
suites. The paper's figures (``syntaxgym_helm/data/mandarin_paper_accuracy.tsv``) were recomputed
from the token surprisals its authors publish, as their evaluation notebook computes them
(``scripts/mandarin_paper_figures.py``): LSTM, RNNG, Transformer and the generative parser (PLM),
trained on the small corpus and on Xinhua news, each the mean over its trained seeds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache, lru_cache

from syntaxgym_helm.core.files import packaged_table
from syntaxgym_helm.core.registry import (
    CONVERTED_COLLECTION,
    converted_suites,
    shipped_suite_file,
)
from syntaxgym_helm.core.uncertainty import bootstrap_interval, mean_of_means
from syntaxgym_helm.harness.stats import item_stat_values, prediction_accuracy_name
from syntaxgym_helm.report.runs import RunRecord
from syntaxgym_helm.report.summary import Table, fmt

PAPER_FILE = "mandarin_paper_accuracy.tsv"
CITATION = "Wang et al. (2021)"
PAPER_URL = "https://aclanthology.org/2021.emnlp-main.454/"


@lru_cache(maxsize=1)
def paper_figures() -> tuple[tuple[str, ...], dict[str, dict[str, float]]]:
    """The paper's models (columns) and, per suite, each one's accuracy."""
    rows = packaged_table(PAPER_FILE)
    models = tuple(key for key in rows[0] if key != "suite" and not key.endswith(" trials"))
    return models, {row["suite"]: {m: float(row[m]) for m in models if row[m]} for row in rows}


def is_mandarin(run: RunRecord) -> bool:
    return run.suite_name.startswith(f"{CONVERTED_COLLECTION}_") and \
        run.suite_name in converted_suites()


def _item_values(run: RunRecord) -> list[float]:
    """Per scorable item, the mean of its predictions' outcomes (the paper's measure)."""
    count = len(run.suite.predictions)
    values = []
    for score in run.scores:
        stats = item_stat_values(score)
        outcomes = [stats[name] for name in map(prediction_accuracy_name, range(count))
                    if name in stats]
        if len(outcomes) == count:
            values.append(math.fsum(outcomes) / count)
    return values


def _phenomenon(suite: str) -> str:
    return next(name for name in ("classifier", "gp_object", "gp_subject", "verb_noun",
                                  "missing_object", "subordination")
                if suite.startswith(f"{CONVERTED_COLLECTION}_{name}_"))


@cache
def _items_in(suite: str) -> int:
    """How many items the shipped suite has (a run of a sample holds only those it drew)."""
    import json

    return len(json.loads(shipped_suite_file(suite).read_text(encoding="utf-8"))["items"])


def _with_pp(suite: str) -> bool:
    return suite.endswith("_pp")


def mandarin_markdown(runs: Sequence[RunRecord]) -> str:
    """The section of summary.md ('' when no Mandarin suite was run)."""
    mine = [run for run in runs if is_mandarin(run)]
    if not mine:
        return ""
    models = list(dict.fromkeys(run.name for run in mine))
    values = {(run.name, run.suite_name): _item_values(run) for run in mine}
    suites = [s for s in converted_suites() if any(key[1] == s for key in values)]
    paper_models, paper = paper_figures()
    # The paper's overall and per-phenomenon figures are over its 24 suites without a PP: the
    # four garden paths with one are a group of their own.
    groups: dict[str, list[str]] = {"**overall**": [s for s in suites if not _with_pp(s)]}
    for suite in suites:
        groups.setdefault(_phenomenon(suite) + (" with a PP" if _with_pp(suite) else ""),
                          []).append(suite)
    groups = {label: members for label, members in groups.items() if members}

    def cell(model: str, members: Sequence[str]) -> str:
        found = [values[(model, s)] for s in members if values.get((model, s))]
        if not found:
            return "–"
        text = f"{fmt(mean_of_means(found))} {bootstrap_interval(found).text()}"
        if len(members) == 1:  # a suite: say where not all its items were scored
            total = _items_in(members[0])
            return text if len(found[0]) == total else f"{text} ({len(found[0])} of {total} items)"
        return text if len(found) == len(members) else f"{text} ({len(found)}/{len(members)})"

    def paper_cell(model: str, members: Sequence[str]) -> str:
        found = [paper[s][model] for s in members if model in paper.get(s, {})]
        if not found:
            return "–"
        text = fmt(math.fsum(found) / len(found))
        return text if len(found) == len(members) else f"{text} ({len(found)}/{len(members)})"

    rows = [(label, (str(len(members)), *(cell(m, members) for m in models),
                     *(paper_cell(m, members) for m in paper_models)))
            for label, members in [*groups.items(), *((s, [s]) for s in suites)]]
    table = Table("Mandarin suite", ("suites", *models, *(f"{CITATION} {m}" for m in paper_models)),
                  tuple(rows))
    return "\n\n".join([
        f"# Mandarin suites of {CITATION} ({len(suites)} of {len(converted_suites())})",
        table.markdown(),
        "Accuracy as the paper measures it: per suite, the mean over its predictions (Classifier's "
        "four comparisons, the others' one) of the share of scorable items where the target is "
        "more surprising in the ungrammatical or garden-path condition, with a 95% bootstrap "
        "interval over items, and `(k of n items)` where not every item was scored (a sample, "
        "or items a tokenizer cannot measure); a phenomenon's and the overall row are unweighted "
        "means over the suites run, the overall one over the paper's 24 suites without a PP as "
        "its own, the four garden paths with a PP a row of their own; `(k/n)`: only k of the "
        "row's n suites have a figure. The paper's columns: its models' accuracy recomputed "
        "from the token surprisals its authors publish (the mean over each model's trained "
        f"seeds; `-Xinhua`: trained on Xinhua news), {PAPER_URL}. Item accuracy (every "
        "prediction holding) is in the table above. The paper's models read word-segmented "
        "text word by word; ours read the sentence as written (docs/multilingual.md).",
    ]) + "\n"
