"""Sentence scores: how the fields turn a sentence's token surprisals into the one number a
minimal pair compares.

A minimal-pair data set (BLiMP and the others) asks which of two whole sentences the model
prefers; the fields answer with different numbers, all from the same token log-probabilities:

- ``sum``: the sentence's surprisal, Σ of its tokens' surprisals (bits), i.e. −log₂ P(sentence).
  BLiMP's paper, lm-evaluation-harness's ``acc`` and this plugin's runs compare it.
- ``mean``: the sum over the number of the sentence's tokens (ZhoBLiMP's ``meanLP``, and the
  per-token normalisation of MultiBLiMP's authors).
- ``char``: the sum over the sentence's length in characters (Unicode code points), which is
  lm-evaluation-harness's ``acc_norm`` (``lls / len(choice)``).
- ``byte``: the sum over the sentence's length in UTF-8 bytes, lm-evaluation-harness's
  ``acc_bytes``.
- ``zhoblimp[:α]``: ZhoBLiMP's sub-linear length-normalised log-probability (SLLN-LP, Liu et al.
  2024): the sum over (number of tokens)^α, α = 0.5 by default (``pow_norm_lp`` in
  github.com/sjtu-compling/ZhoBLiMP, ``src/metrics.py``); α = 0 is ``sum`` and α = 1 ``mean``.

Dividing by a positive length does not change which way a comparison of log-probabilities goes
when both sentences have the same length, so the scores differ only on pairs of unequal length;
dividing surprisal (bits) instead of log-probability (nats) changes no verdict either.

What counts: the sentence's tokens are those the run aligned to its regions (a prefix such as
the beginning-of-text token, and a context before the sentence, are not the sentence's; with
``first_token=exclude`` the first token is left out), and its text is its regions joined by the
suite's separator (what the model was sent). So everything is computed from what a run already
keeps: no second scoring.

Which predictions change: only comparisons of whole sentences, a prediction all of whose
references are ``*`` (BLiMP's ``(*;%good%) < (*;%bad%)``, every minimal-pair data set's first
prediction). A prediction about regions (every SyntaxGym suite's, the minimal-pair sets' region
predictions) keeps the suite's own region statistic: normalising a region by the length of its
sentence would mean nothing, and mixing a normalised sentence with summed regions in one formula
less still.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Literal

from syntaxgym_helm.core.errors import EvaluationError
from syntaxgym_helm.core.formula import Formula, RegionRef
from syntaxgym_helm.core.item_evaluation import ConditionValues, ItemEvaluation, PredictionOutcome
from syntaxgym_helm.core.run_options import TIE_POLICIES, TiePolicy
from syntaxgym_helm.core.suite import Item, Suite
from syntaxgym_helm.core.ties import has_tie, lenient

ScoreName = Literal["sum", "mean", "char", "byte", "zhoblimp"]
SCORE_NAMES: tuple[ScoreName, ...] = ("sum", "mean", "char", "byte", "zhoblimp")
#: ZhoBLiMP's default α (``pow_norm_lp`` in its ``src/metrics.py``).
ZHOBLIMP_ALPHA = 0.5


@dataclass(frozen=True)
class SentenceScore:
    """One way to score a whole sentence; ``alpha`` is ZhoBLiMP's exponent (``zhoblimp`` only)."""

    name: ScoreName = "sum"
    alpha: float = ZHOBLIMP_ALPHA

    def __post_init__(self) -> None:
        if self.name not in SCORE_NAMES:
            raise ValueError(f"sentence score {self.name!r} is not one of "
                             f"{', '.join(SCORE_NAMES)}")
        if not 0.0 <= self.alpha <= 1.0:
            raise ValueError(f"ZhoBLiMP's alpha must be between 0 and 1, not {self.alpha!r}")

    def __str__(self) -> str:
        return f"zhoblimp:{self.alpha:g}" if self.name == "zhoblimp" else self.name

    @property
    def unit(self) -> str:
        """What the score is measured in."""
        return {"sum": "bits", "mean": "bits per token", "char": "bits per character",
                "byte": "bits per UTF-8 byte",
                "zhoblimp": f"bits per token^{self.alpha:g}"}[self.name]

    def value(self, surprisals: list[float], sentence: str) -> float:
        """The score of a sentence whose tokens have ``surprisals`` (bits) and whose text is
        ``sentence``; NaN for a sentence with no token (undefined, never 0)."""
        if not surprisals or any(math.isnan(s) for s in surprisals):
            return math.nan
        total = math.fsum(surprisals)
        length = {"sum": 1, "mean": len(surprisals), "char": len(sentence),
                  "byte": len(sentence.encode("utf-8")),
                  "zhoblimp": len(surprisals) ** self.alpha}[self.name]
        return total / length if length else math.nan


def parse_sentence_score(text: str) -> SentenceScore:
    """A score from its name, e.g. ``mean`` or ``zhoblimp:0.7`` (``zhoblimp``: α = 0.5);
    ValueError naming the choices for anything else."""
    name, _, alpha = text.strip().partition(":")
    if alpha and name != "zhoblimp":
        raise ValueError(f"sentence score {text!r}: only zhoblimp takes a value (zhoblimp:ALPHA)")
    try:
        value = float(alpha) if alpha else ZHOBLIMP_ALPHA
    except ValueError:
        raise ValueError(f"sentence score {text!r}: {alpha!r} is not a number") from None
    if name not in SCORE_NAMES:
        raise ValueError(f"sentence score {text!r} is not one of {', '.join(SCORE_NAMES)} "
                         "(zhoblimp:ALPHA for another alpha)")
    return SentenceScore(name, value)


def is_whole_sentence(formula: Formula) -> bool:
    """Whether every reference of ``formula`` is a whole sentence (``*``)."""
    return bool(formula.region_refs) and all(ref.region is None for ref in formula.region_refs)


def sentence_value(values: ConditionValues, sentence: str, score: SentenceScore) -> float:
    """``score`` of one condition's sentence from its kept token surprisals."""
    return score.value(values.region_surprisals(None), sentence)


def rescore_item(suite: Suite, item: Item, evaluation: ItemEvaluation, score: SentenceScore,
                 ties: TiePolicy = "fail") -> ItemEvaluation:
    """``evaluation`` with its whole-sentence predictions decided again under ``score`` (the
    others kept as they are), ``ties`` the run's tie policy; an unscorable item comes back
    unchanged."""
    if ties not in TIE_POLICIES:
        raise ValueError(f"ties={ties!r} is not one of {', '.join(TIE_POLICIES)}")
    if not evaluation.scorable:
        return evaluation
    by_name = {values.condition_name: values for values in evaluation.conditions}

    def value(ref: RegionRef) -> float:
        if ref.region is not None:
            raise KeyError(ref)  # only whole-sentence predictions come here
        return sentence_value(by_name[ref.condition], item.condition(ref.condition).sentence,
                              score)

    outcomes = []
    for prediction, outcome in zip(suite.predictions, evaluation.predictions, strict=True):
        if not is_whole_sentence(prediction.formula):
            outcomes.append(outcome)
            continue
        formula = prediction.formula if ties == "fail" else lenient(prediction.formula)
        try:
            outcomes.append(PredictionOutcome(outcome.index, outcome.formula,
                                              formula.evaluate(value),
                                              tie=has_tie(prediction.formula, value)))
        except EvaluationError as exc:
            outcomes.append(PredictionOutcome(outcome.index, outcome.formula, None, str(exc)))
    problems = tuple(f"prediction {o.index} ({o.formula}): {o.error}" for o in outcomes
                     if o.error)
    return dataclasses.replace(evaluation, predictions=tuple(outcomes), problems=problems)
