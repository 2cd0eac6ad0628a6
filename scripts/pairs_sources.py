"""Write ``syntaxgym_helm/data/pairs_<set>.tsv``: every file of BLiMP, CLAMS, RuBLiMP, TurBLiMP
and SLING with its suite name, paths, SHA-256, pair count, language, paradigm and group (BLiMP's
also its field and linguistics_term).

Reads folders laid out as the project's shared copy (``../shared/blimp``,
``../shared/multilingual/<set>``), whose files are byte for byte those of the pinned commits (the
PROVENANCE.md files list their git blob ids). The pair count is every pair of the file (those
converted and those reported), as the converter counts them. ``--check`` writes nothing and fails
when a table differs.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

from syntaxgym_helm.core.blimp.sources import Paradigm
from syntaxgym_helm.core.download import sha256_hex
from syntaxgym_helm.core.minimal_pairs.catalogue import DATASETS
from syntaxgym_helm.core.minimal_pairs.convert import convert_data
from syntaxgym_helm.core.minimal_pairs.fetch import read_file

ROOT = Path(__file__).resolve().parents[1]
PATTERNS = {"blimp": "data/*.jsonl", "clams": "*_evalset/*.txt*", "rublimp": "*.csv",
            "turblimp": "*/*.csv", "sling": "**/*.txt"}
COLUMNS = ("suite", "path", "source_path", "sha256", "pairs", "language", "paradigm", "group")
BLIMP_NOTE = ("; field and linguistics_term as its records give them; group: the paper's phenomenon "
              "(the data call the two\n# animate_subject paradigms s-selection, the paper "
              "argument_structure)")


def table(name: str, folder: Path) -> str:
    dataset = DATASETS[name]
    rows = []
    for path in sorted(folder.glob(PATTERNS[name])):
        relative = path.relative_to(folder).as_posix()
        file = dataset.describe(relative)
        data = read_file(path, packed=path.suffix == ".gz")
        conversion = convert_data(dataset, file, data, relative)
        record = conversion.suite["meta"][f"{name}_conversion"]
        group, extra = file.group, ()
        if name == "rublimp":  # the level of its first row: Morphology, Syntax or Semantics
            group = next(csv.DictReader(data.decode("utf-8").splitlines()))["level"]
        if name == "blimp":  # the paper's phenomenon, the data's field and term
            first = json.loads(data.decode("utf-8").splitlines()[0])
            extra = (first["field"], first["linguistics_term"])
            group = Paradigm(file.paradigm, *extra, "").phenomenon
        rows.append((file.suite, file.path, file.source_path, sha256_hex(data),
                     str(record["pairs"]), file.language, file.paradigm, group, *extra))
    suites = [row[0] for row in rows]
    if len(set(suites)) != len(suites):
        raise SystemExit(f"{name}: suite names are not unique")
    columns = COLUMNS + (("field", "linguistics_term") if name == "blimp" else ())
    header = (f"# {dataset.title} ({dataset.citation}).\n"
              f"# Files of github.com/{dataset.repository} at commit {dataset.commit}, licence "
              f"{dataset.licence}; sha256 of the file's (uncompressed) bytes at that commit, pairs "
              f"as the converter counts them{BLIMP_NOTE if name == 'blimp' else ''}. Written by "
              "scripts/pairs_sources.py.\n")
    return header + "\n".join("\t".join(row) for row in [columns, *rows]) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared",
                        help="the shared data folder (blimp/ and multilingual/<set>/ in it)")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    stale = []
    for name in PATTERNS:
        text = table(name, args.shared / ("blimp" if name == "blimp" else f"multilingual/{name}"))
        target = ROOT / "syntaxgym_helm" / "data" / f"pairs_{name}.tsv"
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
