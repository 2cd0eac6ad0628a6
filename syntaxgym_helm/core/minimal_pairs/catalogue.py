"""Every minimal-pair data set by name (the one place a data set is registered), and what a
suite name or a file belongs to."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from syntaxgym_helm.core.download import sha256_hex
from syntaxgym_helm.core.minimal_pairs.blimp import BLIMP
from syntaxgym_helm.core.minimal_pairs.blimp_nl import BLIMP_NL
from syntaxgym_helm.core.minimal_pairs.clams import CLAMS
from syntaxgym_helm.core.minimal_pairs.convert import Conversion, convert_data
from syntaxgym_helm.core.minimal_pairs.dataset import (
    DataSet,
    PairDataError,
    PairGroup,
    SourceFile,
    snake,
)
from syntaxgym_helm.core.minimal_pairs.fetch import read_file
from syntaxgym_helm.core.minimal_pairs.multiblimp import MULTIBLIMP
from syntaxgym_helm.core.minimal_pairs.rublimp import RUBLIMP
from syntaxgym_helm.core.minimal_pairs.sling import SLING
from syntaxgym_helm.core.minimal_pairs.turblimp import TURBLIMP
from syntaxgym_helm.core.minimal_pairs.zhoblimp import ZHOBLIMP

__all__ = ["DATASETS", "LANGUAGE_NAMES", "PairGroup", "convert_file", "dataset_of_suite",
           "get_dataset", "pair_groups", "source_file"]

#: The data sets, in the order tables list them.
DATASETS: dict[str, DataSet] = {d.name: d for d in (BLIMP, CLAMS, RUBLIMP, TURBLIMP, SLING,
                                                     ZHOBLIMP, MULTIBLIMP, BLIMP_NL)}


def dataset_of_suite(name: str) -> DataSet | None:
    """The data set whose suite names ``name`` has the form of (``clams_...``), or None; the
    longest prefix wins (``blimp_nl_...`` is BLiMP-NL's, not BLiMP's)."""
    found = [d for d in DATASETS.values()
             if name.startswith(d.prefix) and "/" not in name and not name.endswith(".json")]
    return max(found, key=lambda d: len(d.prefix), default=None)


def source_file(name: str) -> tuple[DataSet, SourceFile] | None:
    """The data set and file of a registered minimal-pair suite, or None for any other name."""
    dataset = dataset_of_suite(name)
    file = dataset.by_suite().get(name) if dataset else None
    return (dataset, file) if dataset and file else None


def get_dataset(name: str) -> DataSet:
    if name not in DATASETS:
        raise PairDataError(f"unknown data set {name!r}: one of {', '.join(DATASETS)}")
    return DATASETS[name]


def convert_file(dataset: DataSet, path: str | Path) -> Conversion:
    """Convert a file of ``dataset`` given by path (a modified copy, or the data set's own): its
    suite, paradigm and language come from where it lies (``en_evalset/simple_agrmt.txt``); a
    ``.gz`` file is unpacked first. Where the data set has a companion file (ZhoBLiMP's human
    validation) and one lies beside the file or its folder, its figures go into the meta."""
    path = Path(path)
    try:
        data = read_file(path, packed=path.suffix == ".gz")
    except OSError as exc:
        raise dataset.error(f"cannot read {path}: {exc}") from exc
    file = dataset.describe(path.as_posix())
    if not file.group and dataset.table_row is not None:  # then its group is in its records
        try:
            file = replace(file, group=dataset.table_row(file, data).get("group", ""))
        except (ValueError, LookupError, StopIteration, TypeError):  # a damaged first record
            pass
    conversion = convert_data(dataset, file, data, str(path), sha256_hex(data))
    companion = dataset.companion
    beside = [folder / companion.path for folder in (path.parent, path.parent.parent)
              if companion and (folder / companion.path).is_file()]
    if companion and beside:  # a copy's own companion file (ZhoBLiMP's human validation)
        found = companion.figures(read_file(beside[0]), file)
        conversion.suite["meta"][companion.key] = (
            {**found, "source": str(beside[0])} if found is not None else
            {"unavailable": f"{beside[0]} has no row for {file.paradigm}"})
    return conversion


#: The data sets' languages (ISO 639-1 codes, and the ISO 639-3 codes a data set names), and the
#: names tables give them.
LANGUAGE_NAMES = {"en": "English", "fr": "French", "de": "German", "he": "Hebrew",
                  "ru": "Russian", "tr": "Turkish", "zh": "Mandarin Chinese", "nl": "Dutch",
                  **{code: name for d in DATASETS.values()
                     for code, name in d.language_names.items()}}


def pair_groups(dataset: DataSet) -> list[PairGroup]:
    """The leaderboard's groups below a data set: its own (``leaderboard_groups``: BLiMP's fields
    and phenomena, as the paper), else its languages (where there are several) and groups
    (CLAMS's constructions, RuBLiMP's levels, TurBLiMP's base and experimental files, SLING's
    phenomenon folders)."""
    if dataset.leaderboard_groups is not None:
        return dataset.leaderboard_groups()
    files = dataset.files()
    groups = []
    if len(dataset.languages) > 1:
        groups += [PairGroup(name=f"syntaxgym_{dataset.name}_language_{language}",
                             label=f"language: {LANGUAGE_NAMES[language]}",
                             suites=tuple(f.suite for f in files if f.language == language))
                   for language in dataset.languages]
    for group in dict.fromkeys(f.group for f in files):
        groups.append(PairGroup(name=f"syntaxgym_{dataset.name}_group_{snake(group)}",
                                label=group,
                                suites=tuple(f.suite for f in files if f.group == group)))
    return groups
