"""``syntaxgym-helm surprisal`` and :func:`word_surprisals`: word surprisals equal to plain
transformers on the embedded SmolLM2 (with and without the word-boundary correction, computed here
from the full softmax), long texts in windows that measure every word once, and bad input named
by file and line or flagged, with the rest of the output kept."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "clients"))
from syntaxgym_helm.api.surprisal import word_surprisals
from syntaxgym_helm.cli.main import main
from test_local_client import loaded  # noqa: F401 (the embedded SmolLM2, loaded once)

MODEL = "syntaxgym/smollm2-135m-instruct-q4_1"
BOS = "<|endoftext|>"
TEXT = "The keys to the cabinet are on the table. He left in 1990, didn't he?"


def _reference_words(model, tokenizer, words: list[str], end_of_text: bool = True
                     ) -> list[tuple[float, float]]:
    """(uncorrected, corrected) surprisal in bits of each word of ``" ".join(words)`` after the
    beginning-of-text token, from one plain forward pass and the full softmax (``end_of_text``:
    the end-of-sequence and the beginning-of-text token count as word boundaries)."""
    text = " ".join(words)
    encoding = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    ids = [tokenizer.convert_tokens_to_ids(BOS), *encoding["input_ids"]]
    vocabulary = model.get_output_embeddings().weight.shape[0]
    bow = torch.zeros(vocabulary, dtype=torch.bool)
    for token, index in tokenizer.get_vocab().items():
        if token.startswith("Ġ") and index < vocabulary:
            bow[index] = True
    if end_of_text:
        bow[tokenizer.eos_token_id] = True
        bow[ids[0]] = True
    with torch.inference_mode():
        logsoftmax = model(input_ids=torch.tensor([ids])).logits[0].float().log_softmax(-1)
    boundary = [torch.logsumexp(row[bow], -1).item() for row in logsoftmax]
    # Word k's tokens: those whose first non-space character lies in it.
    starts, position = [], 0
    for word in words:
        starts.append(position)
        position += len(word) + 1
    owner = []
    for start, end in encoding["offset_mapping"]:
        while start < end and text[start] == " ":
            start += 1
        owner.append(max(k for k, s in enumerate(starts) if s <= start))
    result = []
    for k in range(len(words)):
        positions = [j + 1 for j, o in enumerate(owner) if o == k]  # after the BOS
        total = sum(logsoftmax[p - 1, ids[p]].item() for p in positions)
        corrected = total + boundary[positions[-1]] - (boundary[positions[0] - 1] if k else 0.0)
        result.append((-total / math.log(2), -corrected / math.log(2)))
    return result


@pytest.mark.slow
def test_word_surprisals_equal_plain_transformers(loaded):
    model, tokenizer = loaded
    table = word_surprisals([TEXT], MODEL, device="cpu")
    words = TEXT.split()
    assert [r.word for r in table.rows] == words and not any(r.flag for r in table.rows)
    expected = _reference_words(model, tokenizer, words)
    for row, (plain, corrected) in zip(table.rows, expected, strict=False):
        assert row.surprisal_bits == pytest.approx(plain, abs=2e-3)
        assert row.surprisal_corrected_bits == pytest.approx(corrected, abs=2e-3)
    assert table.rows[2].previous_1_bits == table.rows[1].surprisal_corrected_bits
    assert table.rows[2].previous_2_bits == table.rows[0].surprisal_corrected_bits
    assert table.rows[0].previous_1_bits is None
    assert table.header["units"].startswith("bits") and BOS in table.header["first_word_context"]


@pytest.mark.slow
def test_minicons_rule_leaves_the_end_of_text_out_of_the_boundaries(loaded, tmp_path):
    """``boundary_end_of_text=False`` (the CLI's ``--no-end-of-text-boundary``) equals the
    correction with no end-of-text token among the boundary tokens; the two rules differ at a
    sentence's end, where the text may end, and not in the uncorrected column."""
    model, tokenizer = loaded
    words = TEXT.split()
    path = tmp_path / "text.txt"
    path.write_text(TEXT + "\n", encoding="utf-8")
    out = tmp_path / "out.tsv"
    assert main(["surprisal", str(path), "--model", MODEL, "--device", "cpu",
                 "--no-end-of-text-boundary", "-o", str(out)]) == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    assert any("not a word boundary (minicons' rule)" in line for line in lines
               if line.startswith("#"))
    rows = [line.split("\t") for line in lines if not line.startswith("#")][1:]
    assert [r[2] for r in rows] == words
    without = _reference_words(model, tokenizer, words, end_of_text=False)
    with_end = _reference_words(model, tokenizer, words)
    for row, (plain, corrected) in zip(rows, without, strict=True):
        assert float(row[4]) == pytest.approx(plain, abs=2e-3)
        assert float(row[5]) == pytest.approx(corrected, abs=2e-3)
    # "table." ends a sentence (the text may end after it): the rules differ there, by much more
    # than the tolerance, and the next word takes the opposite difference.
    end = words.index("table.")
    assert with_end[end][1] - without[end][1] < -0.01
    assert with_end[end + 1][1] - without[end + 1][1] > 0.01


@pytest.mark.slow
def test_a_long_text_in_windows_measures_every_word_once():
    words = (TEXT + " " + TEXT + " " + TEXT).split()
    full = word_surprisals([" ".join(words)], MODEL, device="cpu")
    windowed = word_surprisals([" ".join(words)], MODEL, window=24, stride=8, device="cpu")
    assert [r.word for r in windowed.rows] == words
    assert all(r.surprisal_bits is not None or r.flag == "too-long" for r in windowed.rows)
    assert sum(r.flag == "too-long" for r in windowed.rows) <= 3  # " 1990," is 6 tokens
    # The first window is the text's beginning: its words have the same context as in one pass.
    for a, b in zip(full.rows[:8], windowed.rows[:8], strict=False):
        assert a.surprisal_bits == pytest.approx(b.surprisal_bits, abs=1e-3)
    # Later words have less context than in one pass, and so other values.
    assert any(
        abs(a.surprisal_bits - b.surprisal_bits) > 1e-2
        for a, b in zip(full.rows[20:], windowed.rows[20:], strict=False)
        if b.surprisal_bits
    )
    assert "24 tokens" in windowed.header["window"] and "at least 16" in windowed.header["stride"]


@pytest.mark.slow
def test_bad_lines_are_flagged_and_the_rest_kept(tmp_path, capsys):
    path = tmp_path / "texts.txt"
    path.write_bytes("The cat sat.\n\n   \nA\u2028dog.\nIt ran away.\n".encode())
    out = tmp_path / "out.tsv"
    assert main(["surprisal", str(path), "--model", MODEL, "--device", "cpu",
                 "-o", str(out)]) == 0
    lines = [line.split("\t") for line in out.read_text().splitlines()
             if not line.startswith("#")]
    header, rows = lines[0], lines[1:]
    assert header[:3] == ["text_id", "word_index", "word"]
    flagged = {(r[0], r[8]) for r in rows if r[8]}
    assert flagged == {("2", "bad-text"), ("3", "bad-text"), ("4", "bad-text")}
    assert [r[2] for r in rows if r[0] in ("1", "5")] == ["The", "cat", "sat.", "It", "ran",
                                                          "away."]
    assert all(float(r[4]) > 0 and float(r[5]) > 0 for r in rows if r[0] in ("1", "5"))
    assert f"{path}:4: the text holds U+2028 LINE SEPARATOR" in next(r[9] for r in rows
                                                                       if r[0] == "4")


@pytest.mark.parametrize("content, message", [
    (b"text_id\tword_id\tword\n1\t1\tThe\n1\t1\tcat\n", "words.tsv:3: text_id 1 has word_id 1 "
                                                         "twice"),
    (b"text_id\tword_id\tword\n\t1\tThe\n", "words.tsv:2: the text_id is missing"),
    (b"text_id\tword\n1\tThe\n", "words.tsv:1: no column word_id"),
    (b"text_id\tword_id\tword\n1\t1\tThe\n1\t2\tca\xfft\n", "words.tsv:3: not UTF-8"),
])
def test_a_bad_tsv_stops_with_the_file_and_line(tmp_path, capsys, content, message):
    path = tmp_path / "words.tsv"
    path.write_bytes(content)
    assert main(["surprisal", str(path), "--tsv", "--model", MODEL]) == 1
    assert message in capsys.readouterr().err


def test_an_empty_file_has_nothing_to_score(tmp_path, capsys):
    path = tmp_path / "empty.txt"
    path.write_bytes(b"")
    assert main(["surprisal", str(path), "--model", MODEL]) == 1
    assert "no text to score" in capsys.readouterr().err
