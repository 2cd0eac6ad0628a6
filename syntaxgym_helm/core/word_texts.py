"""Texts as words for word-by-word surprisal: reading them (:func:`read_plain_texts`: one text a
line; :func:`read_words_tsv`: words already segmented, with ids, as reading-time corpora ship
them), finding each word's tokens (:func:`word_tokens`) and cutting a long text into windows of
tokens that score every word once (:func:`plan_windows`).

What is scored is what the file says (:func:`decode_word_file`): UTF-8, or the encoding a
byte-order mark names (a UTF-8 mark, as Notepad and Excel write it; UTF-16, as Windows
PowerShell's ``>`` writes it; UTF-32), the mark itself not part of any word; anything else is
refused with the file and line (bytes that are not UTF-8; a NUL character, which is how UTF-16
without its mark reads). Lines end at ``\n``, ``\r\n`` or ``\r`` (old Mac files). A line's
words are separated by runs of ASCII whitespace, and its text is its words joined by single
spaces, as a suite's regions are read (:func:`~syntaxgym_helm.core.suite_data.region_text`):
every other character is text, no-break and ideographic spaces included. A separator this
reader does not split texts on (U+2028 LINE SEPARATOR, U+2029 PARAGRAPH SEPARATOR, U+0085 NEXT
LINE, the information separators U+001C to U+001E) is named: the text that holds it is flagged,
not scored, as it may be two texts or one.

Problems of the file's structure (a missing column, a missing or duplicated id) stop reading with
an error that names the file and line; a problem of one text or word (an empty text, a line of
only spaces, a separator, an empty word or one with whitespace inside) is kept as a flag on it,
and the rest is read. A TSV's own word index is kept (``WordedText.indices``), gaps included, so
that the output joins back to the corpus by it.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from syntaxgym_helm.core.errors import SyntaxGymError
from syntaxgym_helm.core.files import read_regular_file


class WordInputError(SyntaxGymError, ValueError):
    """An input file that cannot be read as texts of words (the message names file and line)."""


@dataclass(frozen=True)
class WordedText:
    """A text as its words, in order (``text_id``: its id; ``source``: where it was read,
    ``file:line``). ``problem``: why the whole text cannot be measured (then ``words`` may be
    empty); ``word_problems``: word index -> why that word cannot be measured; ``indices``: each
    word's own index in its corpus (a TSV's index column; empty: 0, 1, 2...)."""

    text_id: str
    words: tuple[str, ...]
    source: str = ""
    problem: str = ""
    word_problems: dict[int, str] = field(default_factory=dict)
    indices: tuple[int, ...] = ()

    @property
    def text(self) -> str:
        """The words joined by single spaces (the words with a problem left out)."""
        return " ".join(self.scored_words())

    def scored_words(self) -> list[str]:
        return [w for k, w in enumerate(self.words) if k not in self.word_problems]

    def index(self, k: int) -> int:
        """The corpus's own index of word ``k`` (``k`` when the text has none)."""
        return self.indices[k] if self.indices else k

    def index_gaps(self) -> list[tuple[int, int]]:
        """(index, next index) where the text's own indices skip one or more."""
        return [(a, b) for a, b in zip(self.indices, self.indices[1:], strict=False)
                if b - a > 1]


#: Byte-order marks and the encoding each names (UTF-32's first: FF FE 00 00 begins with FF FE).
BYTE_ORDER_MARKS = ((codecs.BOM_UTF32_LE, "UTF-32-LE"), (codecs.BOM_UTF32_BE, "UTF-32-BE"),
                    (codecs.BOM_UTF8, "UTF-8"), (codecs.BOM_UTF16_LE, "UTF-16-LE"),
                    (codecs.BOM_UTF16_BE, "UTF-16-BE"))
#: Where a line ends (and so a plain file's text).
LINE_BREAK = re.compile(r"\r\n|\r|\n")
#: What separates words: a run of ASCII whitespace (the rule of a suite's regions).
WORD_SEPARATOR = re.compile(r"[ \t\n\r\f\v]+")
#: Separators of lines or records that this reader does not split texts on (named when met).
UNSPLIT_SEPARATORS = {"\u2028": "LINE SEPARATOR", "\u2029": "PARAGRAPH SEPARATOR",
                      "\x85": "NEXT LINE", "\x1c": "FILE SEPARATOR",
                      "\x1d": "GROUP SEPARATOR", "\x1e": "RECORD SEPARATOR"}
_UNSPLIT = re.compile("[" + "".join(UNSPLIT_SEPARATORS) + "]")


def decode_word_file(path: str | Path) -> str:
    """The text of the file at ``path`` (see the module doc: UTF-8, or what a byte-order mark
    names, the mark removed); :class:`WordInputError` naming the file and line otherwise."""
    data = read_regular_file(path)
    encoding, start = "UTF-8", 0
    for mark, name in BYTE_ORDER_MARKS:
        if data.startswith(mark):
            encoding, start = name, len(mark)
            break
    body = data[start:]
    marked = " (as its byte-order mark says)" if start else ""
    try:
        text = body.decode(encoding)
    except UnicodeDecodeError as exc:
        before = body[: exc.start].decode(encoding, errors="replace")
        raise WordInputError(
            f"{path}:{_line_of(before, len(before))}: not {encoding}{marked} (byte "
            f"{start + exc.start + 1} of the file, {body[exc.start:exc.start + 1].hex()}): save "
            "the file as UTF-8") from None
    nul = text.find("\0")
    if nul >= 0:
        likely = ("UTF-16 without a byte-order mark" if nul <= 1 or text.count("\0") * 3 >
                  len(text) else "a binary file")
        raise WordInputError(f"{path}:{_line_of(text, nul)}: a NUL character (U+0000), which no "
                             f"text holds: the file looks like {likely}; save it as UTF-8")
    return text


def _line_of(text: str, offset: int) -> int:
    """The line (from 1) that character ``offset`` of ``text`` is on."""
    return len(LINE_BREAK.findall(text, 0, offset)) + 1


def words_of(text: str) -> tuple[str, ...]:
    """A text's words: what runs of ASCII whitespace separate."""
    return tuple(word for word in WORD_SEPARATOR.split(text) if word)


def text_problem(text: str) -> str:
    """Why a plain text cannot be measured ("" when it can): empty, only whitespace, or holding
    a separator this reader does not split on (see the module doc)."""
    found = _UNSPLIT.search(text)
    if found:
        char = found.group()
        return (f"the text holds U+{ord(char):04X} {UNSPLIT_SEPARATORS[char]} (character "
                f"{found.start() + 1}), a separator texts are not split on (only line breaks, "
                "\\n, \\r\\n or \\r, are): replace it with a line break (two texts) or a space "
                "(one text)")
    if not text:
        return "the text is empty"
    return "" if text.strip() else "the text is only whitespace"


def texts_from_strings(texts: Sequence[str], source: str = "text") -> list[WordedText]:
    """Plain texts (ids 1, 2, ...) split into words (:func:`words_of`), each flagged with its
    :func:`text_problem`."""
    return [WordedText(str(number), words_of(text), f"{source}:{number}", text_problem(text))
            for number, text in enumerate(texts, start=1)]


def read_plain_texts(path: str | Path) -> list[WordedText]:
    """One text a line (ids: the line numbers), from a file :func:`decode_word_file` reads."""
    text = decode_word_file(path)
    lines = LINE_BREAK.split(text)
    if lines and not lines[-1]:
        lines.pop()  # the file's final line break, or an empty file
    return [WordedText(str(number), each.words, f"{path}:{number}", each.problem)
            for number, each in enumerate(texts_from_strings(lines, str(path)), start=1)]


def read_words_tsv(path: str | Path, *, text_column: str = "text_id",
                   index_column: str = "word_id", word_column: str = "word") -> list[WordedText]:
    """Words already segmented: a TSV with a header row naming ``text_column`` (a text's id),
    ``index_column`` (the word's position in its text: an integer, unique within the text, kept
    as the word's index, gaps included) and ``word_column``; other columns are ignored. Texts in
    order of first appearance, words in index order."""
    content = decode_word_file(path)
    rows = [line.split("\t") for line in LINE_BREAK.split(content)]
    if rows and rows[-1] == [""]:
        rows.pop()  # the file's final line break
    reader = iter(rows)
    header = next(reader, None)
    if header is None:
        raise WordInputError(f"{path}:1: the file is empty: a header row naming the columns "
                             f"{text_column}, {index_column}, {word_column} is needed")
    missing = [c for c in (text_column, index_column, word_column) if c not in header]
    if missing:
        raise WordInputError(f"{path}:1: no column {', '.join(missing)} in the header "
                             f"({', '.join(header)}): name the columns with text_column, "
                             "index_column, word_column")
    columns = [header.index(c) for c in (text_column, index_column, word_column)]
    words: dict[str, dict[int, tuple[str, int]]] = {}
    for number, row in enumerate(reader, start=2):
        if not row or row == [""]:
            continue
        if len(row) <= max(columns):
            raise WordInputError(f"{path}:{number}: {len(row)} columns, the header has "
                                 f"{len(header)}")
        text_id, index, word = (row[c] for c in columns)
        if not text_id.strip():
            raise WordInputError(f"{path}:{number}: the {text_column} is missing")
        try:
            position = int(index)
        except ValueError:
            raise WordInputError(f"{path}:{number}: the {index_column} {index!r} is not an "
                                 "integer") from None
        earlier = words.setdefault(text_id, {})
        if position in earlier:
            raise WordInputError(f"{path}:{number}: {text_column} {text_id} has "
                                 f"{index_column} {position} twice (also line "
                                 f"{earlier[position][1]})")
        earlier[position] = (word, number)
    texts = []
    for text_id, by_index in words.items():
        order = sorted(by_index)
        ordered = [by_index[k] for k in order]
        problems = {k: f"{path}:{line}: " + reason for k, (w, line) in enumerate(ordered)
                    if (reason := _word_problem(w))}
        texts.append(WordedText(text_id, tuple(w for w, _ in ordered),
                                f"{path}:{ordered[0][1]}", "", problems, tuple(order)))
    return texts


def _word_problem(word: str) -> str:
    if not word.strip():
        return "the word is empty"
    if WORD_SEPARATOR.search(word):
        return "the word has whitespace inside: it would be two words of the text"
    found = _UNSPLIT.search(word)
    if found:
        return (f"the word holds U+{ord(found.group()):04X} "
                f"{UNSPLIT_SEPARATORS[found.group()]}, a separator of lines or records")
    return ""


def word_tokens(words: Sequence[str], token_texts: Sequence[str]) -> list[tuple[list[int], str]]:
    """Per word of the text ``" ".join(words)``, the indices of its tokens in ``token_texts`` (the
    tokens' exact slices of the text, in order) and a problem ("" when none). A token of only
    whitespace or of no text (a piece of a character) counts for the word after it; a token that
    covers parts of two words makes both unmeasurable."""
    starts, position = [], 0
    for each in words:
        starts.append(position)
        position += len(each) + 1
    owners: list[set[int]] = []
    position, word = 0, 0
    for text in token_texts:
        end = position + len(text)
        content_start = position + (len(text) - len(text.lstrip()))
        covered = set()
        while word < len(words) and starts[word] + len(words[word]) <= content_start:
            word += 1
        scan = word
        while scan < len(words) and starts[scan] < end:
            covered.add(scan)
            scan += 1
        if not text.strip():  # whitespace or nothing: the next word's
            covered = {word} if word < len(words) else set()
        owners.append(covered)
        position = end
    result: list[tuple[list[int], str]] = [([], "") for _ in words]
    for index, covered in enumerate(owners):
        for k in covered:
            result[k][0].append(index)
        if len(covered) > 1:
            for k in covered:
                result[k] = (result[k][0], "a token covers parts of this word and the next or "
                                           "previous one: the words cannot be told apart")
    return [(tokens, problem or ("" if tokens else "the word has no token"))
            for tokens, problem in result]


@dataclass(frozen=True)
class Window:
    """Tokens ``[start, end)`` of a text scored as one prompt (after the beginning-of-text
    token), and the words it measures."""

    start: int
    end: int
    words: tuple[int, ...]


def plan_windows(spans: Sequence[tuple[int, int] | None], tokens: int, window: int,
                 stride: int) -> tuple[list[Window], list[int]]:
    """Windows of at most ``window`` tokens over a text of ``tokens`` tokens whose words are
    the token ``spans`` (first, last; None for a word not measured): every word in exactly one
    window, with every token of the text before it in that window, or at least
    ``window - stride`` of them. Also returns the words no window can hold (longer than
    ``stride`` tokens). One window when the text fits."""
    if not 0 < stride <= window:
        raise ValueError(f"the stride ({stride}) must be positive and at most the window "
                         f"({window})")
    measured = [k for k, span in enumerate(spans) if span is not None]
    if tokens <= window:
        return [Window(0, tokens, tuple(measured))], []
    context = window - stride
    windows: list[Window] = []
    too_long: list[int] = []
    pending = list(measured)
    while pending:
        first = spans[pending[0]]
        assert first is not None
        start = max(0, first[0] - context)
        # Begin at a word's first token (no window starts inside a word) when the word still fits.
        earlier = [s[0] for s in spans if s is not None and s[0] <= start]
        if earlier and first[1] < max(earlier) + window:
            start = max(earlier)
        end = min(tokens, start + window)
        inside = []
        while pending:
            span = spans[pending[0]]
            assert span is not None
            if span[1] >= end:
                break
            inside.append(pending.pop(0))
        if not inside:
            too_long.append(pending.pop(0))
            continue
        windows.append(Window(start, end, tuple(inside)))
    return windows, too_long
