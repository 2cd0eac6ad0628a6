"""Every minimal-pair data set by name, and what a suite name or a file belongs to."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from syntaxgym_helm.core.blimp.convert import BLIMP
from syntaxgym_helm.core.blimp.paper import blimp_groups
from syntaxgym_helm.core.minimal_pairs.clams import CLAMS
from syntaxgym_helm.core.minimal_pairs.convert import Conversion, convert_data
from syntaxgym_helm.core.minimal_pairs.dataset import DataSet, PairDataError, SourceFile, snake
from syntaxgym_helm.core.minimal_pairs.fetch import read_file
from syntaxgym_helm.core.minimal_pairs.rublimp import RUBLIMP
from syntaxgym_helm.core.minimal_pairs.sling import SLING
from syntaxgym_helm.core.minimal_pairs.turblimp import TURBLIMP
from syntaxgym_helm.core.download import sha256_hex

#: The data sets, in the order tables list them.
DATASETS: dict[str, DataSet] = {d.name: d for d in (BLIMP, CLAMS, RUBLIMP, TURBLIMP, SLING)}


def dataset_of_suite(name: str) -> DataSet | None:
    """The data set whose suite names ``name`` has the form of (``clams_...``), or None."""
    return next((d for d in DATASETS.values()
                 if name.startswith(d.prefix) and "/" not in name and not name.endswith(".json")),
                None)


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
    ``.gz`` file is unpacked first."""
    path = Path(path)
    try:
        data = read_file(path, packed=path.suffix == ".gz")
    except OSError as exc:
        raise dataset.error(f"cannot read {path}: {exc}") from exc
    file = dataset.describe(path.as_posix())
    return convert_data(dataset, file, data, str(path), sha256_hex(data))


#: ISO 639-1 codes of the data sets' languages, and the names tables give them.
LANGUAGE_NAMES = {"en": "English", "fr": "French", "de": "German", "he": "Hebrew",
                  "ru": "Russian", "tr": "Turkish", "zh": "Mandarin Chinese"}


@dataclass(frozen=True)
class PairGroup:
    """A leaderboard group of a data set's suites: its run group name, label and members."""

    name: str
    label: str
    suites: tuple[str, ...]


def pair_groups(dataset: DataSet) -> list[PairGroup]:
    """The groups below a data set: BLiMP's fields and phenomena (as the paper), the others'
    languages (where there are several) and groups (CLAMS's constructions, RuBLiMP's levels,
    TurBLiMP's base and experimental files, SLING's phenomenon folders)."""
    if dataset is BLIMP:
        blimp = blimp_groups()
        return ([PairGroup(f"syntaxgym_blimp_field_{name}", f"field: {name}", members)
                 for name, members in blimp.by_field.items()]
                + [PairGroup(f"syntaxgym_blimp_{name}", f"phenomenon: {name}", members)
                   for name, members in blimp.by_phenomenon.items()])
    files = dataset.files()
    groups = []
    if len(dataset.languages) > 1:
        groups += [PairGroup(f"syntaxgym_{dataset.name}_language_{language}",
                             f"language: {LANGUAGE_NAMES[language]}",
                             tuple(f.suite for f in files if f.language == language))
                   for language in dataset.languages]
    for group in dict.fromkeys(f.group for f in files):
        groups.append(PairGroup(f"syntaxgym_{dataset.name}_group_{snake(group)}", group,
                                tuple(f.suite for f in files if f.group == group)))
    return groups
