"""The leaderboard's HELM schema (``helm-summarize --schema-path``), built from the suites it shows.

Two sets of suites make two schemas with one generator:

- :func:`registry_suites`: every registered and built-in suite; the committed
  ``configs/schema_syntaxgym.yaml`` (``scripts/generate_leaderboard_files.py``);
- :func:`run_suites`: the suites of one HELM run suite (``benchmark_output/runs/NAME``), as
  ``syntaxgym-helm leaderboard config`` writes it for ``make run``: only the tables and columns
  that have numbers (no all-empty column for a suite not run; a suite given by path or URL gets a
  table too), and per suite only the stats it has (``helm-summarize`` warns for every column whose
  stat a run lacks, e.g. a second prediction of a one-prediction suite).

Tables: one per suite; one per circuit of Hu et al. (2020) and one for the SG score (its "Mean
score" column is the paper's SG score over the suites run); the built-in suites (``sgh_*``)
together; per minimal-pair data set (BLiMP, CLAMS, RuBLiMP, TurBLiMP, SLING) one table, and one
per language and group of it (:func:`syntaxgym_helm.core.minimal_pairs.catalogue.pair_groups`),
whose suites' main column is the whole-sentence accuracy; every suite together. Models are rows.
Metric fields come from the metric's own metadata
(:func:`syntaxgym_helm.harness.stats.metric_metadata`).

The number of items scored (``syntaxgym_scored_items``, a per-run stat whose value is the count)
has a metric group of its own: in a suite's table it is the column after the accuracy; a parent
table (SG score, circuit, ...) shows it as a second table, one column per suite, with no mean and
no win rate.

What scoring cost (model seconds, tokens and cache hits per item; the efficiency stats of
:mod:`syntaxgym_helm.harness.stats`) is a metric group of its own, the last of a suite's table and
hidden in parent tables (one column per suite and stat would crowd them).

Runs with a context (``context=`` of the run entry) belong to run groups of their own (see
:mod:`syntaxgym_helm.harness.run_spec`): per kind of context a table of its suites
(``syntaxgym_context_<kind>``, "Mean score" their mean accuracy) and a table per suite and kind.
The tables above hold only runs without a context, so adding context runs to a run suite leaves
them as they were.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from syntaxgym_helm.core.context import NONE, spec_from_args
from syntaxgym_helm.core.minimal_pairs.catalogue import (
    DATASETS,
    LANGUAGE_NAMES,
    pair_groups,
    source_file,
)
from syntaxgym_helm.core.registry import (
    CIRCUITS,
    HU2020_SUITES,
    builtin_suites,
    converted_suites,
    sg_score_suites,
    shipped_suite_file,
)
from syntaxgym_helm.harness.run_spec import (
    context_group_name,
    suite_context_group_name,
    suite_group_name,
)
from syntaxgym_helm.harness.scenario import MAIN_METRIC
from syntaxgym_helm.harness.stats import (
    DEFAULT_DESCRIBED_PREDICTIONS,
    DETAILS_GROUP,
    EFFICIENCY_GROUP,
    FIRST_PREDICTION_ACCURACY,
    INFERENCE_TIME,
    ITEMS_GROUP,
    MAIN_GROUP,
    SCORED_ITEMS,
    TIE,
    UNSCORABLE,
    efficiency_stat_names,
    metric_metadata,
    prediction_accuracy_name,
)

_TAXONOMY = {"task": "targeted syntactic evaluation", "what": "constructed minimal pairs",
             "who": "linguists", "when": "2020", "language": "English"}
CITATION = "[(Hu et al., 2020)](https://aclanthology.org/2020.acl-main.158/)"
MANDARIN_CITE = "[(Wang et al., 2021)](https://aclanthology.org/2021.emnlp-main.454/)"
CONTEXT_CATEGORY = "SyntaxGym with context"


@dataclass(frozen=True)
class SuiteColumn:
    """A suite as the leaderboard shows it."""

    name: str  # as the run group names it: syntaxgym_<name> (file stem for paths and URLs)
    description: str
    predictions: int | None  # how many predictions (so which stats it has); None: not known
    scored_items: bool = True  # its runs have the count of items scored
    context: str = NONE  # the kind of context of its runs (ContextSpec.label)
    ties: bool = True  # its runs have the tie stat
    efficiency: bool = True  # its runs have the efficiency stats

    @property
    def group(self) -> str:
        if self.context == NONE:
            return suite_group_name(self.name)
        return suite_context_group_name(self.name, self.context)

    @property
    def display_name(self) -> str:
        return self.name if self.context == NONE else f"{self.name} (context: {self.context})"

    @property
    def is_pairs(self) -> bool:
        """A minimal-pair data set's suite (BLiMP, CLAMS, RuBLiMP, TurBLiMP, SLING)."""
        return source_file(self.name) is not None

    @property
    def main_metric(self) -> str:
        """A minimal-pair suite's main column is its first prediction, the whole-sentence
        comparison the papers and other tools report; every other suite's is item accuracy."""
        return FIRST_PREDICTION_ACCURACY if self.is_pairs else MAIN_METRIC

    @property
    def details_group(self) -> str:
        """The metric group of the suite's details columns (see :func:`_details_groups`)."""
        if self.predictions is None:
            name = f"{DETAILS_GROUP}_pairs" if self.is_pairs else DETAILS_GROUP
        else:
            name = f"{DETAILS_GROUP}_{self.predictions}"
        return name if self.ties else f"{name}_without_ties"

    @property
    def language(self) -> str:
        found = source_file(self.name)
        return LANGUAGE_NAMES[found[1].language] if found else "English"


def circuit_group_name(circuit: str) -> str:
    return "syntaxgym_circuit_" + circuit.lower().replace("-", "_").replace(" ", "_")


def _registered_description(name: str) -> str:
    found = source_file(name)
    if found is not None:
        dataset, file = found
        where = ", ".join(filter(None, (LANGUAGE_NAMES[file.language], file.group)))
        return (f"{dataset.title} paradigm {file.paradigm} ({where}): {file.pairs:,} minimal "
                f"pairs {_cite(dataset.name)}; the main "
                "column is the whole-sentence comparison (prediction 0), the papers' accuracy.")
    if name in HU2020_SUITES:
        circuit = HU2020_SUITES[name].circuit or "left out of the paper's SG score"
        return f"SyntaxGym suite {name} ({circuit}) {CITATION}."
    meta = json.loads(shipped_suite_file(name).read_text(encoding="utf-8"))["meta"]
    if name in converted_suites():
        return (f"Mandarin suite {name} {MANDARIN_CITE}: {meta['description']} Success "
                f"criterion: {meta['criterion']}.")
    return f"Built-in suite {name}: {meta['description']}"


def _builtin_predictions(name: str) -> int:
    return len(json.loads(shipped_suite_file(name).read_text(encoding="utf-8"))["predictions"])


def _cite(dataset: str) -> str:
    found = DATASETS[dataset]
    return f"[({found.short_citation})]({found.paper_url})"


def registry_suites() -> list[SuiteColumn]:
    """The 34 suites of Hu et al. (2020) (prediction counts unknown: they are downloaded), the
    built-in suites (shipped, so counted) and the minimal-pair data sets' (one prediction, but
    BLiMP's paradigms may add a prefix-method one)."""
    return ([SuiteColumn(name, _registered_description(name), None)
             for name in sorted(HU2020_SUITES)]
            + [SuiteColumn(name, _registered_description(name), _builtin_predictions(name))
               for name in [*builtin_suites(), *converted_suites()]]
            + [SuiteColumn(file.suite, _registered_description(file.suite),
                           None if dataset.extra_predictions else 1)
               for dataset in DATASETS.values() for file in dataset.files()])


def run_suites(run_suite_dir: Path) -> list[SuiteColumn]:
    """The suites run in ``benchmark_output/runs/NAME``, their prediction counts read from the
    stats of their runs (every model's), in registry order, then the others by name; a suite run
    with a context is a column of its own per kind of context, after those without."""
    stat_names: dict[tuple[str, str], set[str]] = {}
    sources: dict[str, str] = {}
    for spec_path in sorted(Path(run_suite_dir).glob("*/run_spec.json")):
        spec = json.loads(spec_path.read_text())
        if not spec["scenario_spec"]["class_name"].endswith("SyntaxGymScenario"):
            continue
        stats_path = spec_path.parent / "stats.json"
        if not stats_path.is_file():
            continue  # an unfinished run: helm-summarize skips it too
        args = spec["scenario_spec"]["args"]
        source = args["suite"]
        name = suite_group_name(source).removeprefix("syntaxgym_")
        sources.setdefault(name, source)
        key = (name, spec_from_args(args).label)
        stat_names.setdefault(key, set()).update(
            stat["name"]["name"] for stat in json.loads(stats_path.read_text()))
    if not stat_names:
        raise FileNotFoundError(f"{run_suite_dir} holds no finished SyntaxGym run (run_spec.json "
                                "and stats.json of a syntaxgym run): run helm-run first")
    known = [s.name for s in registry_suites()]
    names = {name for name, _ in stat_names}
    ordered = [n for n in known if n in names] + sorted(names - set(known))
    contexts = sorted({context for _, context in stat_names}, key=lambda c: (c != NONE, c))
    return [SuiteColumn(name, _registered_description(name) if name in known
                        else f"SyntaxGym suite {name} ({sources[name]}).",
                        _prediction_count(stat_names[name, context]),
                        SCORED_ITEMS in stat_names[name, context], context,
                        TIE in stat_names[name, context],
                        INFERENCE_TIME in stat_names[name, context])
            for context in contexts for name in ordered if (name, context) in stat_names]


def _prediction_count(names: set[str]) -> int | None:
    count = 0
    while prediction_accuracy_name(count) in names:
        count += 1
    return count or None  # no prediction stat (every item unscorable): show the common columns


def schema(suites: Sequence[SuiteColumn]) -> dict[str, Any]:
    """The HELM schema showing ``suites`` as a plain dict (write it as YAML)."""
    plain = [suite for suite in suites if suite.context == NONE]
    present = {suite.name for suite in plain}
    sg = [s for s in sg_score_suites() if s in present]
    builtins = [s for s in builtin_suites() if s in present]
    details = _details_groups(suites)
    hidden = [group["name"] for group in details] + [EFFICIENCY_GROUP]
    parents = [
        ("syntaxgym_sg_score", "SG score (31 suites)",
         "The SyntaxGym score of Hu et al. (2020): the mean accuracy over the 31 suites of the "
         f"paper {CITATION}; the Mean score column is the SG score (over the suites run).", sg),
        *[(circuit_group_name(circuit), f"Circuit: {circuit}",
           f"The {circuit} circuit of Hu et al. (2020) {CITATION}.",
           [s for s in sorted(HU2020_SUITES) if HU2020_SUITES[s].circuit == circuit
            and s in present])
          for circuit in CIRCUITS],
        ("syntaxgym_builtin", "Built-in suites",
         "The suites shipped with syntaxgym-helm, generated from the JSONNET configs in "
         "configs/suites/; the Mean score column is their mean accuracy.", builtins),
        *_mandarin_parents(present),
        *_pair_parents(present),
        ("syntaxgym", "SyntaxGym (all suites)",
         "Every SyntaxGym suite that was run: the 34 of Hu et al. (2020), the built-in suites, "
         "the minimal-pair data sets' paradigms and any other.", [s.name for s in plain]),
    ]
    groups = [_parent(name, display, description,
                      [suite_group_name(s) for s in members], hidden)
              for name, display, description, members in parents if members]
    groups += [_suite_group(suite) for suite in plain]
    for context in dict.fromkeys(s.context for s in suites if s.context != NONE):
        members = [s for s in suites if s.context == context]
        groups.append(_parent(
            context_group_name(context), f"Context: {context}",
            f"Runs with context={context}: sentences put before every condition of each item "
            "(see docs/context.md); the Mean score column is the mean accuracy over the suites "
            "run. Compare with the same suites' tables without a context.",
            [s.group for s in members], hidden, CONTEXT_CATEGORY))
        groups += [_suite_group(suite) for suite in members]
    most = max([s.predictions or 0 for s in suites] + [DEFAULT_DESCRIBED_PREDICTIONS])
    metrics = [{key: value for key, value in (
        ("name", m.name), ("display_name", m.display_name),
        ("short_display_name", m.short_display_name), ("description", m.description),
        ("lower_is_better", m.lower_is_better)) if value is not None}
        for m in metric_metadata(most)]
    main = {"name": MAIN_GROUP, "display_name": "SyntaxGym accuracy",
            "aggregation_strategies": ["mean"],
            "metrics": [{"name": "${main_name}", "split": "${main_split}"}]}
    # A count: no "Mean score" (it would average counts) and no win rate.
    items = {"name": ITEMS_GROUP, "display_name": "Items scored", "hide_win_rates": True,
             "aggregation_strategies": [],
             "metrics": [{"name": SCORED_ITEMS, "split": "${main_split}"}]}
    efficiency = {"name": EFFICIENCY_GROUP, "display_name": "Efficiency", "hide_win_rates": True,
                  "aggregation_strategies": [],
                  "metrics": [{"name": name, "split": "${main_split}"}
                              for name in efficiency_stat_names()]}
    return {"metrics": metrics, "perturbations": [],
            "metric_groups": [main, items, *details, efficiency], "run_groups": groups}


def _mandarin_parents(present: set[str]) -> list[tuple[str, str, str, list[str]]]:
    """The Mandarin suites of Wang et al. (2021): all of them (the Mean score column is their
    mean item accuracy), then per phenomenon (its modifiers)."""
    names = [name for name in converted_suites() if name in present]
    phenomena: dict[str, list[str]] = {}
    for name in names:
        tags = json.loads(shipped_suite_file(name).read_text(encoding="utf-8"))["meta"]["tags"]
        phenomena.setdefault(tags[1], []).append(name)
    return [("syntaxgym_mandarin", "Mandarin suites (Wang et al. 2021)",
             f"The test suites of Wang et al. (2021) {MANDARIN_CITE}, converted to SyntaxGym "
             "suites with the paper's success criteria; the Mean score column is their mean "
             "item accuracy.", names),
            *[(f"syntaxgym_mandarin_{phenomenon}", f"Mandarin: {phenomenon}",
               f"The {phenomenon} suites of Wang et al. (2021) {MANDARIN_CITE}, one per "
               "modifier.", members) for phenomenon, members in phenomena.items()]]


def _pair_parents(present: set[str]) -> list[tuple[str, str, str, list[str]]]:
    """Per minimal-pair data set: its table (the Mean score column is the mean whole-sentence
    accuracy over the paradigms run, BLiMP's overall figure), then its languages and groups."""
    parents = []
    for dataset in DATASETS.values():
        cite = _cite(dataset.name)
        parents.append((f"syntaxgym_{dataset.name}", f"{dataset.title} "
                        f"({len(dataset.files())} {dataset.files_label})",
                        f"{dataset.title} {cite}: whole-sentence accuracy per paradigm; the Mean "
                        f"score column is the mean over the {dataset.files_label} run.",
                        [f.suite for f in dataset.files() if f.suite in present]))
        parents += [(group.name, f"{dataset.title} {group.label}",
                     f"The {dataset.title} paradigms of {group.label} {cite}.",
                     [s for s in group.suites if s in present])
                    for group in pair_groups(dataset)]
    return parents


def _details_groups(suites: Iterable[SuiteColumn]) -> list[dict[str, Any]]:
    """One details metric group per prediction count: a one-prediction suite's first-prediction
    and prediction-0 accuracies are its accuracy (no column); a suite with several shows each
    prediction; a suite whose count is not known shows the first prediction, which every suite
    has."""
    groups = {}
    for suite in suites:
        if suite.predictions is None:
            names = [UNSCORABLE] if suite.is_pairs else [FIRST_PREDICTION_ACCURACY, UNSCORABLE]
        elif suite.predictions == 1:
            names = [UNSCORABLE]
        else:
            names = [UNSCORABLE, *(prediction_accuracy_name(i) for i in range(suite.predictions))]
        if suite.ties:
            names.insert(names.index(UNSCORABLE) + 1, TIE)
        groups[suite.details_group] = {
            "name": suite.details_group, "display_name": "Predictions and scoring",
            "hide_win_rates": True,
            "metrics": [{"name": name, "split": "${main_split}"} for name in names]}
    return [groups[name] for name in sorted(groups)]


def _parent(name: str, display_name: str, description: str, subgroups: Iterable[str],
            hidden: list[str], category: str = "SyntaxGym") -> dict[str, Any]:
    # No metric groups of its own: HELM then builds the table from the subgroups' metric groups
    # (the details hidden: one accuracy column per suite) and gives the parent no column.
    return {"name": name, "display_name": display_name, "description": description,
            "category": category, "subgroups": list(subgroups),
            "subgroup_metric_groups_hidden": list(hidden)}


def _suite_group(suite: SuiteColumn) -> dict[str, Any]:
    return {"name": suite.group, "display_name": suite.display_name,
            "description": suite.description,
            "category": "SyntaxGym suites" if suite.context == NONE else CONTEXT_CATEGORY,
            "metric_groups": [MAIN_GROUP, *([ITEMS_GROUP] if suite.scored_items else []),
                              suite.details_group,
                              *([EFFICIENCY_GROUP] if suite.efficiency else [])],
            "environment": {"main_name": suite.main_metric, "main_split": "test"},
            "taxonomy": {**_TAXONOMY, "language": suite.language}}

