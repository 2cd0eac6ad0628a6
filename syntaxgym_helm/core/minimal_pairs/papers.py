"""The figures the data sets' papers publish, per suite, for the report to show beside ours.

BLiMP: each paradigm's accuracy for the paper's four models and the human agreement
(:mod:`syntaxgym_helm.core.blimp.paper`). CLAMS: the per-case accuracies of its LSTM language
models (monolingual, multilingual) and of mBERT, and for English those of English BERT the paper
takes from Goldberg (2019) (shipped as ``data/clams_paper_accuracy.tsv``; a case the paper pooled
with its inanimate variant or left out has no figure). Both are whole-sentence comparisons, so
they compare with our prediction 0. RuBLiMP, TurBLiMP and SLING publish tables of other models
that are not held here: :data:`CITED` says where they are.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Mapping

from syntaxgym_helm.core.blimp.paper import PAPER_COLUMNS, paper_paradigms

CLAMS_FILE = "clams_paper_accuracy.tsv"
_CLAMS_MODELS = {"LSTM LM, monolingual": "LSTM (mono)", "LSTM LM, multilingual": "LSTM (multi)",
                 "mBERT (bert-base-multilingual-cased)": "mBERT",
                 "BERT base (English), figures taken by the paper from Goldberg (2019)": "BERT"}
#: Where the papers without shipped figures give theirs.
CITED = {
    "rublimp": "Taktasheva et al. (2024), https://arxiv.org/abs/2406.19232",
    "turblimp": "Başar et al. (2025), https://arxiv.org/abs/2506.13487",
    "sling": "Song et al. (2022), https://aclanthology.org/2022.emnlp-main.305/",
}


@dataclass(frozen=True)
class PaperFigures:
    """A paper's columns (key: header) and each paradigm's figures (by the suite's name without
    the data set's prefix, e.g. ``en_simple_agrmt``); a missing figure is absent."""

    citation: str
    columns: Mapping[str, str]
    by_paradigm: Mapping[str, Mapping[str, float]]


@lru_cache(maxsize=None)
def paper_figures(dataset: str) -> PaperFigures | None:
    """The shipped figures of ``dataset``'s paper, or None where none are shipped."""
    if dataset == "blimp":
        return PaperFigures("Warstadt et al. (2020)", PAPER_COLUMNS,
                            {uid: row.accuracy for uid, row in paper_paradigms().items()})
    if dataset != "clams":
        return None
    text = resources.files("syntaxgym_helm").joinpath("data", CLAMS_FILE).read_text("utf-8")
    by_paradigm: dict[str, dict[str, float]] = {}
    for row in csv.DictReader((line for line in text.splitlines() if not line.startswith("#")),
                              delimiter="\t"):
        if row["accuracy"] and "+" not in row["case"] and not row["case"].startswith("average"):
            key = f"{row['language']}_{row['case']}"
            by_paradigm.setdefault(key, {})[_CLAMS_MODELS[row["model"]]] = float(row["accuracy"])
    return PaperFigures("Mueller et al. (2020)", {name: name for name in _CLAMS_MODELS.values()},
                        by_paradigm)
