"""The generated leaderboard schema and run-entry files: up to date and readable by HELM."""

from __future__ import annotations

from pathlib import Path

from helm.benchmark.presentation.schema import read_schema

from syntaxgym_helm.harness.leaderboard import circuit_group_name, generated_files, schema
from syntaxgym_helm.core.registry import CIRCUITS, HU2020_SUITES

ROOT = Path(__file__).resolve().parents[2]


def test_committed_files_are_what_the_generator_writes() -> None:
    for relative, text in generated_files().items():
        committed = (ROOT / relative).read_text(encoding="utf-8")
        assert committed == text, f"{relative} is stale: run python -m syntaxgym_helm.harness.leaderboard"


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
    assert schema()["run_groups"][0]["name"] == "syntaxgym_sg_score"


def test_run_entry_files_name_every_suite() -> None:
    hu2020 = (ROOT / "run_specs" / "syntaxgym_hu2020.conf").read_text()
    sg = (ROOT / "run_specs" / "syntaxgym_sg_score.conf").read_text()
    assert hu2020.count("syntaxgym:suite=") == 34 and sg.count("syntaxgym:suite=") == 31
    assert "suite=nn-nv-rpl," in hu2020 and "suite=nn-nv-rpl," not in sg
