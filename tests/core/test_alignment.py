"""Tests of token-to-region alignment.

Three parts: the reference fixtures of syntaxgym-core (real GRNN and Transformer-XL tokens and
surprisals, checked region by region against the reference output); synthetic token lists in each
form real tokenizers and servers produce; and failures, which must raise AlignmentError with a
message that says which token, where, and what the text there is.
"""

from __future__ import annotations

import csv
import json
import time
from dataclasses import dataclass
from typing import Any

import pytest

from fixtures import SYNTAXGYM_CORE_DIR as CORE
from syntaxgym_helm.core.alignment import (
    Alignment,
    AlignmentError,
    RegionSpan,
    align,
    align_tokens,
    region_spans,
    sentence_text,
)
from syntaxgym_helm.core.alignment.text import SentenceBytes
from syntaxgym_helm.core.item_evaluation import ConditionValues
from syntaxgym_helm.core.region_stats import METRICS, region_statistic

SUITES = ("test", "test-unk")
MODELS = ("grnn", "transformer-xl")
TOLERANCE = 1e-6


def tokens_of(result: Alignment, region: int | None) -> list[int]:
    """Indices of the tokens that count for ``region`` (``None``: for no region)."""
    return [i for i, owner in enumerate(result.region_of_token) if owner == region]

# ------------------------------------------------------------------------------------------------
# Reference fixtures
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FixtureSentence:
    regions: list[tuple[int, str]]
    tokens: list[str]
    surprisals: list[float]
    reference: dict[int, dict[str, float]]  # region number -> metric -> value


def _conditions(suite: dict[str, Any]) -> list[dict[str, Any]]:
    """Conditions in sentence order: item by item, condition by condition."""
    return [cond for item in suite["items"] for cond in item["conditions"]]


def load_fixture(suite: str, model: str) -> list[FixtureSentence]:
    suite_in = json.loads((CORE / f"{suite}_in.json").read_text())
    suite_out = json.loads((CORE / f"{suite}_out_{model}.json").read_text())
    rows: dict[int, list[tuple[str, float]]] = {}
    with (CORE / f"{suite}_surp_{model}.txt").open(newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            rows.setdefault(int(row["sentence_id"]), []).append(
                (row["token"], float(row["surprisal"]))
            )
    sentences = []
    for number, (cond_in, cond_out) in enumerate(
        zip(_conditions(suite_in), _conditions(suite_out), strict=False), 1
    ):
        tokens, surprisals = zip(*rows[number], strict=False)
        sentences.append(
            FixtureSentence(
                regions=[(r["region_number"], r["content"]) for r in cond_in["regions"]],
                tokens=list(tokens),
                surprisals=list(surprisals),
                reference={r["region_number"]: r["metric_value"] for r in cond_out["regions"]},
            )
        )
    assert len(sentences) == len(rows)
    return sentences


@pytest.mark.parametrize("suite", SUITES)
def test_sentence_text_matches_reference_sentences(suite: str) -> None:
    suite_in = json.loads((CORE / f"{suite}_in.json").read_text())
    expected = (CORE / f"{suite}_sentences.txt").read_text().splitlines()
    built = [sentence_text([(r["region_number"], r["content"]) for r in c["regions"]])
             for c in _conditions(suite_in)]
    assert built == expected


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("suite", SUITES)
def test_fixture_regions_match_reference(suite: str, model: str) -> None:
    """Every region and metric equals the reference output, up to its one known difference.

    The reference (syntaxgym-core, Sentence.tokenize_regions) appends end-of-sentence tokens
    (<eos>) to the last region; we exclude them (they are not part of any region's text). So:
    every sum matches directly (the fixtures' <eos> surprisal is 0), every metric of every other
    region matches directly, and the last region's reference values are exactly our tokens' values
    with the <eos> surprisal appended.
    """
    for index, sentence in enumerate(load_fixture(suite, model), 1):
        result = align(sentence.regions, sentence.tokens)
        excluded = [sentence.tokens[i] for i in tokens_of(result, None)]
        assert excluded == ["<eos>"], (index, excluded)
        eos = [sentence.surprisals[i] for i in tokens_of(result, None)]
        # Grouped by region as the metric groups them (item_evaluation.ConditionValues).
        scored = ConditionValues(f"sentence {index}", tuple(sentence.tokens),
                                 result.region_of_token, tuple(sentence.surprisals))
        last = sentence.regions[-1][0]
        for number, reference in sentence.reference.items():
            assert set(reference) == set(METRICS)
            assert scored.value("sum", number) == pytest.approx(reference["sum"], abs=TOLERANCE)
            ours = scored.region_surprisals(number)
            as_reference = ours + eos if number == last else ours
            for metric in METRICS:
                got = region_statistic(metric, as_reference)
                assert got == pytest.approx(reference[metric], abs=TOLERANCE), (
                    index,
                    number,
                    metric,
                )


def test_fixture_last_region_differs_from_reference_only_by_eos() -> None:
    """The documented discrepancy, in numbers: GRNN, sentence 1, region 6 "at the holiday
    party."."""
    sentence = load_fixture("test", "grnn")[0]
    result = align(sentence.regions, sentence.tokens)
    region6 = tokens_of(result, 6)
    assert [sentence.tokens[i] for i in region6] == ["at", "the", "holiday", "party", "."]
    ours = [sentence.surprisals[i] for i in region6]
    reference = sentence.reference[6]
    assert region_statistic("sum", ours) == pytest.approx(reference["sum"], abs=TOLERANCE)
    assert region_statistic("mean", ours) == pytest.approx(26.949431 / 5, abs=TOLERANCE)
    assert reference["mean"] == pytest.approx(26.949431 / 6, abs=TOLERANCE)  # <eos> counted
    assert reference["min"] == 0.0 and region_statistic("min", ours) == pytest.approx(1.212152)


@pytest.mark.parametrize(
    ("model", "token"), [("grnn", "<unk>"), ("transformer-xl", "WEIRDSCARYWORD")]
)
def test_fixture_unknown_word_goes_to_its_region(model: str, token: str) -> None:
    sentence = load_fixture("test-unk", model)[1]  # "... at the WEIRDSCARYWORD party."
    result = align(sentence.regions, sentence.tokens)
    index = sentence.tokens.index(token)
    assert result.region_of_token[index] == 6
    assert sentence.tokens[index + 1].startswith("party")
    assert result.region_of_token[index + 1] == 6


def test_fixture_punctuation_split_and_glued() -> None:
    grnn = load_fixture("test", "grnn")[2]  # "... the neighbors yesterday." with "yesterday", "."
    assert [grnn.tokens[i] for i in tokens_of(align(grnn.regions, grnn.tokens), 6)] == [
        "yesterday", ".",
    ]
    txl = load_fixture("test", "transformer-xl")[2]  # "yesterday." as one token
    assert [txl.tokens[i] for i in tokens_of(align(txl.regions, txl.tokens), 6)] == ["yesterday."]


# ------------------------------------------------------------------------------------------------
# Sentence text and spans
# ------------------------------------------------------------------------------------------------

REGIONS = [(1, "I know that"), (2, "our aunt"), (3, "grabbed"), (4, "at the holiday party.")]
WORDS = ["I", "know", "that", "our", "aunt", "grabbed", "at", "the", "holiday", "party."]
WORD_REGIONS = [1, 1, 1, 2, 2, 3, 4, 4, 4, 4]


def test_sentence_text_skips_empty_regions() -> None:
    regions = [(1, ""), (2, "the dog"), (3, ""), (4, "barked")]
    assert sentence_text(regions) == "the dog barked"


def test_region_spans_place_every_region() -> None:
    regions = [(1, ""), (2, "the dog"), (3, ""), (4, "barked"), (5, "")]
    text = sentence_text(regions)
    spans = region_spans(regions)
    assert spans == (
        RegionSpan(1, 0, 0),
        RegionSpan(2, 0, 7),
        RegionSpan(3, 7, 7),
        RegionSpan(4, 8, 14),
        RegionSpan(5, 14, 14),
    )
    assert [text[s.start : s.end] for s in spans] == ["", "the dog", "", "barked", ""]
    assert [s.is_empty for s in spans] == [True, False, True, False, True]


def test_regions_may_be_objects_with_number_and_content() -> None:
    @dataclass(frozen=True)
    class Region:
        region_number: int
        content: str

    regions = [Region(1, "the dog"), Region(2, "barked")]
    assert sentence_text(regions) == "the dog barked"
    assert align_tokens(regions, ["the", " dog", " barked"]) == [1, 1, 2]


def test_repeated_region_numbers_are_rejected() -> None:
    with pytest.raises(ValueError, match="repeat"):
        sentence_text([(1, "a"), (1, "b")])


# ------------------------------------------------------------------------------------------------
# Token forms
# ------------------------------------------------------------------------------------------------


def gpt2_bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte-level vocabulary alphabet (the published bytes_to_unicode algorithm)."""
    bs = [
        *range(ord("!"), ord("~") + 1),
        *range(ord("¡"), ord("¬") + 1),
        *range(ord("®"), ord("ÿ") + 1),
    ]
    cs = list(bs)
    extra = 0
    for byte in range(256):
        if byte not in bs:
            bs.append(byte)
            cs.append(256 + extra)
            extra += 1
    return {byte: chr(char) for byte, char in zip(bs, cs, strict=False)}


BYTE_TO_CHAR = gpt2_bytes_to_unicode()


def byte_level(chunks: list[bytes]) -> list[str]:
    """Token texts in raw byte-level vocabulary form, for tokens holding these bytes."""
    return ["".join(BYTE_TO_CHAR[b] for b in chunk) for chunk in chunks]


def decoded_alone(chunks: list[bytes]) -> list[str]:
    """Token texts as HELM's HuggingFaceClient gives them: each token's bytes decoded alone."""
    return [chunk.decode("utf-8", errors="replace") for chunk in chunks]


def test_word_level_tokens_without_spaces() -> None:
    tokens = [
        "I",
        "know",
        "that",
        "our",
        "aunt",
        "grabbed",
        "at",
        "the",
        "holiday",
        "party",
        ".",
        "<eos>",
    ]
    assert align_tokens(REGIONS, tokens) == [1, 1, 1, 2, 2, 3, 4, 4, 4, 4, 4, None]


def test_exact_substrings_with_endoftext_prefix() -> None:
    prefix = "<|endoftext|>"
    tokens = [prefix, "I", " know", " that", " our", " aunt", " grabbed",
              " at", " the", " holiday", " party", "."]
    result = align(REGIONS, tokens, prefix=prefix)
    assert result.region_of_token == (None, 1, 1, 1, 2, 2, 3, 4, 4, 4, 4, 4)
    assert "".join(tokens) == prefix + sentence_text(REGIONS)
    assert tokens_of(result, None) == [0]
    assert not result.case_insensitive


def test_prefix_text_tokens_are_excluded() -> None:
    prefix = "Sentence:\n"
    tokens = ["Sent", "ence", ":", "\n", "I", " know", " that", " our", " aunt", " grabbed",
              " at", " the", " holiday", " party."]
    assert align_tokens(REGIONS, tokens, prefix=prefix) == [None] * 4 + WORD_REGIONS


def test_gpt2_byte_level_vocabulary_form() -> None:
    chunks = [b"I", b" know", b" that", b" our", b" aunt", b" grabbed",
              b" at", b" the", b" holiday", b" party", b".", b"\n"]
    tokens = byte_level(chunks)
    assert tokens[1] == "Ġknow" and tokens[-1] == "Ċ"
    # The trailing newline is not in the text: a whitespace token with nothing after it.
    assert align_tokens(REGIONS, tokens) == [1, 1, 1, 2, 2, 3, 4, 4, 4, 4, 4, None]


def test_gpt2_byte_level_splits_multibyte_characters_exactly() -> None:
    regions = [(1, "a naïve"), (2, "日本 idea")]
    chunks = [b"a", b" na", b"\xc3", b"\xafve", b" \xe6\x97", b"\xa5\xe6", b"\x9c\xac", b" idea"]
    assert b"".join(chunks).decode() == sentence_text(regions)
    tokens = byte_level(chunks)
    assert tokens[3] == "¯ve" and tokens[4] == "ĠæĹ"
    assert align_tokens(regions, tokens) == [1, 1, 1, 1, 2, 2, 2, 2]


def test_openai_style_escaped_byte_tokens() -> None:
    regions = [(1, "a"), (2, "日本")]
    tokens = ["a", r"bytes: \xe6\x97", r"bytes:\xa5", "本"]
    assert align_tokens(regions, tokens) == [1, 2, 2, 2]


def test_lossy_decoded_tokens_for_naive() -> None:
    regions = [(1, "a naïve"), (2, "idea")]
    chunks = [b"a", b" na", b"\xc3", b"\xafve", b" idea"]
    tokens = decoded_alone(chunks)
    assert tokens[2] == "\ufffd" and tokens[3] == "\ufffdve"
    assert align_tokens(regions, tokens) == [1, 1, 1, 1, 2]


def test_lossy_decoded_tokens_for_japanese() -> None:
    regions = [(1, "in"), (2, "日本"), (3, "today")]
    chunks = [b"in", b" \xe6\x97", b"\xa5\xe6", b"\x9c", b"\xac", b" today"]
    tokens = decoded_alone(chunks)
    assert tokens[1:5] == [" \ufffd", "\ufffd\ufffd", "\ufffd", "\ufffd"]
    assert align_tokens(regions, tokens) == [1, 2, 2, 2, 2, 3]


def test_lossy_run_mixed_with_whole_characters() -> None:
    regions = [(1, "日本語"), (2, "です")]
    # 日 whole, 本 split, 語 whole: decoding shows the whole ones and a U+FFFD for each part.
    chunks = [b"\xe6\x97\xa5\xe6", b"\x9c\xac\xe8\xaa\x9e", b" \xe3\x81\xa7\xe3\x81\x99"]
    tokens = decoded_alone(chunks)
    assert tokens[:2] == ["日\ufffd", "\ufffd\ufffd語"]
    assert align_tokens(regions, tokens) == [1, 1, 2]


def test_sentencepiece_raw_pieces_with_bos_and_byte_fallback() -> None:
    regions = [(1, "The dog"), (2, "saw 日本"), (3, "today.")]
    tokens = [
        "<s>",
        "▁The",
        "▁dog",
        "▁saw",
        "▁",
        "<0xE6>",
        "<0x97>",
        "<0xA5>",
        "本",
        "▁today",
        ".",
        "</s>",
    ]
    assert align_tokens(regions, tokens) == [None, 1, 1, 2, 2, 2, 2, 2, 2, 3, 3, None]


def test_sentencepiece_bare_space_before_a_region_counts_for_that_region() -> None:
    # Llama splits digits and puts the space in a piece of its own; GPT-2 would have " 1990".
    regions = [(1, "born in"), (2, "1990 ,"), (3, "she")]
    tokens = ["<s>", "▁born", "▁in", "▁", "1", "9", "9", "0", "▁,", "▁she"]
    assert align_tokens(regions, tokens) == [None, 1, 1, 2, 2, 2, 2, 2, 2, 3]


def test_helm_decoded_sentencepiece_pieces_lose_their_spaces() -> None:
    # decode() of one SentencePiece id drops the leading space; a bare "▁" decodes to "".
    regions = [(1, "born in"), (2, "1990")]
    tokens = ["<s>", "born", "in", "", "1", "9", "9", "0"]
    assert align_tokens(regions, tokens) == [None, 1, 1, 2, 2, 2, 2, 2]


def test_unknown_word_tokens_are_wildcards() -> None:
    regions = [(1, "the"), (2, "WEIRDSCARYWORD party."), (3, "ends")]
    for unk in ("<unk>", "<UNK>", "[UNK]", "▁<unk>"):
        tokens = ["the", unk, "party", ".", "ends", "<eos>"]
        assert align_tokens(regions, tokens) == [1, 2, 2, 2, 3, None], unk


def test_unknown_word_at_the_end_of_a_region_and_the_sentence() -> None:
    regions = [(1, "the"), (2, "zyzzyva"), (3, "naïveté")]
    assert align_tokens(regions, ["the", "<unk>", "<unk>", "</s>"]) == [1, 2, 3, None]


def test_consecutive_unknown_tokens_in_one_word_stay_in_its_region() -> None:
    regions = [(1, "ab"), (2, "xyz w")]
    assert align_tokens(regions, ["ab", "<unk>", "<unk>", "w"]) == [1, 2, 2, 2]


def test_unknown_words_on_both_sides_of_a_boundary_count_for_their_own_regions() -> None:
    """syntaxgym-core gives a run of OOV tokens to the leftmost region it touches; one <unk> here
    stands for one word at most, so each counts for the region its word is in."""
    regions = [(1, "a foo"), (2, "bar c")]
    assert align_tokens(regions, ["a", "<unk>", "<unk>", "c"]) == [1, 1, 2, 2]


def test_token_straddling_a_region_boundary_counts_for_the_first() -> None:
    regions = [(1, "in front"), (2, "of the guests")]
    tokens = ["▁in", "▁front▁of", "▁the", "▁guests"]
    assert align_tokens(regions, tokens) == [1, 1, 2, 2]
    assert align_tokens(regions, ["in", " front of", " the guests"]) == [1, 1, 2]


def test_token_after_an_empty_region_counts_for_the_next_non_empty_one() -> None:
    regions = [(1, "I"), (2, ""), (3, "know"), (4, "")]
    result = align(regions, ["I", " know"])
    assert result.region_of_token == (1, 3)
    assert tokens_of(result, 2) == [] and tokens_of(result, 4) == []
    assert align_tokens(regions, ["I know"]) == [1]


def test_all_regions_empty() -> None:
    assert align_tokens([(1, ""), (2, "")], ["<s>", "</s>"]) == [None, None]
    assert align_tokens([(1, "")], []) == []


def test_special_token_text_that_is_in_the_sentence_is_counted() -> None:
    regions = [(1, "type"), (2, "<eos> here")]
    assert align_tokens(regions, ["type", " <eos>", " here", "<eos>"]) == [1, 2, 2, None]


def test_bracket_and_pipe_special_tokens_are_excluded() -> None:
    regions = [(1, "the dog")]
    tokens = ["[CLS]", "<|begin_of_text|>", "<pad>", "the", "dog", "[SEP]", "<|eot_id|>"]
    assert align_tokens(regions, tokens) == [None, None, None, 1, 1, None, None]


def test_wordpiece_and_end_of_word_markers() -> None:
    regions = [(1, "the walking"), (2, "dog")]
    assert align_tokens(regions, ["the", "walk", "##ing", "dog"]) == [1, 1, 1, 2]
    assert align_tokens(regions, ["the</w>", "walking</w>", "dog</w>"]) == [1, 1, 2]


def test_case_insensitive_fallback_for_lowercasing_models() -> None:
    tokens = [word.lower() for word in WORDS]
    result = align(REGIONS, tokens)
    assert result.case_insensitive
    assert list(result.region_of_token) == WORD_REGIONS
    assert not align(REGIONS, WORDS).case_insensitive


def test_alignment_result_names_every_region_even_an_empty_one() -> None:
    result = align(REGIONS + [(5, "")], WORDS + ["<eos>"])
    assert isinstance(result, Alignment)
    assert result.region_numbers == (1, 2, 3, 4, 5)
    assert result.region_of_token == (1, 1, 1, 2, 2, 3, 4, 4, 4, 4, None)
    scored = ConditionValues("c", tuple(WORDS + ["<eos>"]), result.region_of_token,
                             tuple(float(i) for i in range(11)))
    assert [scored.region_surprisals(n) for n in result.region_numbers] == [
        [0.0, 1.0, 2.0], [3.0, 4.0], [5.0], [6.0, 7.0, 8.0, 9.0], []]
    assert scored.region_surprisals(None) == [float(i) for i in range(10)]  # not <eos>


def test_long_prompt_prefix_is_fast_and_not_recursive() -> None:
    words = [f"w{i}" for i in range(5000)]
    prefix = " ".join(words) + "\n"
    tokens = [
        words[0],
        *(" " + w for w in words[1:]),
        "\n",
        WORDS[0],
        *(" " + w for w in WORDS[1:]),
    ]
    start = time.perf_counter()
    owners = align_tokens(REGIONS, tokens, prefix=prefix)
    assert time.perf_counter() - start < 5.0
    assert owners == [None] * 5001 + WORD_REGIONS


# ------------------------------------------------------------------------------------------------
# Failures
# ------------------------------------------------------------------------------------------------


def failure(regions: list[tuple[int, str]], tokens: list[str], prefix: str = "") -> str:
    with pytest.raises(AlignmentError) as info:
        align(regions, tokens, prefix=prefix)
    message = str(info.value)
    assert "\u2038" in message  # the text around the place, with a mark at the place
    return message


def test_fails_on_a_word_that_is_not_there() -> None:
    message = failure(REGIONS, ["I", "know", "what", "our"])
    assert "token 2 'what'" in message
    assert "character 7 of the sentence" in message
    assert "I know \u2038that our aunt" in message


def test_fails_when_tokens_run_past_the_end() -> None:
    message = failure(REGIONS, WORDS + ["again"])
    assert "token 10 'again'" in message and "run past the end" in message


def test_fails_when_tokens_do_not_cover_the_sentence() -> None:
    message = failure(REGIONS, WORDS[:-1])
    assert "do not cover the whole text" in message
    assert "character 44 of the sentence" in message
    assert "\u2038party." in message and "'holiday'" in message


def test_fails_with_no_tokens() -> None:
    message = failure(REGIONS, [])
    assert "the 0 tokens" in message and "character 0 of the sentence" in message


def test_fails_on_tokens_out_of_order() -> None:
    message = failure(REGIONS, ["I", "that", "know"])
    assert "token 1 'that'" in message and "character 2" in message


def test_fails_when_an_unknown_word_cannot_be_resolved() -> None:
    # <unk> can stand for "know" only; then "that" does not match "what".
    message = failure([(1, "I know what that")], ["I", "<unk>", "that"])
    assert "token 2 'that'" in message and "previous token is 1 '<unk>'" in message


def test_fails_when_unknown_tokens_outnumber_the_characters() -> None:
    message = failure([(1, "a")], ["<unk>", "<unk>"])
    assert "token 1 '<unk>'" in message and "run past the end" in message
    assert "character 1 of the sentence" in message


def test_fails_on_a_lossy_token_over_ascii_text() -> None:
    message = failure(REGIONS, ["I", " \ufffd", " that"])
    assert "token 1 ' \\ufffd'" in message or "token 1 ' \ufffd'" in message
    assert "wildcard" in message


def test_fails_on_a_token_running_from_prefix_into_sentence() -> None:
    message = failure([(1, "I know")], ["Q", ":I", " know"], prefix="Q:")
    assert "token 1 ':I'" in message and "runs from the prefix into the sentence" in message
    assert "character 0 of the sentence" in message


def test_fails_on_a_byte_level_token_for_another_character() -> None:
    message = failure([(1, "caf\u00e8")], byte_level([b"caf", "\u00e9".encode()]))
    assert "token 1 'Ã©'" in message and "character 3 of the sentence" in message


def test_fails_on_a_wordpiece_continuation_after_a_space() -> None:
    message = failure([(1, "I know")], ["I", "##know"])
    assert "token 1 '##know'" in message


def test_fails_on_a_partial_character_followed_by_ascii() -> None:
    message = failure([(1, "日本")], byte_level([b"\xe6\x97", b"x"]))
    assert "token 1 'x'" in message


def test_fails_when_a_model_drops_punctuation() -> None:
    """syntaxgym-core drops text matching a model's drop_token_pattern; we cover every character."""
    tokens = [
        "I",
        "know",
        "that",
        "our",
        "aunt",
        "grabbed",
        "at",
        "the",
        "holiday",
        "party",
        "<eos>",
    ]
    message = failure(REGIONS, tokens)
    assert "do not cover the whole text" in message and "\u2038." in message


def test_fails_on_moses_split_punctuation_sentinels() -> None:
    """syntaxgym-core reads Moses' ``@-@`` as ``-``; no tokenizer HELM serves writes it."""
    message = failure([(1, "a well-known"), (2, "fact")], ["a", "well", "@-@", "known", "fact"])
    assert "token 2 '@-@'" in message and "does not occur" in message


def test_fails_in_prefix_with_prefix_offset() -> None:
    message = failure([(1, "I know")], ["Question", ":", "I", " know"], prefix="Q: ")
    assert "token 0 'Question'" in message and "character 0 of the prefix" in message


def test_ambiguous_wildcards_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Safety net: if a wildcard could cover text in two ways that disagree, refuse to guess.

    The real wildcards cannot cross whitespace, and regions are separated by whitespace, so no
    real token list reaches this; let unknown-word wildcards cross spaces to exercise it.
    """
    def wide_ends(self: Any, wild: Any, start: int):  # type: ignore[no-untyped-def]
        yield from range(start + 1, len(self.data) + 1)

    monkeypatch.setattr(SentenceBytes, "wild_ends", wide_ends)
    message = failure([(1, "a b"), (2, "c d")], ["<unk>", "<unk>"])
    assert "without guessing" in message and "token 1 '<unk>'" in message
    assert "region 1 or region 2" in message or "region 2 or region 1" in message


def test_bad_inputs_are_type_and_value_errors() -> None:
    with pytest.raises(TypeError, match="token 1"):
        align(REGIONS, ["I", 3])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="not a string"):
        align([(1, None)], [])  # type: ignore[list-item]


def test_alignment_error_is_a_syntaxgym_error() -> None:
    from syntaxgym_helm.core import errors

    assert AlignmentError is errors.AlignmentError  # the package re-exports the one class
    with pytest.raises(errors.SyntaxGymError):
        align(REGIONS, ["nothing"])


def test_a_context_of_several_sentences_before_the_sentence_is_never_scored() -> None:
    """context= puts sentences and a space before the item (prefix + context + sentence): the
    token that carries that space into the first word counts for region 1, in GPT-2-style and
    SentencePiece forms; a token joining the context's last word to the first region is an error
    (region 1 would lose text)."""
    context = "The cats near the dog sleep. No author has ever won. "
    regions = [(1, "The key"), (2, "is"), (3, "here")]
    gpt2 = ["The", "Ġcats", "Ġnear", "Ġthe", "Ġdog", "Ġsleep", ".", "ĠNo", "Ġauthor", "Ġhas",
            "Ġever", "Ġwon", ".", "ĠThe", "Ġkey", "Ġis", "Ġhere"]
    assert align_tokens(regions, gpt2, prefix=context) == [None] * 13 + [1, 1, 2, 3]
    pieces = ["<bos>", "▁The", "▁cats", "▁near", "▁the", "▁dog", "▁sleep", ".", "▁No",
              "▁author", "▁has", "▁ever", "▁won", ".", "▁The", "▁key", "▁is", "▁here"]
    assert align_tokens(regions, pieces, prefix=context) == [None] * 14 + [1, 1, 2, 3]
    joined = gpt2[:12] + [". The"] + gpt2[14:]
    assert "runs from the prefix into the sentence" in failure(regions, joined, prefix=context)
