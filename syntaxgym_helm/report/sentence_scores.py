"""Runs read under another sentence score: what ``report`` and ``compare`` do with
``--sentence-score``.

Each run's whole-sentence predictions are decided again under the score
(:mod:`syntaxgym_helm.core.sentence_scores`) from the token surprisals the run kept, with the
run's own tie policy; region predictions, region values and every other number stay as the run
scored them. Each run's label says which score its accuracies are under (``[sentence
score=char]``), so every table, file name and comparison records it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace

from syntaxgym_helm.core.run_options import TiePolicy
from syntaxgym_helm.core.sentence_scores import SentenceScore, is_whole_sentence, rescore_item
from syntaxgym_helm.report.runs import RunRecord


def with_sentence_score(runs: Sequence[RunRecord], score: SentenceScore) -> list[RunRecord]:
    """``runs`` with their whole-sentence predictions decided under ``score``."""
    return [_rescored(run, score) for run in runs]


def whole_sentence_predictions(run: RunRecord) -> int:
    """How many of the run's suite's predictions compare whole sentences (0: a score changes
    nothing in it, as in every SyntaxGym suite)."""
    return sum(is_whole_sentence(prediction.formula) for prediction in run.suite.predictions)


def sentence_score_note(runs: Sequence[RunRecord], score: SentenceScore) -> str:
    """A paragraph for a report: the score, and the suites it leaves as they were."""
    untouched = sorted({run.suite_name for run in runs if not whole_sentence_predictions(run)})
    text = (f"Sentence score: **{score}** ({score.unit}): every prediction that compares whole "
            "sentences (`*`) is decided under it, from the token surprisals the runs kept; "
            "region predictions and region values are the suites' own.")
    if untouched:
        text += (f" {len(untouched)} suite(s) compare no whole sentences and are as scored: "
                 + ", ".join(untouched) + ".")
    return text


def _rescored(run: RunRecord, score: SentenceScore) -> RunRecord:
    ties = _tie_policy(run)
    scores = tuple(rescore_item(run.suite, item, evaluation, score, ties)
                   for item, evaluation in zip(run.suite.items, run.scores, strict=True))
    return replace(run, scores=scores, label=f"{run.name} [sentence score={score}]")


def _tie_policy(run: RunRecord) -> TiePolicy:
    """The run's ``ties`` policy from its ``run_spec.json`` (``fail`` when it names none)."""
    try:
        spec = json.loads((run.run_dir / "run_spec.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "fail"
    for metric in spec.get("metric_specs", []):
        if str(metric.get("class_name", "")).endswith("SyntaxGymMetric"):
            return "pass" if metric.get("args", {}).get("ties") == "pass" else "fail"
    return "fail"
