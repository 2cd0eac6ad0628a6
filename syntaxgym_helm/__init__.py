"""syntaxgym-helm: SyntaxGym targeted syntactic evaluation as a HELM benchmark.

From Python (docs/python_api.md): ``from syntaxgym_helm import evaluate``. The API's names are
imported when first used, so that HELM loading the plugin does not load them.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

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
