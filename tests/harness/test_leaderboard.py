"""The leaderboard's files: the committed schema and run-entry files (up to date, readable by
HELM), and the per-run-suite schema and model metadata that ``helm-summarize`` reads."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import dacite
import pytest
import yaml
from helm.benchmark.model_metadata_registry import ModelMetadataList
from helm.benchmark.presentation.schema import read_schema

from script_processes import run_script
from syntaxgym_helm.cli.main import main as cli_main
from syntaxgym_helm.core.registry import CIRCUITS, HU2020_SUITES, ONE_ITEM_HU2020_SUITES
from syntaxgym_helm.harness.leaderboard import (
    embedded_model_metadata,
    generated_files,
    model_metadata_yaml,
    write_config,
)
from syntaxgym_helm.harness.metric import SyntaxGymMetric
from syntaxgym_helm.harness.schema import circuit_group_name, registry_suites, schema

ROOT = Path(__file__).resolve().parents[2]
# One real run: number_prep, 3 items.
NUMBER_PREP_OUTPUT = ROOT / "tests" / "fixtures" / "number_prep_run"
BIN = Path(sys.executable).parent


def test_committed_files_are_what_the_generator_writes() -> None:
    for relative, text in generated_files().items():
        committed = (ROOT / relative).read_text(encoding="utf-8")
        assert committed == text, (
            f"{relative} is stale: run python scripts/generate_leaderboard_files.py"
        )


def test_helm_reads_the_schema_with_suite_circuit_and_sg_score_tables() -> None:
    parsed = read_schema(str(ROOT / "configs" / "schema_syntaxgym.yaml"))
    groups = {group.name: group for group in parsed.run_groups}
    assert len(groups["syntaxgym_sg_score"].subgroups) == 31
    for circuit in CIRCUITS:
        assert groups[circuit_group_name(circuit)].subgroups
    for suite in HU2020_SUITES:
        assert groups[f"syntaxgym_{suite}"].environment["main_name"] == "syntaxgym_accuracy"
    circuit_members = sum(len(groups[circuit_group_name(c)].subgroups) for c in CIRCUITS)
    assert circuit_members == 31
    assert any(g.aggregation_strategies == ["mean"] for g in parsed.metric_groups)
    assert schema(registry_suites())["run_groups"][0]["name"] == "syntaxgym_sg_score"


def test_run_entry_files_name_every_suite() -> None:
    hu2020 = (ROOT / "run_specs" / "syntaxgym_hu2020.conf").read_text()
    sg = (ROOT / "run_specs" / "syntaxgym_sg_score.conf").read_text()
    assert hu2020.count("syntaxgym:suite=") == 34 and sg.count("syntaxgym:suite=") == 31
    assert "suite=nn-nv-rpl," in hu2020 and "suite=nn-nv-rpl," not in sg
    # The context files: every suite under every kind of context, none (the baseline) included,
    # except that a suite of one item has no other items to make a same-suite context of (that
    # run would fail: tests/core/test_context.py).
    context = (ROOT / "run_specs" / "syntaxgym_context_hu2020.conf").read_text()
    assert context.count("syntaxgym:suite=") == 4 * 34 - 2
    for kind in ("acceptable", "unacceptable"):
        assert context.count(f",context={kind},") == 33
        assert f"suite=nn-nv-rpl,context={kind}," not in context
    assert context.count(",context=unrelated,") == 34
    assert context.count("suite=mvrr,model=") == 1


def test_the_one_item_suites_are_those_with_one_item() -> None:
    counts = {path.stem: len(json.loads(path.read_text())["items"])
              for path in (ROOT / "tests" / "fixtures" / "suites" / "hu2020").glob("*.json")}
    assert sorted(counts) == sorted(HU2020_SUITES)
    assert {name for name, items in counts.items() if items == 1} == ONE_ITEM_HU2020_SUITES


def test_the_schema_describes_stats_with_the_metrics_own_metadata() -> None:
    fields = {field["name"]: field for field in schema(registry_suites())["metrics"]}
    for metadata in SyntaxGymMetric().get_metadata():
        assert fields[metadata.name]["display_name"] == metadata.display_name
        assert fields[metadata.name]["description"] == metadata.description
    parsed = read_schema(str(ROOT / "configs" / "schema_syntaxgym.yaml"))
    groups = {group.name: group for group in parsed.run_groups}
    # A built-in suite has one prediction: no column repeats its accuracy. The items scored
    # sit right after the accuracy, then the details, then what scoring cost.
    metric_groups = {g.name: g for g in parsed.metric_groups}
    main, items, details, efficiency = groups["syntaxgym_sgh_mvrr"].metric_groups
    assert (main, items, efficiency) == ("syntaxgym_accuracy", "syntaxgym_items",
                                         "syntaxgym_efficiency")
    assert [m.name for m in metric_groups[details].metrics] == ["syntaxgym_unscorable",
                                                               "syntaxgym_tie"]
    assert [m.name for m in metric_groups[efficiency].metrics] == [
        "syntaxgym_inference_time", "syntaxgym_tokens", "syntaxgym_cached"]
    assert metric_groups[efficiency].hide_win_rates
    assert fields["syntaxgym_inference_time"]["lower_is_better"] is True
    # Parent tables show one accuracy per suite: the cost columns stay in the suites' tables.
    assert "syntaxgym_efficiency" in groups["syntaxgym_sg_score"].subgroup_metric_groups_hidden
    # A count has no "Mean score" (it would average counts) and no win rate.
    assert [m.name for m in metric_groups[items].metrics] == ["syntaxgym_scored_items"]
    assert metric_groups[items].aggregation_strategies == []
    assert metric_groups[items].hide_win_rates
    assert fields["syntaxgym_scored_items"]["display_name"] == "Items scored"


def test_the_script_checks_the_committed_files(tmp_path: Path) -> None:
    script = [sys.executable, str(ROOT / "scripts" / "generate_leaderboard_files.py")]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    ok = subprocess.run([*script, "--check"], capture_output=True, text=True, env=env, timeout=120)
    assert ok.returncode == 0, ok.stderr
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "schema_syntaxgym.yaml").write_text("metrics: []\n")
    stale = subprocess.run([*script, "--check", "--root", str(tmp_path)], capture_output=True,
                           text=True, env=env, timeout=120)
    assert stale.returncode == 1 and "configs/schema_syntaxgym.yaml" in stale.stderr


def test_a_run_suites_schema_shows_only_what_was_run(tmp_path: Path) -> None:
    written = write_config(NUMBER_PREP_OUTPUT, "number_prep_fixture", folder=tmp_path / "config",
                           local_path=tmp_path / "no_prod_env")
    assert written.suites == ("number_prep",)
    parsed = read_schema(str(written.schema))
    groups = {group.name: group for group in parsed.run_groups}
    assert set(groups) == {"syntaxgym_sg_score", "syntaxgym_circuit_agreement", "syntaxgym",
                           "syntaxgym_number_prep"}
    assert groups["syntaxgym_sg_score"].subgroups == ["syntaxgym_number_prep"]
    # A column for each stat the run has (helm-summarize warns of one it lacks).
    main, items, details_name, efficiency = groups["syntaxgym_number_prep"].metric_groups
    assert (main, items, efficiency) == ("syntaxgym_accuracy", "syntaxgym_items",
                                         "syntaxgym_efficiency")
    details = {g.name: g for g in parsed.metric_groups}[details_name]
    # One prediction: no per-prediction column.
    assert [m.name for m in details.metrics] == ["syntaxgym_unscorable", "syntaxgym_tie"]


def test_context_runs_get_tables_of_their_own_and_leave_the_others_unchanged(
        tmp_path: Path) -> None:
    """The saved run, and a copy recorded as a context run (the run spec a context run entry
    makes), in one run suite: the schema's no-context part is what it is for the saved run
    alone."""
    from syntaxgym_helm.harness.run_spec import get_syntaxgym_spec

    alone = read_schema(str(write_config(NUMBER_PREP_OUTPUT, "number_prep_fixture",
                                         folder=tmp_path / "alone",
                                         local_path=tmp_path / "none").schema))
    output = tmp_path / "benchmark_output"
    shutil.copytree(NUMBER_PREP_OUTPUT, output)
    (run,) = (output / "runs" / "number_prep_fixture").iterdir()
    context_spec = get_syntaxgym_spec(suite="number_prep", context="unrelated")
    copy = run.parent / context_spec.name
    shutil.copytree(run, copy)
    spec = json.loads((copy / "run_spec.json").read_text())
    spec.update(name=context_spec.name, groups=context_spec.groups)
    spec["scenario_spec"]["args"] = context_spec.scenario_spec.args
    (copy / "run_spec.json").write_text(json.dumps(spec))
    written = write_config(output, "number_prep_fixture", folder=tmp_path / "both",
                           local_path=tmp_path / "none")
    both = read_schema(str(written.schema))
    groups = {group.name: group for group in both.run_groups}
    assert groups["syntaxgym_context_unrelated"].subgroups == [
        "syntaxgym_number_prep_context_unrelated"]
    suite_group = groups["syntaxgym_number_prep_context_unrelated"]
    assert suite_group.display_name == "number_prep (context: unrelated)"
    assert suite_group.environment["main_name"] == "syntaxgym_accuracy"
    plain = [g for g in both.run_groups if "context" not in g.name]
    assert plain == alone.run_groups


def test_runs_with_the_efficiency_stats_get_the_efficiency_columns(tmp_path: Path) -> None:
    """The saved run with the efficiency stats added to its stats.json (as runs write them now):
    its suite's table gains the efficiency group, hidden in the parent tables."""
    output = tmp_path / "benchmark_output"
    shutil.copytree(NUMBER_PREP_OUTPUT, output)
    (run,) = (output / "runs" / "number_prep_fixture").iterdir()
    stats = json.loads((run / "stats.json").read_text())
    accuracy = next(s for s in stats if s["name"]["name"] == "syntaxgym_accuracy")
    stats.append({**accuracy, "name": {**accuracy["name"], "name": "syntaxgym_inference_time"}})
    (run / "stats.json").write_text(json.dumps(stats))
    parsed = read_schema(str(write_config(output, "number_prep_fixture", folder=tmp_path / "config",
                                          local_path=tmp_path / "none").schema))
    groups = {group.name: group for group in parsed.run_groups}
    assert groups["syntaxgym_number_prep"].metric_groups[-1] == "syntaxgym_efficiency"
    assert "syntaxgym_efficiency" in groups["syntaxgym_sg_score"].subgroup_metric_groups_hidden


def test_model_metadata_names_the_embedded_models_and_keeps_the_users(tmp_path: Path) -> None:
    embedded = embedded_model_metadata()
    if not embedded:
        pytest.skip("no embedded model installed (make install)")
    (tmp_path / "model_metadata.yaml").write_text(
        "models:\n  - name: mylab/my-model\n    display_name: My model\n    description: Mine.\n"
        "    creator_organization_name: My lab\n    access: open\n"
        "    release_date: 2025-01-01\n    tags: [TEXT_MODEL_TAG]\n")
    parsed = dacite.from_dict(ModelMetadataList, yaml.safe_load(
        model_metadata_yaml(embedded, tmp_path)))  # as HELM's register_model_metadata_from_path
    names = {model.name: model.display_name for model in parsed.models}
    assert names["syntaxgym/smollm2-135m-instruct-q4_1"] == "SmolLM2 135M Instruct (Q4_1 GGUF)"
    assert names["mylab/my-model"] == "My model"
    with pytest.raises(ValueError, match="expected a mapping with a 'models' list"):
        (tmp_path / "model_metadata.yaml").write_text("- just a list\n")
        model_metadata_yaml(embedded, tmp_path)


def test_helm_summarize_shows_display_names_and_warns_of_no_missing_stat(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A real helm-summarize (no model: the saved run) with what ``leaderboard config`` wrote."""
    if not embedded_model_metadata():
        pytest.skip("no embedded model installed (make install)")
    output = tmp_path / "benchmark_output"
    shutil.copytree(NUMBER_PREP_OUTPUT, output)
    assert cli_main(["leaderboard", "config", str(output), "--suite", "number_prep_fixture",
                     "--local-path", str(tmp_path / "none")]) == 0
    command = capsys.readouterr().out.splitlines()[-1].split()
    done = run_script([BIN / command[0], *command[1:]], timeout=300,
                      env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    log = done.stdout + done.stderr
    assert "does not have any stat" not in log and "undefined in" not in log, log[-3000:]
    table = json.loads((output / "runs" / "number_prep_fixture" / "groups"
                        / "syntaxgym_sg_score.json").read_text())[0]
    assert [cell["value"] for cell in table["header"]] == ["Model", "Mean score",
                                                           "number_prep - Accuracy"]
    (row,) = table["rows"]
    assert row[0]["value"] == "SmolLM2 135M Instruct (Q4_1 GGUF)"
    stats = json.loads(next((output / "runs" / "number_prep_fixture").glob("*/stats.json"))
                       .read_text())
    accuracy = next(s["mean"] for s in stats if s["name"]["name"] == "syntaxgym_accuracy"
                    and "perturbation" not in s["name"])
    assert row[1]["value"] == pytest.approx(accuracy) == row[2]["value"]
    assert cli_main(["leaderboard", "show", str(output), "--suite", "number_prep_fixture"]) == 0
    shown = capsys.readouterr().out
    assert f"| number_prep | {accuracy:.3f} (n=3) |" in shown
    assert "SmolLM2 135M Instruct" in shown


def test_config_and_show_say_what_to_run_first(tmp_path: Path,
                                               capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "runs" / "empty").mkdir(parents=True)
    assert cli_main(["leaderboard", "config", str(tmp_path), "--suite", "missing"]) == 2
    assert "no run suite" in capsys.readouterr().err
    assert cli_main(["leaderboard", "config", str(tmp_path), "--suite", "empty"]) == 2
    assert "no finished SyntaxGym run" in capsys.readouterr().err
    assert cli_main(["leaderboard", "show", str(tmp_path), "--suite", "empty"]) == 2
    assert "run helm-summarize" in capsys.readouterr().err


def test_blimp_groups_overall_by_field_and_phenomenon_with_whole_sentence_accuracy() -> None:
    from syntaxgym_helm.core.minimal_pairs.blimp import blimp_groups
    from syntaxgym_helm.harness.stats import FIRST_PREDICTION_ACCURACY

    groups = {group["name"]: group for group in schema(registry_suites())["run_groups"]}
    blimp = blimp_groups()
    assert len(groups["syntaxgym_blimp"]["subgroups"]) == 67
    assert {name for name in groups if name.startswith("syntaxgym_blimp_field_")} == {
        f"syntaxgym_blimp_field_{field}" for field in blimp.by_field}
    assert len(blimp.by_phenomenon) == 12  # the paper's 12 phenomena
    for phenomenon, members in blimp.by_phenomenon.items():
        assert groups[f"syntaxgym_blimp_{phenomenon}"]["subgroups"] == [
            f"syntaxgym_{name}" for name in members]
    paradigm = groups["syntaxgym_blimp_adjunct_island"]
    assert paradigm["environment"]["main_name"] == FIRST_PREDICTION_ACCURACY
    assert FIRST_PREDICTION_ACCURACY not in str(groups["syntaxgym_number_prep"]["environment"])
    conf = (ROOT / "run_specs" / "syntaxgym_blimp.conf").read_text()
    assert conf.count("syntaxgym:suite=blimp_") == 67


def test_show_has_a_table_for_the_mandarin_suites(tmp_path: Path) -> None:
    """What helm-summarize writes for Wang et al.'s suites (their parent group, a phenomenon's
    and each suite's own) is shown as one table: their mean, each phenomenon, each suite (there
    was none, though helm-summarize wrote them)."""
    from syntaxgym_helm.harness.leaderboard import show_tables

    def group(name: str, header: list[str], row: list) -> None:
        (tmp_path / "groups" / f"{name}.json").write_text(json.dumps(
            [{"title": "SyntaxGym accuracy", "header": [{"value": v} for v in header],
              "rows": [[{"value": v} for v in row]]}]))

    (tmp_path / "groups").mkdir()
    group("syntaxgym_mandarin", ["Model", "Mean score", "mandarin_classifier_adj - Accuracy",
                                 "mandarin_gp_object_none - Accuracy"], ["m1", 0.25, 0.5, 0.0])
    group("syntaxgym_mandarin_classifier", ["Model", "Mean score",
                                            "mandarin_classifier_adj - Accuracy"],
          ["m1", 0.5, 0.5])
    group("syntaxgym_mandarin_classifier_adj", ["Model", "Mean score",
                                                "mandarin_classifier_adj - Accuracy"],
          ["m1", 0.5, 0.5])
    assert show_tables(tmp_path).splitlines() == [
        "| | m1 |", "|---|---|",
        "| **Mandarin suites** (Wang et al. 2021; mean item accuracy over the suites run) "
        "| 0.250 |",
        "| classifier | 0.500 |", "| mandarin_classifier_adj | 0.500 |",
        "| mandarin_gp_object_none | 0.000 |"]
