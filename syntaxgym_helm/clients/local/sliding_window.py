"""Sliding-window attention in prefix-shared passes: which layers of a model see only the last
``window`` positions (Gemma-2/3's local layers, Mistral's every layer), and the attention mask
that says so.

The prefix-shared passes give the model one custom 4D mask (each node sees its ancestors), which
the model uses as it is, for every layer: a sliding layer would then see the whole text. Within
the window the two agree; past it they do not (Gemma-3's window is 512 tokens: a story of
Natural Stories differs from the 513th token on). So, where some position of a pass lies past the
window, the engine also builds the sliding layers' mask, as ``transformers`` builds it
(``masking_utils.sliding_window_overlay``: a key is seen when its position is above the query's
less the window), and gives the model both masks by layer type (a model whose layers mix the
two takes a mapping ``{"full_attention": ..., "sliding_attention": ...}``) or the sliding one
alone (a model whose every layer slides).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class SlidingWindow:
    """A model's sliding-window attention: ``window`` positions (the query's own included) and
    whether other layers attend to everything (``mixed``)."""

    window: int
    mixed: bool

    def model_mask(self, full: Any, sliding: Any) -> Any:
        """The ``attention_mask`` argument for the model: by layer type, or the sliding mask."""
        if self.mixed:
            return {"full_attention": full, "sliding_attention": sliding}
        return sliding


def sliding_window_of(config: Any) -> SlidingWindow | None:
    """The model's sliding window from its config (``sliding_window``, ``layer_types``,
    ``use_sliding_window``); None when no layer slides."""
    config = getattr(config, "text_config", None) or config
    window = getattr(config, "sliding_window", None)
    if (not isinstance(window, int) or isinstance(window, bool) or window <= 0
            or getattr(config, "use_sliding_window", True) is False):
        return None
    types = list(getattr(config, "layer_types", None) or [])
    if types and "sliding_attention" not in types:
        return None
    return SlidingWindow(window, mixed=any(t != "sliding_attention" for t in types))


def within_window(allowed: np.ndarray, query_depth: np.ndarray, key_depth: np.ndarray,
                  window: int) -> np.ndarray:
    """``allowed`` (rows x queries x keys) restricted to the keys whose position is above the
    query's less ``window`` (``query_depth``: rows x queries, ``key_depth``: rows x keys)."""
    return allowed & (key_depth[:, None, :] > query_depth[:, :, None] - window)
