"""The stats the SyntaxGym metric emits per item: their names, values and display text, once.

Everything that names or shows a stat reads it from here: the metric (the values, and HELM's
``get_metadata()``), the scenario (its main metric), the leaderboard schema (its metric fields are
this module's :class:`MetricMetadata`) and the reports (which average :func:`item_stat_values`
exactly as HELM averages the metric's stats).

Per item:

- ``syntaxgym_accuracy``: 1 when all of the suite's predictions hold (the main metric, as the
  HuggingFace ``cpllab/syntaxgym`` metric and Brain-Score score an item);
- ``syntaxgym_first_prediction_accuracy``: the first prediction alone (how Hu et al. 2020 scored);
- ``syntaxgym_prediction_<i>_accuracy``: each prediction on its own;
- ``syntaxgym_unscorable``: 1 when the item could not be scored. Such an item has no accuracy stat
  at all, so it is never counted as a pass or a fail.
"""

from __future__ import annotations

from helm.benchmark.metrics.metric import MetricMetadata

from syntaxgym_helm.core.item_evaluation import ItemEvaluation

ACCURACY = "syntaxgym_accuracy"
FIRST_PREDICTION_ACCURACY = "syntaxgym_first_prediction_accuracy"
UNSCORABLE = "syntaxgym_unscorable"

#: HELM metric groups (``MetricMetadata.group``): the main column, and the details beside it.
MAIN_GROUP = "syntaxgym_accuracy"
DETAILS_GROUP = "syntaxgym_details"

#: How many per-prediction stats ``SyntaxGymMetric.get_metadata()`` describes when it does not know
#: the suite: the most any registered or built-in suite has (Hu et al. 2020: fgd_hierarchy and
#: nn-nv-rpl have two).
DEFAULT_DESCRIBED_PREDICTIONS = 2


def prediction_accuracy_name(index: int) -> str:
    return f"syntaxgym_prediction_{index}_accuracy"


def item_stat_values(score: ItemEvaluation) -> dict[str, float]:
    """The value of each stat for one item; an unscorable item has ``UNSCORABLE`` only."""
    values = {UNSCORABLE: 0.0 if score.scorable else 1.0}
    if not score.scorable:
        return values
    values[ACCURACY] = float(bool(score.passed))
    if score.predictions:
        values[FIRST_PREDICTION_ACCURACY] = float(score.predictions[0].holds)
    for outcome in score.predictions:
        values[prediction_accuracy_name(outcome.index)] = float(outcome.holds)
    return values


def metric_metadata(predictions: int = DEFAULT_DESCRIBED_PREDICTIONS) -> list[MetricMetadata]:
    """Display text of every stat, with per-prediction stats for ``predictions`` predictions."""
    return [
        MetricMetadata(
            name=ACCURACY, display_name="SyntaxGym accuracy", short_display_name="Accuracy",
            description="Fraction of items for which all of the suite's predictions hold (item "
                        "accuracy, as the cpllab/syntaxgym metric and Brain-Score compute it).",
            lower_is_better=False, group=MAIN_GROUP),
        MetricMetadata(
            name=FIRST_PREDICTION_ACCURACY, display_name="First-prediction accuracy",
            short_display_name="First pred.",
            description="Fraction of items for which the suite's first prediction holds: how Hu "
                        "et al. (2020) scored, which differs from item accuracy on suites with "
                        "several predictions.",
            lower_is_better=False, group=DETAILS_GROUP),
        MetricMetadata(
            name=UNSCORABLE, display_name="Unscorable items", short_display_name="Unscorable",
            description="Fraction of items that could not be scored (failed request, tokens that "
                        "could not be aligned to regions, undefined region value); they count in "
                        "no accuracy.",
            lower_is_better=True, group=DETAILS_GROUP),
        *(MetricMetadata(
            name=prediction_accuracy_name(i), display_name=f"Prediction {i} accuracy",
            short_display_name=f"Pred. {i}",
            description=f"Fraction of items for which prediction {i} of the suite holds "
                        "(predictions are numbered from 0, in the suite's order).",
            lower_is_better=False, group=DETAILS_GROUP)
          for i in range(predictions)),
    ]
