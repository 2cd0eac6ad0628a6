"""The Python API: SyntaxGym suites and sentences scored on a model from Python, by the scoring
code of a ``helm-run`` (HELM's adapter and executor, the plugin's clients and metric), returned as
typed results (docs/python_api.md)::

    from syntaxgym_helm import evaluate
    result = evaluate("sgh_agreement_pp", model="syntaxgym/smollm2-135m-instruct-q4_1", max_items=5)
    print(result.accuracy, result.to_dataframe())

- :mod:`.evaluate`: :func:`evaluate` (a suite) and :func:`score_sentences` (sentences);
- :mod:`.results`: what they return, frozen dataclasses that turn into pandas DataFrames;
- :mod:`.surprisal`: :func:`word_surprisals`, word-by-word surprisal of any text;
- :mod:`.helm_engine`: HELM set up as ``helm-run`` sets it up, once per process;
- :class:`~syntaxgym_helm.core.run_options.RunOptions`: the run options, as one object.
"""

from syntaxgym_helm.api.evaluate import evaluate, score_sentences
from syntaxgym_helm.api.helm_engine import UnknownModelError
from syntaxgym_helm.api.results import (
    ConditionScore,
    ItemCost,
    ItemResult,
    PredictionOutcome,
    RegionScore,
    SuiteResult,
)
from syntaxgym_helm.api.surprisal import (
    SurprisalTable,
    WordSurprisal,
    read_words_tsv,
    word_surprisals,
    write_surprisal_tsv,
)
from syntaxgym_helm.core.run_options import RunOptions

__all__ = [
    "ConditionScore",
    "ItemCost",
    "ItemResult",
    "PredictionOutcome",
    "RegionScore",
    "RunOptions",
    "SuiteResult",
    "SurprisalTable",
    "UnknownModelError",
    "WordSurprisal",
    "evaluate",
    "read_words_tsv",
    "score_sentences",
    "word_surprisals",
    "write_surprisal_tsv",
]
