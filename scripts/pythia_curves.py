"""Write ``syntaxgym_helm/data/pythia160m_blimp_acc.tsv.gz``: the published BLiMP learning curves
of Pythia-160m (PolyPythias: 10 seeds x 24 checkpoints x 67 paradigms, lm-evaluation-harness's
``acc``) that a sweep of a ``pythia-160m-seed<N>`` model shows beside its own.

Reads ``blimp_160m_acc.csv`` of the shared copy (``../shared/pythia_curves``: the file of
github.com/ANN-HumLang/ANN-HumLang-tutorials at commit
8d9246375a7b154db01cee12bdafbf74706e7d65, ``pythia/``, MIT) and keeps the columns a curve needs
(seed, step, suite: the paradigm as the plugin names its suite, ``blimp_<UID>``, as the source
does; accuracy), sorted; phenomena come from the package's table of BLiMP's files. The gzip
header carries no time stamp, so the file is the same byte for byte on every run; ``--check``
writes nothing and fails when the shipped file differs.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "syntaxgym_helm" / "data" / "pythia160m_blimp_acc.tsv.gz"
HEADER = ("# BLiMP accuracy (lm-evaluation-harness acc) of pythia-160m-seed<seed> at training step "
          "<step>, per paradigm (its suite's name). From "
          "github.com/ANN-HumLang/ANN-HumLang-tutorials at commit "
          "8d9246375a7b154db01cee12bdafbf74706e7d65, pythia/blimp_160m_acc.csv (MIT License, "
          "Copyright (c) 2024 ANN-HumLang); written by scripts/pythia_curves.py.\n")


def extract(source: Path) -> bytes:
    with open(source, encoding="utf-8", newline="") as stream:
        rows = sorted((int(row["seed"]), int(row["step"]), row["paradigm"], row["score"])
                      for row in csv.DictReader(stream))
    text = io.StringIO()
    text.write(HEADER)
    text.write("seed\tstep\tsuite\taccuracy\n")
    text.writelines(f"{seed}\t{step}\t{suite}\t{score}\n" for seed, step, suite, score in rows)
    return gzip.compress(text.getvalue().encode(), compresslevel=9, mtime=0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path,
                        default=ROOT.parent / "shared" / "pythia_curves" / "blimp_160m_acc.csv")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    data = extract(args.source)
    if args.check:
        same = TARGET.is_file() and TARGET.read_bytes() == data
        print(f"{TARGET}: {'up to date' if same else 'differs'}")
        return 0 if same else 1
    TARGET.write_bytes(data)
    print(f"wrote {TARGET} ({len(data):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
