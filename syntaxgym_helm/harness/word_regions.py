"""Under the word-boundary correction (a ``~bow`` model), a region boundary inside a word is
reported in the run's log, not guessed: the word's corrected probability is spread over the
regions of its first and last tokens (:mod:`syntaxgym_helm.core.word_boundary`)."""

from __future__ import annotations

from collections.abc import Sequence

from helm.benchmark.adaptation.request_state import RequestState
from helm.common.hierarchical_logger import hwarn

from syntaxgym_helm.core.scoring_variants import corrects_word_boundaries
from syntaxgym_helm.core.suite import Suite
from syntaxgym_helm.core.word_boundary import regions_split_inside_words
from syntaxgym_helm.harness.scenario import ITEM_KEY, read_item_payload


def report_words_split_by_regions(states: Sequence[RequestState]) -> list[str]:
    """One warning per condition of the item whose region boundaries fall inside a word, when
    the run's model corrects word boundaries (its requests name it); returns the warnings."""
    if not states or not corrects_word_boundaries(states[0].request.model):
        return []
    instance = states[0].instance
    extra = instance.extra_data or {}
    if ITEM_KEY not in extra:
        return []
    suite = Suite.from_trusted_json(read_item_payload(extra[ITEM_KEY]), f"instance {instance.id}")
    warnings = []
    for item in suite.items:
        for condition in item.conditions:
            splits = regions_split_inside_words(
                [(r.region_number, r.content) for r in condition.regions], condition.separator)
            if splits:
                pairs = ", ".join(f"{a}|{b}" for a, b in splits)
                warnings.append(
                    f"SyntaxGym item {item.item_number} condition {condition.condition_name!r}: "
                    f"region boundaries inside a word ({pairs}) under the word-boundary "
                    "correction: such a word's correction goes to the regions of its first and "
                    "last tokens")
    for warning in warnings:
        hwarn(warning)
    return warnings
