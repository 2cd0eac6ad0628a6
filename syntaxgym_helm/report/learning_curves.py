"""Learning curves of a sweep: accuracy over training, on a log x axis, one line per model (a seed
is a model of its own), one panel per phenomenon (BLiMP's phenomena, a data set's groups, Hu et
al.'s circuits), a first panel of every suite's mean, and a last panel of the share of scored
items with a tie at each checkpoint (near-uniform early checkpoints tie; ties fail unless a run
says ``ties=pass``). A published curve (:mod:`.published_curves`) is drawn dashed beside the
model it belongs to, averaged over the same paradigms.

The x axis is symmetric-log (linear below 1), so that a checkpoint at 0 (``step0``) is on it.
The figures are drawn on matplotlib's Agg canvas directly: the process's global backend
(``matplotlib.use``) is left as it is, so a notebook's inline plots are not disturbed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from syntaxgym_helm.report.published_curves import PublishedPoint
from syntaxgym_helm.report.sweep_tables import Point, SuiteCount

ALL_SUITES = "all suites (mean)"
TIES = "ties (share of scored items)"
MAX_COLUMNS = 4


def panel_of(count: SuiteCount) -> str:
    """The panel a suite is drawn in: its phenomenon, else its data set."""
    return (count.phenomenon or count.dataset).replace("_", " ")


def _mean(values: Sequence[float]) -> float:
    kept = [v for v in values if not math.isnan(v)]
    return sum(kept) / len(kept) if kept else math.nan


def panel_series(points: Sequence[Point]) -> dict[str, list[tuple[float, float]]]:
    """Panel -> (x, mean accuracy of its suites) per finished checkpoint, in x order; the ties
    panel holds the share of scored items with a tie."""
    series: dict[str, list[tuple[float, float]]] = {ALL_SUITES: []}
    for point in sorted(points, key=lambda p: p.x):
        if not point.counts:
            continue
        series[ALL_SUITES].append((point.x, _mean([c.accuracy for c in point.counts])))
        panels: dict[str, list[float]] = {}
        for count in point.counts:
            panels.setdefault(panel_of(count), []).append(count.accuracy)
        for panel, values in sorted(panels.items()):
            series.setdefault(panel, []).append((point.x, _mean(values)))
        scored = sum(c.scorable for c in point.counts)
        series.setdefault(TIES, []).append(
            (point.x, sum(c.ties for c in point.counts) / scored if scored else math.nan))
    return series


def published_series(published: Sequence[PublishedPoint], panels: Mapping[str, set[str]]
                     ) -> dict[str, list[tuple[float, float]]]:
    """Panel -> (step, mean published accuracy over the panel's suites); no line for a panel
    with a suite the published curve lacks (a SyntaxGym suite among BLiMP's paradigms), whose
    mean would be over other suites than the model's."""
    series: dict[str, list[tuple[float, float]]] = {}
    steps = sorted({p.step for p in published})
    known = {p.suite for p in published}
    for panel, suites in panels.items():
        if not suites <= known:
            continue
        values = [(step, _mean([p.accuracy for p in published
                                if p.step == step and p.suite in suites]))
                  for step in steps]
        series[panel] = [(x, y) for x, y in values if not math.isnan(y)]
    return series


def draw_learning_curves(path: Path, models: Mapping[str, Sequence[Point]], unit: str,
                         published: Mapping[str, Sequence[PublishedPoint]] | None = None,
                         title: str = "") -> Path:
    """Draw the learning curves of ``models`` (model -> its checkpoints) into ``path`` (PNG);
    ``published``: model -> its published points (steps), drawn when ``unit`` is steps."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    by_model = {model: panel_series(points) for model, points in models.items()}
    panels = [ALL_SUITES] + sorted({p for s in by_model.values() for p in s}
                                   - {ALL_SUITES, TIES}) + [TIES]
    columns = min(MAX_COLUMNS, len(panels))
    rows = math.ceil(len(panels) / columns)
    figure = Figure(figsize=(4.2 * columns, 3.2 * rows))
    FigureCanvasAgg(figure)
    axes = figure.subplots(rows, columns, squeeze=False).ravel()
    colours = [f"C{i % 10}" for i in range(len(by_model))]
    for index, panel in enumerate(panels):
        ax = axes[index]
        # The scale first: limits fixed before it (set_ylim fixes both) keep linear margins,
        # which reach far below 0 on a symlog axis.
        ax.set_xscale("symlog", linthresh=1)
        for colour, (model, series) in zip(colours, by_model.items(), strict=True):
            values = series.get(panel, [])
            if values:
                ax.plot([x for x, _ in values], [y for _, y in values], "o-", color=colour,
                        markersize=3, label=model)
            extra = (published or {}).get(model)
            if extra and unit == "steps" and panel != TIES:
                members = _suites_of(models[model], panel)
                line = published_series(extra, {panel: members}).get(panel, [])
                if line:
                    ax.plot([x for x, _ in line], [y for _, y in line], "--", color=colour,
                            alpha=0.7, label=f"{model} (published)")
        if panel != TIES:
            ax.axhline(0.5, color="grey", linewidth=0.6, linestyle=":")
            ax.set_ylim(0, 1)
        ax.set_title(panel, fontsize=9)
        ax.set_xlabel(unit, fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    handles, labels = axes[0].get_legend_handles_labels()
    if handles:
        figure.legend(handles, labels, loc="lower center", ncol=min(4, len(labels)), fontsize=8,
                      frameon=False)
    if title:
        figure.suptitle(title, fontsize=11)
    figure.tight_layout(rect=(0, 0.05 if handles else 0, 1, 0.96 if title else 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    return path


def _suites_of(points: Sequence[Point], panel: str) -> set[str]:
    """The model's suites in ``panel``."""
    return {count.suite for point in points for count in point.counts
            if panel == ALL_SUITES or panel_of(count) == panel}
