"""RuBLiMP (Taktasheva et al. 2024): 45 Russian phenomena of 1,000 pairs, one suite each,
``rublimp_<phenomenon>`` (the file name, the data's ``PID``).

A file ``<phenomenon>.csv`` has a header and one pair per row: ``source_sentence`` is the
grammatical sentence, ``target_sentence`` the edited one, ``source_word``/``target_word`` the
edited word on each side (the layer's marked critical words; matched case-insensitively, soft
hyphens ignored). Items are numbered by the data's ``id``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Iterable, Iterator

from syntaxgym_helm.core.minimal_pairs.dataset import (DataSet, Line, MinimalPair, PairProblem,
                                                      SourceFile, csv_pairs, read_files, stem)

CITATION = ("Taktasheva, Bazhukov, Koncha, Fenogenova, Artemova, Mikhailov (2024). RuBLiMP: "
            "Russian Benchmark of Linguistic Minimal Pairs. EMNLP 2024. "
            "https://arxiv.org/abs/2406.19232 (data Apache-2.0)")
COLUMNS = ("id", "source_sentence", "target_sentence", "source_word", "target_word", "level",
           "phenomenon", "PID", "subtype", "domain", "tree_depth")


def _read(lines: Iterable[Line], file: SourceFile,
          source: str) -> Iterator[MinimalPair | PairProblem]:
    def pair(number: int, row: dict[str, str]) -> MinimalPair | PairProblem:
        if not (row["id"].isascii() and row["id"].isdigit()):
            return PairProblem(source, number, row["id"], f"id {row['id']!r} is not a whole number")
        return MinimalPair(int(row["id"]), row["source_sentence"], row["target_sentence"], number,
                           row["PID"], "ru", row["id"], row["source_word"], row["target_word"])

    return csv_pairs(lines, source, COLUMNS, pair)


def _fold(text: str) -> str:
    return text.replace("\u00ad", "").casefold()


def describe(path: str) -> SourceFile:
    name = stem(path)
    return SourceFile(f"rublimp_{name}", f"{name}.csv", f"datasets/{name}.csv", None, None, "ru",
                      name, "")


RUBLIMP = DataSet(
    name="rublimp", title="RuBLiMP", citation=CITATION,
    short_citation="Taktasheva et al., 2024", paper_url="https://arxiv.org/abs/2406.19232", licence="Apache-2.0",
    repository="RussianNLP/RuBLiMP", commit="9f0d8dfa993b2c0f0acf12660258540376779543",
    languages=("ru",), read=_read, describe=describe,
    files=lru_cache(maxsize=1)(lambda: read_files("pairs_rublimp.tsv")),
    good_label="source_sentence", bad_label="target_sentence", id_label="id", fold=_fold)
