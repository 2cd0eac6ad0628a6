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

import csv
from functools import lru_cache
from pathlib import PurePosixPath
from typing import Iterable, Iterator

from syntaxgym_helm.core.minimal_pairs.dataset import (DataSet, Line, MinimalPair, PairProblem,
                                                      SourceFile, csv_pairs, read_files, stem)

CITATION = ("Başar, Padovani, Jumelet, Bisazza (2025). TurBLiMP: A Turkish Benchmark of "
            "Linguistic Minimal Pairs. arXiv:2506.13487 (data CC BY 4.0)")
COLUMNS = ("good_sentence", "bad_sentence", "good_cue", "bad_cue", "critical_region",
           "phenomenon")
NOTHING, NO_REGION = "∅", "-"
_EXPERIMENT = "argument_structure_"


def _read(lines: Iterable[Line], file: SourceFile,
          source: str) -> Iterator[MinimalPair | PairProblem]:
    lines = list(lines)
    delimiter = ";" if lines and ";" in lines[0][1] else ","

    def pair(number: int, row: dict[str, str]) -> MinimalPair:
        good, bad = ("" if row[key].strip() == NOTHING else row[key]
                     for key in ("good_cue", "bad_cue"))
        after = row["critical_region"].strip()
        return MinimalPair(number, row["good_sentence"], row["bad_sentence"], number,
                           file.paradigm, "tr", str(number), good, bad,
                           None if after == NO_REGION else after)

    return csv_pairs(lines, source, COLUMNS, pair, ("subtype",), delimiter, csv.QUOTE_NONE)


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
    return SourceFile(suite, relative, f"data/{relative}", None, None, "tr", name, group)


TURBLIMP = DataSet(
    name="turblimp", title="TurBLiMP", citation=CITATION,
    short_citation="Başar et al., 2025", paper_url="https://arxiv.org/abs/2506.13487", licence="CC BY 4.0",
    repository="ezgibasar/TurBLiMP", commit="297de13fb7a0ce524fe32e8b175c6b5255d66960",
    languages=("tr",), read=_read, describe=describe,
    files=lru_cache(maxsize=1)(lambda: read_files("pairs_turblimp.tsv")),
    good_label="good_sentence", bad_label="bad_sentence", fold=turkish_fold)
