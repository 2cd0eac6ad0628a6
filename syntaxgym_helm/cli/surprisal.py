"""``syntaxgym-helm surprisal INPUT``: word-by-word surprisal of any text, one row per word
(:mod:`syntaxgym_helm.api.surprisal`).

INPUT is plain text (one text a line) or, with ``--tsv``, words already segmented with ids.
Exit status 1 when the input cannot be read (the message names the file and line); a text or
word that cannot be measured is a flagged row, and the rest of the output is kept.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from syntaxgym_helm.cli.output import say as _say
from syntaxgym_helm.core.errors import SyntaxGymError


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "surprisal", help="word-by-word surprisal (bits) of texts, with and without the "
                          "word-boundary correction")
    parser.add_argument("input", type=Path, help="plain text (one text a line), or a TSV with "
                                                 "--tsv")
    parser.add_argument("--model", required=True,
                        help="a model of the plugin's local engine, e.g. "
                             "syntaxgym/smollm2-135m-instruct-q4_1, or a served model "
                             "(EchoCompletionsClient) of --local-path's YAML: uncorrected "
                             "surprisals only")
    parser.add_argument("--local-path", type=Path, default=None, metavar="DIR",
                        help="where HELM's model configs and credentials are (default: "
                             "prod_env when it exists)")
    parser.add_argument("--tsv", action="store_true",
                        help="INPUT is a TSV of words with a header row (see the --*-column "
                             "options)")
    parser.add_argument("--text-column", default="text_id", help="TSV: a text's id")
    parser.add_argument("--index-column", default="word_id",
                        help="TSV: a word's position in its text (an integer)")
    parser.add_argument("--word-column", default="word", help="TSV: the word")
    parser.add_argument("--window", type=int, default=None,
                        help="most tokens of a prompt (default: the model's context less 1)")
    parser.add_argument("--stride", type=int, default=None,
                        help="most new tokens a window measures (default: half the window)")
    parser.add_argument("--no-end-of-text-boundary", dest="boundary_end_of_text",
                        action="store_false",
                        help="the corrected column does not count the end of text as a word "
                             "boundary: minicons' bow_correction rule (docs/scoring.md)")
    parser.add_argument("--device", default=None, help="cpu, cuda:0... (default: the model's)")
    parser.add_argument("--prefix", default="auto",
                        help="served models: text sent before each text (auto: the tokenizer's "
                             "prefix token, as a run's prefix=auto; none: nothing)")
    parser.add_argument("--num-threads", type=int, default=4,
                        help="served models: requests at a time (default 4)")
    parser.add_argument("-o", "--output", type=Path, default=None,
                        help="write the TSV there (default: standard output)")
    parser.set_defaults(handler=_surprisal)


def _surprisal(args: argparse.Namespace) -> int:
    from syntaxgym_helm.clients import interruption

    target = f"{args.output} was not written" if args.output else "no row was printed"
    interruption.leaves(f"nothing was scored; {target}")
    from syntaxgym_helm.api.surprisal import (
        read_plain_texts,
        read_words_tsv,
        word_surprisals,
        write_surprisal_tsv,
    )
    from syntaxgym_helm.core.output_files import check_destination

    try:
        if args.output is not None:
            check_destination(args.output)  # before minutes of scoring, not after
        if args.tsv:
            texts = read_words_tsv(args.input, text_column=args.text_column,
                                   index_column=args.index_column, word_column=args.word_column)
        else:
            texts = read_plain_texts(args.input)
    except SyntaxGymError as exc:
        _say(f"error: {exc}", sys.stderr)
        return 1
    if not texts:
        _say(f"error: {args.input}: no text to score", sys.stderr)
        return 1
    _warn_index_gaps(texts, args.index_column)
    interruption.leaves(f"no word's surprisal is kept; {target}: run the command again")
    try:
        table = word_surprisals(texts, args.model, window=args.window, stride=args.stride,
                                device=args.device, local_path=args.local_path,
                                prefix=args.prefix, num_threads=args.num_threads,
                                boundary_end_of_text=args.boundary_end_of_text)
    except (ValueError, LookupError) as exc:
        _say(f"error: {exc}", sys.stderr)
        return 1
    interruption.leaves(f"{args.output} is as it was before, or whole" if args.output
                        else "the rows printed may end mid-row")
    try:
        text = write_surprisal_tsv(table, args.output)
    except SyntaxGymError as exc:
        _say(f"error: {exc}", sys.stderr)
        return 1
    if args.output is None:
        sys.stdout.write(text)
    flagged = sum(bool(row.flag) for row in table.rows)
    _say(f"{len(table.rows)} rows ({flagged} flagged)" + (f" written to {args.output}"
                                                            if args.output else ""), sys.stderr)
    return 0


def _warn_index_gaps(texts, index_column: str) -> None:
    """Name the texts whose own indices skip some (a word missing from the corpus file): they
    are scored as the words given, and the output keeps each word's own index."""
    gapped = [(text, gaps) for text in texts if (gaps := text.index_gaps())]
    if not gapped:
        return
    shown = "; ".join(f"text {text.text_id} ({text.source}): {index_column} "
                      + ", ".join(f"{a} to {b}" for a, b in gaps[:3])
                      + (f" and {len(gaps) - 3} more" if len(gaps) > 3 else "")
                      for text, gaps in gapped[:5])
    more = f"; and {len(gapped) - 5} more texts" if len(gapped) > 5 else ""
    _say(f"warning: {len(gapped)} text(s) skip {index_column} values, scored as the words "
         f"given (each row keeps its own {index_column}): {shown}{more}", sys.stderr)
