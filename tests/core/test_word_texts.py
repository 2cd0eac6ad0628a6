"""Texts as words for word surprisal: reading plain texts and segmented TSVs (bad input named by
file and line, or flagged), finding words' tokens, and windows that measure every word once."""

from __future__ import annotations

import random

import pytest

from syntaxgym_helm.core.word_texts import (
    WordInputError,
    plan_windows,
    read_plain_texts,
    read_words_tsv,
    word_tokens,
)


def test_plain_texts_flag_empty_and_blank_lines_and_keep_the_rest(tmp_path):
    path = tmp_path / "texts.txt"
    path.write_bytes(b"The cat sat.\n\n   \nA dog.\nIt ran away.\n")
    texts = read_plain_texts(path)
    assert [t.text_id for t in texts] == ["1", "2", "3", "4", "5"]
    assert texts[0].words == ("The", "cat", "sat.") and not texts[0].problem
    assert texts[1].problem == "the text is empty" and texts[1].source == f"{path}:2"
    assert texts[2].problem == "the text is only whitespace"
    assert texts[4].words == ("It", "ran", "away.")


def test_a_plain_file_that_is_not_utf8_is_refused_naming_the_line(tmp_path):
    path = tmp_path / "texts.txt"
    path.write_bytes(b"The cat sat.\n\n   \nA \xff dog.\nIt ran away.\n")
    with pytest.raises(WordInputError, match=r"texts.txt:4: not UTF-8 \(byte 21 of the file, ff\)"):
        read_plain_texts(path)


def _tsv(tmp_path, rows: list[str]):
    path = tmp_path / "words.tsv"
    path.write_text("\n".join(["item\tzone\tword\textra", *rows]) + "\n", encoding="utf-8")
    return path


def test_a_tsv_keeps_its_segmentation_in_index_order(tmp_path):
    path = _tsv(tmp_path, ["1\t2\tcat\tx", "1\t1\tThe\tx", "2\t1\tDogs\tx", "1\t3\tsat.\tx"])
    texts = read_words_tsv(path, text_column="item", index_column="zone")
    assert [(t.text_id, t.words) for t in texts] == [("1", ("The", "cat", "sat.")),
                                                     ("2", ("Dogs",))]
    assert texts[0].text == "The cat sat."


@pytest.mark.parametrize("rows, message", [
    (["1\t1\tThe\tx", "1\t1\tcat\tx"], r"words.tsv:3: item 1 has zone 1 twice \(also line 2\)"),
    (["1\t1\tThe\tx", "\t2\tcat\tx"], r"words.tsv:3: the item is missing"),
    (["1\tfirst\tThe\tx"], r"words.tsv:2: the zone 'first' is not an integer"),
    (["1\t1"], r"words.tsv:2: 2 columns, the header has 4"),
])
def test_a_bad_tsv_is_refused_naming_the_file_and_line(tmp_path, rows, message):
    with pytest.raises(WordInputError, match=message):
        read_words_tsv(_tsv(tmp_path, rows), text_column="item", index_column="zone")


def test_a_tsv_without_the_columns_names_them(tmp_path):
    with pytest.raises(WordInputError, match=r"words.tsv:1: no column text_id, word_id"):
        read_words_tsv(_tsv(tmp_path, ["1\t1\tThe\tx"]))


def test_empty_words_and_words_with_spaces_inside_are_flagged_and_the_others_kept(tmp_path):
    path = _tsv(tmp_path, ["1\t1\tThe\tx", "1\t2\t \tx", "1\t3\tcat\tx"])
    (text,) = read_words_tsv(path, text_column="item", index_column="zone")
    assert text.words == ("The", " ", "cat") and text.text == "The cat"
    assert set(text.word_problems) == {1} and "words.tsv:3" in text.word_problems[1]


def test_word_tokens_give_leading_spaces_and_character_pieces_to_the_word_after():
    words = ["The", "café", "1990,"]
    tokens = ["The", " caf", "", "é", " ", "1", "9", "9", "0", ","]
    assert word_tokens(words, tokens) == [([0], ""), ([1, 2, 3], ""),
                                          ([4, 5, 6, 7, 8, 9], "")]


def test_a_token_across_two_words_makes_both_unmeasurable():
    (first, problem_1), (second, problem_2) = word_tokens(["ab", "cd"], ["ab c", "d"])
    assert first == [0] and second == [0, 1]
    assert problem_1.startswith("a token covers parts") and problem_1 == problem_2


@pytest.mark.parametrize("seed", range(30))
def test_windows_measure_every_word_once_with_at_least_the_stated_context(seed):
    rng = random.Random(seed)
    spans, position = [], 0
    for _ in range(rng.randint(1, 80)):
        length = rng.randint(1, 4)
        spans.append((position, position + length - 1))
        position += length
    window = rng.randint(6, 30)
    stride = rng.randint(1, window // 2)
    windows, too_long = plan_windows(spans, position, window, stride)
    measured = [w for part in windows for w in part.words]
    assert sorted(measured + too_long) == list(range(len(spans)))
    assert len(set(measured)) == len(measured)
    for part in windows:
        assert 0 <= part.start < part.end <= position and part.end - part.start <= window
        for w in part.words:
            first, last = spans[w]
            assert part.start <= first and last < part.end
            assert first - part.start >= min(first, window - stride)  # context
    for w in too_long:
        assert spans[w][1] - spans[w][0] + 1 > stride


def test_a_text_that_fits_is_one_window():
    windows, too_long = plan_windows([(0, 0), (1, 2)], 3, 10, 5)
    assert [(w.start, w.end, w.words) for w in windows] == [(0, 3, (0, 1))] and too_long == []
