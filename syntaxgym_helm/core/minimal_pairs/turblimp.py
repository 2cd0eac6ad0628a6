"""TurBLiMP (Başar et al. 2025): 16 Turkish phenomena of 1,000 pairs and 22 experimental
paradigms of 100 (argument structure in six word orders and four subordinate clauses, and their
baselines). Suites: ``turblimp_<phenomenon>`` for ``base/augmented_<phenomenon>.csv`` and
``turblimp_exp_<kind>_<variant>`` for ``experimental/argument_structure_<kind>_<variant>.csv``
(e.g. ``turblimp_exp_transitive_SOV``).

A file has a header (``base/``: separated by ``;``, ``experimental/``: by ``,``; no quoting) and
one pair per row: ``good_sentence``, ``bad_sentence``, the cues ``good_cue``/``bad_cue`` (the
words that differ, ``∅`` for nothing: the layer's marked critical words) and ``critical_region``
(where the violation shows, ``-`` for none: the layer's later mark). Matched with Turkish case
folding (I to ı, İ to i). Items are numbered by their line (the header is line 1).
"""

from __future__ import annotations

from pathlib import PurePosixPath

from syntaxgym_helm.core.minimal_pairs.columns import Columns
from syntaxgym_helm.core.minimal_pairs.dataset import DataSet, SourceFile, stem

CITATION = ("Başar, Padovani, Jumelet, Bisazza (2025). TurBLiMP: A Turkish Benchmark of "
            "Linguistic Minimal Pairs. arXiv:2506.13487 (data CC BY 4.0)")
NOTHING, NO_REGION = "∅", "-"
COLUMNS = Columns(
    required=("good_sentence", "bad_sentence", "good_cue", "bad_cue", "critical_region",
              "phenomenon"),
    optional=("subtype",), good="good_sentence", bad="bad_sentence",
    marked=("good_cue", "bad_cue"), nothing=NOTHING, after="critical_region",
    no_after=NO_REGION, delimiters=(";", ","), quoted=False)
_EXPERIMENT = "argument_structure_"


def turkish_fold(text: str) -> str:
    """Lower case by Turkish rules: I to ı and İ to i (``str.lower`` gets both wrong)."""
    return text.replace("I", "ı").replace("İ", "i").lower()


def describe(path: str) -> SourceFile:
    parts = PurePosixPath(str(path).replace("\\", "/")).parts
    name = stem(path)
    if name.startswith(_EXPERIMENT) or (len(parts) > 1 and parts[-2] == "experimental"):
        relative = f"experimental/{name}.csv"
        suite, group = f"turblimp_exp_{name.removeprefix(_EXPERIMENT)}", "experimental"
    else:
        relative = f"base/{name}.csv"
        suite, group = f"turblimp_{name.removeprefix('augmented_')}", "base"
    return SourceFile(suite=suite, path=relative, source_path=f"data/{relative}", language="tr",
                      paradigm=name, group=group)


TURBLIMP = DataSet(
    name="turblimp", title="TurBLiMP", citation=CITATION,
    short_citation="Başar et al., 2025", paper_url="https://arxiv.org/abs/2506.13487",
    licence="CC BY 4.0", repository="ezgibasar/TurBLiMP",
    commit="297de13fb7a0ce524fe32e8b175c6b5255d66960", languages=("tr",), read=COLUMNS.read,
    describe=describe, shared_folder="multilingual/turblimp", shared_glob="*/*.csv",
    good_label="good_sentence", bad_label="bad_sentence", fold=turkish_fold)
