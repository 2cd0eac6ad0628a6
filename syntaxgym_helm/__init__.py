"""syntaxgym-helm: SyntaxGym targeted syntactic evaluation as a HELM benchmark.

From Python (docs/python_api.md): ``from syntaxgym_helm import evaluate``. The API's names are
imported when first used, so that HELM loading the plugin does not load them.
"""

from __future__ import annotations

import os
from typing import Any

__version__ = "0.1.0"

#: Entries of the two caches of oneDNN matrix-product set-ups in torch: ideep's
#: (``LRU_CACHE_CAPACITY``) and oneDNN's own (``ONEDNN_PRIMITIVE_CACHE_CAPACITY``), 1,024 each
#: by default, one entry per input shape. The local engine's passes come in ever new shapes (rows
#: x positions), so both would only grow, with no hit beyond the layers of one pass; both are
#: bounded (each bound alone leaves part of the growth). torch reads them when its library
#: loads or first uses them, so they are set here, before anything of the package imports torch
#: (helm-run loads the plugin first); a user's own settings are kept.
SET_UP_CACHE_ENTRIES = 64
os.environ.setdefault("LRU_CACHE_CAPACITY", str(SET_UP_CACHE_ENTRIES))
os.environ.setdefault("ONEDNN_PRIMITIVE_CACHE_CAPACITY", str(SET_UP_CACHE_ENTRIES))

#: The Python API (:mod:`syntaxgym_helm.api`), importable from the package itself.
API_NAMES = ("ConditionScore", "ItemCost", "ItemResult", "PredictionOutcome", "RegionScore",
             "RunOptions", "SuiteResult", "SurprisalTable", "UnknownModelError", "WordSurprisal",
             "evaluate", "read_words_tsv", "score_sentences", "word_surprisals",
             "write_surprisal_tsv")
__all__ = ["__version__", *API_NAMES]


def __getattr__(name: str) -> Any:
    if name in API_NAMES:
        from syntaxgym_helm import api

        return getattr(api, name)
    raise AttributeError(f"module 'syntaxgym_helm' has no attribute {name!r}")
