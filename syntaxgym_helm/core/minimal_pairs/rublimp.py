"""RuBLiMP (Taktasheva et al. 2024): 45 Russian phenomena of 1,000 pairs, one suite each,
``rublimp_<phenomenon>`` (the file name, the data's ``PID``).

A file ``<phenomenon>.csv`` has a header and one pair per row: ``source_sentence`` is the
grammatical sentence, ``target_sentence`` the edited one, ``source_word``/``target_word`` the
edited word on each side (the layer's marked critical words; matched case-insensitively, soft
hyphens ignored). Items are numbered by the data's ``id``.
"""

from __future__ import annotations

import csv

from syntaxgym_helm.core.minimal_pairs.columns import Columns
from syntaxgym_helm.core.minimal_pairs.dataset import DataSet, SourceFile, stem

CITATION = ("Taktasheva, Bazhukov, Koncha, Fenogenova, Artemova, Mikhailov (2024). RuBLiMP: "
            "Russian Benchmark of Linguistic Minimal Pairs. EMNLP 2024. "
            "https://arxiv.org/abs/2406.19232 (data Apache-2.0)")
COLUMNS = Columns(
    required=("id", "source_sentence", "target_sentence", "source_word", "target_word", "level",
              "phenomenon", "PID", "subtype", "domain", "tree_depth"),
    good="source_sentence", bad="target_sentence", pair_id="id", paradigm="PID",
    marked=("source_word", "target_word"))


def _fold(text: str) -> str:
    return text.replace("\u00ad", "").casefold()


def describe(path: str) -> SourceFile:
    name = stem(path)
    return SourceFile(suite=f"rublimp_{name}", path=f"{name}.csv",
                      source_path=f"datasets/{name}.csv", language="ru", paradigm=name, group="")


def _level(file: SourceFile, data: bytes) -> dict[str, str]:
    """A file's group: the level of its first row (Morphology, Syntax or Semantics)."""
    return {"group": next(csv.DictReader(data.decode("utf-8").splitlines()))["level"]}


RUBLIMP = DataSet(
    name="rublimp", title="RuBLiMP", citation=CITATION,
    short_citation="Taktasheva et al., 2024", paper_url="https://arxiv.org/abs/2406.19232",
    licence="Apache-2.0", repository="RussianNLP/RuBLiMP",
    commit="9f0d8dfa993b2c0f0acf12660258540376779543", languages=("ru",), read=COLUMNS.read,
    describe=describe, shared_folder="multilingual/rublimp", shared_glob="*.csv",
    good_label="source_sentence", bad_label="target_sentence", id_label="id", fold=_fold,
    table_row=_level)
