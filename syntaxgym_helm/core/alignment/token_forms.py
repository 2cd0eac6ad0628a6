"""How a token's text may be read: the bytes and wildcards it stands for, per tokenizer family.

Rules 4 and 5 of :mod:`syntaxgym_helm.core.alignment`. One token text may be read several ways
(``"▁the"`` as literal text, or as SentencePiece with ``▁`` a space); :func:`readings` lists every
way, most literal first, and the search keeps the first that completes an alignment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["SPECIAL_BYTES", "Reading", "Segment", "Wild", "readings"]


@dataclass(frozen=True)
class Wild:
    """A stretch of text the token stands for without spelling it.

    ``kind``: ``"unk"``, whole characters of one word; ``"lossy"``, bytes that decode to exactly
    ``count`` U+FFFD (what decoding a piece of a character alone with ``errors="replace"`` gives:
    one U+FFFD per maximal invalid subsequence, as Python and Rust's ``from_utf8_lossy`` both
    do); ``"dropped"``, one or more bytes that decode to nothing with ``errors="ignore"`` (pieces
    of characters, as llama-cpp-python returns them), inside one character unless ``across``."""

    kind: str
    count: int = 1
    across: bool = False


Segment = bytes | Wild


@dataclass(frozen=True)
class Reading:
    """One way to read a token's text: the bytes (and wildcards) it stands for, in order."""

    segments: tuple[Segment, ...]
    special: bool = False  # zero-width special token: always counts for no region
    glued: bool = False  # WordPiece continuation: may not skip whitespace before it
    hidden_special: bool = False  # empty text standing for a special token the prefix spells
    cost: int = 0  # how many pieces of characters it drops that its text does not show

    @property
    def is_wildcard(self) -> bool:
        return any(isinstance(segment, Wild) for segment in self.segments)


_UNK = re.compile(r"<unk>|\[unk\]|<\|unk\|>", re.IGNORECASE)
_SPECIAL = re.compile(r"<\|[^|<>\s]+\|>|</?[A-Za-z_][^<>\s]*>|\[[A-Z_]+\]")
SPECIAL_BYTES = re.compile(_SPECIAL.pattern.encode("ascii"))
"""A special token's spelling, over bytes (to find one the prefix spells)."""
_BYTE_PIECE = re.compile(r"(<0x[0-9A-Fa-f]{2}>)")
_LOSSY_RUN = re.compile("(\ufffd+)")
_BYTE_ESCAPE = re.compile(r"\\x([0-9A-Fa-f]{2})")  # OpenAI-style "bytes:\\xe6\\x97" tokens
_SPACE_MARKS = " \u2581\u0120"  # space, SentencePiece ▁, byte-level Ġ


def _byte_level_alphabet() -> dict[str, int]:
    """GPT-2's byte-to-character table, inverted: each vocabulary character to its byte."""
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table: dict[str, int] = {}
    shifted = 0
    for byte in range(256):
        if byte in printable:
            table[chr(byte)] = byte
        else:
            table[chr(256 + shifted)] = byte
            shifted += 1
    return table


_BYTE_OF_CHAR = _byte_level_alphabet()


def _text_segments(text: str) -> tuple[Segment, ...]:
    """Segments of decoded text: literal UTF-8, with each run of U+FFFD a lossy wildcard."""
    segments: list[Segment] = []
    for piece in _LOSSY_RUN.split(text):
        if piece.startswith("\ufffd"):
            segments.append(Wild("lossy", count=len(piece)))
        elif piece:
            segments.append(piece.encode("utf-8"))
    return _merged(segments)


def _sentencepiece_segments(token: str) -> tuple[Segment, ...]:
    """Segments of a raw SentencePiece piece: ``▁`` is a space, ``<0xNN>`` one byte."""
    segments: list[Segment] = []
    for piece in _BYTE_PIECE.split(token):
        if _BYTE_PIECE.fullmatch(piece):
            segments.append(bytes([int(piece[3:5], 16)]))
        elif piece:
            segments.extend(_text_segments(piece.replace("\u2581", " ")))
    return _merged(segments)


def _escaped_bytes(text: str) -> bytes:
    """The bytes of an OpenAI-style ``bytes:`` token body: ``\\xNN`` escapes and plain text."""
    out = bytearray()
    for index, piece in enumerate(_BYTE_ESCAPE.split(text)):
        # re.split with one group alternates plain text (even) and the escaped hex (odd).
        out.extend(bytes.fromhex(piece) if index % 2 else piece.encode("utf-8"))
    return bytes(out)


def _merged(segments: list[Segment]) -> tuple[Segment, ...]:
    """Join adjacent literal segments so that literals and wildcards alternate."""
    out: list[Segment] = []
    for segment in segments:
        if out and isinstance(segment, bytes) and isinstance(out[-1], bytes):
            out[-1] = out[-1] + segment
        else:
            out.append(segment)
    return tuple(out)


_DROPPED = Wild("dropped")
#: Dropped bytes that may end one character and begin the next (a token that holds the tail of
#: one character and the head of another): tried only when nothing stricter aligns.
_DROPPED_ACROSS = Wild("dropped", across=True)


def _across_whitespace(segments: tuple[Segment, ...]) -> int:
    """1 when dropped pieces come right before text that begins with whitespace: a token that
    would hold the end of one word and the whitespace after it, which pre-tokenizers (GPT-2's
    byte-level one, SentencePiece's) do not make, so that reading is the less likely of two
    that fit ("\x9d \xd7" read as " " after the end of a Hebrew letter, where the letter's
    last byte was a token of its own)."""
    first = segments[1] if len(segments) > 1 and segments[0] is _DROPPED_ACROSS else None
    return int(isinstance(first, bytes) and first[:1].isspace())


@lru_cache(maxsize=65536)
def readings(token: str, loose: bool = False) -> tuple[Reading, ...]:
    """Every way ``token`` may be read, most literal first (rule 4 of the package).

    ``loose`` adds, to each reading that spells some text, the same with pieces of characters
    dropped before and after it: how a server that decodes each token alone with
    ``errors="ignore"`` shows a token that begins or ends inside a character. The aligner tries
    these only when no strict alignment exists."""
    if loose:
        strict = readings(token)
        extra = [Reading(segments, cost=len(segments) - len(reading.segments)
                         + _across_whitespace(segments))
                 for reading in strict
                 if reading.segments and not reading.is_wildcard and not reading.special
                 for segments in ((_DROPPED_ACROSS, *reading.segments),
                                  (*reading.segments, _DROPPED_ACROSS),
                                  (_DROPPED_ACROSS, *reading.segments, _DROPPED_ACROSS))]
        if token == "":
            extra.append(Reading((_DROPPED_ACROSS,), cost=1))
        return strict + tuple(extra)
    candidates = [Reading(_text_segments(token))]
    if token.startswith("##") and len(token) > 2:
        candidates.append(Reading(_text_segments(token[2:]), glued=True))
    if token.endswith("</w>") and len(token) > 4:
        candidates.append(Reading(_text_segments(token[:-4])))
    if "\u2581" in token or _BYTE_PIECE.search(token):
        candidates.append(Reading(_sentencepiece_segments(token)))
    if token and all(char in _BYTE_OF_CHAR for char in token):
        candidates.append(Reading((bytes(_BYTE_OF_CHAR[char] for char in token),)))
    if token.startswith("bytes:") and len(token) > 6:
        candidates.append(Reading((_escaped_bytes(token[6:]),)))
    if _UNK.fullmatch(token.lstrip(_SPACE_MARKS)):
        candidates.append(Reading((Wild("unk"),)))
    elif _SPECIAL.fullmatch(token.lstrip(_SPACE_MARKS)):
        candidates.append(Reading((), special=True))
    if token == "":
        candidates.append(Reading((), hidden_special=True))
        candidates.append(Reading((_DROPPED,)))  # pieces of characters, dropped
    unique: list[Reading] = []
    for reading in candidates:
        if reading not in unique:
            unique.append(reading)
    return tuple(unique)
