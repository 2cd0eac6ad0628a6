"""Write ``syntaxgym_helm/data/context_unrelated.txt``: the sentences ``context=unrelated`` \
picks from.

The source is *Aesop's Fables*, translated by George Fyler Townsend (1867; Townsend died in 1900),
a public-domain text, as Project Gutenberg's plain-text eBook #21 gives it. There is no internet
where this project is built, so the copy read was the one in the public GitHub repository
``lpodol/books`` (file ``aesop.txt``, blob ``ec5c2d14ed453fe536f8d37ed80aa8658ee20b2a``, SHA-256
:data:`SOURCE_SHA256`, 240,622 bytes): pass its path. The output keeps none of Project
Gutenberg's header, licence or trademark (its licence binds only copies that carry them; the work
itself is in the public domain).

Which sentences (so the context is plain narrative, unrelated to any SyntaxGym phenomenon, and has
no quotation whose marks a sentence split would cut): the fables' running text only (from the
first fable to the "Life of Aesop" and Preface that follow them); paragraphs split into sentences
after ``.``, ``!`` or ``?`` followed by a space and a capital letter; a sentence is kept when it
ends with a full stop, has 6 to 25 words, is not inside a quotation that runs over several
sentences, and holds no quotation mark, colon, parenthesis, dash or digit. The first words of each
fable are printed in capitals (``A WOLF, meeting ...``): they are written as ordinary words (``A
Wolf, meeting ...``). Duplicates are dropped, order is kept.

    python scripts/make_unrelated_context.py /path/to/aesop.txt [--check]
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "syntaxgym_helm" / "data" / "context_unrelated.txt"
SOURCE_SHA256 = "1ca6eeae8e849efa281081d018d2dc9dfebdbf29f0ffea04afe3574de041805d"
FIRST_FABLE = "The Wolf And The Lamb"
END = "LIFE OF AESOP"
HEADER = """\
# Sentences for the syntaxgym run-entry option context=unrelated (one per line; lines starting
# with '#' are comments). Public domain: Aesop's Fables, translated by George Fyler Townsend
# (1867), from Project Gutenberg eBook #21; selected and normalised by
# scripts/make_unrelated_context.py (its docstring gives the exact source file and the rules).
"""
_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_REFUSED = re.compile(r"[\"“”‘’:()\[\]0-9_*]|--|\s'|'\s|^'|'$")


def _normalise_caps(sentence: str) -> str:
    """``A WOLF, meeting`` -> ``A Wolf, meeting``: capitalised words of two or more letters."""
    return re.sub(r"\b([A-Z])([A-Z]+)\b", lambda m: m.group(1) + m.group(2).lower(), sentence)


def sentences(text: str) -> list[str]:
    body = text[text.index(FIRST_FABLE): text.index(END)]
    kept: list[str] = []
    for paragraph in re.split(r"\n\s*\n", body):
        flat = " ".join(paragraph.split())
        quotes = 0  # quotation marks before the sentence: odd means it is inside a quotation
        for sentence in _SPLIT.split(flat):
            inside = quotes % 2 == 1
            quotes += sentence.count('"')
            sentence = _normalise_caps(sentence.strip())
            words = sentence.split()
            if (not inside and sentence.endswith(".") and 6 <= len(words) <= 25
                    and not _REFUSED.search(sentence) and sentence not in kept):
                kept.append(sentence)
    return kept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="aesop.txt (Project Gutenberg eBook #21)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if stale")
    args = parser.parse_args(argv)
    data = args.source.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != SOURCE_SHA256:
        print(f"{args.source}: SHA-256 {digest} is not the recorded {SOURCE_SHA256}",
              file=sys.stderr)
        return 1
    text = HEADER + "".join(line + "\n" for line in sentences(data.decode("utf-8")))
    if args.check:
        same = OUTPUT.is_file() and OUTPUT.read_text(encoding="utf-8") == text
        print("up to date" if same else f"stale: {OUTPUT}")
        return 0 if same else 1
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUT}: {text.count(chr(10)) - HEADER.count(chr(10))} sentences")
    return 0


if __name__ == "__main__":
    sys.exit(main())
