"""The SyntaxGym scenario: one HELM ``Instance`` per suite item, its conditions as ``Reference``s.

Each reference's output text is one condition's sentence (non-empty regions joined by single
spaces), in suite order, so ``MultipleChoiceSeparateAdapter`` sends exactly that sentence (after the
run's prefix) as one echo request per condition. Each reference is tagged ``condition:<name>``
(:func:`condition_tag`), so the metric finds a request's condition by name, never by position.
Everything the metric needs to score the item (its regions, the suite's predictions and metrics)
travels in ``Instance.extra_data`` as a one-item suite, so scoring never re-reads the suite from
disk. It travels as compact JSON *text* (:func:`item_payload`), not as a nested dict: HELM writes
every request state's instance with ``dataclasses.asdict``, which deep-copies a dict once per
condition (most of the time spent writing ``scenario_state.json``); a string is not copied.
Every instance also names the run format it was written in
(:data:`syntaxgym_helm.harness.run_format.FORMAT_KEY`), which readers check.

With a context (``context=`` of the run entry; :mod:`syntaxgym_helm.core.context`), the item's
context text, which ends in a space, is ``Instance.input``: the adapter writes the input, then the
reference, so every condition's prompt is ``prefix + context + sentence`` and the metric, which
scores only what follows ``prompt`` minus the sentence, never scores the context.
"""

from __future__ import annotations

import json
from typing import Any

from helm.benchmark.presentation.taxonomy_info import TaxonomyInfo
from helm.benchmark.scenarios.scenario import (
    TEST_SPLIT,
    Input,
    Instance,
    Output,
    Reference,
    Scenario,
    ScenarioMetadata,
)
from helm.common.hierarchical_logger import hlog, hwarn

from syntaxgym_helm.clients.registration import install_run_hooks
from syntaxgym_helm.core.context import ContextSpec, item_contexts, spec_from_args
from syntaxgym_helm.core.minimal_pairs.convert import left_out
from syntaxgym_helm.core.registry import load_named_suite
from syntaxgym_helm.core.run_options import SCENARIO, RunOptions, options_from
from syntaxgym_helm.core.suite import Item, Suite
from syntaxgym_helm.harness.run_format import FORMAT_KEY, RUN_FORMAT_VERSION
from syntaxgym_helm.harness.stats import ACCURACY

#: Key of ``Instance.extra_data`` that holds the item as a one-item suite in syntaxgym-core JSON.
ITEM_KEY = "syntaxgym_item"
MAIN_METRIC = ACCURACY
#: Key of ``Instance.extra_data`` listing what was changed in the item's text when its suite was
#: read (absent when nothing was).
NOTES_KEY = "syntaxgym_notes"
#: A reference's tag that names its condition: ``condition:<condition name>``.
CONDITION_TAG_PREFIX = "condition:"


def item_payload(one_item_suite: dict[str, Any]) -> str:
    """The one-item suite as ``Instance.extra_data[ITEM_KEY]`` holds it: compact JSON text."""
    return _ENCODER.encode(one_item_suite)


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def item_payloads(suite: Suite) -> list[str]:
    """Each item's :func:`item_payload` (the suite's header, then ``items`` holding that item),
    the same text, with the header encoded once rather than with every item (HELM keeps only
    ``--max-eval-instances`` of the instances made from them)."""
    data = suite.to_json_dict()
    items = data.pop("items")
    head = item_payload(data)[:-1] + ',"items":['
    return [head + _ENCODER.encode(item) + "]}" for item in items]


def read_item_payload(payload: str) -> dict[str, Any]:
    """The one-item suite of ``Instance.extra_data[ITEM_KEY]``."""
    return json.loads(payload)


def instance_notes(instance: Instance) -> tuple[str, ...]:
    """What was changed in the item's text when its suite was read (for people)."""
    return tuple((instance.extra_data or {}).get(NOTES_KEY, ()))


def condition_tag(condition_name: str) -> str:
    return CONDITION_TAG_PREFIX + condition_name


def condition_of_reference(reference: Reference) -> str | None:
    """The condition a reference's tag names; None for a reference without such a tag."""
    for tag in reference.tags:
        if tag.startswith(CONDITION_TAG_PREFIX):
            return tag[len(CONDITION_TAG_PREFIX):]
    return None


class SyntaxGymScenario(Scenario):
    """Targeted syntactic evaluation on one SyntaxGym test suite (Gauthier et al. 2020)."""

    name = "syntaxgym"
    description = (
        "SyntaxGym targeted syntactic evaluation: minimal-pair sentences whose region surprisals "
        "must satisfy the suite's predictions (Hu et al. 2020)."
    )
    tags = ["syntax", "language_modeling", "minimal_pairs"]

    def __init__(self, suite: str, *, context_sha256: str = "", **options: Any) -> None:
        """``suite`` and the run options its run spec records (:class:`RunOptions`; strings are
        read as a run entry's), with the SHA-256 of a context file taken with the run spec.

        HELM's parallel runners' workers load no plugins but make this scenario first
        (``Runner.run_one``): the run's hooks are installed here (embedded models, prefetch)."""
        super().__init__()
        install_run_hooks()
        self.suite_spec = suite
        self.options: RunOptions = options_from(options, where="SyntaxGymScenario: ")
        self.suites_dir = self.options.suites_dir or None
        self.context = spec_from_args({**self.options.recorded(SCENARIO),
                                       "context_sha256": context_sha256})

    def load(self, cache_path: str) -> Suite:
        return load_named_suite(self.suite_spec, cache_path, self.suites_dir)

    def get_instances(self, output_path: str) -> list[Instance]:
        suite = self.load(output_path)
        note = left_out_note(suite)
        if note:
            hlog(note)
        log_text_changes(suite)
        return suite_instances(suite, self.context)

    def get_metadata(self) -> ScenarioMetadata:
        return ScenarioMetadata(
            name="syntaxgym",
            display_name="SyntaxGym",
            description=self.description,
            main_metric=MAIN_METRIC,
            main_split=TEST_SPLIT,
            taxonomy=TaxonomyInfo(task="targeted syntactic evaluation", what="constructed English "
                                  "minimal pairs", when="2020", who="linguists",
                                  language="English"),
        )


def left_out_note(suite: Suite) -> str:
    """The run log's line on the pairs a minimal-pair suite's conversion left out ('' when none
    were): how many of the file's pairs, and where their ids are."""
    found = left_out(suite.meta.extra)
    if found is None or not found.skipped:
        return ""
    shown = ", ".join(found.ids()[:10]) + (", ..." if len(found.skipped) > 10 else "")
    label = "lines" if found.id_label == "line" else found.id_label
    return (f"{suite.name}: {len(found.skipped)} of {found.pairs:,} pairs left out at conversion "
            f"({label} {shown}; each one's line, id and reason are in the suite's "
            f"meta.{found.dataset}_conversion.skipped, and the report's left_out_pairs.csv)")


def suite_instances(suite: Suite, context: ContextSpec) -> list[Instance]:
    """A suite's items as HELM instances (what :class:`SyntaxGymScenario` gives HELM; also
    :func:`syntaxgym_helm.api.evaluate`'s instances, so that both score the same requests)."""
    contexts = item_contexts(suite, context)
    return [_instance(item, payload, contexts[item.item_number],
                      suite.notes.get(item.item_number, ()))
            for item, payload in zip(suite.items, item_payloads(suite), strict=True)]


#: The most items whose text changes :func:`log_text_changes` lists one by one.
MAX_LOGGED_CHANGES = 20


def log_text_changes(suite: Suite) -> None:
    """One warning per item whose text reading the suite changed (the first
    :data:`MAX_LOGGED_CHANGES`, then a count), as ``syntaxgym-helm validate`` lists them."""
    for number, notes in list(suite.notes.items())[:MAX_LOGGED_CHANGES]:
        hwarn(f"SyntaxGym suite {suite.name} item {number}: " + "; ".join(notes))
    if len(suite.notes) > MAX_LOGGED_CHANGES:
        hwarn(f"SyntaxGym suite {suite.name}: the text of {len(suite.notes)} items was changed "
              f"in all (`syntaxgym-helm validate {suite.source}` lists every one)")


def _instance(item: Item, payload: str, context: str = "",
              notes: tuple[str, ...] = ()) -> Instance:
    references = [
        Reference(Output(text=condition.sentence),
                  tags=[condition_tag(condition.condition_name)])
        for condition in item.conditions
    ]
    return Instance(
        input=Input(text=context),
        references=references,
        split=TEST_SPLIT,
        id=f"item{item.item_number}",
        extra_data={ITEM_KEY: payload, FORMAT_KEY: RUN_FORMAT_VERSION,
                    **({NOTES_KEY: list(notes)} if notes else {})},
    )
