"""The leaderboard: HELM schema and run-entry files for the SyntaxGym suites, generated from the registry.

``python -m syntaxgym_helm.harness.leaderboard`` rewrites ``configs/schema_syntaxgym.yaml`` and the
``run_specs/*.conf`` files; a test checks the committed files are what this module generates.

The schema has a table per suite, one per circuit of Hu et al. (2020) and one for the SG score: the
31 paper suites side by side with a "Mean score" column, which is the paper's SG score (the mean of
suite accuracies). The built-in suites (``sgh_*``) have a table per suite and one together
(``syntaxgym_builtin``, whose "Mean score" is their mean accuracy). Models are rows.
"""

from __future__ import annotations

import argparse
import json
from importlib import resources
from pathlib import Path
from typing import Any, Iterable

import yaml

from syntaxgym_helm.harness.metric import (
    ACCURACY,
    FIRST_PREDICTION_ACCURACY,
    UNSCORABLE,
    prediction_accuracy_name,
)
from syntaxgym_helm.core.registry import CIRCUITS, HU2020_SUITES, builtin_suites, sg_score_suites
from syntaxgym_helm.harness.run_spec import suite_group_name

#: Predictions per suite shown in the schema (Hu et al. suites have at most 2).
MAX_PREDICTIONS_SHOWN = 2
ROOT = Path(__file__).resolve().parents[2]

_METRICS: list[dict[str, Any]] = [
    {"name": ACCURACY, "display_name": "SyntaxGym accuracy", "short_display_name": "Accuracy",
     "description": "Fraction of items for which all of the suite's predictions hold (item "
                    "accuracy, as the cpllab/syntaxgym metric and Brain-Score compute it).",
     "lower_is_better": False},
    {"name": FIRST_PREDICTION_ACCURACY, "display_name": "First-prediction accuracy",
     "short_display_name": "First pred.",
     "description": "Fraction of items for which the suite's first prediction holds: how Hu et al. "
                    "(2020) scored, which differs from item accuracy on suites with several "
                    "predictions.", "lower_is_better": False},
    {"name": UNSCORABLE, "display_name": "Unscorable items", "short_display_name": "Unscorable",
     "description": "Fraction of items that could not be scored (failed request, tokens that "
                    "could not be aligned to regions, undefined region value); they count in no "
                    "accuracy.", "lower_is_better": True},
    *[
        {"name": prediction_accuracy_name(i), "display_name": f"Prediction {i} accuracy",
         "short_display_name": f"Pred. {i}",
         "description": f"Fraction of items for which prediction {i} of the suite holds.",
         "lower_is_better": False}
        for i in range(MAX_PREDICTIONS_SHOWN)
    ],
]

_METRIC_GROUPS: list[dict[str, Any]] = [
    {"name": "syntaxgym_accuracy", "display_name": "SyntaxGym accuracy",
     "aggregation_strategies": ["mean"],
     "metrics": [{"name": "${main_name}", "split": "${main_split}"}]},
    {"name": "syntaxgym_details", "display_name": "Predictions and scoring",
     "hide_win_rates": True,
     "metrics": [{"name": name, "split": "${main_split}"} for name in
                 [FIRST_PREDICTION_ACCURACY, UNSCORABLE,
                  *(prediction_accuracy_name(i) for i in range(MAX_PREDICTIONS_SHOWN))]]},
]

_ENVIRONMENT = {"main_name": ACCURACY, "main_split": "test"}
_TAXONOMY = {"task": "targeted syntactic evaluation", "what": "constructed minimal pairs",
             "who": "linguists", "when": "2020", "language": "English"}
_CITATION = "[(Hu et al., 2020)](https://aclanthology.org/2020.acl-main.158/)"


def circuit_group_name(circuit: str) -> str:
    return "syntaxgym_circuit_" + circuit.lower().replace("-", "_").replace(" ", "_")


def schema() -> dict[str, Any]:
    """The HELM schema (``helm-summarize --schema-path``) as a plain dict."""
    suites = sorted(HU2020_SUITES)
    groups: list[dict[str, Any]] = [
        _parent("syntaxgym_sg_score", "SG score (31 suites)",
                "The SyntaxGym score of Hu et al. (2020): the mean accuracy over the 31 suites "
                f"of the paper {_CITATION}; the Mean score column is the SG score.",
                sg_score_suites()),
        *[
            _parent(circuit_group_name(circuit), f"Circuit: {circuit}",
                    f"The {circuit} circuit of Hu et al. (2020) {_CITATION}.",
                    [s for s in suites if HU2020_SUITES[s].circuit == circuit])
            for circuit in CIRCUITS
        ],
        _parent("syntaxgym_builtin", "Built-in suites",
                "The suites shipped with syntaxgym-helm, generated from the JSONNET configs in "
                "configs/suites/; the Mean score column is their mean accuracy.",
                builtin_suites()),
        _parent("syntaxgym", "SyntaxGym (all suites)",
                "Every SyntaxGym suite that was run: the 34 of Hu et al. (2020), the built-in "
                "suites and any other.", suites + builtin_suites()),
        *[_suite_group(name) for name in suites],
        *[_builtin_suite_group(name) for name in builtin_suites()],
    ]
    return {"metrics": _METRICS, "perturbations": [], "metric_groups": _METRIC_GROUPS,
            "run_groups": groups}


def _parent(name: str, display_name: str, description: str, suites: Iterable[str]) -> dict:
    # No metric groups of its own: HELM then builds the table from the subgroups' metric groups
    # and gives the parent no (always empty) column of its own.
    return {"name": name, "display_name": display_name, "description": description,
            "category": "SyntaxGym", "subgroups": [suite_group_name(s) for s in suites],
            "subgroup_metric_groups_hidden": ["syntaxgym_details"]}


def _suite_group(suite: str) -> dict[str, Any]:
    circuit = HU2020_SUITES[suite].circuit or "left out of the paper's SG score"
    return {"name": suite_group_name(suite), "display_name": suite,
            "description": f"SyntaxGym suite {suite} ({circuit}) {_CITATION}.",
            "category": "SyntaxGym suites",
            "metric_groups": ["syntaxgym_accuracy", "syntaxgym_details"],
            "environment": dict(_ENVIRONMENT), "taxonomy": dict(_TAXONOMY)}


def _builtin_suite_group(suite: str) -> dict[str, Any]:
    suite_file = resources.files("syntaxgym_helm") / "suites" / f"{suite}.json"
    description = json.loads(suite_file.read_text(encoding="utf-8"))["meta"]["description"]
    return {"name": suite_group_name(suite), "display_name": suite,
            "description": f"Built-in suite {suite}: {description}",
            "category": "SyntaxGym suites",
            "metric_groups": ["syntaxgym_accuracy", "syntaxgym_details"],
            "environment": dict(_ENVIRONMENT), "taxonomy": dict(_TAXONOMY)}


def run_entries_conf(suites: Iterable[str], model: str = "text") -> str:
    """A run-entries file for ``helm-run --conf-paths`` (pick models with ``--models-to-run``)."""
    lines = ["# Generated by `python -m syntaxgym_helm.harness.leaderboard`; do not edit by hand.",
             "entries: ["]
    lines += [f'  {{description: "syntaxgym:suite={s},model={model}", priority: 1}}'
              for s in suites]
    return "\n".join(lines + ["]", ""])


def generated_files() -> dict[Path, str]:
    """Every generated file, by path relative to the project root, with its content."""
    header = "# Generated by `python -m syntaxgym_helm.harness.leaderboard`; do not edit by hand.\n"
    return {
        Path("configs/schema_syntaxgym.yaml"):
            header + yaml.safe_dump(schema(), sort_keys=False, allow_unicode=True, width=100),
        Path("run_specs/syntaxgym_sg_score.conf"): run_entries_conf(sg_score_suites()),
        Path("run_specs/syntaxgym_hu2020.conf"): run_entries_conf(sorted(HU2020_SUITES)),
        Path("run_specs/syntaxgym_builtin.conf"): run_entries_conf(builtin_suites()),
    }


def show_tables(run_suite_dir: Path) -> str:
    """Markdown of what ``helm-summarize`` wrote: SG score per model, then suites and circuits;
    then the built-in suites. Each table is shown when its suites were run."""
    groups = run_suite_dir / "groups"
    tables = [table for table in (_sg_score_table(groups), _builtin_table(groups)) if table]
    if not tables:
        raise FileNotFoundError(f"{groups} has neither syntaxgym_sg_score.json nor "
                                "syntaxgym_builtin.json: run helm-summarize with "
                                "--schema-path configs/schema_syntaxgym.yaml first")
    return "\n\n".join(tables)


def _builtin_table(groups: Path) -> str | None:
    """The built-in suites' table: their mean accuracy, then each suite, per model."""
    table_path = groups / "syntaxgym_builtin.json"
    if not table_path.is_file():
        return None
    table = json.loads(table_path.read_text())[0]
    header = [cell["value"] for cell in table["header"]]
    models = [row[0]["value"] for row in table["rows"]]
    lines = ["| | " + " | ".join(models) + " |", "|---|" + "---|" * len(models),
             "| **Built-in suites** (mean over the suites run) | "
             + " | ".join(_fmt(row[1].get("value")) for row in table["rows"]) + " |"]
    for index, name in enumerate(header):
        suite = name.removesuffix(" - Accuracy")
        if suite in builtin_suites() and any(r[index].get("value") is not None
                                             for r in table["rows"]):
            lines.append(f"| {suite} | " + " | ".join(_fmt(row[index].get("value"))
                                                     for row in table["rows"]) + " |")
    return "\n".join(lines)


def _sg_score_table(groups: Path) -> str | None:
    table_path = groups / "syntaxgym_sg_score.json"
    if not table_path.is_file():
        return None
    table = json.loads(table_path.read_text())[0]
    header = [cell["value"] for cell in table["header"]]
    suites = [(i, h.removesuffix(" - Accuracy")) for i, h in enumerate(header)
              if h.endswith(" - Accuracy") and any(r[i].get("value") is not None
                                                   for r in table["rows"])]
    circuit_scores = _circuit_scores(groups)
    models = [row[0]["value"] for row in table["rows"]]
    lines = ["| | " + " | ".join(models) + " |", "|---|" + "---|" * len(models)]
    lines.append("| **SG score** (mean over the suites run) | "
                 + " | ".join(_fmt(row[1].get("value")) for row in table["rows"]) + " |")
    for circuit, by_model in circuit_scores.items():
        lines.append(f"| circuit: {circuit} | "
                     + " | ".join(_fmt(by_model.get(m)) for m in models) + " |")
    for index, suite in suites:
        lines.append(f"| {suite} | " + " | ".join(_fmt(row[index].get("value"))
                                                 for row in table["rows"]) + " |")
    return "\n".join(lines)


def _circuit_scores(groups: Path) -> dict[str, dict[str, float | None]]:
    scores: dict[str, dict[str, float | None]] = {}
    for circuit in CIRCUITS:
        path = groups / f"{circuit_group_name(circuit)}.json"
        if path.is_file():
            table = json.loads(path.read_text())[0]
            scores[circuit] = {row[0]["value"]: row[1].get("value") for row in table["rows"]}
    return scores


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="project root to write into")
    parser.add_argument("--show", type=Path, metavar="RUNS_DIR",
                        help="print the tables of benchmark_output/runs/SUITE instead")
    args = parser.parse_args()
    if args.show:
        print(show_tables(args.show))
        return
    for relative, text in generated_files().items():
        path = args.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
