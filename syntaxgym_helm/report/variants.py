"""A model beside its scoring variants: the same weights scored another way, registered as a model
of its own named ``MODEL~VARIANT`` (the word-boundary correction ``~bow``, a masked LM's
``~within_word_l2r``; :mod:`syntaxgym_helm.core.scoring_variants`).

When the runs read include a model and at least one of its variants, each such family gets a
table: per row the plain model's accuracy, each variant's, and the items whose verdict changes
from the plain model to the variant (to pass, to fail) with the exact McNemar p over the items
both scored (:func:`~syntaxgym_helm.core.uncertainty.mcnemar_exact`). Rows: the SG score (mean
over the suites of the paper's SG score that both ran), each minimal-pair data set's overall
figure (the unweighted mean over its paradigms), then every suite. The accuracies are the ones
the summary's other tables give: item accuracy for SyntaxGym suites, the first prediction (the
good sentence less surprising) for the minimal-pair data sets (:mod:`.pairs_summary`); a verdict
is the same per-item value, read from the scored items each run keeps.

Runs are paired by suite and by their label with the variant mark taken out of the model's name,
so settings (``[prefix=..., first_token=...]``) pair with the same settings; runs with a context
stay out, as in the accuracy tables.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from syntaxgym_helm.core.scoring_variants import VARIANT_MARK, describe_variant, split_variant
from syntaxgym_helm.core.uncertainty import mcnemar_exact
from syntaxgym_helm.harness.stats import ACCURACY, FIRST_PREDICTION_ACCURACY, item_stat_values
from syntaxgym_helm.report.paired_tests import format_p
from syntaxgym_helm.report.pairs_summary import pair_file
from syntaxgym_helm.report.runs import RunRecord
from syntaxgym_helm.report.summary import Table, fmt, suite_circuit, suite_order

SG_SCORE = "SG score"
LEVELS = ("sg_score", "dataset", "suite")


@dataclass(frozen=True)
class VariantRow:
    """One row of ``variants.csv``: a suite (or a mean over suites) of a model and one variant."""

    model: str  # the plain model's run label
    variant: str  # the variant's run label (``model~bow`` ...)
    level: str  # sg_score, dataset (a minimal-pair data set's mean over paradigms) or suite
    suite: str  # the suite, the data set's title (BLiMP, CLAMS...), or "SG score"
    measure: str  # accuracy (SyntaxGym suites) or first_prediction (minimal-pair data sets)
    suites: int  # suites averaged (1 for a suite)
    items: int  # items both scored
    accuracy_plain: float
    accuracy_variant: float
    changed: int  # items whose verdict differs (either side unscorable counts)
    to_pass: int  # items the variant passes and the plain model fails
    to_fail: int  # items the plain model passes and the variant fails
    mcnemar_p: float  # exact, over the items both scored


@dataclass(frozen=True)
class _SuitePair:
    """One suite of the plain model and one variant: each side's outcome per item number."""

    suite: str
    measure: str
    group: str  # "" (a SyntaxGym suite of the SG score), a data set's title, or "other"
    plain: dict[int, float]
    variant: dict[int, float]

    def accuracy(self, side: dict[int, float]) -> float:
        return math.fsum(side.values()) / len(side) if side else math.nan

    def counts(self) -> tuple[int, int, int, list[bool], list[bool]]:
        """(changed, to pass, to fail, plain and variant outcomes of the items both scored)."""
        items = set(self.plain) | set(self.variant)
        changed = sum(self.plain.get(n) != self.variant.get(n) for n in items)
        both = sorted(set(self.plain) & set(self.variant))
        a = [self.plain[n] == 1.0 for n in both]
        b = [self.variant[n] == 1.0 for n in both]
        to_pass = sum(1 for x, y in zip(a, b, strict=True) if y and not x)
        to_fail = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
        return changed, to_pass, to_fail, a, b


@dataclass(frozen=True)
class Family:
    """A plain model's runs (by its label) and those of each of its variants."""

    plain: str  # the plain model's label
    variants: tuple[tuple[str, str], ...]  # (variant name, its label)
    pairs: dict[str, tuple[_SuitePair, ...]]  # variant label -> its suites beside the plain's

    def rows(self) -> list[VariantRow]:
        found: list[VariantRow] = []
        for _, label in self.variants:
            pairs = self.pairs[label]
            for level, name, members in _groups(pairs):
                found.append(_row(self.plain, label, level, name, members))
        return found


def families(runs: Sequence[RunRecord]) -> list[Family]:
    """The families among ``runs`` (a model with at least one variant run on a suite it ran too),
    runs with a context left out."""
    chosen = [run for run in runs if not run.context.active] or list(runs)
    by_key: dict[tuple[str, str], dict[str | None, RunRecord]] = {}
    plain_label: dict[str, str] = {}
    variant_label: dict[tuple[str, str], str] = {}
    for run in chosen:
        base, variant = split_variant(run.model)
        # The label with the variant mark taken out of the model's name: settings pair alike.
        family = base + run.name[len(run.model):] if run.name.startswith(run.model) else run.name
        by_key.setdefault((family, run.suite_name), {})[variant] = run
        if variant is None:
            plain_label[family] = run.name
        else:
            variant_label[family, variant] = run.name
    found: list[Family] = []
    for family, plain in plain_label.items():
        variants = sorted((v, label) for (f, v), label in variant_label.items() if f == family)
        pairs: dict[str, tuple[_SuitePair, ...]] = {}
        for variant, label in variants:
            matched = [_pair(sides[None], sides[variant])
                       for (f, _), sides in by_key.items()
                       if f == family and None in sides and variant in sides]
            if matched:
                order = {s: i for i, s in enumerate(suite_order({p.suite for p in matched}))}
                pairs[label] = tuple(sorted(matched, key=lambda p: order[p.suite]))
        kept = tuple((v, label) for v, label in variants if label in pairs)
        if kept:
            found.append(Family(plain, kept, pairs))
    return found


def _pair(plain: RunRecord, variant: RunRecord) -> _SuitePair:
    dataset = pair_file(plain)
    measure = FIRST_PREDICTION_ACCURACY if dataset else ACCURACY
    group = dataset[0].title if dataset else ("" if suite_circuit(plain.suite_name) else "other")
    return _SuitePair(plain.suite_name, "first_prediction" if dataset else "accuracy", group,
                      _outcomes(plain, measure), _outcomes(variant, measure))


def _outcomes(run: RunRecord, measure: str) -> dict[int, float]:
    """Item number -> the metric's own per-item value of ``measure`` (scorable items only)."""
    found: dict[int, float] = {}
    for score in run.scores:
        values = item_stat_values(score)
        if measure in values:
            found[score.item_number] = values[measure]
    return found


def _groups(pairs: Sequence[_SuitePair]) -> list[tuple[str, str, list[_SuitePair]]]:
    """(level, name, member suites): the SG score, each data set overall, then every suite."""
    groups: list[tuple[str, str, list[_SuitePair]]] = []
    sg = [p for p in pairs if p.group == ""]
    if sg:
        groups.append(("sg_score", SG_SCORE, sg))
    for dataset in dict.fromkeys(p.group for p in pairs if p.group not in ("", "other")):
        groups.append(("dataset", dataset, [p for p in pairs if p.group == dataset]))
    groups += [("suite", p.suite, [p]) for p in pairs]
    return groups


def _row(plain: str, variant: str, level: str, name: str,
         members: Sequence[_SuitePair]) -> VariantRow:
    def mean(side: str) -> float:
        values = [v for p in members if not math.isnan(v := p.accuracy(getattr(p, side)))]
        return math.fsum(values) / len(values) if values else math.nan

    changed = to_pass = to_fail = 0
    outcomes_a: list[bool] = []
    outcomes_b: list[bool] = []
    for member in members:
        c, up, down, a, b = member.counts()
        changed, to_pass, to_fail = changed + c, to_pass + up, to_fail + down
        outcomes_a += a
        outcomes_b += b
    return VariantRow(model=plain, variant=variant, level=level, suite=name,
                      measure=members[0].measure, suites=len(members), items=len(outcomes_a),
                      accuracy_plain=mean("plain"), accuracy_variant=mean("variant"),
                      changed=changed, to_pass=to_pass, to_fail=to_fail,
                      mcnemar_p=mcnemar_exact(outcomes_a, outcomes_b).p_value)


def variant_rows(runs: Sequence[RunRecord]) -> list[VariantRow]:
    """Every family's rows, as ``variants.csv`` holds them."""
    return [row for family in families(runs) for row in family.rows()]


def variants_markdown(runs: Sequence[RunRecord]) -> str:
    """The section "Scoring variants beside the plain model" ("" when no run has a variant beside
    its plain model)."""
    found = families(runs)
    if not found:
        return ""
    lines = ["## Scoring variants beside the plain model", "",
             "The same weights scored another way (`MODEL~VARIANT`, a model of its own), beside "
             "the plain model on the suites both ran: accuracy (SyntaxGym suites: all "
             "predictions hold; minimal-pair data sets: the first prediction, and a data set's "
             "figure the mean over its paradigms), the items whose verdict changes (+ to pass, "
             "− to fail) and the exact McNemar p over the items both scored.", ""]
    for family in found:
        lines += [f"### {family.plain}", ""]
        lines += [f"- `{VARIANT_MARK}{variant}`: {describe_variant(variant)}."
                  for variant, _ in family.variants]
        lines += ["", _family_table(family).markdown(), ""]
    return "\n".join(lines)


def _family_table(family: Family) -> Table:
    by_variant = {label: {(row.level, row.suite): row for row in rows}
                  for label, rows in _rows_by_variant(family).items()}
    keys = list(dict.fromkeys(key for rows in by_variant.values() for key in rows))
    columns = ["plain"]
    for variant, _ in family.variants:
        mark = f"{VARIANT_MARK}{variant}"
        columns += [mark, f"{mark}: items changed (+ / −)", f"{mark}: McNemar p"]
    table_rows = []
    for level, name in keys:
        first = next(rows[level, name] for rows in by_variant.values() if (level, name) in rows)
        label = {"sg_score": f"**{SG_SCORE}** ({_count(first.suites, 'suite')})",
                 "dataset": f"**{name}** overall ({_count(first.suites, 'paradigm')}, first "
                            "prediction)"}.get(level, name)
        cells = [fmt(first.accuracy_plain)]
        for _, variant_label in family.variants:
            row = by_variant[variant_label].get((level, name))
            cells += ["–", "–", "–"] if row is None else [
                fmt(row.accuracy_variant), f"{row.changed} (+{row.to_pass} / −{row.to_fail})",
                format_p(row.mcnemar_p)]
        table_rows.append((label, tuple(cells)))
    return Table("", tuple(columns), tuple(table_rows))


def _count(number: int, what: str) -> str:
    return f"{number} {what}" + ("" if number == 1 else "s")


def _rows_by_variant(family: Family) -> dict[str, list[VariantRow]]:
    found: dict[str, list[VariantRow]] = {}
    for row in family.rows():
        found.setdefault(row.variant, []).append(row)
    return found
