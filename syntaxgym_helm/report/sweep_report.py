"""The files a sweep writes, from its state (each checkpoint as the state file records it), in
``benchmark_output/sweeps/<run suite>/<model>/``:

- ``curves.csv``: the tidy table (:func:`~.sweep_tables.curve_rows`);
- ``checkpoints.csv``: per checkpoint its x, identity (the digest of its files; the commit of a
  Hub revision), HELM model name, status, seconds, and its counts over all suites (items, passed,
  ties, unscorable) with the mean of its suites' accuracies;
- ``fast_eval_results.json``: BabyLM's ``fast_eval_results``;
- ``acquisition.csv``: each suite's age of acquisition; ``word_acquisition.csv`` with a
  words-in-contexts file: each word's (Chang and Bergen's rule) and, where the file gives
  children's ages, their Pearson r (in ``summary.md``);
- ``published.csv`` for a ``pythia-160m-seed<N>`` model: the published curve on the same
  paradigms, and what it scored differently (in ``summary.md``);
- ``learning_curves.png``; ``summary.md``: the checkpoints (ties at each one), the ages of
  acquisition, the published comparison.

And in ``sweeps/<run suite>/``: ``learning_curves.png`` of every model swept into the run suite,
one line each (seeds side by side).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from syntaxgym_helm.core.acquisition import pearson, word_acquisition
from syntaxgym_helm.core.download import write_atomically
from syntaxgym_helm.core.run_options import RunOptions
from syntaxgym_helm.report.learning_curves import draw_learning_curves
from syntaxgym_helm.report.published_curves import (
    SOURCE,
    differences,
    published_curve,
    published_seed,
)
from syntaxgym_helm.report.sweep_tables import (
    ACQUISITION_COLUMNS,
    CURVE_COLUMNS,
    Point,
    acquisition_rows,
    count_of,
    curve_rows,
    fast_eval_results,
    write_csv,
)

STATE_FILE = "checkpoints.json"
CHECKPOINT_COLUMNS = ("model", "revision", "x", "unit", "identity", "commit", "helm_model",
                      "status", "error", "suites", "items", "scorable", "passed", "ties",
                      "unscorable", "mean_accuracy", "seconds")
WORD_COLUMNS = ("model", "unit", "word", "contexts", "child_aoa", "acquired_x", "crossing_x",
                "threshold", "lowest_surprisal", "reason")


@dataclass(frozen=True)
class SweepOutputs:
    """The files a sweep wrote, by what they hold (see the module doc)."""

    folder: Path
    files: dict[str, Path] = field(default_factory=dict)
    summary: str = ""


def points_of(label: str, unit: str, states: Sequence[Mapping[str, Any]]) -> list[Point]:
    """The state file's checkpoints as :class:`~.sweep_tables.Point` objects, in x order."""
    return [Point(label, state["name"], float(state["x"]), unit, state.get("identity", ""),
                  "done" if state["status"] == "done" else f"failed: {state.get('error', '')}",
                  tuple(count_of(c) for c in state.get("counts", ())))
            for state in sorted(states, key=lambda s: float(s["x"]))]


def write_sweep_outputs(folder: Path, label: str, unit: str, checkpoints: Sequence[Any],
                        options: RunOptions, pairs_per_paradigm: int | None,
                        words: str | Path | None, plots: bool) -> SweepOutputs:
    """Write the files of the module doc for one model's sweep; ``checkpoints``: the sweep's
    checkpoints (dataclasses or the state file's dicts)."""
    from dataclasses import asdict, is_dataclass

    states = [asdict(c) if is_dataclass(c) and not isinstance(c, type) else dict(c)
              for c in checkpoints]
    points = points_of(label, unit, states)
    files = {"curves": write_csv(folder / "curves.csv", curve_rows(points), CURVE_COLUMNS),
             "checkpoints": write_csv(folder / "checkpoints.csv",
                                      checkpoint_rows(label, unit, states), CHECKPOINT_COLUMNS)}
    fast = folder / "fast_eval_results.json"
    write_atomically(fast, json.dumps(fast_eval_results(points), indent=1).encode())
    files["fast_eval_results"] = fast
    acquisition = acquisition_rows(points)
    files["acquisition"] = write_csv(folder / "acquisition.csv", acquisition, ACQUISITION_COLUMNS)
    lines = [f"# Sweep of {label}", "", *checkpoint_table(label, unit, states)]
    lines += ["", "## Age of acquisition", "", *acquisition_table(acquisition)]
    if words is not None:
        rows = word_rows(label, unit, states, words)
        files["word_acquisition"] = write_csv(folder / "word_acquisition.csv", rows,
                                              WORD_COLUMNS)
        lines += ["", "## Words", "", *word_summary(rows)]
    suites = {c.suite for p in points for c in p.counts}
    published = published_curve(label, suites) if suites else None
    if published:
        files["published"] = write_csv(
            folder / "published.csv",
            [{"model": label, "step": p.step, "suite": p.suite, "accuracy": p.accuracy}
             for p in published], ("model", "step", "suite", "accuracy"))
        lines += ["", "## Published curve", "",
                  f"Beside {SOURCE.format(seed=published_seed(label))}"
                  f" ({len({p.suite for p in published})} paradigms, steps "
                  f"{min(p.step for p in published)} to {max(p.step for p in published)}). "
                  "Scored differently:", ""]
        lines += [f"- {line}" for line in differences(options.prefix, options.ties,
                                                      pairs_per_paradigm)]
        if unit != "steps":
            lines.append(f"- the published curve is by steps, this sweep by {unit}: it is "
                         "not drawn")
    if plots and any(p.counts for p in points):
        files["plot"] = draw_learning_curves(
            folder / "learning_curves.png", {label: points}, unit,
            {label: published} if published else None, title=f"{label}: learning curves")
        files["suite_plot"] = draw_run_suite(folder.parent)
    summary = "\n".join(lines) + "\n"
    write_atomically(folder / "summary.md", summary.encode())
    files["summary"] = folder / "summary.md"
    return SweepOutputs(folder, files, summary)


def draw_run_suite(run_suite_folder: Path) -> Path:
    """``learning_curves.png`` of every model swept into this run suite, one line each."""
    models, units = {}, set()
    for state_file in sorted(run_suite_folder.glob(f"*/{STATE_FILE}")):
        data = json.loads(state_file.read_text(encoding="utf-8"))
        models[data["model"]] = points_of(data["model"], data["unit"], data["checkpoints"])
        units.add(data["unit"])
    unit = units.pop() if len(units) == 1 else "/".join(sorted(units))
    return draw_learning_curves(run_suite_folder / "learning_curves.png", models, unit,
                                title=f"{run_suite_folder.name}: learning curves")


def checkpoint_rows(label: str, unit: str, states: Sequence[Mapping[str, Any]]
                    ) -> list[dict[str, Any]]:
    rows = []
    for state in sorted(states, key=lambda s: float(s["x"])):
        counts = [count_of(c) for c in state.get("counts", ())]
        accuracies = [c.accuracy for c in counts if not math.isnan(c.accuracy)]
        rows.append({
            "model": label, "revision": state["name"], "x": float(state["x"]), "unit": unit,
            "identity": state.get("identity", ""), "commit": state.get("commit") or "",
            "helm_model": state.get("model", ""), "status": state["status"],
            "error": state.get("error", ""), "suites": len(counts),
            **{key: sum(getattr(c, key) for c in counts)
               for key in ("items", "scorable", "passed", "ties", "unscorable")},
            "mean_accuracy": sum(accuracies) / len(accuracies) if accuracies else math.nan,
            "seconds": float(state.get("seconds", 0.0))})
    return rows


def checkpoint_table(label: str, unit: str, states: Sequence[Mapping[str, Any]]) -> list[str]:
    lines = [f"| checkpoint | {unit} | mean accuracy | items scored | ties | unscorable | "
             "status |", "|---|---:|---:|---:|---:|---:|---|"]
    for row in checkpoint_rows(label, unit, states):
        accuracy = "" if math.isnan(row["mean_accuracy"]) else f"{row['mean_accuracy']:.3f}"
        status = row["status"] if row["status"] == "done" else f"{row['status']}: {row['error']}"
        lines.append(f"| {row['revision']} | {row['x']:g} | {accuracy} | {row['scorable']} | "
                     f"{row['ties']} | {row['unscorable']} | {status.replace('|', '/')} |")
    return lines


def acquisition_table(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    if not rows:
        return ["No checkpoint finished."]
    lines = ["| suite | chance | final | threshold | acquired at | crossing x | why not |",
             "|---|---:|---:|---:|---|---:|---|"]
    for row in rows:
        crossing = "" if row["crossing_x"] is None else f"{row['crossing_x']:.4g}"
        lines.append(f"| {row['suite']} | {row['chance']:.3g} | {row['final_accuracy']:.3f} | "
                     f"{row['threshold']:.3f} | {row['acquired_at']} | {crossing} | "
                     f"{row['reason']} |")
    return lines


def word_rows(label: str, unit: str, states: Sequence[Mapping[str, Any]],
              words: str | Path) -> list[dict[str, Any]]:
    """Each word's age of acquisition over the finished checkpoints (mean surprisal over its
    contexts at each)."""
    from syntaxgym_helm.core.word_contexts import read_word_contexts

    contexts = read_word_contexts(words)
    done = sorted((s for s in states if s.get("word_surprisals")), key=lambda s: float(s["x"]))
    xs = [float(s["x"]) for s in done]
    rows = []
    for word in dict.fromkeys(row.word for row in contexts):
        items = [i for i, row in enumerate(contexts) if row.word == word]
        means = [_mean([s["word_surprisals"][i] if i < len(s["word_surprisals"]) else math.nan
                        for i in items]) for s in done]
        found = word_acquisition(xs, means)
        ages = [contexts[i].child_aoa for i in items if contexts[i].child_aoa is not None]
        rows.append({"model": label, "unit": unit, "word": word, "contexts": len(items),
                     "child_aoa": ages[0] if ages else math.nan,
                     "acquired_x": found.checkpoint_x, "crossing_x": found.x,
                     "threshold": -found.threshold,
                     "lowest_surprisal": min((m for m in means if not math.isnan(m)),
                                             default=math.nan), "reason": found.reason})
    return rows


def _mean(values: Sequence[float]) -> float:
    kept = [v for v in values if v is not None and not math.isnan(v)]
    return sum(kept) / len(kept) if kept else math.nan


def word_summary(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    acquired = [r for r in rows if r["crossing_x"] is not None]
    lines = [f"{len(acquired)} of {len(rows)} words acquired within the checkpoints "
             "(word_acquisition.csv)."]
    logs = [math.log10(r["crossing_x"] + 1) if r["crossing_x"] is not None else math.nan
            for r in rows]
    r, n = pearson(logs, [row["child_aoa"] for row in rows])
    if n:
        lines.append("Pearson r between log10(x + 1) at acquisition and children's age: "
                     + (f"{r:.3f} over {n} words" if not math.isnan(r) else
                        f"undefined ({n} words with both)") + ".")
    return lines
