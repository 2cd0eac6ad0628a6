"""Where the BLiMP data comes from: the pinned commit, the download address, and for each of the
67 paradigms its field, its phenomenon (``linguistics_term``) and the SHA-256 of its JSONL file,
listed in ``syntaxgym_helm/data/pairs_blimp.tsv`` as the other data sets' files are.

The sums were computed from the files at commit ``BLIMP_COMMIT`` (identical, blob for blob, to that
commit's ``data/`` folder); a download or an offline copy that does not match is refused.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from importlib import resources

BLIMP_COMMIT = "3e56b06fcabca9b30822fc66435fca6b1aa40bb1"
BLIMP_URL = ("https://raw.githubusercontent.com/alexwarstadt/blimp/"
             f"{BLIMP_COMMIT}/data/{{uid}}.jsonl")
#: A BLiMP suite is named ``blimp_<UID>``.
SUITE_PREFIX = "blimp_"
CITATION = ("Warstadt, Parrish, Liu, Mohananey, Peng, Wang, Bowman (2020). BLiMP: The Benchmark "
            "of Linguistic Minimal Pairs for English. TACL 8:377-392. "
            "https://doi.org/10.1162/tacl_a_00321 (data CC-BY 4.0)")


@dataclass(frozen=True)
class Paradigm:
    """One BLiMP paradigm (1,000 pairs): its UID, field, phenomenon and source file's SHA-256."""

    uid: str
    field: str
    linguistics_term: str
    sha256: str

    @property
    def field_group(self) -> str:
        """The paper's field (morphology, syntax, semantics, syntax_semantics): ``field``, except
        that principle_A_case_2's data files write ``syntax/semantics``."""
        return self.field.replace("/", "_")

    @property
    def phenomenon(self) -> str:
        """The paper's phenomenon (its 12 groups): ``linguistics_term``, except that the data
        files call the two animate_subject paradigms ``s-selection`` while the paper (and its
        models_summary.jsonl) counts them under ``argument_structure``."""
        return _PAPER_PHENOMENA.get(self.uid, self.linguistics_term)

    @property
    def suite_name(self) -> str:
        return f"{SUITE_PREFIX}{self.uid}"

    @property
    def url(self) -> str:
        return BLIMP_URL.format(uid=self.uid)


_PAPER_PHENOMENA = {"animate_subject_passive": "argument_structure",
                    "animate_subject_trans": "argument_structure"}
TABLE = "pairs_blimp.tsv"


def _paradigms() -> dict[str, Paradigm]:
    text = resources.files("syntaxgym_helm").joinpath("data", TABLE).read_text("utf-8")
    rows = csv.DictReader((line for line in text.splitlines() if not line.startswith("#")),
                          delimiter="\t")
    return {row["paradigm"]: Paradigm(row["paradigm"], row["field"], row["linguistics_term"],
                                      row["sha256"]) for row in rows}


#: The 67 paradigms by UID, in alphabetical order (``data/pairs_blimp.tsv``).
PARADIGMS: dict[str, Paradigm] = _paradigms()


def paradigm_of_suite(name: str) -> Paradigm | None:
    """The paradigm a suite name ``blimp_<UID>`` stands for; None for any other name."""
    if not name.startswith(SUITE_PREFIX):
        return None
    return PARADIGMS.get(name[len(SUITE_PREFIX):])

