"""Where in the sentence a minimal pair differs, and which region a model's preference comes from.

Every minimal-pair suite (BLiMP, CLAMS, RuBLiMP, TurBLiMP, SLING) splits both sentences of a pair
into the same four regions (docs/multilingual.md): 1 ``prefix`` (shared beginning), 2
``critical`` (where they differ), 3 ``next_word``, 4 ``rest``. Per model and paradigm this module
computes

- the **position** of the difference: each region's share of the sentence's units (words; for
  SLING's Mandarin, characters), mean over the two sentences of a pair, then over items, so the
  critical region starts at the mean share of the prefix and ends that plus its own share (0 =
  the first unit, 1 = the end);
- the **surprisal difference bad - good** of each region (sum over its tokens, bits; mean over
  scorable items). The four add up to the whole-sentence difference that the accuracy
  compares (positive: the model prefers the good sentence). The prefix is the same words in both
  sentences and is scored before any difference, so its difference is 0 for any causal model: a
  non-zero value means a scoring bug;
- per region the share of items whose difference is positive: the accuracy the model would have
  comparing that region alone (for ``critical`` in one-prefix paradigms this is BLiMP's one-prefix
  method, for ``next_word`` in two-prefix paradigms the two-prefix method; for ``rest``, how often
  the preference persists after the difference).

One row per model and paradigm, written per data set as ``<data set>_regions.csv``;
:mod:`.pairs_plots` draws it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from syntaxgym_helm.core.errors import EvaluationError
from syntaxgym_helm.core.item_evaluation import ConditionValues, ItemEvaluation
from syntaxgym_helm.core.minimal_pairs.catalogue import DATASETS
from syntaxgym_helm.core.minimal_pairs.regions import REGION_NAMES
from syntaxgym_helm.core.suite import Item
from syntaxgym_helm.report.pairs_summary import pair_file
from syntaxgym_helm.report.runs import RunRecord

GOOD, BAD = "good", "bad"
#: Region numbers, in the suites' order (1 prefix ... 4 rest).
REGION_NUMBERS = {name: number for number, name in enumerate(REGION_NAMES, 1)}


@dataclass(frozen=True)
class RegionAnalysisRow:
    """One model on one paradigm. Shares and positions are fractions of the sentence's units
    (words; SLING: characters); ``delta_*`` are mean bad - good surprisals (bits) over ``items``
    scorable items; ``positive_*`` the share of those items whose difference in that region is
    above 0."""

    model: str
    paradigm: str  # the suite name without the data set's prefix (BLiMP: the UID)
    phenomenon: str  # the data set's group: BLiMP's phenomenon, CLAMS's construction, ...
    items: int  # scorable items (the differences' sample)
    items_run: int  # items of the run (the positions' sample)
    accuracy: float  # the whole-sentence one: the share of scorable items with delta_total > 0
    words: float  # mean units (words; SLING: characters) per sentence
    share_prefix: float
    share_critical: float
    share_next_word: float
    share_rest: float
    critical_start: float  # = share_prefix
    critical_end: float  # = share_prefix + share_critical
    delta_prefix: float
    delta_critical: float
    delta_next_word: float
    delta_rest: float
    delta_total: float
    positive_critical: float
    positive_next_word: float
    positive_rest: float
    dataset: str
    language: str
    #: Scorable items with a region that could not be measured (its text inside a token of the
    #: region before it); each region's mean leaves such items out.
    unmeasured: int


def _units(text: str, separator: str) -> int:
    return len(text.split()) if separator else len(text)


def item_shares(item: Item, separator: str = " ") -> tuple[list[float], float]:
    """Each region's share of the units (mean over the item's conditions) and the mean count."""
    shares = [0.0] * len(REGION_NAMES)
    total_words = 0
    for condition in item.conditions:
        counts = {region.region_number: _units(region.content, separator)
                  for region in condition.regions}
        total = sum(counts.values())
        total_words += total
        for index, number in enumerate(REGION_NUMBERS.values()):
            shares[index] += counts.get(number, 0) / total / len(item.conditions)
    return shares, total_words / len(item.conditions)


def item_deltas(score: ItemEvaluation) -> dict[str, float] | None:
    """bad - good summed surprisal per region and ``total`` (the whole sentence); None when the
    item is unscorable or lacks one of the two conditions; NaN for a region that cannot be
    measured in either sentence (its text lies inside a token of the region before it, as a
    Mandarin character often does)."""
    values = {condition.condition_name: condition for condition in score.conditions}
    if not score.scorable or GOOD not in values or BAD not in values:
        return None
    deltas = {name: _region_sum(values[BAD], number) - _region_sum(values[GOOD], number)
              for name, number in REGION_NUMBERS.items()}
    deltas["total"] = values[BAD].value("sum", None) - values[GOOD].value("sum", None)
    return deltas


def _region_sum(values: ConditionValues, region: int) -> float:
    try:
        return values.value("sum", region)
    except EvaluationError:
        return math.nan


def _mean(values: Sequence[float]) -> float:
    """The mean of the defined values (NaN: an unmeasured region)."""
    values = [value for value in values if not math.isnan(value)]
    return math.fsum(values) / len(values) if values else math.nan


def analyse_run(run: RunRecord) -> RegionAnalysisRow | None:
    """The row of one minimal-pair run (None for a run of another suite)."""
    found = pair_file(run)
    if found is None:
        return None
    dataset, file = found
    shares = [item_shares(item, dataset.separator) for item in run.suite.items]
    share = [_mean([s[0][index] for s in shares]) for index in range(len(REGION_NAMES))]
    deltas = [d for d in (item_deltas(score) for score in run.scores) if d is not None]

    def delta(name: str) -> float:
        return _mean([d[name] for d in deltas])

    def positive(name: str) -> float:
        return _mean([float(d[name] > 0) if not math.isnan(d[name]) else math.nan
                      for d in deltas])

    return RegionAnalysisRow(
        model=run.name, paradigm=file.suite.removeprefix(dataset.prefix), phenomenon=file.group,
        items=len(deltas), items_run=len(run.scores), accuracy=positive("total"),
        words=_mean([s[1] for s in shares]),
        share_prefix=share[0], share_critical=share[1], share_next_word=share[2],
        share_rest=share[3], critical_start=share[0], critical_end=share[0] + share[1],
        delta_prefix=delta("prefix"), delta_critical=delta("critical"),
        delta_next_word=delta("next_word"), delta_rest=delta("rest"), delta_total=delta("total"),
        positive_critical=positive("critical"), positive_next_word=positive("next_word"),
        positive_rest=positive("rest"), dataset=dataset.name, language=file.language,
        unmeasured=sum(1 for d in deltas if any(math.isnan(value) for value in d.values())))


def analyse(runs: Sequence[RunRecord]) -> list[RegionAnalysisRow]:
    """Rows of the minimal-pair runs among ``runs``, by data set, group, paradigm, then model (in
    run order)."""
    return in_order([analyse_run(run) for run in runs], runs)


def in_order(rows: Sequence[RegionAnalysisRow | None],
             runs: Sequence[RunRecord]) -> list[RegionAnalysisRow]:
    """:func:`analyse` from the :func:`analyse_run` of each run (``rows``, in run order)."""
    models = list(dict.fromkeys(run.name for run in runs))
    found = [row for row in rows if row is not None]
    order = list(DATASETS)
    return sorted(found, key=lambda row: (order.index(row.dataset), row.phenomenon, row.paradigm,
                                         models.index(row.model)))
