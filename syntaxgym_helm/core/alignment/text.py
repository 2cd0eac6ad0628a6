"""The text the tokens cover: prefix + sentence as UTF-8 bytes, and where a reading can match.

Matching is over bytes so that byte-level tokens that split a character match exactly; every
byte knows its character (offsets in messages are in characters) and the region that character
belongs to (the span bookkeeping of :mod:`.spans`, per byte).
"""

from __future__ import annotations

from collections.abc import Iterator

from syntaxgym_helm.core.alignment.spans import region_spans, sentence_text
from syntaxgym_helm.core.alignment.token_forms import SPECIAL_BYTES, Reading, Segment, Wild

__all__ = ["IN_GAP", "IN_PREFIX", "WHITESPACE", "SentenceBytes"]

WHITESPACE = frozenset(b" \t\n\r\x0b\x0c")
IN_PREFIX = -1  # owner of a prefix character
IN_GAP = -2  # owner of a space between regions
#: Most bytes of characters a token can lose to ``errors="ignore"`` decoding: the tail of one
#: character and the head of the next (3 + 3), with room to spare.
_MAX_DROPPED = 8


class SentenceBytes:
    """prefix + sentence as UTF-8 bytes, with the owner (region index) of every character."""

    def __init__(self, prefix: str, pairs: list[tuple[int, str]], *, fold: bool,
                 separator: str = " ") -> None:
        sentence = sentence_text(pairs, separator)
        self.text = prefix + sentence
        self.prefix_chars = len(prefix)
        self.fold = fold
        raw = self.text.encode("utf-8")
        self.data = raw.lower() if fold else raw  # bytes.lower() only folds ASCII: same length
        self.prefix_bytes = len(prefix.encode("utf-8"))
        # char_start[k]: byte offset of character k (and of the end, for k == len(text)).
        self.char_start: list[int] = []
        self.char_of_byte: list[int] = []
        for index, char in enumerate(self.text):
            self.char_start.append(len(self.char_of_byte))
            self.char_of_byte.extend([index] * len(char.encode("utf-8")))
        self.char_start.append(len(self.data))
        self.char_of_byte.append(len(self.text))
        self.numbers = [number for number, _ in pairs]
        self.owner_of_char = [IN_PREFIX] * len(prefix) + [IN_GAP] * len(sentence)
        for index, span in enumerate(region_spans(pairs, separator)):
            for offset in range(span.start, span.end):
                self.owner_of_char[self.prefix_chars + offset] = index

    def skip_ws(self, pos: int) -> int:
        while pos < len(self.data) and self.data[pos] in WHITESPACE:
            pos += 1
        return pos

    def at_end(self, pos: int) -> bool:
        return self.skip_ws(pos) >= len(self.data)

    def owner_of_byte(self, pos: int) -> int:
        return self.owner_of_char[self.char_of_byte[pos]]

    def is_char_boundary(self, pos: int) -> bool:
        return self.char_start[self.char_of_byte[pos]] == pos

    # -- matching ------------------------------------------------------------------------------

    def match(self, reading: Reading, pos: int) -> Iterator[int]:
        """Every byte offset where ``reading`` can end when it starts at ``pos``."""
        if reading.special:
            yield pos
            return
        if not reading.segments and not reading.hidden_special:
            # An empty token that spells nothing sits between two characters, never inside one
            # (there, only a piece of that character can come).
            if self.is_char_boundary(pos):
                yield pos
            return
        if reading.hidden_special:
            spelled = SPECIAL_BYTES.match(self.data, pos)
            if spelled and spelled.end() <= self.prefix_bytes:
                yield spelled.end()
            return
        yield from self._match_from(reading.segments, 0, pos, skip=not reading.glued)

    def _match_from(
        self, segments: tuple[Segment, ...], k: int, pos: int, skip: bool
    ) -> Iterator[int]:
        if k == len(segments):
            yield pos
            return
        segment = segments[k]
        if isinstance(segment, bytes):
            end = self._match_literal(segment, pos, skip)
            if end is not None:
                yield from self._match_from(segments, k + 1, end, skip=False)
            return
        start = self.skip_ws(pos) if skip else pos
        for end in self.wild_ends(segment, start):
            yield from self._match_from(segments, k + 1, end, skip=False)

    def _match_literal(self, literal: bytes, pos: int, skip: bool) -> int | None:
        if self.fold:
            literal = literal.lower()
        if self.data.startswith(literal, pos):
            return pos + len(literal)
        if not skip:
            return None
        # Tokens may lack the whitespace the text has (word-level tokens, HELM's decoding of
        # SentencePiece pieces) or carry a space the text lacks: SentencePiece's dummy prefix,
        # which only ever comes at the start of the text or of the sentence, or whitespace
        # after the end of the text (a trailing newline). Anywhere else such a space is no
        # part of the text, and allowing it would let a token stand where the text has none.
        core = literal.lstrip(bytes(WHITESPACE))
        start = self.skip_ws(pos)
        if start == pos and core != literal and pos not in (0, self.prefix_bytes) and (
                core or not self.at_end(pos)):
            return None
        if self.data.startswith(core, start):
            return start + len(core)
        return None

    def wild_ends(self, wild: Wild, start: int) -> Iterator[int]:
        """Every byte offset where ``wild`` can end when it starts at ``start`` (rule 5)."""
        data = self.data
        if wild.kind == "unk":
            end = start
            while end < len(data) and data[end] not in WHITESPACE:
                end += 1
                if end == len(data) or self.is_char_boundary(end):
                    yield end
            return
        # Pieces of characters: the bytes must decode exactly as the client's decoder shows
        # them (U+FFFD per invalid sequence, or nothing). Each U+FFFD stands for at most 3
        # bytes (an incomplete 4-byte character), and only non-ASCII bytes can vanish.
        wanted, errors = (
            ("\ufffd" * wild.count, "replace") if wild.kind == "lossy" else ("", "ignore")
        )
        longest = 3 * wild.count if wild.kind == "lossy" else _MAX_DROPPED
        if wild.kind == "dropped" and not wild.across and start < len(data):
            # Within the character ``start`` is in, never all of it (that would have decoded).
            char_end = self.char_start[self.char_of_byte[start] + 1]
            longest = char_end - start - (1 if self.is_char_boundary(start) else 0)
        end = start
        while end < min(len(data), start + longest) and data[end] >= 0x80:
            end += 1
            if data[start:end].decode("utf-8", errors) == wanted:
                yield end

    # -- messages ------------------------------------------------------------------------------

    def where(self, pos: int) -> str:
        """``character N of the sentence ('…before‸after…')`` for byte offset ``pos``."""
        char = self.char_of_byte[min(pos, len(self.data))]
        if char < self.prefix_chars:
            place = f"character {char} of the prefix"
        else:
            place = f"character {char - self.prefix_chars} of the sentence"
        before = self.text[max(0, char - 30) : char]
        after = self.text[char : char + 30]
        return f"{place} ('{before}\u2038{after}')"
