"""CLAMS (Mueller et al. 2020): subject-verb agreement in English, French, German, Hebrew and
Russian, plus English reflexives and negative polarity items; one suite per language and case,
``clams_<language>_<case>`` (e.g. ``clams_fr_subj_rel``).

A file ``<language>_evalset/<case>.txt`` holds lines ``True<TAB>sentence`` and
``False<TAB>sentence`` in strict alternation: a ``True`` line and the ``False`` line after it are
one pair, numbered by the ``True`` line's line number. Sentences are fed as written (lower case,
no final full stop; see docs/multilingual.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import lru_cache
from pathlib import PurePosixPath

from syntaxgym_helm.core.files import packaged_table
from syntaxgym_helm.core.minimal_pairs.dataset import (
    DataSet,
    Line,
    MinimalPair,
    PairProblem,
    PaperFigures,
    SourceFile,
    stem,
)

CITATION = ("Mueller, Nicolai, Petrou-Zeniou, Talmina, Linzen (2020). Cross-Linguistic Syntactic "
            "Evaluation of Word Prediction Models. ACL 2020, 5523-5539. "
            "https://aclanthology.org/2020.acl-main.490/ (data Apache-2.0)")
_LABELS = {"True": True, "False": False}


def _read(lines: Iterable[Line], file: SourceFile,
          source: str) -> Iterator[MinimalPair | PairProblem]:
    pending: Line | None = None  # the True line waiting for its False line
    for number, text in lines:
        label, tab, sentence = text.partition("\t")
        if not tab or label not in _LABELS:
            yield PairProblem(source=source, line=number, pair_id=None, reason=(
                f"expected True or False, a TAB and a sentence, not {text[:60]!r}"))
            continue
        if _LABELS[label]:
            if pending is not None:
                yield _unpaired(source, pending[0], "a True line not followed by its False line")
            pending = (number, sentence)
        elif pending is None:
            yield _unpaired(source, number, "a False line without its True line before it")
        else:
            yield MinimalPair(number=pending[0], good=pending[1], bad=sentence, line=pending[0],
                              paradigm=file.paradigm, language=file.language)
            pending = None
    if pending is not None:
        yield _unpaired(source, pending[0], "a True line not followed by its False line")


def _unpaired(source: str, line: int, what: str) -> PairProblem:
    return PairProblem(source=source, line=line, pair_id=str(line), reason=what)


def _group(case: str) -> str:
    if "reflexive" in case:
        return "reflexive_anaphora"
    return "negative_polarity" if "npi" in case else "subject_verb_agreement"


def describe(path: str) -> SourceFile:
    """``.../<language>_evalset/<case>.txt`` (or ``.txt.gz``) as a file of CLAMS."""
    parts = PurePosixPath(str(path).replace("\\", "/")).parts
    language = parts[-2].removesuffix("_evalset") if len(parts) > 1 else ""
    case = stem(path)
    relative = f"{language}_evalset/{case}.txt"
    return SourceFile(suite=f"clams_{language}_{case}", path=relative, source_path=relative,
                      language=language, paradigm=case, group=_group(case))


PAPER_FILE = "clams_paper_accuracy.tsv"
_PAPER_MODELS = {"LSTM LM, monolingual": "LSTM (mono)", "LSTM LM, multilingual": "LSTM (multi)",
                 "mBERT (bert-base-multilingual-cased)": "mBERT",
                 "BERT base (English), figures taken by the paper from Goldberg (2019)": "BERT"}


@lru_cache(maxsize=1)
def paper_figures() -> PaperFigures:
    """The per-case accuracies of the paper's LSTM language models (monolingual, multilingual)
    and of mBERT, and for English those of English BERT the paper takes from Goldberg (2019)
    (shipped as ``data/clams_paper_accuracy.tsv``; a case the paper pooled with its inanimate
    variant or left out has no figure): whole-sentence comparisons, as our prediction 0."""
    by_paradigm: dict[str, dict[str, float]] = {}
    for row in packaged_table(PAPER_FILE):
        if row["accuracy"] and "+" not in row["case"] and not row["case"].startswith("average"):
            key = f"{row['language']}_{row['case']}"
            by_paradigm.setdefault(key, {})[_PAPER_MODELS[row["model"]]] = float(row["accuracy"])
    return PaperFigures(citation="Mueller et al. (2020)",
                        columns={name: name for name in _PAPER_MODELS.values()},
                        by_paradigm=by_paradigm)


CLAMS = DataSet(
    name="clams", title="CLAMS", citation=CITATION, short_citation="Mueller et al., 2020",
    paper_url="https://aclanthology.org/2020.acl-main.490/", licence="Apache-2.0",
    repository="aaronmueller/clams", commit="36b5c9a56ecc51d3eedb6c1a85b805085d631c71",
    languages=("en", "fr", "de", "he", "ru"), read=_read, describe=describe,
    shared_folder="multilingual/clams", shared_glob="*_evalset/*.txt*",
    good_label="the True sentence", bad_label="the False sentence",
    paper_figures=paper_figures,
    paper_note=("Mueller et al. (2020) columns: the paper's per-case accuracies (its Tables 1-3: "
                "LSTM language models trained on one language or on all five, mBERT, and English "
                "BERT as the paper quotes Goldberg 2019), whole-sentence comparisons as ours, "
                "averaged over the same paradigms; the paper pooled the inanimate cases with the "
                "animate ones and printed a dash where mBERT lacked the verbs, so those have no "
                "figure (docs/multilingual.md)."))
