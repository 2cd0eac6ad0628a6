"""BLiMP's published figures and the leaderboard's grouping of the 67 BLiMP suites.

The figures (shipped as ``syntaxgym_helm/data/blimp_per_paradigm_accuracy.tsv``, whose header says
where they come from) are each paradigm's accuracy under BLiMP's whole-sentence method for a
5-gram model, an LSTM, Transformer-XL and GPT-2, and the human agreement. They compare with our
prediction 0, ``syntaxgym_first_prediction_accuracy``, never with item accuracy (a suite with a
prefix-method prediction passes an item only when that holds too). The paper's phenomenon and
overall figures are unweighted means over paradigms, which :func:`paper_means` recomputes.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from statistics import fmean
from typing import Mapping

from syntaxgym_helm.core.blimp.sources import PARADIGMS

DATA_FILE = "blimp_per_paradigm_accuracy.tsv"
SHORT_CITATION = "Warstadt et al. (2020)"
#: The paper's columns, in the paper's order, and how a table names them.
PAPER_COLUMNS = {"gpt2": "GPT-2", "txl": "Transformer-XL", "lstm": "LSTM", "ngram": "5-gram",
                 "human": "Human"}


@dataclass(frozen=True)
class PaperParadigm:
    """One row of the shipped table: a paradigm's groups and each column's published figure."""

    uid: str
    field: str
    linguistics_term: str
    phenomenon: str
    accuracy: Mapping[str, float]


@dataclass(frozen=True)
class BlimpGroups:
    """The leaderboard's BLiMP groups, each a list of suite names ``blimp_<UID>``."""

    overall: tuple[str, ...]
    by_field: Mapping[str, tuple[str, ...]]
    by_phenomenon: Mapping[str, tuple[str, ...]]


@lru_cache(maxsize=1)
def paper_paradigms() -> dict[str, PaperParadigm]:
    """The shipped table, by UID."""
    text = resources.files("syntaxgym_helm").joinpath("data").joinpath(DATA_FILE).read_text(
        "utf-8")
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    rows: dict[str, PaperParadigm] = {}
    for row in csv.DictReader(lines, delimiter="\t"):
        rows[row["paradigm"]] = PaperParadigm(
            row["paradigm"], row["field"], row["linguistics_term"], row["phenomenon"],
            {column: float(row[column]) for column in PAPER_COLUMNS})
    return rows


def paper_means() -> dict[str, dict[str, float]]:
    """Each column's unweighted mean over paradigms, per phenomenon and ``overall`` (as the
    paper's tables give them)."""
    paradigms = list(paper_paradigms().values())
    groups = {"overall": paradigms}
    for paradigm in paradigms:
        groups.setdefault(paradigm.phenomenon, []).append(paradigm)
    return {name: {column: fmean(p.accuracy[column] for p in members)
                   for column in PAPER_COLUMNS}
            for name, members in sorted(groups.items())}


def blimp_groups() -> BlimpGroups:
    """Overall, by field and by the paper's phenomenon (``linguistics_term``); the two properties
    of :class:`~.sources.Paradigm` say where they differ from the data files' values. Each
    paradigm is also its own suite table."""
    by_field: dict[str, list[str]] = {}
    by_phenomenon: dict[str, list[str]] = {}
    for paradigm in PARADIGMS.values():
        by_field.setdefault(paradigm.field_group, []).append(paradigm.suite_name)
        by_phenomenon.setdefault(paradigm.phenomenon, []).append(paradigm.suite_name)
    return BlimpGroups(
        tuple(paradigm.suite_name for paradigm in PARADIGMS.values()),
        {name: tuple(names) for name, names in sorted(by_field.items())},
        {name: tuple(names) for name, names in sorted(by_phenomenon.items())})
