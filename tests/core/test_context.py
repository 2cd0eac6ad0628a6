"""Context sentences before an item: options, files, and which sentences each item gets."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import random
from pathlib import Path

import pytest

from fixtures import HU2020_DIR as HU2020
from syntaxgym_helm.core.context import (
    ACCEPTABLE,
    FILE,
    NONE,
    UNACCEPTABLE,
    UNRELATED,
    ContextError,
    ContextSpec,
    draw,
    item_contexts,
    join_context,
    parse_context,
    unrelated_sentences,
)
from syntaxgym_helm.core.context_polarity import polarity
from syntaxgym_helm.core.suite import load_suite, parse_suite


@pytest.fixture(scope="module")
def number_prep():
    return load_suite(HU2020 / "number_prep.json")


def _sentences_of(context: str, pool: list[str]) -> list[str]:
    """A context text back into the sentences of ``pool`` it joins (longest match first)."""
    pieces = sorted({(join_context([s]), s) for s in pool}, key=lambda p: -len(p[0]))
    found = []
    while context:
        text, sentence = next(p for p in pieces if context.startswith(p[0]))
        found.append(sentence)
        context = context[len(text):]
    return found


def test_kinds_counts_and_seeds_are_parsed() -> None:
    assert parse_context("none", "3", "0") == ContextSpec(NONE, 3, 0)
    assert parse_context("unrelated", 6, " 7 ") == ContextSpec(UNRELATED, 6, 7)
    assert not parse_context("none", "3", "0").active
    assert ContextSpec(UNRELATED, 1, 0).describe() == "unrelated, 1 sentence, seed 0"


@pytest.mark.parametrize(("context", "sentences", "seed", "message"), [
    ("acceptable", "-1", "0", "context_sentences=-1 is negative"),
    ("acceptable", "three", "0", "context_sentences='three' is not a whole number"),
    ("acceptable", "3", "x", "context_seed='x' is not a whole number"),
    ("grammatical", "3", "0", "neither a kind .* nor an existing file"),
    (" ", "3", "0", "context= is empty"),
])
def test_bad_options_are_refused_saying_what_to_do(context, sentences, seed, message) -> None:
    with pytest.raises(ContextError, match=message):
        parse_context(context, sentences, seed)


def test_bad_files_are_refused(tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("# only a comment\n\n   \n", encoding="utf-8")
    with pytest.raises(ContextError, match="has no sentence"):
        parse_context(str(empty), "3", "0")
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("Le café est fermé.\n".encode("latin-1"))
    with pytest.raises(ContextError, match=r"not UTF-8 text \(byte 6"):
        parse_context(str(latin1), "3", "0")
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"GGUF\x00\x00\x03\x00")
    with pytest.raises(ContextError, match="NUL characters"):
        parse_context(str(binary), "3", "0")
    with pytest.raises(ContextError, match="not a regular file"):
        parse_context(str(tmp_path), "3", "0")
    if hasattr(os, "mkfifo"):
        pipe = tmp_path / "pipe"
        os.mkfifo(pipe)
        with pytest.raises(ContextError, match="named pipe"):
            parse_context(str(pipe), "3", "0")  # refused without waiting for a writer


def test_a_file_context_is_its_lines_and_its_checksum(tmp_path: Path, number_prep) -> None:
    path = tmp_path / "My Context.txt"
    path.write_text("# my sentences\nThe sun rose early\n\n  The birds   sang!\n",
                    encoding="utf-8")
    spec = parse_context(str(path), "2", "0")
    assert spec.kind == FILE and spec.label == "file_my_context"
    assert spec.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    contexts = item_contexts(number_prep, spec)
    # Both lines, in some order; the one without final punctuation gets a full stop.
    assert contexts[1] in ("The sun rose early. The birds sang! ",
                           "The birds sang! The sun rose early. ")
    path.write_text("The sun set.\n", encoding="utf-8")
    with pytest.raises(ContextError, match="changed since the run spec was made"):
        item_contexts(number_prep, spec)


def test_acceptable_context_is_other_items_in_acceptable_conditions(number_prep) -> None:
    for kind in (ACCEPTABLE, UNACCEPTABLE):
        names = polarity(number_prep).conditions(kind == ACCEPTABLE)
        contexts = item_contexts(number_prep, ContextSpec(kind, 4, 0))
        assert set(contexts) == {item.item_number for item in number_prep.items}
        for item in number_prep.items:
            allowed = {other.condition(name).sentence for other in number_prep.items
                       if other is not item for name in names}
            own = {condition.sentence for condition in item.conditions}
            chosen = _sentences_of(contexts[item.item_number], sorted(allowed))
            assert len(chosen) == 4 and set(chosen) <= allowed and not set(chosen) & own
            # Four distinct other items (a suite item holds one sentence per condition).
            items_used = {other.item_number for other in number_prep.items
                          for s in chosen if s in {c.sentence for c in other.conditions}}
            assert len(items_used) == 4


def test_acceptable_and_unacceptable_contexts_use_the_same_items(number_prep) -> None:
    good = item_contexts(number_prep, ContextSpec(ACCEPTABLE, 3, 5))
    bad = item_contexts(number_prep, ContextSpec(UNACCEPTABLE, 3, 5))

    item_of = {c.sentence: item.item_number for item in number_prep.items
               for c in item.conditions}

    def items_of(context: str) -> list[int]:
        return [item_of[s] for s in _sentences_of(context, list(item_of))]

    assert all(items_of(good[n]) == items_of(bad[n]) for n in good)
    assert good != bad


def test_contexts_are_reproducible_per_seed_and_item(number_prep) -> None:
    spec = ContextSpec(UNRELATED, 3, 0)
    first = item_contexts(number_prep, spec)
    assert item_contexts(number_prep, spec) == first
    assert item_contexts(number_prep, ContextSpec(UNRELATED, 3, 1)) != first
    assert len(set(first.values())) > len(first) // 2  # items get different contexts
    # An item's context does not depend on which other items are in the suite.
    data = json.loads((HU2020 / "number_prep.json").read_text())
    fewer = copy.deepcopy(data)
    fewer["items"] = fewer["items"][:5]
    assert item_contexts(parse_suite(fewer), spec) == {n: first[n] for n in range(1, 6)}


def test_unrelated_sentences_come_from_the_shipped_text(number_prep) -> None:
    pool = unrelated_sentences()
    assert len(pool) > 500 and all(s.endswith(".") for s in pool)
    context = item_contexts(number_prep, ContextSpec(UNRELATED, 6, 0))[3]
    assert len(_sentences_of(context, pool)) == 6


def test_zero_sentences_or_none_add_nothing(number_prep) -> None:
    for spec in (ContextSpec(ACCEPTABLE, 0, 0), ContextSpec(NONE, 3, 0)):
        assert set(item_contexts(number_prep, spec).values()) == {""}


def test_draw_repeats_only_after_using_the_whole_pool() -> None:
    drawn = draw(list(range(5)), 12, random.Random(0))
    assert len(drawn) == 12
    assert sorted(drawn[:5]) == list(range(5)) and sorted(drawn[5:10]) == list(range(5))
    assert draw([], 3, random.Random(0)) == []


def test_join_context_ends_sentences_and_separates_them() -> None:
    assert join_context(["The cat slept", "Did it?", "It did."]) == \
        "The cat slept. Did it? It did. "
    assert join_context([]) == ""


def test_a_suite_whose_predictions_cannot_say_is_an_error_naming_it() -> None:
    data = json.loads((HU2020 / "number_prep.json").read_text())
    data["predictions"] = [{"type": "formula",
                            "formula": "(6;%match_sing%) = (6;%mismatch_sing%)"}]
    suite = parse_suite(data)
    with pytest.raises(ContextError, match=r"suite number_prep: its predictions \(\(6;%match_sing"
                                           r"%\) = \(6;%mismatch_sing%\)\) do not say which"):
        item_contexts(suite, ContextSpec(ACCEPTABLE, 3, 0))
    assert item_contexts(suite, ContextSpec(UNRELATED, 3, 0))  # unrelated text still works


def test_a_one_item_suite_has_no_other_item_to_take_sentences_from() -> None:
    data = json.loads((HU2020 / "number_prep.json").read_text())
    data["items"] = data["items"][:1]
    with pytest.raises(ContextError, match="has one item"):
        item_contexts(parse_suite(data), ContextSpec(UNACCEPTABLE, 3, 0))
