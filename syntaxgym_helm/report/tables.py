"""Tidy tables (one observation per row) for pandas, R or a spreadsheet, written as CSV.

- predictions: one row per model, suite, item and prediction, with its outcome;
- regions: one row per model, suite, item, condition and region, with the region's surprisal
  (the sum of its tokens' surprisals in bits, the value SyntaxGym's predictions and charts use)
  and its other statistics.

Undefined values (an unscorable prediction, the mean of an empty region) are empty cells.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields
from operator import attrgetter
from pathlib import Path
from typing import Any

from syntaxgym_helm.report.runs import RunRecord


@dataclass(frozen=True)
class PredictionRow:
    """One prediction of one item: ``holds`` is None when it could not be evaluated."""

    model: str  # the run's label: the HELM model name, plus settings where needed
    checkpoint: str  # what the model's files held (see RunRecord.checkpoint); empty: unknown
    suite: str
    item: int
    prediction: int
    formula: str
    holds: bool | None
    item_passed: bool | None  # all predictions hold; None: the item is unscorable
    item_scorable: bool
    problem: str  # why it is unscorable (empty when it is not)


# Not frozen: a frozen dataclass sets each field through object.__setattr__, which is slow
# at the hundreds of thousands of rows of a large data set.
@dataclass
class RegionRow:
    """One region of one condition of one item, in bits."""

    model: str
    checkpoint: str
    suite: str
    item: int
    condition: str
    region: int
    region_name: str
    content: str
    tokens: int
    surprisal: float  # sum over the region's tokens (0 for an empty region)
    surprisal_mean: float
    surprisal_median: float
    surprisal_range: float
    surprisal_max: float
    surprisal_min: float
    item_scorable: bool


def prediction_rows(run: RunRecord) -> list[PredictionRow]:
    rows: list[PredictionRow] = []
    for score in run.scores:
        problem = "; ".join(score.problems)
        outcomes = {outcome.index: outcome for outcome in score.predictions}
        # An item unscorable before its predictions were evaluated still gets one row per
        # prediction, so every item shows up with the reason.
        for prediction in run.suite.predictions:
            outcome = outcomes.get(prediction.index)
            rows.append(PredictionRow(
                model=run.name, checkpoint=run.checkpoint, suite=run.suite_name,
                item=score.item_number, prediction=prediction.index, formula=prediction.source,
                holds=outcome.holds if outcome else None, item_passed=score.passed,
                item_scorable=score.scorable, problem=problem))
    return rows


def region_rows(run: RunRecord) -> Iterator[RegionRow]:
    """The rows one at a time (a BLiMP paradigm has 10,000: :func:`write_csv` writes each as it
    comes)."""
    for item, score in zip(run.suite.items, run.scores, strict=False):
        values = {condition.condition_name: condition for condition in score.conditions}
        for condition in item.conditions:
            scored = values.get(condition.condition_name)
            if scored is None:  # the request failed: no values to report
                continue
            for region in condition.regions:
                number = region.region_number
                # statistics, not value: an unmeasured region (its text inside a token of the
                # region before) has NaN values here rather than an error.
                stats = scored.statistics(number)
                yield RegionRow(
                    model=run.name, checkpoint=run.checkpoint, suite=run.suite_name,
                    item=item.item_number, condition=condition.condition_name, region=number,
                    region_name=run.suite.region_meta.get(number, ""), content=region.content,
                    tokens=len(scored.region_surprisals(number)),
                    surprisal=stats["sum"], surprisal_mean=stats["mean"],
                    surprisal_median=stats["median"], surprisal_range=stats["range"],
                    surprisal_max=stats["max"], surprisal_min=stats["min"],
                    item_scorable=score.scorable)


def write_csv(rows: Iterable[Any], path: Path, row_type: type) -> Path:
    """Write dataclass rows of ``row_type`` with a header (written even when there are no
    rows)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    names = [field.name for field in fields(row_type)]
    # Rows hold only numbers, strings and None: read the fields directly (asdict would copy
    # each value deeply), all at once.
    values = attrgetter(*names) if len(names) > 1 else lambda row: (getattr(row, names[0]),)
    with path.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(names)
        # The writer writes None as an empty cell and a float as its repr (full precision: the
        # CSV must round-trip the values); NaN (undefined) is an empty cell too.
        writer.writerows(["" if isinstance(value, float) and math.isnan(value) else value
                          for value in values(row)] for row in rows)
    return path
