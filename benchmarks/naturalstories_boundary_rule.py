"""Why our corrected word surprisals on Natural Stories differ from minicons' ``bow_correction``:
the end of text, shown on a few stories (not all ten: each is one text, scored whole).

For the chosen stories (``--stories``, default story 1), ``syntaxgym-helm surprisal`` on SmolLM2
scores every word twice, with our rule (the end of text is a word boundary) and with
``--no-end-of-text-boundary`` (minicons' rule), and minicons 0.3.39's ``word_score_tokenized(...,
bow_correction=True)`` scores the same texts on the same GGUF (``minicons_words_driver.py``, its own
virtual environment; ``--minicons-output`` reuses a ``words.jsonl`` that
``bench_naturalstories.py`` wrote for all ten stories). Printed: per rule, the largest difference
from minicons and the words over 0.01 bits, split into sentence-final words, words after a
sentence's end, and the others. The corpus is read from ``--naturalstories`` and only written
under ``--workdir``. ::

    .venv/bin/python benchmarks/naturalstories_boundary_rule.py --workdir /tmp/nsrule \\
        --minicons-venv ../venvs/minicons --stories 1
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from bench_naturalstories import (
    BIN,
    ROOT,
    load_words,
    minicons,
    read_minicons,
    read_ours,
    story_texts,
)

MODEL = "smollm2-135m-instruct-q4_1"
RULES = {"ours (end of text a boundary)": [],
         "--no-end-of-text-boundary (minicons' rule)": ["--no-end-of-text-boundary"]}


def ours(workdir: Path, words, flags: list[str], name: str) -> list[float]:
    """Our corrected surprisal of every word of ``words`` (its stories), with ``flags``."""
    import subprocess

    tsv = workdir / "stories.tsv"
    words[["item", "zone", "word"]].to_csv(tsv, sep="\t", index=False)
    output = workdir / f"ours-{name}.tsv"
    command = [str(BIN / "syntaxgym-helm"), "surprisal", str(tsv), "--tsv", "--text-column",
               "item", "--index-column", "zone", "--word-column", "word", "--model",
               f"syntaxgym/{MODEL}", "--device", "cpu", *flags, "-o", str(output)]
    subprocess.run(command, check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    table = read_ours(output)
    assert list(table["word"]) == list(words["word"])
    return [float(v) for v in table["surprisal_corrected_bits"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--naturalstories", type=Path,
                        default=ROOT.parent / "shared" / "naturalstories")
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--minicons-venv", type=Path, default=ROOT.parent / "venvs" / "minicons")
    parser.add_argument("--stories", default="1", help="story items, comma-separated")
    parser.add_argument("--minicons-output", type=Path,
                        help="a words.jsonl of all ten stories to reuse (minicons is not run)")
    args = parser.parse_args()
    args.workdir = args.workdir.resolve()
    args.workdir.mkdir(parents=True, exist_ok=True)
    everything = load_words(args.naturalstories)
    items = [int(s) for s in args.stories.split(",")]
    words = everything[everything["item"].isin(items)].reset_index(drop=True)
    if args.minicons_output:
        found = read_minicons(args.minicons_output)[True]
        chosen = everything["item"].isin(items).tolist()
        theirs = [s for s, keep in zip(found, chosen, strict=True) if keep]
    else:
        result = minicons(args, MODEL, words)  # both corrections of the chosen stories
        theirs = read_minicons(Path(result["output"]))[True]
    assert len(theirs) == len(words)
    print(f"stories {args.stories}: {len(words)} words, {len(story_texts(words))} texts")
    final = words["last"].tolist()
    after = [False, *final[:-1]]
    after = [a and item == previous for a, item, previous in
             zip(after, words["item"], [None, *words["item"][:-1]], strict=True)]
    story_end = [k + 1 == len(words) or words["item"][k + 1] != words["item"][k]
                 for k in range(len(words))]
    for name, flags in RULES.items():
        mine = ours(args.workdir, words, flags, name.split()[0].strip("-"))
        diffs = [a - b for a, b in zip(mine, theirs, strict=True)]
        over = [k for k, d in enumerate(diffs) if abs(d) > 0.01]
        kinds = {"sentence-final": int(sum(final[k] for k in over)),
                 "after a sentence's end": int(sum(after[k] for k in over)),
                 "story-final": int(sum(story_end[k] for k in over))}
        others = max((abs(d) for k, d in enumerate(diffs) if not final[k] and not after[k]),
                     default=0.0)
        print(json.dumps({"rule": name, "words": len(diffs),
                          "largest_bits": max(map(abs, diffs)), "over_0.01": len(over),
                          **kinds, "largest_elsewhere_bits": others}))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
