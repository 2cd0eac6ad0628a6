"""CLAMS (Mueller et al. 2020): subject-verb agreement in English, French, German, Hebrew and
Russian, plus English reflexives and negative polarity items; one suite per language and case,
``clams_<language>_<case>`` (e.g. ``clams_fr_subj_rel``).

A file ``<language>_evalset/<case>.txt`` holds lines ``True<TAB>sentence`` and
``False<TAB>sentence`` in strict alternation: a ``True`` line and the ``False`` line after it are
one pair, numbered by the ``True`` line's line number. Sentences are fed as written (lower case,
no final full stop; see docs/multilingual.md).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import PurePosixPath
from typing import Iterable, Iterator

from syntaxgym_helm.core.minimal_pairs.dataset import (DataSet, Line, MinimalPair, PairProblem,
                                                      SourceFile, read_files, stem)

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
            yield PairProblem(source, number, None, (
                f"expected True or False, a TAB and a sentence, not {text[:60]!r}"))
            continue
        if _LABELS[label]:
            if pending is not None:
                yield _unpaired(source, pending[0], "a True line not followed by its False line")
            pending = (number, sentence)
        elif pending is None:
            yield _unpaired(source, number, "a False line without its True line before it")
        else:
            yield MinimalPair(pending[0], pending[1], sentence, pending[0], file.paradigm,
                              file.language)
            pending = None
    if pending is not None:
        yield _unpaired(source, pending[0], "a True line not followed by its False line")


def _unpaired(source: str, line: int, what: str) -> PairProblem:
    return PairProblem(source, line, str(line), what)


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
    return SourceFile(f"clams_{language}_{case}", relative, relative, None, None, language, case,
                      _group(case))


CLAMS = DataSet(
    name="clams", title="CLAMS", citation=CITATION, short_citation="Mueller et al., 2020",
    paper_url="https://aclanthology.org/2020.acl-main.490/", licence="Apache-2.0",
    repository="aaronmueller/clams", commit="36b5c9a56ecc51d3eedb6c1a85b805085d631c71",
    languages=("en", "fr", "de", "he", "ru"), read=_read, describe=describe,
    files=lru_cache(maxsize=1)(lambda: read_files("pairs_clams.tsv")),
    good_label="the True sentence", bad_label="the False sentence")
