"""Prompts as the engine's token sequences: the beginning-of-text token, then the prompt's tokens,
each with the exact slice of the prompt it comes from (:class:`PromptEncoder`), and what the
engine returns for a prompt (:class:`PromptLogprobs`) or refuses (:class:`PromptError`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass


class PromptError(ValueError):
    """A request this client cannot serve (its fault, not the model's): reported, not retried."""


@dataclass(frozen=True)
class PromptLogprobs:
    """A prompt's tokens, beginning-of-text token first, and their logprobs (nats); and the
    forward pass that computed them: its seconds and how many prompts it computed (what HELM's
    ``RequestResult.batch_request_time`` and ``batch_size`` record; None when not known)."""

    prompt: str
    texts: tuple[str, ...]
    logprobs: tuple[float, ...]
    pass_seconds: float | None = None
    pass_prompts: int | None = None


@dataclass(frozen=True)
class EncodedPrompt:
    """A prompt's token ids and exact token texts, the beginning-of-text token's first.

    ``boundaries``: the passes also return, after the token logprobs, log P(the next token begins
    a word) at each position that scores a token (see :mod:`.word_boundary`)."""

    prompt: str
    ids: tuple[int, ...]
    texts: tuple[str, ...]
    boundaries: bool = False


class PromptEncoder:
    """Turns prompts into :class:`EncodedPrompt` (or :class:`PromptError` when unusable: empty,
    no tokens, tokens that do not cover the prompt, longer than ``max_length`` with the
    beginning-of-text token).

    ``bos_text``: the beginning-of-text token (default: the tokenizer's bos token, else its eos
    token); it must be a single token of the tokenizer.
    """

    def __init__(self, tokenizer, bos_text: str | None, max_length: int) -> None:
        self.tokenizer = tokenizer
        self.bos_text, self.bos_id = beginning_of_text(tokenizer, bos_text)
        self.max_length = max_length

    def encode(self, prompt: str) -> EncodedPrompt:
        """Token ids (beginning-of-text first) and exact token texts; PromptError when unusable."""
        encoded = self.encode_many([prompt])[0]
        if isinstance(encoded, PromptError):
            raise encoded
        return encoded

    def encode_many(self, prompts: Sequence[str]) -> list[EncodedPrompt | PromptError]:
        """:meth:`encode` for many prompts at once (one tokenizer call); errors are returned."""
        results: list[EncodedPrompt | PromptError] = []
        usable = [i for i, p in enumerate(prompts) if p]
        encodings: dict[int, tuple[list[int], list[str]]] = {}
        if usable and getattr(self.tokenizer, "is_fast", False):
            batch = self.tokenizer([prompts[i] for i in usable], add_special_tokens=False,
                                   return_offsets_mapping=True)
            for k, i in enumerate(usable):
                ids = list(batch["input_ids"][k])
                encodings[i] = (ids, texts_from_offsets(prompts[i], batch["offset_mapping"][k]))
        else:
            # Slow tokenizers have no offsets: texts come from decoding growing prefixes.
            for i in usable:
                ids = self.tokenizer(prompts[i], add_special_tokens=False)["input_ids"]
                encodings[i] = (list(ids), self._texts_by_decoding(ids))
        for i, prompt in enumerate(prompts):
            if i not in encodings:
                results.append(PromptError("the prompt is empty: there is nothing to score"))
                continue
            ids, texts = encodings[i]
            if not ids:
                results.append(PromptError(f"the prompt {prompt!r} has no tokens"))
            elif "".join(texts) != prompt:
                results.append(PromptError(f"the tokenizer's tokens of {prompt!r} do not cover "
                                           f"it exactly: {texts!r}"))
            elif len(ids) + 1 > self.max_length:
                results.append(PromptError(
                    f"the prompt is {len(ids)} tokens long; with the beginning-of-text token that "
                    f"exceeds the model's context of {self.max_length} tokens"))
            else:
                results.append(EncodedPrompt(prompt, (self.bos_id, *ids),
                                             (self.bos_text, *texts)))
        return results

    def _texts_by_decoding(self, ids: Sequence[int]) -> list[str]:
        """Token texts from decoding growing prefixes. A prefix that ends inside a character
        decodes to U+FFFD there, which the prompt lacks: the character goes with the token that
        completes it, and the pieces before get "" (as :func:`texts_from_offsets` does)."""
        texts: list[str] = []
        previous = ""
        for end in range(1, len(ids) + 1):
            decoded = self.tokenizer.decode(ids[:end])
            complete = decoded.rstrip("\ufffd") if end < len(ids) else decoded
            if complete.startswith(previous):
                texts.append(complete[len(previous):])
                previous = complete
            else:
                texts.append(complete)
                previous = complete
        return texts


def beginning_of_text(tokenizer, bos_text: str | None) -> tuple[str, int]:
    """The beginning-of-text token's text and id: ``bos_text``, else the tokenizer's bos token,
    else its eos token; ValueError when there is none or it is not a single token."""
    text = bos_text or tokenizer.bos_token or tokenizer.eos_token
    if not text:
        raise ValueError("the tokenizer has no beginning-of-text (bos) or end-of-text token; "
                         "pass bos_text")
    token_id = tokenizer.convert_tokens_to_ids(text)
    if not isinstance(token_id, int) or (
            token_id == tokenizer.unk_token_id and text != tokenizer.unk_token):
        raise ValueError(f"bos_text {text!r} is not a single token of the tokenizer")
    return text, token_id


def context_length(model, tokenizer) -> int:
    """The model's context length in tokens: from its config, else the tokenizer's, else 2048."""
    config = model.config
    for name in ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length"):
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            return value
    value = getattr(tokenizer, "model_max_length", None)
    # Tokenizers without a known limit report a huge sentinel (int(1e30)).
    if isinstance(value, int) and 0 < value < 10**8:
        return value
    return 2048


def texts_from_offsets(prompt: str, offsets: Iterable[tuple[int, int]]) -> list[str]:
    """Exact prompt slices, one per token, concatenating to the prompt.

    A token's slice ends where its span ends (so a space that the tokenizer leaves out of a
    token's span goes with the token after it), but never past the start of a later token: a
    character that the tokenizer splits over several byte-level tokens is in the span of each
    of them, and it goes with the last of them, the one that completes it. The tokens before
    that one get an empty slice, and an empty token counts for the region of the character
    after it (rule 2 of :mod:`syntaxgym_helm.core.alignment`): so every piece of a character
    counts in that character's region. (Giving the character to the first piece instead sent
    the other pieces to the next region, or, at the end of the sentence, to none.) The last
    token's slice runs to the end of the prompt."""
    spans = [(max(0, int(start)), min(int(end), len(prompt))) for start, end in offsets]
    cuts: list[int] = []
    later_start = len(prompt)  # where the earliest token after this one begins
    for start, end in reversed(spans):
        cuts.append(min(end, later_start))
        if end > start:  # an empty span (a token of no text) bounds nothing
            later_start = min(later_start, start)
    cuts.reverse()
    texts: list[str] = []
    done = 0
    for index, cut in enumerate(cuts):
        cut = len(prompt) if index == len(cuts) - 1 else max(cut, done)
        texts.append(prompt[done:cut])
        done = cut
    return texts
