"""Write ``syntaxgym_helm/data/mandarin_paper_accuracy.tsv``: the accuracy of Wang et al.
(2021)'s models on each of the shipped Mandarin suites, recomputed from the token surprisals the
authors publish, as their evaluation notebook computes it.

The source is a checkout of github.com/YiwenWang03/syntactic-generalization-mandarin at commit
``d5ab34c8`` (MIT): ``OpenMind/<model>_outputs/trial<k>/surprisals[_output]_<stem>_<modifier>``
(one row per word: sentence, word, surprisal) for the LSTM, RNNG, Transformer and PLM (the
generative parser) trained on the small corpus, and ``hybrid1_outputs_*`` for the same trained on
Xinhua news; and ``test_suites/GP_sub/*_txt.txt``, where the subject garden path's target is
found. Per model and suite, the share of items whose target word is more surprising in the
ungrammatical or garden-path condition (``notebook/Evaluation.ipynb``: Classifier, the mean of
its four comparisons of the noun and full stop; GP_obj, the fourth word from the end; GP_sub, the
last 的; Verb_Noun, the last two words; Missing_Object and Subordination, the last), then the mean
over the model's trained seeds (``trials``). The n-gram models are left out: the notebook breaks
their ties at random.

``python scripts/mandarin_paper_figures.py --source CHECKOUT [--check]``.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "syntaxgym_helm" / "data" / "mandarin_paper_accuracy.tsv"
#: (column, output folder): the paper's models, trained on the small corpus, then on Xinhua.
MODELS = (("LSTM", "lstm_outputs"), ("RNNG", "rnng_outputs"), ("Transformer", "trans_outputs"),
          ("PLM", "plm_outputs"), ("LSTM-Xinhua", "hybrid1_outputs_lstm"),
          ("RNNG-Xinhua", "hybrid1_outputs_rnng"),
          ("Transformer-Xinhua", "hybrid1_outputs_trans"), ("PLM-Xinhua", "hybrid1_outputs_plm"))
#: (suite name part, file stem, conditions per item, the ungrammatical/grammatical pairs by
#: position in the item, the target)
DESIGNS = (
    ("classifier", "cls", 4, ((1, 0), (3, 2), (3, 0), (1, 2)), "last2"),
    ("gp_object", "gpo", 2, ((1, 0),), "fourth_from_end"),
    ("gp_subject", "gps", 2, ((1, 0),), "last_de"),
    ("verb_noun", "vo", 2, ((1, 0),), "last2"),
    ("missing_object", "mobj", 2, ((0, 1),), "last"),
    ("subordination", "sd", 2, ((1, 0),), "last"),
)
MODIFIERS = {"missing_object": ("none", "sub", "sub2", "subh"),
             "gp_subject": ("none", "adj", "obj", "sub", "none_pp", "adj_pp", "obj_pp", "sub_pp")}
FOLDERS = {"cls": "Classifier", "gpo": "GP_obj", "gps": "GP_sub", "vo": "Verb_Noun",
           "mobj": "Missing_Object", "sd": "Subordination"}


def _words(path: Path) -> dict[int, list[tuple[int, float]]]:
    """Per sentence (1-based), its words' (1-based index, surprisal)."""
    found: dict[int, list[tuple[int, float]]] = {}
    with open(path, encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            found.setdefault(int(row["sentence_id"]), []).append(
                (int(row["token_id"]), float(row["surprisal"])))
    return found


def _target(words: list[tuple[int, float]], kind: str, raw: list[str] | None) -> float:
    by_index = dict(words)
    last = words[-1][0]
    if kind == "last":
        return by_index[last]
    if kind == "last2":
        return by_index[last] + by_index[last - 1]
    if kind == "fourth_from_end":
        return by_index[words[-4][0]]
    assert raw is not None  # the last 的 of the sentence as the source file writes it
    return by_index[max(i for i, word in enumerate(raw) if word == "的") + 1]


def accuracy(path: Path, size: int, pairs: Sequence[tuple[int, int]], kind: str,
             raw: Sequence[str] | None) -> float:
    """One trial's accuracy: the mean over ``pairs`` of the share of items where the first of the
    pair is the more surprising at the target."""
    sentences = _words(path)
    items = max(sentences) // size
    targets = [[_target(sentences[item * size + k + 1], kind,
                        raw[item * size + k].split() if raw else None)
                for k in range(size)] for item in range(items)]
    return math.fsum(sum(t[u] - t[g] > 0 for t in targets) / items
                     for u, g in pairs) / len(pairs)


def table(source: Path) -> str:
    rows = []
    for name, stem, size, pairs, kind in DESIGNS:
        for modifier in MODIFIERS.get(name, ("none", "adj", "obj", "sub")):
            raw = None
            if kind == "last_de":
                text = (source / "test_suites" / FOLDERS[stem] / f"{stem}_{modifier}_txt.txt")
                raw = [line for line in text.read_text(encoding="utf-8").splitlines()
                       if line.strip()]
            cells = []
            for _, folder in MODELS:
                trials = sorted((source / "OpenMind" / folder).glob("trial*"))
                found = [accuracy(path, size, pairs, kind, raw) for trial in trials
                         for path in (trial / f"surprisals_{stem}_{modifier}.tsv",
                                      trial / f"surprisals_output_{stem}_{modifier}.txt")
                         if path.is_file()]
                cells.append(f"{math.fsum(found) / len(found):.4f}" if found else "")
                cells.append(str(len(found)))
            rows.append([f"mandarin_{name}_{modifier}", *cells])
    header = ["suite", *(part for model, _ in MODELS for part in (model, f"{model} trials"))]
    return ("# Wang, Hu, Levy, Qian (2021), EMNLP: each model's accuracy per suite, the mean over "
            "its trained seeds (trials), recomputed\n# from the token surprisals in "
            "github.com/YiwenWang03/syntactic-generalization-mandarin at commit "
            "d5ab34c8c3546d0888b41a4255f2dce0830d2ad6 (MIT)\n# as its notebook/Evaluation.ipynb "
            "computes it. Written by scripts/mandarin_paper_figures.py.\n"
            + "\n".join("\t".join(row) for row in [header, *rows]) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, required=True,
                        help="a checkout of YiwenWang03/syntactic-generalization-mandarin")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    text = table(args.source)
    if args.check:
        same = TARGET.is_file() and TARGET.read_text(encoding="utf-8") == text
        print("up to date" if same else f"stale: {TARGET}")
        return 0 if same else 1
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
