"""The rows of :func:`syntaxgym_helm.api.surprisal.word_surprisals` for a served model: each text
sent whole as one echo request (``echo_prompt``, ``max_tokens=0``, as a run's) through HELM to the
deployment's :class:`~syntaxgym_helm.clients.served.EchoCompletionsClient`, and each word's token
logprobs summed.

Only the uncorrected surprisal: the word-boundary correction needs, at every position, the
probability of every token of the vocabulary that begins a word, and a completions API returns the
prompt tokens' own logprobs only. The client bounds every request by its ``timeout`` and fails one
whose answer holds a logprob above 0 (or NaN, or a null after the first token); that text's words
are flagged with the reason, and the other texts are kept.

Tokens are assigned to words as the local engine assigns them
(:func:`~syntaxgym_helm.core.word_texts.word_tokens`) when the server's token texts are exact
slices of the text; when they are not (a special token shown as ``""``, a piece of a character),
by the suites' alignment (:func:`~syntaxgym_helm.core.alignment.align`, each word a region).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from syntaxgym_helm.api.surprisal_scoring import BITS, WordMeasure, WordSurprisal, word_rows
from syntaxgym_helm.core.alignment import align
from syntaxgym_helm.core.errors import AlignmentError
from syntaxgym_helm.core.logprobs import as_logprob, logprob_problem
from syntaxgym_helm.core.word_texts import WordedText, word_tokens

NO_CONTEXT = ("the first token of the prompt: the server returns no logprob for it (nothing "
              "before it that the prompt shows); give a prefix (e.g. the model's "
              "beginning-of-text token) to measure the first word")


def score_served_texts(send, texts: Sequence[WordedText], prefix: str,
                       num_threads: int = 4) -> list[WordSurprisal]:
    """One row per word of ``texts`` (a text that cannot be measured at all: one flagged row).
    ``send(prompt)``: HELM's ``RequestResult`` of the echo request of ``prompt``; ``prefix``: the
    text sent before each text, whose tokens are not measured."""
    jobs = [t for t, text in enumerate(texts) if not text.problem and text.scored_words()]
    with ThreadPoolExecutor(max_workers=max(1, num_threads)) as pool:
        results = dict(zip(jobs, pool.map(lambda t: send(prefix + texts[t].text), jobs),
                           strict=True))
    measures: list[list[WordMeasure]] = []
    for t, text in enumerate(texts):
        measured = _measure_text(text, results[t], prefix) if t in results else {}
        words = [WordMeasure(word) for word in text.words]
        for k, (tokens, plain, flag, reason) in measured.items():
            words[k].tokens, words[k].plain, words[k].flag, words[k].reason = (tokens, plain,
                                                                                flag, reason)
        for k, problem in text.word_problems.items():
            words[k].flag, words[k].reason = "bad-word", problem
        measures.append(words)
    return word_rows(texts, measures, spill_over="plain")


Measured = dict[int, tuple[str, float | None, str, str]]


def _measure_text(text: WordedText, result: Any, prefix: str) -> Measured:
    """Word index -> (tokens, uncorrected bits, flag, reason) of one text's answer."""
    kept = [k for k in range(len(text.words)) if k not in text.word_problems]
    words = text.scored_words()

    def every(flag: str, reason: str) -> Measured:
        return {k: ("", None, flag, reason) for k in kept}

    if not result.success or not result.completions:
        return every("request-failed", str(result.error or "the request returned nothing"))
    tokens = result.completions[0].tokens
    texts = [token.text for token in tokens]
    logprobs = [token.logprob for token in tokens]
    for index, value in enumerate(logprobs):
        problem = logprob_problem(value)
        if problem and not (index == 0 and value is None):
            return every("impossible-logprob", f"token {index} {texts[index]!r}'s logprob "
                                               f"{problem}: the answer is refused")
    try:
        owners = align([(j + 1, w) for j, w in enumerate(words)], texts,
                       prefix=prefix).region_of_token
    except AlignmentError as error:
        return every("token-alignment", f"the server's tokens do not spell the prompt ({error})")
    first = next((i for i, owner in enumerate(owners) if owner is not None), len(texts))
    own = texts[first:]
    if "".join(own) == text.text:  # exact slices: the local engine's assignment
        spans = [([first + i for i in found], problem)
                 for found, problem in word_tokens(words, own)]
    else:
        spans = [([i for i, owner in enumerate(owners) if owner == j + 1],
                  "" if j + 1 in owners else "the word has no token") for j in range(len(words))]
    measured: Measured = {}
    for k, (found, problem) in zip(kept, spans, strict=True):
        shown = "|".join(texts[i] for i in found)
        if problem:
            measured[k] = (shown, None, "token-alignment", problem)
        elif found[0] == 0:
            measured[k] = (shown, None, "no-context", NO_CONTEXT)
        else:
            total = sum(as_logprob(logprobs[i]) for i in found)
            measured[k] = (shown, -total * BITS, "", "")
    return measured


def is_served(deployment) -> bool:
    """Whether ``deployment`` (a HELM ``ModelDeployment``) is a served model whose prompt
    logprobs word surprisals can read: one of :class:`EchoCompletionsClient`."""
    from helm.common.object_spec import get_class_by_name

    try:  # needs openai (HELM's OpenAI client), which local models do without
        from syntaxgym_helm.clients.served import EchoCompletionsClient
    except ImportError:
        return False
    client_class = get_class_by_name(deployment.client_spec.class_name)
    return isinstance(client_class, type) and issubclass(client_class, EchoCompletionsClient)


def served_rows(texts: Sequence[WordedText], model: str, deployment, local_path, prefix: str,
                num_threads: int) -> tuple[dict[str, str], list[WordSurprisal]]:
    """The header and rows of a served model (``prefix``: ``auto``, ``none`` or the text)."""
    from helm.common.request import Request

    from syntaxgym_helm.api.helm_engine import executor
    from syntaxgym_helm.harness.run_spec import model_prefix

    text = {"auto": model_prefix(model, deployment.name), "none": ""}.get(prefix, prefix)
    context = executor(local_path, None, max(1, num_threads)).context

    def send(prompt: str) -> Any:
        return context.make_request(Request(
            model=deployment.model_name, model_deployment=deployment.name, prompt=prompt,
            temperature=0.0, num_completions=1, top_k_per_token=1, max_tokens=0,
            stop_sequences=[], echo_prompt=True))

    with contextlib.redirect_stdout(sys.stderr):  # HELM's log lines: not into a TSV on stdout
        rows = score_served_texts(send, texts, text, num_threads)
    where = deployment.client_spec.args.get("base_url") or "the provider's API"
    header = {
        "model": model,
        "served": f"by deployment {deployment.name} ({deployment.client_spec.class_name}) at "
                  f"{where}: a served model, which returns the prompt tokens' logprobs only",
        "units": "bits (surprisal = -log2 p(word | words before it))",
        "first_word_context": (
            f"{text!r} sent before each text (and any beginning-of-text token the server adds "
            "itself)" if text else
            "nothing sent before each text (the server may add a beginning-of-text token "
            "itself); the first word is flagged no-context: a server returns no logprob for a "
            "prompt's first token"),
        "window": "none: each text is sent whole, one request (a text longer than the "
                  "server's context fails, and its words are flagged request-failed)",
        "surprisal_bits": "sum of the word's token surprisals, from the server's prompt logprobs",
        "surprisal_corrected_bits": "empty: the word-boundary correction needs the whole "
                                    "next-token distribution at every position (the probability "
                                    "that the next token begins a word), which a served API "
                                    "does not return; score the weights locally for it",
        "spill_over": "previous_1_bits, previous_2_bits: uncorrected surprisal of the word one "
                      "and two before in the same text",
    }
    return header, rows
