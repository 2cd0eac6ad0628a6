"""Word surprisal reads the text written, in every form a file comes in, and keeps the corpus's
own positions.

Before: a UTF-8 file with a byte-order mark (Notepad, Excel) had the mark scored as part of its
first word ("The" 28.34 bits instead of 7.38, the rest of the text shifted), with no flag; a UTF-16
file (Windows PowerShell's ``>``) had line 1 flagged and every other line scored as words full of
NUL characters, exit status 0; a file with ``\\r``-only line endings, or with U+2028 separators,
was one text; ``<|endoftext|>`` inside a text was a document break, unflagged; with ``--tsv
--index-column zone`` the output's ``word_index`` restarted from 0 and gaps in the zones were
joined silently, so joining the output back to the corpus by zone shifted every word.
"""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from fault_helpers import syntaxgym_helm
from syntaxgym_helm.core.word_texts import WordInputError, read_plain_texts, read_words_tsv

TEXTS = "The keys are on the table.\nThe café is near.\n"
MODEL = "syntaxgym/smollm2-135m-instruct-q4_1"

# Commands run in this process: the first to import torch takes seconds, more on a busy machine.
pytestmark = pytest.mark.limit(300)


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-16-be", "utf-32"])
def test_a_byte_order_mark_is_decoded_and_is_no_part_of_a_word(tmp_path: Path,
                                                               encoding: str) -> None:
    def encoded(text: str) -> bytes:  # Python's utf-16-be writes no mark: add it
        return (codecs.BOM_UTF16_BE if encoding == "utf-16-be" else b"") + text.encode(encoding)

    path = tmp_path / "texts.txt"
    path.write_bytes(encoded(TEXTS))
    texts = read_plain_texts(path)
    assert [t.words for t in texts] == [("The", "keys", "are", "on", "the", "table."),
                                        ("The", "café", "is", "near.")]
    assert not any(t.problem for t in texts)
    tsv = tmp_path / "words.tsv"
    tsv.write_bytes(encoded("text_id\tword_id\tword\n1\t1\tThe\n"))
    (text,) = read_words_tsv(tsv)  # the header's first column is text_id, not "\ufefftext_id"
    assert text.words == ("The",)


@pytest.mark.parametrize(("data", "message"), [
    ("The cat.\nIt ran.\n".encode("utf-16-le"),
     r"texts.txt:1: a NUL character \(U\+0000\), which no text holds: the file looks like "
     r"UTF-16 without a byte-order mark; save it as UTF-8"),
    (b"The cat.\nIt ran.\nA caf\xe9 here.\n",
     r"texts.txt:3: not UTF-8 \(byte 23 of the file, e9\): save the file as UTF-8"),
    (codecs.BOM_UTF16_LE + "The cat.\n".encode("utf-16-le") + b"\x00",
     r"texts.txt:2: not UTF-16-LE \(as its byte-order mark says\)"),
])
def test_an_encoding_it_cannot_read_is_refused_naming_the_file_and_line(
        tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "texts.txt"
    path.write_bytes(data)
    with pytest.raises(WordInputError, match=message):
        read_plain_texts(path)
    done = syntaxgym_helm("surprisal", str(path), "--model", MODEL)
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "texts.txt:" in done.stderr


def test_carriage_returns_end_lines_and_other_separators_are_named(tmp_path: Path) -> None:
    path = tmp_path / "texts.txt"
    path.write_text("The cat sat.\rIt ran.\r\nA dog\u2028barked.\nNo\u00a0break here.\n"
                    "A\u2029B\n", encoding="utf-8", newline="")
    texts = read_plain_texts(path)
    assert [t.text_id for t in texts] == ["1", "2", "3", "4", "5"]
    assert texts[0].words == ("The", "cat", "sat.") and texts[1].words == ("It", "ran.")
    assert texts[2].problem.startswith("the text holds U+2028 LINE SEPARATOR (character 6), a "
                                       "separator texts are not split on")
    assert texts[4].problem.startswith("the text holds U+2029 PARAGRAPH SEPARATOR")
    # A no-break space is text, as in a suite's regions: the word is scored as written.
    assert texts[3].words == ("No\u00a0break", "here.") and not texts[3].problem
    tsv = tmp_path / "words.tsv"
    tsv.write_text("text_id\tword_id\tword\r1\t1\tThe\r1\t2\tca\u2028t\r", encoding="utf-8",
                   newline="")
    (text,) = read_words_tsv(tsv)
    assert text.words == ("The", "ca\u2028t")
    assert text.word_problems[1].endswith("the word holds U+2028 LINE SEPARATOR, a separator "
                                          "of lines or records")


def test_a_tsv_keeps_its_own_index_and_names_its_gaps(tmp_path: Path) -> None:
    from syntaxgym_helm.api.surprisal_scoring import WordMeasure, word_rows

    path = tmp_path / "stories.tsv"
    path.write_text("item\tzone\tword\n1\t3\tThe\n1\t4\tcat\n1\t7\tsat.\n2\t1\tIt\n",
                    encoding="utf-8")
    texts = read_words_tsv(path, text_column="item", index_column="zone")
    assert texts[0].indices == (3, 4, 7) and texts[0].index_gaps() == [(4, 7)]
    rows = word_rows(texts, [[WordMeasure(w) for w in t.words] for t in texts])
    assert [(r.text_id, r.word_index, r.word) for r in rows] == [
        ("1", 3, "The"), ("1", 4, "cat"), ("1", 7, "sat."), ("2", 1, "It")]


@pytest.mark.slow
@pytest.mark.limit(900)
def test_what_is_scored_is_what_was_written_with_a_real_model(tmp_path: Path) -> None:
    """SmolLM2: a file with a byte-order mark scores as the same file without it; a special
    token's string in a text is flagged from its word on (the words before it are measured as
    without it); a TSV's zones come back as given, gaps included."""
    plain, marked = tmp_path / "plain.txt", tmp_path / "marked.txt"
    text = "The keys are on the table. He left<|endoftext|>Then she came in.\n"
    plain.write_text(text, encoding="utf-8")
    marked.write_bytes(text.encode("utf-16"))
    outputs = []
    for path in (plain, marked):
        out = tmp_path / f"{path.stem}.tsv"
        done = syntaxgym_helm("surprisal", str(path), "--model", MODEL, "--device", "cpu",
                              "-o", str(out))
        assert done.returncode == 0, done.stderr[-2000:]
        outputs.append([line.split("\t") for line in out.read_text(encoding="utf-8")
                        .splitlines() if not line.startswith("#")][1:])
    assert outputs[0] == outputs[1]
    rows = outputs[0]
    assert rows[0][2] == "The" and 5 < float(rows[0][4]) < 12  # 28.34 with the mark scored
    flags = [(r[2], r[8]) for r in rows]
    assert flags[:6] == [(w, "") for w in ("The", "keys", "are", "on", "the", "table.")]
    assert [f for _, f in flags[7:]] == ["special-token"] * 4
    assert "the text holds '<|endoftext|>' (in word 7, 'left<|endoftext|>Then')" in rows[7][9]
    tsv = tmp_path / "zones.tsv"
    tsv.write_text("word\tzone\titem\nThe\t10\t1\nkeys\t11\t1\nare\t13\t1\n", encoding="utf-8")
    out = tmp_path / "zones_out.tsv"
    done = syntaxgym_helm("surprisal", str(tsv), "--tsv", "--text-column", "item",
                          "--index-column", "zone", "--model", MODEL, "--device", "cpu",
                          "-o", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "warning: 1 text(s) skip zone values" in done.stderr and "zone 11 to 13" in done.stderr
    zones = [line.split("\t")[1] for line in out.read_text().splitlines()
             if not line.startswith("#")][1:]
    assert zones == ["10", "11", "13"]


@pytest.mark.parametrize("option", ["--window", "--stride"])
def test_a_window_or_stride_of_no_tokens_is_refused_not_taken_for_the_default(
        tmp_path: Path, option: str) -> None:
    """Before: ``--window 0`` (or ``--stride 0``) silently scored with the default window."""
    path = tmp_path / "texts.txt"
    path.write_text("The cat sat.\n")
    for value in ("0", "-4"):
        done = syntaxgym_helm("surprisal", str(path), "--model", MODEL, option, value)
        assert done.returncode == 1, done.stderr
        assert f"{option[2:]}={value}: a number of tokens, 1 or more" in done.stderr
