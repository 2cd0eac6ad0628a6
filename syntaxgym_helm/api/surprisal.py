"""Word-by-word surprisal of any text (:func:`word_surprisals`; the CLI's ``syntaxgym-helm
surprisal``): one row per word with its tokens, its surprisal in bits without and with the
word-boundary correction (Pimentel & Meister 2024; :mod:`syntaxgym_helm.core.word_boundary`),
spill-over columns and a flag for a word that cannot be measured.

Texts are scored by the plugin's local engine (:mod:`syntaxgym_helm.clients.local`: the same
prompt encoding, exact token texts, prefix sharing and model loading as the suites), each text a
new document after the model's beginning-of-text token. A text longer than the window is scored
in windows (:func:`~syntaxgym_helm.core.word_texts.plan_windows`): every word once, with at least
``window - stride`` tokens of context before it (or all of the text before it).

A served model (a deployment of :class:`~syntaxgym_helm.clients.served.EchoCompletionsClient`)
gives the uncorrected column only, each text sent whole after ``prefix``
(:mod:`syntaxgym_helm.api.surprisal_served`); the header says so and why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import Any

from syntaxgym_helm.api.surprisal_scoring import COLUMNS, WordSurprisal, score_texts
from syntaxgym_helm.api.surprisal_served import is_served, served_rows
from syntaxgym_helm.core.output_files import write_whole
from syntaxgym_helm.core.word_texts import (
    WordedText,
    read_plain_texts,
    read_words_tsv,
    texts_from_strings,
)

__all__ = ["SurprisalTable", "WordSurprisal", "read_plain_texts", "read_words_tsv",
           "word_surprisals", "write_surprisal_tsv"]

@dataclass(frozen=True)
class SurprisalTable:
    """The rows, and the header that says how they were computed (model, units, what came before
    the first word, window and stride)."""

    header: dict[str, str]
    rows: list[WordSurprisal]

    def to_dataframe(self) -> Any:
        import pandas as pd

        frame = pd.DataFrame([astuple(r) for r in self.rows], columns=list(COLUMNS))
        frame.attrs.update(self.header)
        return frame


def word_surprisals(texts: Sequence[WordedText] | Sequence[str], model: str, *,
                    window: int | None = None, stride: int | None = None,
                    device: str | None = None, local_path: str | Path | None = None,
                    prefix: str = "auto", num_threads: int = 4,
                    boundary_end_of_text: bool = True) -> SurprisalTable:
    """The surprisal of every word of ``texts`` (:class:`WordedText`, e.g. from
    :func:`read_words_tsv`, or plain strings split on whitespace) under ``model``: a HELM model
    name served by the plugin's local engine (e.g. ``syntaxgym/smollm2-135m-instruct-q4_1``), or
    a served model (a deployment of ``EchoCompletionsClient`` in ``local_path``'s YAML).

    Local models: ``window``: most tokens of a prompt after the beginning-of-text token
    (default: the model's context less 1); ``stride``: the most new tokens a window measures
    (default: half the window), so every word has at least ``window - stride`` tokens of context
    or the whole text before it; ``device``; ``boundary_end_of_text=False``: the corrected
    column does not count the end of text as a word boundary, as minicons' ``bow_correction``
    does not (docs/scoring.md). Served models: ``prefix``, the text sent before each text
    (``auto``: the deployment's tokenizer's prefix token, as a run's ``prefix=auto``; ``none``:
    nothing), and ``num_threads`` requests at a time; each text is sent whole."""
    worded: list[WordedText] = (
        [t for t in texts if isinstance(t, WordedText)]
        if all(isinstance(t, WordedText) for t in texts)
        else texts_from_strings([str(t) for t in texts]))
    for name, value in (("window", window), ("stride", stride)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or value < 1):
            raise ValueError(f"{name}={value!r}: a number of tokens, 1 or more")
    deployment, where = _deployment(model, local_path)
    if is_served(deployment):
        given = [name for name, value in (("window", window), ("stride", stride),
                                          ("device", device)) if value is not None]
        if given:
            raise ValueError(f"{model} is a served model: {', '.join(given)} apply to local "
                             "models only (a served model gets each text whole, in one request)")
        header, served = served_rows(worded, model, deployment, where, prefix, num_threads)
        return SurprisalTable(header, served)
    if prefix != "auto":
        raise ValueError(f"prefix={prefix!r}: the local engine scores each text after the "
                         "model's beginning-of-text token; prefix applies to served models only")
    engine = local_engine(model, local_path, device, boundary_end_of_text)
    window = window if window is not None else engine.encoder.max_length - 1
    stride = stride if stride is not None else max(1, window // 2)
    if window > engine.encoder.max_length - 1:
        raise ValueError(f"the window ({window} tokens) exceeds the model's context of "
                         f"{engine.encoder.max_length} tokens less the beginning-of-text token")
    rows = score_texts(engine, worded, window, stride)
    header = {
        "model": model,
        "units": "bits (surprisal = -log2 p(word | words before it))",
        "first_word_context": f"the model's beginning-of-text token {engine.bos_text!r} alone: "
                              "each text is a new document",
        "window": f"{window} tokens after the beginning-of-text token",
        "stride": f"{stride} tokens (each word has at least {window - stride} tokens of "
                  "context, or the whole text before it)",
        "surprisal_bits": "sum of the word's token surprisals",
        "surprisal_corrected_bits": "word-boundary correction (Pimentel & Meister 2024): "
                                    "+ log P(word-initial token | context) - log P(next token "
                                    + ("begins a word or ends the text | context + word)"
                                       if boundary_end_of_text else
                                       "begins a word | context + word); the end of text is "
                                       "not a word boundary (minicons' rule)"),
        "spill_over": "previous_1_bits, previous_2_bits: corrected surprisal of the word one "
                      "and two before in the same text",
    }
    return SurprisalTable(header, rows)


def local_engine(model: str, local_path: str | Path | None = None, device: str | None = None,
                 boundary_end_of_text: bool = True):
    """The local engine (with the word-boundary mask, the end of text in it or not) of
    ``model``'s deployment, loaded once per process; ValueError for a model the plugin's local
    engine does not serve."""
    from helm.common.cache import BlackHoleCacheConfig
    from helm.common.object_spec import get_class_by_name

    from syntaxgym_helm.clients.local.client import SyntaxGymClient

    deployment, _ = _deployment(model, local_path)
    spec = deployment.client_spec
    client_class = get_class_by_name(spec.class_name)
    if not (isinstance(client_class, type) and issubclass(client_class, SyntaxGymClient)):
        raise ValueError(f"{model} is served by {spec.class_name}: word surprisals need the "
                         "plugin's local engine (a syntaxgym/ model, or a local checkpoint's "
                         "deployment with SyntaxGymClient) or a served model deployed with "
                         "syntaxgym_helm.clients.served.EchoCompletionsClient (docs/served.md)")
    args = {**spec.args, "word_boundary": True, "boundary_end_of_text": boundary_end_of_text,
            "prefetch": False, "progress": False}
    if device:
        args["device"] = device
    client = client_class(cache_config=BlackHoleCacheConfig(), model_name=deployment.model_name,
                          **args)
    return client.server.wait_ready()


def _deployment(model: str, local_path: str | Path | None):
    """HELM's deployment of ``model`` and the folder its configs were read from."""
    from helm.benchmark.model_deployment_registry import get_model_deployment

    from syntaxgym_helm.api.helm_engine import local_path_of, model_deployment

    where = local_path_of(local_path)
    return get_model_deployment(model_deployment(model, where)), where


def write_surprisal_tsv(table: SurprisalTable, path: str | Path | None) -> str:
    """The table as TSV (``# key: value`` header lines, then a row of column names), written to
    ``path`` when given, whole or not at all (:func:`~syntaxgym_helm.core.output_files.write_whole`:
    an :class:`~syntaxgym_helm.core.output_files.OutputFileError` names the path and why, and an
    earlier file there is left as it was); returns the text."""
    lines = [f"# {key}: {value}" for key, value in table.header.items()]
    lines.append("\t".join(COLUMNS))
    for row in table.rows:
        lines.append("\t".join(_cell(v) for v in astuple(row)))
    text = "\n".join(lines) + "\n"
    if path is not None:
        write_whole(path, text)
    return text


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6f}"
    return str(value).replace("\t", " ").replace("\n", " ")
