"""Texts as words for word-by-word surprisal: reading them (:func:`read_plain_texts`: one text a
line, words split on whitespace; :func:`read_words_tsv`: words already segmented, with ids, as
reading-time corpora ship them), finding each word's tokens (:func:`word_tokens`) and cutting a
long text into windows of tokens that score every word once (:func:`plan_windows`).

A text is its words joined by single spaces, so every word after the first begins after a space
(the beginning-of-word mark of the tokenizers the word-boundary correction serves). Problems of
the file's structure (a missing column, a missing or duplicated id) stop reading with an error that
names the file and line; a problem of one text or word (an empty text, a line of only spaces,
undecodable bytes, an empty word or one with whitespace inside) is kept as a flag on it, and the
rest is read.
"""

from __future__ import annotations

import csv
import io
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
    empty); ``word_problems``: word index -> why that word cannot be measured."""

    text_id: str
    words: tuple[str, ...]
    source: str = ""
    problem: str = ""
    word_problems: dict[int, str] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """The words joined by single spaces (the words with a problem left out)."""
        return " ".join(self.scored_words())

    def scored_words(self) -> list[str]:
        return [w for k, w in enumerate(self.words) if k not in self.word_problems]


def texts_from_strings(texts: Sequence[str], source: str = "text") -> list[WordedText]:
    """Plain texts (ids 1, 2, ...) split into words on whitespace."""
    result = []
    for number, text in enumerate(texts, start=1):
        where = f"{source}:{number}"
        problem = "" if text.strip() else ("the text is empty" if not text
                                           else "the text is only whitespace")
        result.append(WordedText(str(number), tuple(text.split()), where, problem))
    return result


def read_plain_texts(path: str | Path) -> list[WordedText]:
    """One text a line (ids: the line numbers); a line that is not UTF-8 is flagged, not read."""
    texts = []
    for number, raw in enumerate(read_regular_file(path).split(b"\n"), start=1):
        raw = raw.rstrip(b"\r")
        where = f"{path}:{number}"
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            texts.append(WordedText(str(number), (), where,
                                    f"the line is not UTF-8 (byte {exc.start + 1}): fix the "
                                    "file's encoding"))
            continue
        texts.extend(texts_from_strings([line], str(path)))
        texts[-1] = WordedText(str(number), texts[-1].words, where, texts[-1].problem)
    if texts and not texts[-1].words and not texts[-1].problem.startswith("the line"):
        texts.pop()  # the file's final newline
    return texts


def read_words_tsv(path: str | Path, *, text_column: str = "text_id",
                   index_column: str = "word_id", word_column: str = "word") -> list[WordedText]:
    """Words already segmented: a TSV with a header row naming ``text_column`` (a text's id),
    ``index_column`` (the word's position in its text: an integer, unique within the text) and
    ``word_column``; other columns are ignored. Texts in order of first appearance, words in
    index order."""
    data = read_regular_file(path)
    try:
        content = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise WordInputError(f"{path}:{line}: not UTF-8 (byte {exc.start + 1} of the file): "
                             "fix the file's encoding") from None
    reader = csv.reader(io.StringIO(content), delimiter="\t", quoting=csv.QUOTE_NONE)
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
        ordered = [by_index[k] for k in sorted(by_index)]
        problems = {k: f"{path}:{line}: " + reason for k, (w, line) in enumerate(ordered)
                    if (reason := _word_problem(w))}
        texts.append(WordedText(text_id, tuple(w for w, _ in ordered),
                                f"{path}:{ordered[0][1]}", "", problems))
    return texts


def _word_problem(word: str) -> str:
    if not word.strip():
        return "the word is empty"
    if any(c.isspace() for c in word):
        return "the word has whitespace inside: it would be two words of the text"
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
