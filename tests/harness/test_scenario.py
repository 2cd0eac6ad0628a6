"""The scenario: one instance per item, conditions as references, the item carried along."""

from __future__ import annotations

import json
from pathlib import Path


from fixtures import HU2020_DIR as HU2020
from syntaxgym_helm.harness.scenario import (
    ITEM_KEY,
    MAIN_METRIC,
    SyntaxGymScenario,
    read_item_payload,
)
from syntaxgym_helm.core.suite import parse_suite


def test_instances_mirror_the_suite(tmp_path: Path) -> None:
    raw = json.loads((HU2020 / "fgd_subject.json").read_text())
    instances = SyntaxGymScenario(suite="fgd_subject", suites_dir=str(HU2020)).get_instances(
        str(tmp_path))
    assert len(instances) == len(raw["items"])
    for instance, item in zip(instances, raw["items"]):
        assert instance.id == f"item{item['item_number']}" and instance.split == "test"
        assert instance.input.text == ""
        sentences = [" ".join(r["content"] for r in c["regions"] if r["content"])
                     for c in item["conditions"]]
        assert [ref.output.text for ref in instance.references] == sentences
        assert all("  " not in s and s == s.strip() for s in sentences)
        assert isinstance(instance.extra_data[ITEM_KEY], str)  # not deep-copied per condition
        carried = parse_suite(read_item_payload(instance.extra_data[ITEM_KEY]))
        assert [c.condition_name for c in carried.items[0].conditions] == [
            c["condition_name"] for c in item["conditions"]]
        assert carried.predictions[0].source == raw["predictions"][0]["formula"]


def test_a_suite_given_by_path_and_the_metadata(tmp_path: Path) -> None:
    scenario = SyntaxGymScenario(suite=str(HU2020 / "mvrr.json"))
    assert len(scenario.get_instances(str(tmp_path))) == 28
    assert scenario.get_metadata().main_metric == MAIN_METRIC
