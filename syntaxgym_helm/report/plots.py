"""Surprisal profiles: mean region surprisal by region, one line per condition, one panel per model.

The chart SyntaxGym's website draws for a suite: regions on the x axis (named from the suite's
``region_meta``), the mean over items of each region's surprisal (sum over its tokens, bits) on the
y axis, standard-error bars, one line per condition. Models sit side by side in panels that share
the y axis, so their profiles compare at a glance.

Each panel's title gives the model's accuracy on the suite with its 95% Wilson interval and the
number of items scored.

Only scorable items are averaged, so every condition of a panel has the same items. A region that
is empty in a condition (e.g. the gap of a filler-gap suite) has no surprisal to plot: the line
joins the regions that have one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import matplotlib
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from scipy.stats import sem

from syntaxgym_helm.report.intervals import suite_estimate
from syntaxgym_helm.report.runs import RunRecord
from syntaxgym_helm.report.summary import RunAccuracy

MAX_PANELS_PER_ROW = 3
DODGE = 0.06  # horizontal offset between conditions, so their error bars do not hide each other


def region_means(run: RunRecord) -> dict[str, dict[int, tuple[float, float, int]]]:
    """condition -> region -> (mean, standard error, items) of the region's summed surprisal,
    over scorable items; regions without tokens are left out."""
    samples: dict[str, dict[int, list[float]]] = {}
    for score in run.scores:
        if not score.scorable:
            continue
        for condition in score.conditions:
            for region in sorted({r for r in condition.regions if r is not None}):
                value = condition.value("sum", region)
                if math.isfinite(value):
                    samples.setdefault(condition.condition_name, {}).setdefault(
                        region, []).append(value)
    return {condition: {region: _mean_se(values) for region, values in by_region.items()}
            for condition, by_region in samples.items()}


def _mean_se(values: list[float]) -> tuple[float, float, int]:
    """The mean, its standard error (NaN for one value) and the count."""
    n = len(values)
    return math.fsum(values) / n, float(sem(values)) if n > 1 else math.nan, n


def plot_suite(runs: Sequence[RunRecord], path: Path) -> Path:
    """One PNG for one suite: a panel per run (model). All runs must be of the same suite."""
    suites = {run.suite_name for run in runs}
    if len(suites) != 1:
        raise ValueError(f"plot_suite needs runs of one suite, got {sorted(suites)}")
    region_meta = dict(runs[0].suite.region_meta)
    conditions = list(runs[0].suite.condition_names)
    columns = min(len(runs), MAX_PANELS_PER_ROW)
    rows = math.ceil(len(runs) / columns)
    width = max(5.0, 0.8 * len(region_meta) + 2.0)
    # A Figure of its own, drawn by Agg when saved: pyplot's global state and the process's
    # backend are left as they are.
    figure = Figure(figsize=(width * columns, 4.2 * rows + 0.6))
    axes = figure.subplots(rows, columns, sharey=True, squeeze=False)
    colours = matplotlib.colormaps["tab10"]
    for panel, run in enumerate(runs):
        ax = axes[panel // columns][panel % columns]
        means = region_means(run)
        for index, condition in enumerate(conditions):
            by_region = means.get(condition, {})
            regions = sorted(by_region)
            offset = (index - (len(conditions) - 1) / 2) * DODGE
            ax.errorbar([r + offset for r in regions], [by_region[r][0] for r in regions],
                        yerr=[0.0 if math.isnan(by_region[r][1]) else by_region[r][1]
                              for r in regions],
                        marker="o", markersize=4, linewidth=1.5, capsize=3,
                        color=colours(index % 10), label=condition)
        _style_panel(ax, run, region_meta, is_first=panel % columns == 0)
    for extra in range(len(runs), rows * columns):
        axes[extra // columns][extra % columns].set_visible(False)
    axes[0][0].legend(title="condition", fontsize="small", title_fontsize="small")
    figure.suptitle(f"{runs[0].suite_name}: mean region surprisal (± 1 s.e.); accuracy with its "
                    "95% Wilson interval", fontsize=13)
    figure.tight_layout()
    # tight_layout leaves a placeholder layout engine, for which savefig would draw the whole
    # figure once more before drawing it, only to lay out nothing.
    figure.set_layout_engine(None)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    return path


def panel_title(run: RunRecord) -> str:
    """``model`` and, below it, ``accuracy 0.633 [0.46, 0.78], n=30`` (n: items scored)."""
    accuracy = RunAccuracy.of(run)
    return f"{run.name}\naccuracy {suite_estimate(accuracy.outcomes).text()}, n={accuracy.scorable}"


def _style_panel(ax: Axes, run: RunRecord, region_meta: dict[int, str], is_first: bool) -> None:
    numbers = sorted(region_meta)
    ax.set_xticks(numbers)
    ax.set_xticklabels([region_meta[n] for n in numbers], rotation=35, ha="right",
                       fontsize="small")
    ax.set_xlim(numbers[0] - 0.5, numbers[-1] + 0.5)
    ax.grid(axis="y", alpha=0.3)
    ax.spines[["top", "right"]].set_visible(False)
    ax.set_title(panel_title(run), fontsize="medium")
    ax.set_xlabel("region")
    if is_first:
        ax.set_ylabel("surprisal (bits)")
