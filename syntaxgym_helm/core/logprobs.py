"""What can be a token's log-probability: the one check every client and the metric share.

A logprob (natural log) is a finite number at most 0. Above 0 is a probability above 1, except
for rounding: a float32 or float16 log-softmax of a near-certain token can come out a hair above
0, so up to :data:`LOGPROB_ROUNDING` nats above it reads as 0.0. Anything else (NaN, an infinity,
a larger positive value, a JSON boolean or string) cannot be a logprob: a client refuses the answer
(and never caches it), and the metric makes the item unscorable rather than score it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

# A logprob above 0 is a probability above 1. Up to this much (nats) is rounding (a float32 or
# float16 log-softmax of a near-certain token) and is read as 0.0; more is a defective answer.
LOGPROB_ROUNDING = 1e-3


def logprob_problem(value: Any) -> str | None:
    """Why ``value`` cannot be a logprob (a phrase such as ``"is NaN"``); None when it can."""
    # JSON true/false arrive as bool, which Python counts as an int: never a logprob.
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"is {value!r}, not a number"
    if math.isnan(value):
        return "is NaN"
    if math.isinf(value):
        return f"is {value!r}"
    if value > LOGPROB_ROUNDING:
        return (f"is {value!r}, above 0: a probability of {math.exp(min(value, 700.0)):.3g}, "
                f"more than 1 (up to {LOGPROB_ROUNDING:g} is taken for rounding)")
    return None


def as_logprob(value: float) -> float:
    """A checked logprob as a float at most 0 (rounding above 0 reads as 0.0)."""
    return min(float(value), 0.0)


def first_impossible(texts: Iterable[str], logprobs: Iterable[Any],
                     skip_first: bool = False) -> str | None:
    """The first token whose logprob cannot be one, as ``token 3 ' the' has logprob ...``;
    None when every one can. ``skip_first``: the first token has no context and no value (HELM
    gives it 0.0 or null)."""
    for index, (text, value) in enumerate(zip(texts, logprobs, strict=False)):
        if skip_first and index == 0:
            continue
        problem = logprob_problem(value)
        if problem:
            return f"token {index} {text!r} has a logprob that {problem}"
    return None
