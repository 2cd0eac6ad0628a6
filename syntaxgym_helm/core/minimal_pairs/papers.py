"""The figures the data sets' papers publish, per suite, for the report to show beside ours.

Each data set declares its own (:attr:`~.dataset.DataSet.paper_figures`: BLiMP's per-paradigm
accuracies and human agreement, CLAMS's per-case accuracies); RuBLiMP, TurBLiMP and SLING publish
tables of other models that are not held here, and the report cites their papers instead.
"""

from __future__ import annotations

from syntaxgym_helm.core.minimal_pairs.catalogue import get_dataset
from syntaxgym_helm.core.minimal_pairs.dataset import DataSet, PaperFigures

__all__ = ["PaperFigures", "paper_figures"]


def paper_figures(dataset: DataSet | str) -> PaperFigures | None:
    """The shipped figures of ``dataset``'s paper (by name or declaration), or None where none
    are shipped."""
    found = get_dataset(dataset) if isinstance(dataset, str) else dataset
    return found.paper_figures() if found.paper_figures is not None else None
