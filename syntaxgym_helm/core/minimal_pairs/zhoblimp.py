"""ZhoBLiMP (Liu et al. 2024): 118 Mandarin paradigms of 300 pairs in 15 phenomena, one suite
each, ``zhoblimp_<UID>`` for ``ZhoBLiMP/<UID>.jsonl`` in the archive the authors publish
(``data/ZhoBLiMP.tar.gz``, read as it is: downloaded and checked whole, or from an offline folder
that holds it or its unpacked files).

A file holds one JSON record a line, BLiMP's fields: ``sentence_good``, ``sentence_bad``,
``pairID`` (a whole number, the item number), the paradigm's ``UID`` and its ``phenomenon`` (the
file's group). Mandarin is written without spaces: regions are cut between characters and join
with no separator, as SLING's. The paper's own score, SLLN-LP (the log-probability over the
number of tokens to the power 0.5), is the sentence score ``zhoblimp``; the report shows each
model's accuracy under it beside the sum's.

Human agreement: the authors' ``data/human_validation_result.csv`` (``UID, correct, total, acc,
phenomenon``) gives each suite's ``meta.human_agreement`` at conversion, read from where the
data is read; the repository states no licence, so neither the data nor that file is shipped.
"""

from __future__ import annotations

import csv
import json

from syntaxgym_helm.core.minimal_pairs.columns import Records
from syntaxgym_helm.core.minimal_pairs.dataset import (
    Archive,
    Companion,
    DataSet,
    SourceFile,
    stem,
)

CITATION = ("Liu, Shen, Zhu, Xu, Qian, Song, Zhang, Tang, Zhang, Yang, Wang, Hu (2024). ZhoBLiMP: "
            "a Systematic Assessment of Language Models with Linguistic Minimal Pairs in Chinese. "
            "arXiv:2411.06096 (the data's repository states no licence)")
FOLDER = "ZhoBLiMP"
RECORDS = Records(required=("UID", "phenomenon", "sentence_good", "sentence_bad", "pairID"),
                  good="sentence_good", bad="sentence_bad", pair_id="pairID", paradigm="UID",
                  constant=("phenomenon",))


def describe(path: str) -> SourceFile:
    uid = stem(path)
    relative = f"{FOLDER}/{uid}.jsonl"
    return SourceFile(suite=f"zhoblimp_{uid}", path=relative, source_path=relative,
                      language="zh", paradigm=uid, group="")


def _phenomenon(file: SourceFile, data: bytes) -> dict[str, str]:
    """A file's group: the phenomenon of its first record."""
    return {"group": json.loads(data.decode("utf-8").splitlines()[0])["phenomenon"]}


def human_agreement(data: bytes, file: SourceFile) -> dict[str, float] | None:
    """The paradigm's row of ``human_validation_result.csv``: the share of annotators' judgements
    that agreed with the pair's label (``accuracy``), and its counts."""
    for row in csv.DictReader(data.decode("utf-8-sig").splitlines()):
        if row.get("UID") == file.paradigm:
            return {"accuracy": float(row["acc"]), "correct": int(row["correct"]),
                    "total": int(row["total"])}
    return None


ZHOBLIMP = DataSet(
    name="zhoblimp", title="ZhoBLiMP", citation=CITATION, short_citation="Liu et al., 2024",
    paper_url="https://arxiv.org/abs/2411.06096", licence="none stated",
    repository="sjtu-compling/ZhoBLiMP", commit="e8402762a563c13def19080a31e2cbb8d89e4ef3",
    languages=("zh",), read=RECORDS.read, describe=describe, shared_folder="zhoblimp",
    shared_glob="ZhoBLiMP.tar.gz", good_label="sentence_good", bad_label="sentence_bad",
    id_label="pairID", separator="", group_label="phenomenon", table_row=_phenomenon,
    table_note="group: the phenomenon of its records",
    archive=Archive(source_path="data/ZhoBLiMP.tar.gz",
                    sha256="a0c97ff2dd55d5b67b1bafdb8c4204379c646951c69e43addb4ce781176f7428"),
    companion=Companion(path="human_validation_result.csv",
                        source_path="data/human_validation_result.csv",
                        sha256="1c60b98b82bae486af7848f4818407e614928aa1020517ca50056b2e85fcf896",
                        key="human_agreement", label="humans",
                        figures=human_agreement),
    paper_score="zhoblimp:0.5",
    paper_note=("humans: the share of annotators' judgements that agreed with the pair's label "
                "in the authors' validation (data/human_validation_result.csv, read with the data "
                "and recorded in each suite's meta.human_agreement), averaged over the same "
                "paradigms as ours; Liu et al. (2024) publish other models' figures, not held "
                "here."))

