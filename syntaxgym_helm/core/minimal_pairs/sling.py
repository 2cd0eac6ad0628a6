"""SLING (Song et al. 2022): Mandarin minimal pairs in eight phenomenon folders (and 14 reflexive
paradigms of Yang 2025). One suite per file ``<Phenomenon>/[<Group>/]<paradigm>.txt``, named
``sling_`` and the path in snake case with ``_`` between folders:
``Classifier-Noun/cl_simple_noun.txt`` is ``sling_classifier_noun_cl_simple_noun``,
``Anaphor/Plural/cl_self_male.txt`` is ``sling_anaphor_plural_cl_self_male``.

A line is the good sentence, ``@@@``, the bad sentence; items are numbered by their line.
Mandarin is written without spaces: regions are cut between characters and join with no
separator (``meta.region_separator`` is ``""``), so every prompt is the sentence as written.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import PurePosixPath

from syntaxgym_helm.core.minimal_pairs.dataset import (
    DataSet,
    Line,
    MinimalPair,
    PairProblem,
    SourceFile,
    snake,
    stem,
)

CITATION = ("Song, Krishna, Bhatt, Iyyer (2022). SLING: Sino Linguistic Evaluation of Large "
            "Language Models. EMNLP 2022. https://aclanthology.org/2022.emnlp-main.305/; the "
            "reflexive_auto and reflexive_natural paradigms: Yang (2025), COLING 2025 (data MIT)")
SEPARATOR = "@@@"
PHENOMENA = ("AlternativeQuestion", "Anaphor", "Aspect", "Classifier-Noun", "DefinitenessEffect",
             "PolarityItem", "RelativeClause", "WhFronting")


def _read(lines: Iterable[Line], file: SourceFile,
          source: str) -> Iterator[MinimalPair | PairProblem]:
    for number, text in lines:
        if not text.strip():
            continue
        if text.count(SEPARATOR) != 1:
            yield PairProblem(source=source, line=number, pair_id=str(number), reason=(
                f"a line must hold the good sentence, {SEPARATOR} and the bad sentence; this one "
                f"has {text.count(SEPARATOR)} {SEPARATOR}"))
            continue
        good, _, bad = text.partition(SEPARATOR)
        yield MinimalPair(number=number, good=good, bad=bad, line=number, paradigm=file.paradigm,
                          language="zh")


def describe(path: str) -> SourceFile:
    parts = PurePosixPath(str(path).replace("\\", "/")).parts
    top = max((i for i, part in enumerate(parts) if part in PHENOMENA), default=len(parts) - 1)
    folders = [*parts[top:-1], stem(path)]
    relative = "/".join([*parts[top:-1], f"{stem(path)}.txt"])
    return SourceFile(suite="sling_" + "_".join(map(snake, folders)), path=relative,
                      source_path=f"SLING_Data_txt/{relative}", language="zh",
                      paradigm=stem(path), group=parts[top] if top < len(parts) - 1 else "")


SLING = DataSet(
    name="sling", title="SLING", citation=CITATION, short_citation="Song et al., 2022",
    paper_url="https://aclanthology.org/2022.emnlp-main.305/", licence="MIT",
    repository="Yixiao-Song/SLING_Data_Code", commit="5a7f791fbb9db6d2fee66e128fe89c80ac1f993b",
    languages=("zh",), read=_read, describe=describe,
    shared_folder="multilingual/sling", shared_glob="**/*.txt",
    good_label="the sentence before @@@", bad_label="the sentence after @@@",
    separator="")
