"""One figure per minimal-pair data set run: where the pairs differ, and where each model's
preference comes from.

Rows are paradigms grouped under their phenomenon or group (a bold header row each), so 67
paradigms stay readable in one figure. The first panel shows the sentence as a bar from its first
unit (0) to its end (1), split into the mean share of the units (words; SLING: characters) in
each region: the critical region (where the two sentences differ) starts where the prefix ends. Then
one heat map per model: the mean surprisal difference bad - good (bits) of the regions critical,
next_word and rest and of the whole sentence (blue: the good sentence is the less surprising there,
red: the bad one), with the value written in each cell and the model's whole-sentence accuracy at
the right; a region no pair of the paradigm has words in is left blank. The prefix is not drawn: its
difference is 0 by construction (:mod:`.pairs_regions`; the CSV keeps it as a check). All heat maps
share one colour scale, so models compare cell by cell.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import TwoSlopeNorm
from matplotlib.figure import Figure

from syntaxgym_helm.core.minimal_pairs.catalogue import DATASETS
from syntaxgym_helm.report.pairs_regions import RegionAnalysisRow

#: The heat map's columns: (row field, header).
HEAT_COLUMNS = (("delta_critical", "critical"), ("delta_next_word", "next word"),
                ("delta_rest", "rest"), ("delta_total", "sentence"))
SHARE_COLUMNS = (("share_prefix", "prefix", "#d9d9d9"), ("share_critical", "critical", "#d62728"),
                 ("share_next_word", "next word", "#ff9f1c"), ("share_rest", "rest", "#9ecae1"))
#: The share of the words that tells whether a region column has any words at all.
SHARE_OF = {"delta_critical": "share_critical", "delta_next_word": "share_next_word",
            "delta_rest": "share_rest"}
ROW_HEIGHT = 0.24  # inches per row: 67 paradigms and 12 headers make a figure about 20 in high


def _layout(rows: Sequence[RegionAnalysisRow]) -> list[tuple[str, str | None]]:
    """(label, paradigm) per figure row, top to bottom: a phenomenon header (paradigm None) before
    its paradigms, in the rows' order."""
    layout: list[tuple[str, str | None]] = []
    phenomenon = None
    for paradigm in dict.fromkeys(row.paradigm for row in rows):
        row = next(r for r in rows if r.paradigm == paradigm)
        if row.phenomenon != phenomenon:
            phenomenon = row.phenomenon
            layout.append((phenomenon, None))
        layout.append((paradigm, paradigm))
    return layout


def plot_pair_regions(rows: Sequence[RegionAnalysisRow], path: Path) -> Path:
    """Write the figure of ``rows`` (from :func:`.pairs_regions.analyse`, one data set's) to
    ``path`` (PNG)."""
    if not rows:
        raise ValueError("plot_pair_regions needs at least one minimal-pair run")
    title = DATASETS[rows[0].dataset].title
    models = list(dict.fromkeys(row.model for row in rows))
    by_key = {(row.model, row.paradigm): row for row in rows}
    first: dict[str, RegionAnalysisRow] = {}
    for row in rows:
        first.setdefault(row.paradigm, row)  # positions: the first model's items
    layout = _layout(rows)
    height = ROW_HEIGHT * len(layout) + 2.2
    # A Figure of its own (no pyplot): the process's backend is left as it is.
    figure = Figure(figsize=(4.2 + 3.4 * len(models) + 3.6, height))
    axes = figure.subplots(
        1, 1 + len(models), sharey=True,
        gridspec_kw={"width_ratios": [1.3] + [1.0] * len(models), "wspace": 0.08},
        squeeze=False)
    y = np.arange(len(layout))
    _plot_positions(axes[0][0], layout, first, y)
    values = np.array([[_heat_value(by_key.get((model, paradigm)) if paradigm else None, field)
                        for field, _ in HEAT_COLUMNS]
                       for model in models for _, paradigm in layout], dtype=float)
    finite = values[np.isfinite(values)]
    scale = float(np.max(np.abs(finite))) if finite.size and np.max(np.abs(finite)) > 0 else 1.0
    norm = TwoSlopeNorm(vcenter=0.0, vmin=-scale, vmax=scale)
    image = None
    for index, model in enumerate(models):
        block = values[index * len(layout):(index + 1) * len(layout)]
        image = _plot_heat(axes[0][index + 1], model, block, layout, by_key, norm)
    axes[0][0].set_yticks(y)
    axes[0][0].set_yticklabels([label for label, _ in layout], fontsize=7)
    for tick, (_, paradigm) in zip(axes[0][0].get_yticklabels(), layout, strict=True):
        if paradigm is None:
            tick.set_fontweight("bold")
    axes[0][0].set_ylim(len(layout) - 0.5, -0.5)
    assert image is not None  # there is a model: rows is not empty
    bar = figure.colorbar(image, ax=axes[0][1:].tolist(), fraction=0.03, pad=0.02,
                          aspect=max(10, len(layout) // 2))
    bar.set_label("mean surprisal difference bad - good (bits)\n> 0: prefers the good sentence",
                  fontsize=8)
    figure.suptitle(f"{title}: where the pairs differ (left) and where each model's preference "
                    "comes from (right)", fontsize=11)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110, bbox_inches="tight")
    return path


def _heat_value(row: RegionAnalysisRow | None, field: str) -> float:
    """A heat map cell: NaN (drawn blank) where the model did not run the paradigm, or where no
    pair of it has words in that region (e.g. nothing after a sentence-final critical word)."""
    if row is None:
        return math.nan
    share = SHARE_OF.get(field)
    return math.nan if share and getattr(row, share) == 0 else getattr(row, field)


def _plot_positions(ax: Axes, layout: list[tuple[str, str | None]],
                    first: dict[str, RegionAnalysisRow], y: np.ndarray) -> None:
    left = np.zeros(len(layout))
    for field, label, colour in SHARE_COLUMNS:
        widths = np.array([getattr(first[p], field) if p else 0.0 for _, p in layout])
        ax.barh(y, widths, left=left, height=0.7, color=colour, label=label, edgecolor="none")
        left += widths
    for row_y, (_, paradigm) in zip(y, layout, strict=True):
        if paradigm:
            ax.text(1.02, row_y, f"{first[paradigm].words:.1f}", va="center", fontsize=6,
                    color="#555555")
    ax.set_xlim(0, 1.12)
    ax.set_xticks([0, 0.25, 0.5, 0.75, 1.0])
    ax.tick_params(axis="x", labelsize=7)
    ax.set_xlabel("position in the sentence (share of its units;\nnumber: mean units)",
                  fontsize=8)
    ax.set_title("where the pair differs", fontsize=9, pad=16)  # room for the legend below it
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=4, fontsize=6,
              frameon=False, handlelength=1.0, columnspacing=0.8)
    ax.spines[["top", "right"]].set_visible(False)


def _plot_heat(ax: Axes, model: str, block: np.ndarray, layout: list[tuple[str, str | None]],
               by_key: dict[tuple[str, str], RegionAnalysisRow], norm: TwoSlopeNorm):
    image = ax.imshow(np.ma.masked_invalid(block), aspect="auto", cmap="RdBu", norm=norm,
                      interpolation="nearest")
    for row_y, (_, paradigm) in enumerate(layout):
        row = by_key.get((model, paradigm)) if paradigm else None
        if row is None:
            continue
        for column, value in enumerate(block[row_y]):
            if math.isfinite(value):
                dark = abs(norm(value) - 0.5) > 0.3
                ax.text(column, row_y, f"{value:.1f}", ha="center", va="center", fontsize=6,
                        color="white" if dark else "black")
        ax.text(len(HEAT_COLUMNS) - 0.3, row_y, f"{row.accuracy:.2f}" if row.items else "–",
                va="center", fontsize=6)
    ax.set_xticks(range(len(HEAT_COLUMNS)))
    ax.set_xticklabels([header for _, header in HEAT_COLUMNS], fontsize=7, rotation=30,
                       ha="right")
    ax.set_xlim(-0.5, len(HEAT_COLUMNS) + 0.4)
    ax.set_title(f"{model}\n(right: whole-sentence accuracy)", fontsize=8)
    ax.tick_params(axis="y", length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    return image
