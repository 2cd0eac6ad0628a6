"""The published per-suite accuracies of Hu et al. (2020), shipped in ``syntaxgym_helm/data``.

Jennifer Hu, Jon Gauthier, Peng Qian, Ethan Wilcox and Roger Levy (2020). A Systematic Assessment
of Syntactic Generalization in Neural Language Models. ACL 2020, 1725-1744.
https://aclanthology.org/2020.acl-main.158/

The figures were recomputed from the paper's per-item results and score only the FIRST prediction
of each suite (the paper's pipeline did so), so they are compared with our first-prediction
accuracy, never with item accuracy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from syntaxgym_helm.core.files import packaged_table

CITATION = ("Hu, Gauthier, Qian, Wilcox, Levy (2020). A Systematic Assessment of Syntactic "
            "Generalization in Neural Language Models. ACL. "
            "https://aclanthology.org/2020.acl-main.158/")
SHORT_CITATION = "Hu et al. (2020)"
DATA_FILE = "hu2020_per_suite_accuracy.tsv"

#: The paper's model names, and other names the same models go by (lower case).
PAPER_MODELS = ("gpt2", "gpt2-xl", "transformer-xl", "grnn", "jrnn")
_ALIASES = {"transfo-xl-wt103": "transformer-xl", "transfo-xl": "transformer-xl"}


@dataclass(frozen=True)
class PaperSuite:
    """One row of the paper's table: a suite, its circuit (None: not in the SG score), and each
    model's first-prediction accuracy."""

    suite: str
    circuit: str | None
    items: int
    accuracy: Mapping[str, float]


@lru_cache(maxsize=1)
def paper_suites() -> dict[str, PaperSuite]:
    """The shipped table, by suite name."""
    rows: dict[str, PaperSuite] = {}
    for row in packaged_table(DATA_FILE):
        circuit = row["circuit"]
        rows[row["suite"]] = PaperSuite(
            suite=row["suite"],
            circuit=None if circuit.startswith("(") else circuit,
            items=int(row["items"]),
            accuracy={model: float(row[model]) for model in PAPER_MODELS},
        )
    return rows


def paper_model(helm_model: str) -> str | None:
    """The paper's name for a HELM model (``openai/gpt2`` -> ``gpt2``), matched by the last part of
    the name; None when the model is not one of the paper's."""
    last = helm_model.rsplit("/", 1)[-1].lower()
    last = _ALIASES.get(last, last)
    return last if last in PAPER_MODELS else None


def paper_accuracy(model: str, suite: str) -> float | None:
    """The paper's first-prediction accuracy of ``model`` (a paper name) on ``suite``."""
    row = paper_suites().get(suite)
    return None if row is None else row.accuracy.get(model)


def paper_sg_score(model: str) -> float:
    """The paper's SG score of ``model``: the mean over the 31 suites that have a circuit."""
    values = [row.accuracy[model] for row in paper_suites().values() if row.circuit]
    return sum(values) / len(values)
