"""Write ``syntaxgym_helm/data/pairs_<set>.tsv``: every file of each registered minimal-pair data
set with its suite name, paths, SHA-256, pair count, language, paradigm and group, and the extra
columns its declaration adds (BLiMP's field and linguistics_term).

Reads folders laid out as the project's shared copy (``../shared/<the data set's shared_folder>``,
e.g. ``../shared/blimp``, ``../shared/multilingual/clams``), whose files are byte for byte those
of the pinned commits (the PROVENANCE.md files list their git blob ids). The pair count is every
pair of the file (those converted and those reported), as the converter counts them. ``--check``
writes nothing and fails when a table differs; ``--dataset NAME`` limits it to one data set.
"""

from __future__ import annotations

import argparse
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path

from syntaxgym_helm.core.download import sha256_hex
from syntaxgym_helm.core.minimal_pairs.catalogue import DATASETS
from syntaxgym_helm.core.minimal_pairs.convert import convert_data
from syntaxgym_helm.core.minimal_pairs.dataset import DataSet
from syntaxgym_helm.core.minimal_pairs.fetch import read_file

ROOT = Path(__file__).resolve().parents[1]
COLUMNS = ("suite", "path", "source_path", "sha256", "pairs", "language", "paradigm", "group")


def table(dataset: DataSet, folder: Path) -> str:
    """The text of ``data/pairs_<name>.tsv`` for the files of ``dataset`` in ``folder``."""
    rows = []
    extra: tuple[str, ...] = ()
    for relative, data in _files(dataset, folder):
        file = dataset.describe(relative)
        conversion = convert_data(dataset, file, data, relative)
        record = conversion.suite["meta"][f"{dataset.name}_conversion"]
        facts = dict(dataset.table_row(file, data)) if dataset.table_row else {}
        group = facts.pop("group", file.group)
        extra = tuple(facts)
        rows.append((file.suite, file.path, file.source_path, sha256_hex(data),
                     str(record["pairs"]), file.language, file.paradigm, group, *facts.values()))
    if not rows and dataset.listing is not None and not dataset.pinned:
        return unpinned_table(dataset)
    if not rows:
        raise SystemExit(f"{dataset.name}: no file matches {dataset.shared_glob} in {folder}")
    suites = [row[0] for row in rows]
    if len(set(suites)) != len(suites):
        raise SystemExit(f"{dataset.name}: suite names are not unique")
    note = f"; {dataset.table_note}" if dataset.table_note else ""
    inside = (f" in {dataset.archive.source_path} (SHA-256 {dataset.archive.sha256})"
              if dataset.archive else "")
    header = (f"# {dataset.title} ({dataset.citation}).\n"
              f"# Files of github.com/{dataset.repository} at commit {dataset.commit}{inside}, "
              "licence "
              f"{dataset.licence}; sha256 of the file's (uncompressed) bytes at that commit, pairs "
              f"as the converter counts them{note}. Written by scripts/pairs_sources.py.\n")
    return header + "\n".join("\t".join(row) for row in [COLUMNS + extra, *rows]) + "\n"


def unpinned_table(dataset: DataSet) -> str:
    """The table of a data set whose files could not be read where it is written: its declared
    listing (names, paths, pair counts), with no checksums."""
    assert dataset.listing is not None
    rows = [(f.suite, f.path, f.source_path, "", str(f.pairs), f.language, f.paradigm, f.group)
            for f in dataset.listing()]
    header = (f"# {dataset.title} ({dataset.citation}).\n"
              f"# Files of {dataset.repository} ({dataset.download}), licence {dataset.licence}: "
              "not pinned "
              "(no revision, no sha256: the files could not be fetched where this table was "
              "written), pairs as\n# its declaration lists them. Written by "
              "scripts/pairs_sources.py.\n")
    return header + "\n".join("\t".join(row) for row in [COLUMNS, *rows]) + "\n"


def _files(dataset: DataSet, folder: Path) -> Iterator[tuple[str, bytes]]:
    """(path, bytes) of each of the data set's files in ``folder``: the files matching
    ``shared_glob``, or, for a data set published as an archive, the archive's members."""
    for path in sorted(folder.glob(dataset.shared_glob)):
        if dataset.archive is None:
            yield path.relative_to(folder).as_posix(), read_file(path, path.suffix == ".gz")
            continue
        with tarfile.open(path, mode="r:gz") as archive:
            for member in sorted(archive.getmembers(), key=lambda m: m.name):
                handle = archive.extractfile(member) if member.isfile() else None
                if handle is not None:
                    yield member.name, handle.read()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared",
                        help="the shared data folder (each data set's shared_folder in it)")
    parser.add_argument("--dataset", choices=list(DATASETS), action="append",
                        help="only this data set (repeatable; default: all)")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    stale = []
    for name in args.dataset or DATASETS:
        dataset = DATASETS[name]
        text = table(dataset, args.shared / dataset.shared_folder)
        target = ROOT / "syntaxgym_helm" / "data" / dataset.table
        if args.check:
            if not target.is_file() or target.read_text(encoding="utf-8") != text:
                stale.append(str(target))
            continue
        target.write_text(text, encoding="utf-8")
        print(f"wrote {target}")
    if stale:
        print("stale: " + ", ".join(stale), file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
