"""``--sentence-score``: the option ``report`` and ``compare`` share."""

from __future__ import annotations

import argparse

from syntaxgym_helm.core.sentence_scores import SentenceScore, parse_sentence_score

SCORE_CHOICES = "sum, mean (per token), char (per character: lm-eval's acc_norm), byte (per " \
                "UTF-8 byte: lm-eval's acc_bytes), zhoblimp[:ALPHA] (ZhoBLiMP's SLLN-LP, " \
                "alpha 0.5)"


def sentence_score_argument(text: str) -> SentenceScore:
    """argparse's type for ``--sentence-score``: the score, or its error in argparse's words."""
    try:
        return parse_sentence_score(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
