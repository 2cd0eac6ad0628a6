"""Tokens that hold pieces of one character count in that character's region, in every script.

Byte-level tokenizers split a character of several UTF-8 bytes (a CJK character, a Hebrew or
Cyrillic letter, a combining accent, an emoji) over several tokens. Each piece must count in the
region of the character it encodes, whatever form the client gives its token texts in:

- the plugin's own client: exact slices of the prompt (:func:`texts_from_offsets`, through the
  :class:`PromptEncoder` the engine uses);
- HELM's ``HuggingFaceClient``: ``tokenizer.decode(token_id)`` of each token alone, where a
  piece of a character decodes to U+FFFD;
- OpenAI-compatible servers: llama-cpp-python decodes each token alone dropping invalid bytes
  (a piece becomes ``""``); OpenAI's API writes such a token as ``bytes:\\xe7\\x8c``.

The reference is computed here from character offsets, independently of the aligner: each
token's bytes come from its vocabulary entry (GPT-2's byte alphabet for SmolLM2, SentencePiece
pieces and ``<0xNN>`` byte pieces for Gemma), and a token counts for the region of the character
its first non-space byte belongs to (a token of spaces only: the next character's).

Both embedded tokenizers are real (Gemma's is skipped where it is not installed).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import pytest

from syntaxgym_helm.clients.embedded.catalogue import GEMMA3_270M, SMOLLM2_135M, EmbeddedModel
from syntaxgym_helm.clients.local.prompt_encoding import PromptEncoder
from syntaxgym_helm.core.alignment import align_tokens

Regions = list[tuple[int, str]]

#: (name, separator, regions): every region boundary sits next to a multi-byte character.
SENTENCES: list[tuple[str, str, Regions]] = [
    ("chinese", "", [(1, "我的"), (2, "猫"), (3, "很好。")]),
    ("chinese-dog", "", [(1, "我的"), (2, "犬"), (3, "很好。")]),
    ("chinese-spaced", " ", [(1, "我的"), (2, "猫"), (3, "很好。")]),
    ("chinese-sling", "", [(1, "他"), (2, "吃了"), (3, "饭"), (4, "吗？")]),
    ("hebrew", " ", [(1, "הילד"), (2, "אוכל"), (3, "לחם")]),
    ("hebrew-final-letters", " ", [(1, "שלום"), (2, "עולם")]),
    ("russian", " ", [(1, "Кошка"), (2, "спит"), (3, "на диване.")]),
    ("turkish", " ", [(1, "Çocuklar"), (2, "İstanbul'a"), (3, "gidiyorlar mı?")]),
    ("combining-marks", " ", [(1, "cafe\u0301"), (2, "Tie\u0302\u0301ng"), (3, "x")]),
    ("combining-glued", "", [(1, "e"), (2, "\u0301"), (3, "x")]),
    ("emoji", " ", [(1, "I love"), (2, "🐱🐶"), (3, "👨\u200d👩\u200d👧 🇫🇷 👍🏽")]),
    ("fullwidth", " ", [(1, "ＡＢＣ"), (2, "ｄｅｆ"), (3, "end")]),
]


def _data_set_sentences() -> list[tuple[str, str, Regions]]:
    """Both sentences of every pair of the MultiBLiMP fixtures (13 scripts: right-to-left
    Hebrew, Arabic and Urdu; Devanagari, Bengali, Gujarati, Tamil and Ethiopic, whose characters
    byte-level tokenizers split; Georgian, Armenian, Greek, Cyrillic, Latin; four of them also as
    the ancient languages' treebanks write them: Biblical Hebrew with points and accents,
    polytonic Greek precomposed and decomposed, early Cyrillic with the titlo, Egyptological
    transliteration)
    and of the ZhoBLiMP fixtures (no spaces), cut into regions by their data sets' rules."""
    from fixtures import MULTILINGUAL_EXCERPTS_DIR
    from syntaxgym_helm.core.minimal_pairs.catalogue import DATASETS, convert_file

    found = []
    for name, pattern in (("multiblimp", "*/data.tsv"), ("zhoblimp", "ZhoBLiMP/*.jsonl")):
        for path in sorted((MULTILINGUAL_EXCERPTS_DIR / name).glob(pattern)):
            suite = convert_file(DATASETS[name], path).suite
            for item in suite["items"]:
                for condition in item["conditions"]:
                    found.append((f"{suite['meta']['name']}-{item['item_number']}-"
                                  f"{condition['condition_name']}",
                                  suite["meta"].get("region_separator", " "),
                                  [(r["region_number"], r["content"])
                                   for r in condition["regions"] if r["content"]]))
    return found


DATA_SET_SENTENCES = _data_set_sentences()
SENTENCES += DATA_SET_SENTENCES


@functools.cache
def _tokenizer(model: EmbeddedModel):
    """The model's tokenizer as the plugin keeps it converted from the GGUF file (equal to a
    fresh conversion: tests/clients/test_embedded.py), in a fraction of the conversion's time."""
    from transformers import AutoTokenizer

    from syntaxgym_helm.clients.embedded.clients import converted_tokenizer_folder

    return AutoTokenizer.from_pretrained(str(converted_tokenizer_folder(model)), use_fast=True,
                                         local_files_only=True)


MODELS = [
    pytest.param(SMOLLM2_135M, id="smollm2"),
    pytest.param(GEMMA3_270M, id="gemma", marks=pytest.mark.skipif(
        not GEMMA3_270M.installed(), reason=f"Gemma-3-270M is not installed "
                                            f"({GEMMA3_270M.pip_install})")),
]


def _byte_alphabet() -> dict[str, int]:
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    return {char: byte for byte, char in bytes_to_unicode().items()}


def token_bytes(model: EmbeddedModel, tokenizer, ids: Sequence[int]) -> list[bytes]:
    """Each token's bytes, read off its vocabulary entry (not through the aligner)."""
    pieces = tokenizer.convert_ids_to_tokens(list(ids))
    if model is SMOLLM2_135M:  # GPT-2 byte-level: one vocabulary character per byte
        alphabet = _byte_alphabet()
        return [bytes(alphabet[char] for char in piece) for piece in pieces]
    out = []
    for piece in pieces:  # SentencePiece: "▁" is a space, "<0xNN>" one byte
        if len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"):
            out.append(bytes([int(piece[3:5], 16)]))
        else:
            out.append(piece.replace("\u2581", " ").encode("utf-8"))
    return out


def reference_regions(regions: Regions, separator: str,
                      pieces: Sequence[bytes]) -> list[int | None]:
    """The region of each token from character offsets: the character that its first non-space
    byte belongs to (spaces only: the next character after it; none: no region)."""
    text = separator.join(content for _, content in regions if content)
    owner: list[int | None] = []
    for number, content in regions:
        if not content:
            continue
        if owner:
            owner.extend([None] * len(separator))
        owner.extend([number] * len(content))
    char_of_byte = [index for index, char in enumerate(text)
                    for _ in char.encode("utf-8")]
    assert b"".join(pieces) == text.encode("utf-8"), "the tokens do not spell the sentence"
    found: list[int | None] = []
    offset = 0
    for piece in pieces:
        start = offset + len(piece) - len(piece.lstrip(b" "))
        if start < offset + len(piece):
            found.append(owner[char_of_byte[start]])
        else:  # spaces only: the region of the next character that is not a space
            rest = [i for i in range(offset + len(piece), len(char_of_byte))
                    if text[char_of_byte[i]] != " "]
            found.append(owner[char_of_byte[rest[0]]] if rest else None)
        offset += len(piece)
    return found


def _engine_texts(tokenizer, text: str, ids: Sequence[int], pieces: Sequence[bytes]) -> list[str]:
    encoded = PromptEncoder(tokenizer, None, 4096).encode(text)
    assert list(encoded.ids[1:]) == list(ids)
    return list(encoded.texts[1:])


def _helm_hf_texts(tokenizer, text: str, ids: Sequence[int],
                   pieces: Sequence[bytes]) -> list[str]:
    return [tokenizer.decode(token) for token in ids]  # helm/clients/huggingface_client.py


def _helm_hf_texts_read_again(model: EmbeddedModel, tokenizer, text: str,
                              ids: Sequence[int]) -> tuple[list[str], int]:
    """What the metric aligns for HELM's HuggingFaceClient: the client encodes the prompt with
    the tokenizer's special tokens (Gemma's <bos>) and decodes each token alone; the metric reads
    the exact texts again from the deployment's tokenizer (harness/exact_texts.py). Returns
    them and how many special tokens the client added first."""
    from helm.common.request import Request

    import syntaxgym_helm.plugin  # noqa: F401 - registers the embedded helmhf/ deployments
    from syntaxgym_helm.harness.exact_texts import exact_texts

    full = tokenizer(text)["input_ids"]
    added = len(full) - len(ids)
    assert list(full[added:]) == list(ids)
    decoded = [tokenizer.decode(token) for token in full]
    request = Request(model=model.hf_name, model_deployment=model.hf_name, prompt=text)
    return exact_texts(request, decoded) or decoded, added


def _llama_cpp_texts(tokenizer, text: str, ids: Sequence[int],
                     pieces: Sequence[bytes]) -> list[str]:
    return [piece.decode("utf-8", errors="ignore") for piece in pieces]


def _openai_bytes_texts(tokenizer, text: str, ids: Sequence[int],
                        pieces: Sequence[bytes]) -> list[str]:
    def shown(piece: bytes) -> str:
        try:
            return piece.decode("utf-8")
        except UnicodeDecodeError:
            return "bytes:" + "".join(f"\\x{byte:02x}" for byte in piece)
    return [shown(piece) for piece in pieces]


CLIENT_FORMS: dict[str, Callable[..., list[str]]] = {
    "syntaxgym-engine": _engine_texts,
    "llama-cpp-server": _llama_cpp_texts,
    "openai-bytes": _openai_bytes_texts,
}


#: (form, sentence) pairs: every form on every sentence, but for the data sets' Mandarin sentences
#: the llama-cpp form: where no space separates the words, a run of tokens that each decode to
#: nothing (errors="ignore") does not say where one character ends, so no client text can.
FORM_CASES = [pytest.param(form, *sentence, id=f"{sentence[0]}-{form}")
              for form in CLIENT_FORMS for sentence in SENTENCES
              if not (form == "llama-cpp-server" and sentence in DATA_SET_SENTENCES
                      and sentence[1] == "")]


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("form, name, separator, regions", FORM_CASES)
def test_every_piece_counts_in_its_characters_region(model, form, name, separator, regions):
    tokenizer = _tokenizer(model)
    text = separator.join(content for _, content in regions)
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    pieces = token_bytes(model, tokenizer, ids)
    expected = reference_regions(regions, separator, pieces)
    texts = CLIENT_FORMS[form](tokenizer, text, ids, pieces)
    assert align_tokens(regions, texts, separator=separator) == expected, (texts, pieces)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("name, separator, regions", SENTENCES, ids=[s[0] for s in SENTENCES])
def test_helm_huggingface_pieces_count_in_their_characters_region(model, name, separator,
                                                                   regions):
    tokenizer = _tokenizer(model)
    text = separator.join(content for _, content in regions)
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    expected = reference_regions(regions, separator, token_bytes(model, tokenizer, ids))
    texts, added = _helm_hf_texts_read_again(model, tokenizer, text, ids)
    aligned = align_tokens(regions, texts, separator=separator)
    assert aligned == [None] * added + expected, texts


def test_u_fffd_texts_alone_can_be_ambiguous_and_are_never_guessed():
    """Why the metric reads HELM's texts again: 猫 (3 bytes, 3 tokens) then 很 (3 bytes, 2
    tokens) as seven U+FFFD can also be read as 猫 in 2 tokens and 很 in 3; the aligner says so
    rather than choose."""
    from syntaxgym_helm.core.errors import AlignmentError

    tokenizer = _tokenizer(SMOLLM2_135M)
    regions = [(1, "我的"), (2, "猫"), (3, "很好。")]
    text = "".join(content for _, content in regions)
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    with pytest.raises(AlignmentError, match="without guessing"):
        align_tokens(regions, _helm_hf_texts(tokenizer, text, ids, []), separator="")


def test_the_sentences_do_split_characters_across_tokens():
    """The cases above are the hard ones: with SmolLM2, a token ends inside the last character
    of a region (so the character's pieces straddle the old first-piece rule) in most of them."""
    tokenizer = _tokenizer(SMOLLM2_135M)
    hard = 0
    for _, separator, regions in SENTENCES:
        text = separator.join(content for _, content in regions)
        pieces = token_bytes(SMOLLM2_135M, tokenizer,
                             tokenizer(text, add_special_tokens=False)["input_ids"])
        ends = {sum(len(piece) for piece in pieces[:k + 1]) for k in range(len(pieces))}
        inside = set()  # byte offsets strictly inside the last character of some region
        offset = 0
        for _, content in regions:
            offset += len(content.encode("utf-8"))
            last = len(content[-1].encode("utf-8"))
            inside |= set(range(offset - last + 1, offset))
            offset += len(separator)
        hard += bool(ends & inside)
    assert hard >= 8
