"""BLiMP's published figures: each paradigm's accuracy under BLiMP's whole-sentence method for a
5-gram model, an LSTM, Transformer-XL and GPT-2, and the human agreement (shipped as
``syntaxgym_helm/data/blimp_per_paradigm_accuracy.tsv``, whose header says where they come from).

They compare with our prediction 0, ``syntaxgym_first_prediction_accuracy``, never with item
accuracy (a suite with a prefix-method prediction passes an item only when that holds too). The
paper's phenomenon and overall figures are unweighted means over paradigms, which
:func:`paper_means` recomputes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from statistics import fmean

from syntaxgym_helm.core.files import packaged_table
from syntaxgym_helm.core.minimal_pairs.dataset import PaperFigures

DATA_FILE = "blimp_per_paradigm_accuracy.tsv"
SHORT_CITATION = "Warstadt et al. (2020)"
#: The paper's columns, in the paper's order, and how a table names them.
PAPER_COLUMNS = {"gpt2": "GPT-2", "txl": "Transformer-XL", "lstm": "LSTM", "ngram": "5-gram",
                 "human": "Human"}
#: What the report says of the paper's columns.
PAPER_NOTE = ("Warstadt et al. (2020) columns: the per-paradigm accuracies of the BLiMP "
              "repository's corrected results (models_summary.jsonl; TACL 2020, "
              "https://doi.org/10.1162/tacl_a_00321) and human agreement, averaged over the same "
              "paradigms as ours (compare them with our columns, not with item accuracy; "
              "docs/blimp.md says exactly what is compared).")


@dataclass(frozen=True, kw_only=True)
class PaperParadigm:
    """One row of the shipped table: a paradigm's groups and each column's published figure."""

    uid: str
    field: str
    linguistics_term: str
    phenomenon: str
    accuracy: Mapping[str, float]


@lru_cache(maxsize=1)
def paper_paradigms() -> dict[str, PaperParadigm]:
    """The shipped table, by UID."""
    rows: dict[str, PaperParadigm] = {}
    for row in packaged_table(DATA_FILE):
        rows[row["paradigm"]] = PaperParadigm(
            uid=row["paradigm"], field=row["field"], linguistics_term=row["linguistics_term"],
            phenomenon=row["phenomenon"],
            accuracy={column: float(row[column]) for column in PAPER_COLUMNS})
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


@lru_cache(maxsize=1)
def paper_figures() -> PaperFigures:
    """The shipped figures by UID, as the report shows them beside ours."""
    return PaperFigures(citation=SHORT_CITATION, columns=PAPER_COLUMNS,
                        by_paradigm={uid: row.accuracy for uid, row in paper_paradigms().items()})
