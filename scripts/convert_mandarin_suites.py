"""Write the Mandarin suites of Wang, Hu, Levy and Qian (2021) as SyntaxGym suites:
``syntaxgym_helm/suites/mandarin/mandarin_<phenomenon>_<modifier>.json``.

The source is the authors' word-segmented test sentences (``test_suites/<Phenomenon>/*_txt.txt``
of github.com/YiwenWang03/syntactic-generalization-mandarin at commit ``d5ab34c8``, MIT; the
project's copy is ``../shared/mandarin_sg``): one condition a line, the conditions of an item on
consecutive lines. Each item's words become regions (joined without spaces, as Mandarin is
written: ``meta.region_separator`` is ``""``), and the predictions are the success criteria of
the authors' evaluation (``notebook/Evaluation.ipynb`` at that commit: the surprisal of a
target word in the ungrammatical or garden-path condition exceeds the other's), one prediction a
comparison:

- Classifier (four conditions: the noun with its classifier and with the other noun's,
  for two nouns): the noun and the full stop, in each of the four comparisons;
- GP_obj: the verb of the relative clause (the fourth word from the end);
- GP_sub (and its ``_pp`` variants): the relative marker 的 that closes the relative clause;
- Verb_Noun: the object noun and the full stop;
- Missing_Object and Subordination: the full stop.

``python scripts/convert_mandarin_suites.py [--source DIR] [--output DIR] [--check]``: ``--check``
writes nothing and fails when a shipped suite differs from what the source gives
(``tests/generate/test_mandarin_suites.py`` runs it on the test copy of the source).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
REPOSITORY = "YiwenWang03/syntactic-generalization-mandarin"
COMMIT = "d5ab34c8c3546d0888b41a4255f2dce0830d2ad6"
CITATION = ("Wang, Hu, Levy, Qian (2021). Controlled Evaluation of Grammatical Knowledge in "
            "Mandarin Chinese Language Models. EMNLP 2021, 5604-5620. "
            "https://aclanthology.org/2021.emnlp-main.454/ (test suites MIT)")
PREFIX = "mandarin_"
FULL_STOP = "。"
DE = "的"


class SourceError(ValueError):
    """An item of the source does not have the shape its phenomenon's regions need."""


Words = list[str]
#: An item's lines (as words) to its conditions' regions, in the condition order of the design.
Cut = Callable[[Sequence[Words], list[str]], list[list[str]]]


@dataclass(frozen=True)
class Design:
    """One phenomenon: its folder and file prefix, conditions (in the order of the lines of an
    item), region names, how an item's lines become regions, and its predictions."""

    folder: str
    stem: str  # the files' prefix, e.g. cls for cls_adj_txt.txt
    name: str  # in the suite's name, e.g. classifier
    conditions: tuple[str, ...]
    regions: tuple[str, ...]
    cut: Cut
    predictions: tuple[str, ...]
    modifiers: tuple[str, ...]
    description: str
    criterion: str


def _differing(first: Words, second: Words, what: str, notes: list[str]) -> int:
    """The first position where two lines differ: the one word they should differ in (a note
    says so where they differ in more, as a few of the source's items do)."""
    places = [i for i, (a, b) in enumerate(zip(first, second, strict=False)) if a != b]
    if not places:
        raise SourceError(f"the two lines do not differ in {what}: {' '.join(first)!r}")
    if len(first) != len(second) or len(places) != 1:
        notes.append(f"the conditions differ beyond {what}: {' '.join(first)!r} / "
                     f"{' '.join(second)!r}")
    return places[0]


def _ends(words: Words) -> None:
    if len(words) < 3 or words[-1] != FULL_STOP:
        raise SourceError(f"a sentence should end with {FULL_STOP}: {' '.join(words)!r}")


def _classifier(lines: Sequence[Words], notes: list[str]) -> list[list[str]]:
    """G1, U1, G2, U2: prefix, classifier, modifier, noun, full stop."""
    cut = []
    for grammatical, other in ((lines[0], lines[1]), (lines[2], lines[3])):
        place = _differing(grammatical, other, "the classifier", notes)
        for words in (grammatical, other):
            _ends(words)
            if place >= len(words) - 2:
                raise SourceError(f"the classifier is not before the noun: {' '.join(words)!r}")
            cut.append([" ".join(words[:place]), words[place], " ".join(words[place + 1:-2]),
                        words[-2], words[-1]])
    return [cut[0], cut[1], cut[2], cut[3]]


def _gp_object(lines: Sequence[Words], notes: list[str]) -> list[list[str]]:
    """Specific, general classifier: prefix, classifier, relative clause's subject, its verb
    (the fourth word from the end), 的, head noun, full stop."""
    place = _differing(lines[0], lines[1], "the classifier", notes)
    out = []
    for words in lines:
        _ends(words)
        if words[-3] != DE or place >= len(words) - 4:
            raise SourceError(f"expected ... classifier ... verb {DE} noun {FULL_STOP}: "
                              f"{' '.join(words)!r}")
        out.append([" ".join(words[:place]), words[place], " ".join(words[place + 1:-4]),
                    words[-4], words[-3], words[-2], words[-1]])
    return out


def _gp_subject(lines: Sequence[Words], notes: list[str]) -> list[list[str]]:
    """Specific, general classifier: prefix, classifier, relative clause, its closing 的, head
    noun, the rest of the sentence."""
    place = _differing(lines[0], lines[1], "the classifier", notes)
    out = []
    for words in lines:
        _ends(words)
        marks = [i for i, word in enumerate(words) if word == DE]
        if not marks or marks[-1] <= place + 1 or marks[-1] + 2 >= len(words):
            raise SourceError(f"expected classifier ... {DE} noun ...: {' '.join(words)!r}")
        de = marks[-1]
        out.append([" ".join(words[:place]), words[place], " ".join(words[place + 1:de]),
                    words[de], words[de + 1], " ".join(words[de + 2:])])
    return out


def _verb_noun(lines: Sequence[Words], notes: list[str]) -> list[list[str]]:
    """Matching, mismatching verb: prefix, verb, words up to the object, object noun, full
    stop."""
    place = _differing(lines[0], lines[1], "the verb", notes)
    out = []
    for words in lines:
        _ends(words)
        if place >= len(words) - 2:
            raise SourceError(f"the verb is not before the object: {' '.join(words)!r}")
        out.append([" ".join(words[:place]), words[place], " ".join(words[place + 1:-2]),
                    words[-2], words[-1]])
    return out


def _ending(lines: Sequence[Words], shorter: int, notes: list[str]) -> list[list[str]]:
    """Two lines, one (``shorter``) the other's words up to its full stop: the shared
    beginning, what only the longer has, the full stop."""
    short, long = lines[shorter], lines[1 - shorter]
    for words in lines:
        _ends(words)
    end = len(short) - 1  # where the longer line's extra words begin
    if long[:end] != short[:-1] or len(long) <= len(short):
        # One item of the source (sd_adj) has a modifier only in its longer line: it is cut
        # after the shorter line's last word, wherever that is in the longer one.
        found = [i for i, word in enumerate(long[:-2]) if word == short[-2]]
        if not found:
            raise SourceError(f"expected {' '.join(short)!r} to begin {' '.join(long)!r}")
        end = found[-1] + 1
        notes.append(f"the shorter line is not the longer one's beginning: "
                     f"{' '.join(short)!r} / {' '.join(long)!r}")
    cut = {shorter: [" ".join(short[:-1]), "", FULL_STOP],
           1 - shorter: [" ".join(long[:end]), " ".join(long[end:-1]), FULL_STOP]}
    return [cut[0], cut[1]]


def _sum(regions: Sequence[int], condition: str) -> str:
    return " + ".join(f"({region};%{condition}%)" for region in regions)


def _above(regions: Sequence[int], higher: str, lower: str) -> str:
    if len(regions) == 1:
        return f"({regions[0]};%{higher}%) > ({regions[0]};%{lower}%)"
    return f"({_sum(regions, higher)}) > ({_sum(regions, lower)})"


FOUR = ("none", "adj", "obj", "sub")
DESIGNS = (
    Design("Classifier", "cls", "classifier",
           ("match_noun1", "mismatch_noun1", "match_noun2", "mismatch_noun2"),
           ("prefix", "classifier", "modifier", "noun", "end"), _classifier,
           (_above((4, 5), "mismatch_noun1", "match_noun1"),
            _above((4, 5), "mismatch_noun2", "match_noun2"),
            _above((4, 5), "mismatch_noun2", "match_noun1"),
            _above((4, 5), "mismatch_noun1", "match_noun2")), FOUR,
           "Classifier-noun compatibility: a noun after a classifier that does not fit it is "
           "surprising, across a modifier.",
           "the noun and the full stop: more surprising after the other noun's classifier (the "
           "paper's four comparisons, one prediction each; its accuracy is their mean)"),
    Design("GP_obj", "gpo", "gp_object", ("specific", "general"),
           ("prefix", "classifier", "rc_subject", "rc_verb", "de", "head_noun", "end"),
           _gp_object, (_above((4,), "general", "specific"),), FOUR,
           "Garden path, object relative clause: after the general classifier 个 the noun that "
           "follows reads as the object, so the relative clause's verb is surprising; a "
           "classifier that fits only the head noun prevents that reading.",
           "the relative clause's verb: more surprising after the general classifier"),
    Design("GP_sub", "gps", "gp_subject", ("specific", "general"),
           ("prefix", "classifier", "relative_clause", "de", "head_noun", "rest"),
           _gp_subject, (_above((4,), "general", "specific"),), (*FOUR, *(
               f"{m}_pp" for m in FOUR)),
           "Garden path, subject relative clause: after the general classifier 个 the first "
           "noun reads as the subject of the main clause, so the relative marker 的 is "
           "surprising; a classifier that fits only the head noun prevents that reading.",
           f"the relative marker {DE} closing the relative clause: more surprising after the "
           "general classifier"),
    Design("Verb_Noun", "vo", "verb_noun", ("match", "mismatch"),
           ("prefix", "verb", "middle", "noun", "end"), _verb_noun,
           (_above((4, 5), "mismatch", "match"),), FOUR,
           "Verb-noun compatibility: an object noun that does not fit its verb is surprising, "
           "across a modifier.",
           "the object noun and the full stop: more surprising after a verb it does not fit"),
    Design("Missing_Object", "mobj", "missing_object", ("no_object", "object"),
           ("prefix", "object", "end"), lambda lines, notes: _ending(lines, 0, notes),
           (_above((3,), "no_object", "object"),), ("none", "sub", "sub2", "subh"),
           "Missing object: a transitive verb cannot end the sentence (nor, in the modified "
           "suites, a relative clause that needs a head noun), so a full stop without the "
           "object is surprising.",
           "the full stop: more surprising without the object"),
    Design("Subordination", "sd", "subordination", ("matrix", "no_matrix"),
           ("subordinate_clause", "matrix_clause", "end"),
           lambda lines, notes: _ending(lines, 1, notes),
           (_above((3,), "no_matrix", "matrix"),), FOUR,
           "Subordination: a clause opened by a subordinator (因为 'because', 如果 'if', 尽管 "
           "'although', 自从 'since', 随着 'along with') needs a main clause, so a full stop "
           "right after it is surprising.",
           "the full stop: more surprising without the main clause"),
)


#: Items whose sentences in the authors' published surprisal files (every model's) are not those
#: of the test suite at the pinned commit: the paper's figures for the suite scored these.
PAPER_ITEMS_DIFFER: dict[tuple[str, str, int], list[str]] = {
    ("cls", "obj", 5): ["the paper's figures scored other sentences for this item (its published "
                        "surprisal files have 我知道的 where the suite has 老师描写过的)"],
    ("cls", "obj", 7): ["the paper's figures scored other sentences for this item (its published "
                        "surprisal files have 拍过的 where the suite has 拍的)"],
    ("cls", "sub", 28): ["the paper's figures scored other sentences for this item (its "
                         "published surprisal files have 出现问题的 where the suite has "
                         "刚被推出的 / 派发的)"],
}


def source_path(design: Design, modifier: str) -> str:
    return f"test_suites/{design.folder}/{design.stem}_{modifier}_txt.txt"


def suite_name(design: Design, modifier: str) -> str:
    return f"{PREFIX}{design.name}_{modifier}"


def convert(design: Design, modifier: str, data: bytes) -> dict[str, Any]:
    """The suite of one source file; SourceError naming the line of an item that does not fit."""
    path = source_path(design, modifier)
    lines = [line.strip() for line in data.decode("utf-8-sig").splitlines()]
    lines = [line for line in lines if line]
    size = len(design.conditions)
    if not lines or len(lines) % size:
        raise SourceError(f"{path}: {len(lines)} sentences, not a multiple of {size}")
    items = []
    irregular = []
    for start in range(0, len(lines), size):
        words = [line.split() for line in lines[start:start + size]]
        notes: list[str] = []
        try:
            cut = design.cut(words, notes)
        except SourceError as exc:
            raise SourceError(f"{path} lines {start + 1}-{start + size}: {exc}") from None
        notes += PAPER_ITEMS_DIFFER.get((design.stem, modifier, start // size + 1), [])
        irregular += [f"item {start // size + 1} (lines {start + 1}-{start + size}): {note}"
                      for note in notes]
        items.append({"item_number": start // size + 1, "conditions": [
            {"condition_name": condition,
             "regions": [{"region_number": number, "content": content.replace(" ", "")}
                         for number, content in enumerate(regions, 1)]}
            for condition, regions in zip(design.conditions, cut, strict=True)]})
    meta = {
        "name": suite_name(design, modifier),
        "metric": "sum",
        "reference": CITATION,
        "description": f"{design.description} Modifier: {modifier}.",
        "tags": ["mandarin", design.name, modifier],
        "language": "zh",
        "region_separator": "",
        "criterion": design.criterion,
        "source": {"repository": REPOSITORY, "commit": COMMIT, "path": path,
                   "sha256": hashlib.sha256(data).hexdigest(), "licence": "MIT",
                   "url": f"https://github.com/{REPOSITORY}/blob/{COMMIT}/{path}"},
        "converter": "scripts/convert_mandarin_suites.py",
        "source_irregularities": irregular,
    }
    return {"meta": meta,
            "region_meta": {str(n): name for n, name in enumerate(design.regions, 1)},
            "predictions": [{"type": "formula", "formula": f} for f in design.predictions],
            "items": items}


def suites(source: Path) -> dict[str, str]:
    """Every suite's file name and text, from the source folder (``test_suites/`` in it or
    itself)."""
    base = source if (source / "test_suites").is_dir() else source.parent
    out = {}
    for design in DESIGNS:
        for modifier in design.modifiers:
            data = (base / source_path(design, modifier)).read_bytes()
            suite = convert(design, modifier, data)
            out[f"{suite['meta']['name']}.json"] = json.dumps(
                suite, ensure_ascii=False, indent=1) + "\n"
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=ROOT.parent / "shared" / "mandarin_sg",
                        help="the authors' repository, or a copy holding its test_suites/")
    parser.add_argument("--output", type=Path,
                        default=ROOT / "syntaxgym_helm" / "suites" / "mandarin")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; fail when a shipped suite differs")
    args = parser.parse_args(argv)
    try:
        wanted = suites(args.source)
    except (OSError, SourceError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    shipped = {path.name for path in args.output.glob(f"{PREFIX}*.json")}
    stale = sorted(name for name, text in wanted.items()
                   if not (args.output / name).is_file()
                   or (args.output / name).read_text(encoding="utf-8") != text)
    extra = sorted(shipped - set(wanted))
    if args.check:
        for name in stale + extra:
            print(f"stale: {args.output / name}", file=sys.stderr)
        return 1 if stale or extra else 0
    args.output.mkdir(parents=True, exist_ok=True)
    for name in stale:
        (args.output / name).write_text(wanted[name], encoding="utf-8")
        print(f"wrote {args.output / name}")
    for name in extra:
        (args.output / name).unlink()
        print(f"removed {args.output / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
