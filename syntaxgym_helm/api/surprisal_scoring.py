"""The rows of :func:`syntaxgym_helm.api.surprisal.word_surprisals`: texts tokenized once, cut
into windows, every window of every text scored in one call of the local engine (token logprobs
and, at each position, log P(the next token begins a word)), and each word's sums taken."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields

from syntaxgym_helm.clients.local.prompt_encoding import EncodedPrompt, PromptEncoder, PromptError
from syntaxgym_helm.clients.local.word_boundary import begins_word, token_and_boundary_logprobs
from syntaxgym_helm.core.word_texts import WordedText, plan_windows, word_tokens

BITS = 1 / math.log(2)


@dataclass(frozen=True)
class WordSurprisal:
    """One word's row (the columns of the output, in order). ``word_index``: the word's own index
    in its corpus where the input gives one (a TSV's index column), else its position from 0.
    Surprisals in bits; None when the word cannot be measured (``flag`` and ``reason`` say why)
    or has no word before it."""

    text_id: str
    word_index: int
    word: str
    tokens: str
    surprisal_bits: float | None
    surprisal_corrected_bits: float | None
    previous_1_bits: float | None
    previous_2_bits: float | None
    flag: str
    reason: str


COLUMNS = tuple(f.name for f in fields(WordSurprisal))


@dataclass
class WordMeasure:
    """What is known of one word so far."""

    word: str
    tokens: str = ""
    plain: float | None = None
    corrected: float | None = None
    flag: str = ""
    reason: str = ""


def score_texts(engine, texts: Sequence[WordedText], window: int,
                stride: int) -> list[WordSurprisal]:
    """One row per word of ``texts`` (a text that cannot be measured at all: one flagged row)."""
    encoder = PromptEncoder(engine.encoder.tokenizer, engine.bos_text, 10**12)
    specials = special_tokens(engine.encoder.tokenizer)
    measures: list[list[WordMeasure]] = []
    prompts: list[EncodedPrompt] = []
    jobs: list[tuple[int, int, tuple[int, ...], list[tuple[int, int]], list[int], list[bool]]] = []
    for t, text in enumerate(texts):
        words = [WordMeasure(w) for w in text.words]
        measures.append(words)
        for k, problem in text.word_problems.items():
            words[k].flag, words[k].reason = "bad-word", problem
        if text.problem or not text.scored_words():
            continue
        kept = [k for k in range(len(text.words)) if k not in text.word_problems]
        encoded = encoder.encode_many([text.text])[0]
        if isinstance(encoded, PromptError):
            for k in kept:
                words[k].flag, words[k].reason = "untokenizable", str(encoded)
            continue
        ids, token_texts = encoded.ids[1:], encoded.texts[1:]
        marks = begins_word(engine.boundary_mask, ids)
        alignment = list(zip(kept, word_tokens(text.scored_words(), token_texts), strict=False))
        special = _special_token(ids, specials, alignment, text)
        spans: list[tuple[int, int] | None] = []
        for k, (tokens, problem) in alignment:
            words[k].tokens = "|".join(token_texts[i] for i in tokens)
            if special and tokens and tokens[-1] >= special[0]:
                words[k].flag, words[k].reason = "special-token", special[1]
                spans.append(None)
            elif problem:
                words[k].flag, words[k].reason = "token-alignment", problem
                spans.append(None)
            else:
                spans.append((tokens[0], tokens[-1]))
        planned, too_long = plan_windows(spans, len(ids), window, stride)
        for position in too_long:
            span = spans[position]
            assert span is not None
            words[kept[position]].flag = "too-long"
            words[kept[position]].reason = (
                f"the word has {span[1] - span[0] + 1} tokens: more than a window's stride of "
                f"{stride} tokens can measure")
        for part in planned:
            prompts.append(EncodedPrompt("".join(token_texts[part.start: part.end]),
                                         (encoder.bos_id, *ids[part.start: part.end]),
                                         (encoder.bos_text, *token_texts[part.start: part.end])))
            jobs.append((t, part.start, tuple(kept[p] for p in part.words),
                         [s for p in part.words if (s := spans[p]) is not None], list(ids),
                         marks))
    results = token_and_boundary_logprobs(engine, prompts) if prompts else []
    for (t, start, indices, spans_of, _, marks), (logprobs, boundary) in zip(
        jobs, results, strict=False
    ):
        for k, span in zip(indices, spans_of, strict=False):
            _measure(measures[t][k], span, start, logprobs, boundary, marks)
    return word_rows(texts, measures)


def special_tokens(tokenizer) -> dict[int, str]:
    """The tokenizer's special tokens (id -> text): what it reads as a control token (a
    document break, a turn of a chat) where the string appears in a text."""
    found = {index: str(token) for index, token in
             getattr(tokenizer, "added_tokens_decoder", {}).items()
             if getattr(token, "special", False)}
    for text, index in zip(tokenizer.all_special_tokens, tokenizer.all_special_ids, strict=False):
        found.setdefault(index, text)
    return found


def _special_token(ids: Sequence[int], specials: dict[int, str],
                   alignment: list[tuple[int, tuple[list[int], str]]],
                   text: WordedText) -> tuple[int, str] | None:
    """The first of the text's tokens that is a special token, and the reason every word from
    the one that holds it on is not measured; None when there is none."""
    first = next((i for i, token in enumerate(ids) if token in specials), None)
    if first is None:
        return None
    word = next((k for k, (tokens, _) in alignment if tokens and tokens[-1] >= first), None)
    where = f" (in word {text.index(word)}, {text.words[word]!r})" if word is not None else ""
    return first, (f"the text holds {specials[ids[first]]!r}{where}, which the tokenizer reads "
                   "as its special token, not as text (a document break, or another control "
                   "token): no word from there on is measured; remove it or write it otherwise")


def _measure(word: WordMeasure, span: tuple[int, int], start: int, logprobs: list[float],
             boundary: list[float], marks: list[bool]) -> None:
    """Fill ``word``'s surprisals from its window's results (``start``: the window's first token
    in the text; ``marks``: which of the text's tokens begin a word)."""
    first, last = span[0] - start + 1, span[1] - start + 1  # in the window, after its BOS
    total = sum(logprobs[first: last + 1])
    word.plain = -total * BITS
    if span[0] > 0 and not marks[span[0]]:
        word.flag, word.reason = "no-boundary", (
            "the word's first token does not begin a word for the tokenizer: the correction "
            "does not apply (the uncorrected surprisal is given)")
        return
    if span[1] + 1 < len(marks) and not marks[span[1] + 1]:
        word.flag, word.reason = "no-boundary", (
            "the token after the word does not begin a word for the tokenizer: the correction "
            "does not apply (the uncorrected surprisal is given)")
        return
    corrected = total + boundary[last]
    if first > 1 or start > 0:
        corrected -= boundary[first - 1]
    word.corrected = -min(corrected, 0.0) * BITS


def word_rows(texts: Sequence[WordedText], measures: list[list[WordMeasure]],
              spill_over: str = "corrected") -> list[WordSurprisal]:
    """The rows of ``texts`` from their words' measures (a text that cannot be measured at all:
    one flagged row); the spill-over columns repeat the ``spill_over`` surprisal (``corrected``
    or ``plain``) of the word one and two before."""
    rows = []
    for text, words in zip(texts, measures, strict=False):
        if text.problem:
            rows.append(WordSurprisal(text.text_id, 0, "", "", None, None, None, None,
                                      "bad-text", f"{text.source}: {text.problem}"))
            continue
        for k, word in enumerate(words):
            before = [getattr(words[k - d], spill_over) if k - d >= 0 else None for d in (1, 2)]
            rows.append(WordSurprisal(text.text_id, text.index(k), word.word, word.tokens,
                                      word.plain, word.corrected, before[0], before[1],
                                      word.flag, word.reason))
    return rows
