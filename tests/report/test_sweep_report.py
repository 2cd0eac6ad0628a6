"""A sweep's tables, BabyLM's fast_eval_results, the plots and the published Pythia curve, from
checkpoints' counts (the sweep's own runs are in tests/api/test_sweep.py)."""

from __future__ import annotations

import csv
import json
import lzma
import math
from dataclasses import replace
from pathlib import Path

import pytest

from fixtures import FIXTURES_DIR
from syntaxgym_helm.core.acquisition import log_axis, sigmoid
from syntaxgym_helm.report.learning_curves import (
    ALL_SUITES,
    TIES,
    draw_learning_curves,
    panel_series,
)
from syntaxgym_helm.report.published_curves import published_curve, published_seed
from syntaxgym_helm.report.sweep_tables import (
    Point,
    SuiteCount,
    acquisition_rows,
    curve_rows,
    fast_eval_results,
)

#: The published file, compressed (tests/fixtures/README.md).
PUBLISHED_CURVES = FIXTURES_DIR / "pythia_curves" / "blimp_160m_acc.csv.xz"
STEPS = (0, 16, 128, 1000, 10000, 143000)


def _count(suite: str, passed: int, ties: int = 0, dataset: str = "blimp",
           phenomenon: str = "island_effects") -> SuiteCount:
    return SuiteCount(suite, dataset, phenomenon, items=200, scorable=198, passed=passed,
                      ties=ties, unscorable=2, predictions=1, measure="first_prediction")


def _points() -> list[Point]:
    """Six checkpoints of a model learning blimp_adjunct_island along a sigmoid; the fourth
    failed."""
    curve = sigmoid(log_axis(STEPS), 0.4, 3.0, 2.5, 0.5)
    points = []
    for step, accuracy in zip(STEPS, curve, strict=True):
        failed = step == 1000
        counts = () if failed else (
            _count("blimp_adjunct_island", round(accuracy * 198), ties=10 if step == 0 else 0),
            _count("number_prep", 30, dataset="syntaxgym", phenomenon="Agreement"))
        points.append(Point("pythia-160m-seed1", f"step{step}", float(step), "steps", "abc",
                            "failed: could not load" if failed else "done", counts))
    return points


def test_fast_eval_results_keep_checkpoint_positions_in_babylm_s_format() -> None:
    data = fast_eval_results(_points())
    text = json.dumps(data)  # valid JSON: a failed checkpoint's accuracies are null
    results = json.loads(text)["fast_eval_results"]
    assert list(results) == ["blimp", "syntaxgym"]
    assert [list(entry or ["failed"]) for entry in results["blimp"]] == [
        ["failed"] if step == 1000 else ["adjunct_island"] for step in STEPS]
    assert results["blimp"][3] is None  # a failed checkpoint is null as a whole, as BabyLM's
    assert results["syntaxgym"][0] == {"number_prep": pytest.approx(30 / 198)}
    assert results["blimp"][-1]["adjunct_island"] > results["blimp"][0]["adjunct_island"]


def test_curve_rows_flag_a_failed_checkpoint_and_acquisition_reads_the_learned_curve() -> None:
    rows = curve_rows(_points())
    failed = [row for row in rows if row["revision"] == "step1000"]
    assert len(failed) == 1 and failed[0]["suite"] == "" and failed[0]["status"].startswith(
        "failed")
    first = rows[0]
    assert first["ties"] == 10 and first["low"] <= first["accuracy"] <= first["high"]
    (learned,) = [r for r in acquisition_rows(_points()) if r["suite"] == "blimp_adjunct_island"]
    assert learned["acquired_at"] in {f"step{s}" for s in STEPS} and learned["reason"] == ""
    assert math.log10(learned["crossing_x"] + 1) == pytest.approx(2.5, abs=0.2)
    (flat,) = [r for r in acquisition_rows(_points()) if r["suite"] == "number_prep"]
    assert flat["acquired_at"] == "" and "not above chance" in flat["reason"]


def test_panels_are_phenomena_with_the_mean_first_and_ties_last() -> None:
    series = panel_series(_points())
    assert list(series)[0] == ALL_SUITES and set(series) == {ALL_SUITES, "island effects",
                                                            "Agreement", TIES}
    assert [x for x, _ in series[TIES]] == [0.0, 16.0, 128.0, 10000.0, 143000.0]
    assert series[TIES][0][1] == pytest.approx(10 / (2 * 198))


def test_plots_leave_matplotlib_s_global_backend_alone(tmp_path: Path) -> None:
    import matplotlib

    before = matplotlib.get_backend()
    matplotlib.use("svg")
    try:
        path = draw_learning_curves(tmp_path / "curves.png", {"a": _points(), "b": _points()[:3]},
                                    "steps", {"a": published_curve("pythia-160m-seed1") or []})
        assert matplotlib.get_backend() == "svg"
    finally:
        matplotlib.use(before)
    assert path.read_bytes().startswith(b"\x89PNG")


def test_the_published_pythia_curve_is_found_by_the_model_s_name() -> None:
    assert published_seed("EleutherAI/pythia-160m-seed3") == 3
    assert published_seed("runs/pythia-160m-seed12") == 12
    assert published_seed("pythia-160m") is None and published_seed("pythia-1b-seed3") is None
    points = published_curve("pythia-160m-seed0")
    assert points is not None
    assert len({p.step for p in points}) == 24 and len({p.suite for p in points}) == 67
    some = published_curve("pythia-160m-seed0", ["blimp_adjunct_island"])
    assert some is not None and {p.suite for p in some} == {"blimp_adjunct_island"}
    final = [p.accuracy for p in points if p.step == 143000]
    assert sum(final) / len(final) == pytest.approx(0.7749, abs=5e-4)  # the README's mean


def test_the_shipped_curve_is_the_published_file() -> None:
    with lzma.open(PUBLISHED_CURVES, "rt", encoding="utf-8", newline="") as stream:
        source = {(int(r["seed"]), int(r["step"]), r["paradigm"]): float(r["score"])
                  for r in csv.DictReader(stream)}
    shipped = {(seed, p.step, p.suite): p.accuracy for seed in range(10)
               for p in published_curve(f"pythia-160m-seed{seed}") or []}
    assert shipped == source


def test_each_panel_spans_the_checkpoints_not_negative_x(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """BabyLM's words (1M to 100M) were squeezed into a tenth of each panel, which ran from
    -4e6: the limits were fixed with linear margins before the axis became symlog."""
    from matplotlib.figure import Figure

    drawn: list[Figure] = []
    save = Figure.savefig

    def keep(figure: Figure, *args, **kwargs):
        drawn.append(figure)
        return save(figure, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", keep)
    words = [replace(p, x=x, unit="words") for p, x in
             zip(_points(), (1e6, 2e6, 5e6, 1e7, 5e7, 1e8), strict=True)]
    draw_learning_curves(tmp_path / "words.png", {"babylm": words}, "words")
    draw_learning_curves(tmp_path / "steps.png", {"a": _points()}, "steps",
                         {"a": published_curve("pythia-160m-seed1") or []})
    for figure, (first, last) in zip(drawn, ((1e6, 1e8), (0, 143000)), strict=True):
        for ax in figure.axes:
            if ax.get_visible():
                low, high = ax.get_xlim()
                # (symlog is linear below 1: a margin around step 0 reaches at most -1)
                assert -1 <= low <= first and last <= high <= 3 * last, (ax.get_title(), low)


def test_the_published_curve_s_differences_name_this_sweep_s_prefix() -> None:
    from syntaxgym_helm.report.published_curves import differences

    assert "nothing before each sentence (prefix=none)" in differences("none", "pass", None)[0]
    assert "the prefix '<s>'" in differences("<s>", "pass", None)[0]  # (none read as a text)
    assert "beginning-of-text token (the plugin's engine)" in differences("auto", "fail", 200)[0]


def test_a_published_line_is_drawn_only_where_it_averages_the_model_s_suites() -> None:
    """The mean panel of a sweep of BLiMP and SyntaxGym suites drew the published mean of the
    BLiMP paradigms alone beside the model's mean of all its suites."""
    from syntaxgym_helm.report.learning_curves import published_series

    published = published_curve("pythia-160m-seed1") or []
    series = published_series(published, {
        ALL_SUITES: {"blimp_adjunct_island", "number_prep"},
        "island effects": {"blimp_adjunct_island"}})
    assert ALL_SUITES not in series
    ours = [p.accuracy for p in published if p.suite == "blimp_adjunct_island"]
    assert [y for _, y in series["island effects"]] == pytest.approx(ours)


def test_babylm_s_checkpoints_keep_the_positions_of_its_revisions() -> None:
    """BabyLM reads fast_eval_results by position over its 19 (strict-small) or 28 revisions:
    a sweep of chck_1M, 2M, 3M and 10M gave 4 entries, so chck_10M was read as chck_4M."""
    from syntaxgym_helm.report.sweep_tables import BABYLM_REVISIONS, STRICT_SMALL_REVISIONS

    assert len(STRICT_SMALL_REVISIONS) == 19 and STRICT_SMALL_REVISIONS[-1] == "chck_100M"
    assert len(BABYLM_REVISIONS) == 28 and BABYLM_REVISIONS[-1] == "chck_1000M"
    swept = [replace(point, revision=name, x=x) for point, name, x in zip(
        _points(), ("chck_1M", "chck_2M", "chck_3M", "chck_5M", "chck_10M", "chck_100M"),
        (1e6, 2e6, 3e6, 5e6, 1e7, 1e8), strict=True)]
    blimp = fast_eval_results(swept)["fast_eval_results"]["blimp"]
    assert len(blimp) == 19
    done = {name: entry for name, entry in zip(STRICT_SMALL_REVISIONS, blimp, strict=True)
            if entry is not None}
    assert list(done) == ["chck_1M", "chck_2M", "chck_3M", "chck_10M", "chck_100M"]  # 5M failed
    assert done["chck_10M"]["adjunct_island"] == swept[4].counts[0].accuracy
    later = replace(swept[-1], revision="chck_200M", x=2e8)
    assert len(fast_eval_results([*swept, later])["fast_eval_results"]["blimp"]) == 28
    # Other names: one entry per checkpoint, in training order.
    assert len(fast_eval_results(_points())["fast_eval_results"]["blimp"]) == len(STEPS)

