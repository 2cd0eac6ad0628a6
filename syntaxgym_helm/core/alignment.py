"""Token-to-region alignment: which region of a SyntaxGym sentence each model token belongs to.

A SyntaxGym sentence is a list of numbered regions; its text is the non-empty region contents
joined by single spaces (:func:`sentence_text`, :func:`region_spans`). A language model reports
one surprisal per token, as token texts in whatever form its tokenizer or server gives them.
:func:`align` maps each token to the region it belongs to, or to ``None`` when it belongs to
none, so that :mod:`syntaxgym_helm.core.region_stats` can aggregate each region's tokens.

Rules (every alignment follows them; anything else raises :class:`AlignmentError`):

1. **First character.** A token counts for the region of its first non-whitespace character.
   A token whose text straddles a region boundary (e.g. a SentencePiece piece that swallows the
   space and the start of the next region) therefore counts wholly for the earlier region.
2. **Whitespace.** Whitespace between regions belongs to no region. A token that is only
   whitespace (or empty, as HELM's per-token decoding makes SentencePiece's bare ``▁``) counts for
   the region of the next non-whitespace character, because that is where GPT-2-style tokenizers
   put a space's probability too (``" 1990"`` is one token there, ``"▁"`` + ``"1"`` in Llama's);
   with no character after it, it counts for no region.
3. **Excluded (``None``).** Tokens that lie inside ``prefix`` (text the request put before the
   sentence); special tokens that do not literally occur at that point of the text (``<eos>``,
   ``</s>``, ``<s>``, ``<|endoftext|>``, ``<pad>``, ``[CLS]``, any ``<...>`` or ``<|...|>``);
   whitespace-only tokens after the end of the sentence. A token whose non-whitespace text runs
   from the prefix into the sentence is an error, not excluded: the first region would lose text.
   An empty token may stand for a special token that the prefix spells (``<|endoftext|>``):
   servers that detokenize with special tokens hidden (llama-cpp-python) return ``""`` for it.
4. **Token forms.** A token's text is read, in this order of preference, as: the exact text,
   whose leading whitespace may be absent (word-level tokens such as ``"know"``, ``"."``);
   WordPiece ``##`` continuations; ``</w>`` word ends; SentencePiece (``▁`` for a space,
   ``<0xNN>`` byte pieces); GPT-2 byte-level vocabulary (``Ġ`` space, ``Ċ`` newline, one
   character per byte); OpenAI-style ``bytes:\\xe6\\x97`` escapes. The last three name bytes, so
   a character split across tokens matches byte by byte, exactly.
5. **Wildcards.** ``<unk>``, ``<UNK>``, ``[UNK]`` stand for one or more characters of one word
   (no whitespace); runs of U+FFFD (``�``, what decoding a token that holds part of a multi-byte
   character alone gives) stand for one or more non-ASCII bytes, never a whole character (a whole
   one would have decoded); so does an empty token, which is what decoding such a token alone with
   the invalid bytes dropped gives (llama-cpp-python's ``errors="ignore"``). A wildcard covers the
   text up to where the next token matches. If the text can be covered in more than one way and
   the ways put some token in different regions, that is an error, never a guess.
6. **Case.** Matching is exact. Only when no exact alignment exists is one retried ignoring ASCII
   case (for word-level models that lowercase); :attr:`Alignment.case_insensitive` says so.
7. **Coverage.** The tokens must cover every non-whitespace character of prefix + sentence, in
   order, and nothing more.

Matching works on the UTF-8 bytes of prefix + sentence, so byte-level tokens that split a
character are exact; offsets in results and messages are in characters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterator, Protocol, Sequence, TypeVar, Union

from syntaxgym_helm.core.errors import AlignmentError
from syntaxgym_helm.core.suite import join_regions

__all__ = [
    "Alignment",
    "RegionSpan",
    "align",
    "align_tokens",
    "region_spans",
    "sentence_text",
]

T = TypeVar("T")


class _RegionObject(Protocol):
    @property
    def region_number(self) -> int: ...

    @property
    def content(self) -> str: ...


RegionLike = Union[tuple[int, str], _RegionObject]
"""A region as a ``(region_number, content)`` pair or an object with those two attributes."""


# --------------------------------------------------------------------------------------------
# Sentence text and region spans
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RegionSpan:
    """Where one region lies in :func:`sentence_text`: characters ``start`` to ``end`` (exclusive).

    An empty region has ``start == end``, placed right after the text before it (before the
    space that separates the next region).
    """

    region_number: int
    start: int
    end: int

    @property
    def is_empty(self) -> bool:
        return self.start == self.end


def _pairs(regions: Sequence[RegionLike]) -> list[tuple[int, str]]:
    """Regions as ``(number, content)`` pairs; region numbers must be unique."""
    pairs: list[tuple[int, str]] = []
    for region in regions:
        if isinstance(region, (tuple, list)):
            number, content = region
        else:
            number, content = region.region_number, region.content
        if not isinstance(content, str):
            raise TypeError(f"region {number!r} has content {content!r}, not a string")
        pairs.append((number, content))
    numbers = [number for number, _ in pairs]
    if len(set(numbers)) != len(numbers):
        raise ValueError(f"region numbers repeat in one sentence: {numbers}")
    return pairs


def sentence_text(regions: Sequence[RegionLike]) -> str:
    """The sentence a model reads: the non-empty region contents joined by single spaces."""
    return join_regions(content for _, content in _pairs(regions))


def region_spans(regions: Sequence[RegionLike]) -> tuple[RegionSpan, ...]:
    """Each region's character span in :func:`sentence_text`, in region order."""
    spans: list[RegionSpan] = []
    offset = 0
    placed_any = False
    for number, content in _pairs(regions):
        if not content:
            spans.append(RegionSpan(number, offset, offset))
            continue
        if placed_any:
            offset += 1  # the single separating space
        spans.append(RegionSpan(number, offset, offset + len(content)))
        offset += len(content)
        placed_any = True
    return tuple(spans)


# --------------------------------------------------------------------------------------------
# Result
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Alignment:
    """Which region each token belongs to (``None``: no region); see the module's rules."""

    region_of_token: tuple[int | None, ...]
    region_numbers: tuple[int, ...]
    case_insensitive: bool = False

    def tokens_of_region(self, region_number: int) -> tuple[int, ...]:
        """Indices of the tokens that count for ``region_number`` (empty for an empty region)."""
        if region_number not in self.region_numbers:
            raise KeyError(f"no region {region_number} in this sentence: {self.region_numbers}")
        return tuple(i for i, owner in enumerate(self.region_of_token) if owner == region_number)

    @property
    def excluded_tokens(self) -> tuple[int, ...]:
        """Indices of the tokens that count for no region (prefix, special, trailing space)."""
        return tuple(i for i, owner in enumerate(self.region_of_token) if owner is None)

    def values_by_region(self, values: Sequence[T]) -> dict[int, list[T]]:
        """Group per-token ``values`` (e.g. surprisals) by region; every region gets a list."""
        if len(values) != len(self.region_of_token):
            raise ValueError(
                f"{len(values)} values for {len(self.region_of_token)} tokens: one per token needed"
            )
        grouped: dict[int, list[T]] = {number: [] for number in self.region_numbers}
        for owner, value in zip(self.region_of_token, values):
            if owner is not None:
                grouped[owner].append(value)
        return grouped


def align(regions: Sequence[RegionLike], tokens: Sequence[str], *, prefix: str = "") -> Alignment:
    """Assign each of ``tokens`` to a region of the sentence built from ``regions``.

    ``tokens`` are the texts of the tokens of ``prefix + sentence_text(regions)``, in order.
    Raises :class:`AlignmentError` (naming the token, its index, the character offset and the
    text around it) when they cannot be aligned without guessing.
    """
    pairs = _pairs(regions)
    for index, token in enumerate(tokens):
        if not isinstance(token, str):
            raise TypeError(f"token {index} is {token!r}, not a string")
    folded = False
    try:
        owners = _Search(_Text(prefix, pairs, fold=False), tokens).run()
    except _NoAlignment as exact_failure:
        # Rule 6: a lowercasing word-level model; exact matching has failed outright.
        try:
            owners = _Search(_Text(prefix, pairs, fold=True), tokens).run()
        except AlignmentError:
            # The exact attempt's message is the one that describes the real text.
            raise AlignmentError(str(exact_failure)) from None
        folded = True
    numbers = tuple(number for number, _ in pairs)
    return Alignment(
        region_of_token=tuple(None if owner is None else numbers[owner] for owner in owners),
        region_numbers=numbers,
        case_insensitive=folded,
    )


def align_tokens(
    regions: Sequence[RegionLike], tokens: Sequence[str], *, prefix: str = ""
) -> list[int | None]:
    """The region number of each token (``None``: no region); :func:`align` without the extras."""
    return list(align(regions, tokens, prefix=prefix).region_of_token)


# --------------------------------------------------------------------------------------------
# How a token's text may be read
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Wild:
    """A stretch of text the token stands for without spelling it."""

    kind: str  # "unk": whole characters of one word; "lossy": non-ASCII bytes, no whole character
    min_bytes: int = 1


_Segment = Union[bytes, _Wild]


@dataclass(frozen=True)
class _Reading:
    """One way to read a token's text: the bytes (and wildcards) it stands for, in order."""

    segments: tuple[_Segment, ...]
    special: bool = False  # zero-width special token: always counts for no region
    glued: bool = False  # WordPiece continuation: may not skip whitespace before it
    hidden_special: bool = False  # empty text standing for a special token the prefix spells


_UNK = re.compile(r"<unk>|\[unk\]|<\|unk\|>", re.IGNORECASE)
_SPECIAL = re.compile(r"<\|[^|<>\s]+\|>|</?[A-Za-z_][^<>\s]*>|\[[A-Z_]+\]")
_SPECIAL_BYTES = re.compile(_SPECIAL.pattern.encode("ascii"))
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


def _text_segments(text: str) -> tuple[_Segment, ...]:
    """Segments of decoded text: literal UTF-8, with each run of U+FFFD a lossy wildcard."""
    segments: list[_Segment] = []
    for piece in _LOSSY_RUN.split(text):
        if piece.startswith("\ufffd"):
            segments.append(_Wild("lossy", min_bytes=len(piece)))
        elif piece:
            segments.append(piece.encode("utf-8"))
    return _merged(segments)


def _sentencepiece_segments(token: str) -> tuple[_Segment, ...]:
    """Segments of a raw SentencePiece piece: ``▁`` is a space, ``<0xNN>`` one byte."""
    segments: list[_Segment] = []
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


def _merged(segments: list[_Segment]) -> tuple[_Segment, ...]:
    """Join adjacent literal segments so that literals and wildcards alternate."""
    out: list[_Segment] = []
    for segment in segments:
        if out and isinstance(segment, bytes) and isinstance(out[-1], bytes):
            out[-1] = out[-1] + segment
        else:
            out.append(segment)
    return tuple(out)


@lru_cache(maxsize=65536)
def _readings(token: str) -> tuple[_Reading, ...]:
    """Every way ``token`` may be read, most literal first (see rule 4 of the module)."""
    candidates = [_Reading(_text_segments(token))]
    if token.startswith("##") and len(token) > 2:
        candidates.append(_Reading(_text_segments(token[2:]), glued=True))
    if token.endswith("</w>") and len(token) > 4:
        candidates.append(_Reading(_text_segments(token[:-4])))
    if "\u2581" in token or _BYTE_PIECE.search(token):
        candidates.append(_Reading(_sentencepiece_segments(token)))
    if token and all(char in _BYTE_OF_CHAR for char in token):
        candidates.append(_Reading((bytes(_BYTE_OF_CHAR[char] for char in token),)))
    if token.startswith("bytes:") and len(token) > 6:
        candidates.append(_Reading((_escaped_bytes(token[6:]),)))
    if _UNK.fullmatch(token.lstrip(_SPACE_MARKS)):
        candidates.append(_Reading((_Wild("unk"),)))
    elif _SPECIAL.fullmatch(token.lstrip(_SPACE_MARKS)):
        candidates.append(_Reading((), special=True))
    if token == "":
        candidates.append(_Reading((), hidden_special=True))
        candidates.append(_Reading((_Wild("lossy"),)))  # a piece of a character, dropped
    unique: list[_Reading] = []
    for reading in candidates:
        if reading not in unique:
            unique.append(reading)
    return tuple(unique)


# --------------------------------------------------------------------------------------------
# The text the tokens cover
# --------------------------------------------------------------------------------------------

_WHITESPACE = frozenset(b" \t\n\r\x0b\x0c")
_IN_PREFIX = -1  # owner of a prefix character
_IN_GAP = -2  # owner of a space between regions


class _Text:
    """prefix + sentence as UTF-8 bytes, with the owner (region index) of every character."""

    def __init__(self, prefix: str, pairs: list[tuple[int, str]], *, fold: bool) -> None:
        sentence = " ".join(content for _, content in pairs if content)
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
        self.owner_of_char = [_IN_PREFIX] * len(prefix) + [_IN_GAP] * len(sentence)
        for index, span in enumerate(region_spans(pairs)):
            for char in range(span.start, span.end):
                self.owner_of_char[self.prefix_chars + char] = index

    def skip_ws(self, pos: int) -> int:
        while pos < len(self.data) and self.data[pos] in _WHITESPACE:
            pos += 1
        return pos

    def at_end(self, pos: int) -> bool:
        return self.skip_ws(pos) >= len(self.data)

    def owner_of_byte(self, pos: int) -> int:
        return self.owner_of_char[self.char_of_byte[pos]]

    def is_char_boundary(self, pos: int) -> bool:
        return self.char_start[self.char_of_byte[pos]] == pos

    # -- matching ------------------------------------------------------------------------------

    def match(self, reading: _Reading, pos: int) -> Iterator[int]:
        """Every byte offset where ``reading`` can end when it starts at ``pos``."""
        if reading.special:
            yield pos
            return
        if reading.hidden_special:
            spelled = _SPECIAL_BYTES.match(self.data, pos)
            if spelled and spelled.end() <= self.prefix_bytes:
                yield spelled.end()
            return
        yield from self._match_from(reading.segments, 0, pos, skip=not reading.glued)

    def _match_from(
        self, segments: tuple[_Segment, ...], k: int, pos: int, skip: bool
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
        for end in self._wild_ends(segment, start):
            yield from self._match_from(segments, k + 1, end, skip=False)

    def _match_literal(self, literal: bytes, pos: int, skip: bool) -> int | None:
        if self.fold:
            literal = literal.lower()
        if self.data.startswith(literal, pos):
            return pos + len(literal)
        if not skip:
            return None
        # Tokens may lack the whitespace the text has (word-level tokens, HELM's decoding of
        # SentencePiece pieces) or carry a space the text lacks (SentencePiece's dummy prefix).
        core = literal.lstrip(bytes(_WHITESPACE))
        start = self.skip_ws(pos)
        if self.data.startswith(core, start):
            return start + len(core)
        return None

    def _wild_ends(self, wild: _Wild, start: int) -> Iterator[int]:
        data = self.data
        if wild.kind == "unk":
            end = start
            while end < len(data) and data[end] not in _WHITESPACE:
                end += 1
                if end == len(data) or self.is_char_boundary(end):
                    yield end
            return
        # Lossy: only non-ASCII bytes (ASCII always decodes), and never a whole character.
        end = start
        while end < len(data) and data[end] >= 0x80:
            end += 1
            if self._holds_whole_char(start, end):
                return
            if end - start >= wild.min_bytes:
                yield end

    def _holds_whole_char(self, start: int, end: int) -> bool:
        char = self.char_of_byte[start]
        if self.char_start[char] != start:
            char += 1  # start is inside a character: the first whole one begins after it
        return char < len(self.text) and self.char_start[char + 1] <= end

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


# --------------------------------------------------------------------------------------------
# The search
# --------------------------------------------------------------------------------------------


class _NoAlignment(AlignmentError):
    """No way to align the tokens (message says where it breaks)."""


class _Ambiguous(AlignmentError):
    """More than one way to align the tokens, and the ways disagree about some token's region."""


_INVALID = -3  # a move that would straddle prefix and sentence


class _Search:
    """All alignments of the tokens to the text, as a dynamic programme over (token, byte offset).

    The forward pass finds every offset each token can start at; the backward pass keeps, for
    each state, up to two distinct region assignments of the remaining tokens (shared suffixes
    are interned, so long prompts stay linear). For each token the most literal reading that
    completes an alignment wins; two surviving assignments at the start mean real ambiguity.
    """

    def __init__(self, text: _Text, tokens: Sequence[str]) -> None:
        self.text = text
        self.tokens = tokens
        self.readings = [_readings(token) for token in tokens]
        self.moves: dict[tuple[int, int], list[tuple[int, int]]] = {}
        self.straddle: str | None = None

    def run(self) -> list[int | None]:
        reach = self._forward()
        return self._backward(reach)

    def _forward(self) -> list[set[int]]:
        reach: list[set[int]] = [{0}]
        for i in range(len(self.tokens)):
            following: set[int] = set()
            for pos in reach[i]:
                moves = [
                    (r, end)
                    for r, reading in enumerate(self.readings[i])
                    for end in self.text.match(reading, pos)
                ]
                self.moves[(i, pos)] = moves
                following.update(end for _, end in moves)
            if not following:
                raise _NoAlignment(self._mismatch(i, max(reach[i])))
            reach.append(following)
        return reach

    def _backward(self, reach: list[set[int]]) -> list[int | None]:
        n = len(self.tokens)
        nodes: list[tuple[int | None, int]] = [(None, -1)]  # node 0: the empty suffix
        interned: dict[tuple[int | None, int], int] = {}
        best: dict[int, tuple[int, ...]] = {p: (0,) for p in reach[n] if self.text.at_end(p)}
        if not best:
            raise _NoAlignment(self._uncovered(max(reach[n])))
        for i in range(n - 1, -1, -1):
            best = {pos: self._options(i, pos, best, nodes, interned) for pos in reach[i]}
        root = best.get(0, ())
        if not root:
            raise _NoAlignment(self.straddle or "the tokens cannot be aligned to the text")
        if len(root) > 1:
            raise _Ambiguous(self._ambiguity(reach, *(self._unwind(nodes, r) for r in root[:2])))
        return self._unwind(nodes, root[0])

    def _options(
        self,
        i: int,
        pos: int,
        best: dict[int, tuple[int, ...]],
        nodes: list[tuple[int | None, int]],
        interned: dict[tuple[int | None, int], int],
    ) -> tuple[int, ...]:
        """Up to two distinct assignments of tokens i.. from ``pos``, by the best reading."""
        moves = self.moves[(i, pos)]
        for r, reading in enumerate(self.readings[i]):
            found: list[int] = []
            for move_reading, end in moves:
                children = best.get(end, ()) if move_reading == r else ()
                if not children:
                    continue
                owner = self._owner(i, reading, pos, end)
                if owner == _INVALID:
                    continue
                for child in children:
                    key = (owner, child)
                    node = interned.get(key)
                    if node is None:
                        node = interned[key] = len(nodes)
                        nodes.append(key)
                    if node not in found:
                        found.append(node)
            if found:
                return tuple(found[:2])
        return ()

    def _owner(self, i: int, reading: _Reading, pos: int, end: int) -> int | None:
        """The region index token ``i`` counts for when it covers bytes ``pos:end``."""
        text = self.text
        if reading.special:
            return None
        if pos < text.prefix_bytes and end <= text.prefix_bytes:
            return None  # wholly inside the prefix
        first = text.skip_ws(pos)  # rule 1, and rule 2 for whitespace-only tokens
        if first >= len(text.data):
            return None
        owner = text.owner_of_byte(first)
        if owner == _IN_PREFIX:
            if any(b not in _WHITESPACE for b in text.data[text.prefix_bytes : end]):
                self.straddle = self.straddle or (
                    f"token {i} {self.tokens[i]!r} runs from the prefix into the sentence, at "
                    f"{text.where(text.prefix_bytes)}: end the prefix at a token boundary "
                    "(e.g. with whitespace) so that the first region keeps all its text"
                )
                return _INVALID
            return None
        return None if owner == _IN_GAP else owner

    @staticmethod
    def _unwind(nodes: list[tuple[int | None, int]], node: int) -> list[int | None]:
        owners: list[int | None] = []
        while node != 0:
            owner, node = nodes[node]
            owners.append(owner)
        return owners

    # -- messages ------------------------------------------------------------------------------

    def _mismatch(self, i: int, pos: int) -> str:
        token = self.tokens[i]
        where = self.text.where(self.text.skip_ws(pos))
        if self.text.at_end(pos):
            problem = f"cannot align token {i} {token!r}: the tokens run past the end of the text"
        else:
            problem = f"cannot align token {i} {token!r}: its text does not occur"
        problem += f", at {where}"
        if not self.text.at_end(pos) and self._is_wildcard(i):
            problem += (
                "; it is a wildcard (unknown word or U+FFFD) and no stretch of the text there fits one"
            )
        if i > 0:
            problem += f"; the previous token is {i - 1} {self.tokens[i - 1]!r}"
        return problem

    def _uncovered(self, pos: int) -> str:
        count = len(self.tokens)
        last = f" (the last is {count - 1} {self.tokens[-1]!r})" if count else ""
        return (
            f"the {count} tokens{last} do not cover the whole text: it goes on at "
            f"{self.text.where(self.text.skip_ws(pos))}"
        )

    def _ambiguity(
        self, reach: list[set[int]], one: list[int | None], other: list[int | None]
    ) -> str:
        k = next(k for k, (a, b) in enumerate(zip(one, other)) if a != b)
        wild = [f"{j} {self.tokens[j]!r}" for j in range(len(self.tokens)) if self._is_wildcard(j)]
        return (
            f"cannot align token {k} {self.tokens[k]!r} without guessing: it may count for "
            f"{self._region_label(one[k])} or {self._region_label(other[k])} at "
            f"{self.text.where(min(reach[k]))}, because the wildcard tokens "
            f"({', '.join(wild)}) can cover the text in more than one way"
        )

    def _is_wildcard(self, i: int) -> bool:
        return any(isinstance(s, _Wild) for r in self.readings[i] for s in r.segments)

    def _region_label(self, owner: int | None) -> str:
        return "no region" if owner is None else f"region {self.text.numbers[owner]}"
