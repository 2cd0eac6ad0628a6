"""The word-boundary correction beside minicons' ``bow_correction``, for
``compare_minicons.py``: the plugin's corrected token logprobs under minicons' rule (the end of
text not a word boundary: ``boundary_end_of_text=False``), from the plugin's engine on the same
weights, against minicons' ``word-boundary`` tokens; and how many verdicts the correction changes
(the plugin's ``~bow`` model against its plain one)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from syntaxgym_helm.api.results import SuiteResult
from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M
from syntaxgym_helm.core.item_evaluation import TokenScore, evaluate_item
from syntaxgym_helm.core.suite import Suite

BITS = 1 / math.log(2)


def minicons_rule_tokens(sentences: Sequence[str]) -> dict[str, list[tuple[str, float]]]:
    """sentence -> the plugin's (token text, corrected logprob) without the end-of-text token in
    the boundary set (minicons' rule); the beginning-of-text token first."""
    from syntaxgym_helm.clients.local.logprob_engine import LogprobEngine
    from syntaxgym_helm.clients.local.model_loading import load_model_and_tokenizer

    folder = SMOLLM2_135M.directory()
    model, tokenizer = load_model_and_tokenizer(str(folder), gguf_file=SMOLLM2_135M.gguf_file,
                                                device="cpu")
    engine = LogprobEngine(model, tokenizer, bos_text=SMOLLM2_135M.bos_text,
                           word_boundary=True, boundary_end_of_text=False)
    encoded = [engine.encoder.encode(s) for s in sentences]
    values = engine.logprobs_of_encoded(encoded)
    return {
        e.prompt: list(zip(e.texts, v, strict=False)) for e, v in zip(encoded, values, strict=False)
    }


def rule_lines(suites: Sequence[Suite], records: dict[tuple[str, str], dict],
               plain: dict[str, SuiteResult], bow: dict[str, SuiteResult]) -> list[str]:
    """Report lines: largest token difference and verdicts otherwise, ours under minicons' rule
    against minicons' ``word-boundary``; and items the correction changes in the plugin."""
    sentences = sorted({c.sentence for s in suites for i in s.items for c in i.conditions})
    ours = minicons_rule_tokens(sentences)
    largest, compared, same_tokens = 0.0, 0, 0
    items = items_otherwise = changed = 0
    for suite in suites:
        for item, plain_item, bow_item in zip(suite.items, plain[suite.name].items,
                                              bow[suite.name].items, strict=False):
            changed += bool(plain_item.passed) != bool(bow_item.passed)
            mine, theirs = {}, {}
            for condition in item.conditions:
                record = records[("word-boundary", condition.sentence)]
                tokens = ours[condition.sentence]
                compared += 1
                if [t for t, _ in tokens] == list(record["texts"]):
                    same_tokens += 1
                    largest = max(
                        largest,
                        max(
                            abs(a - b) * BITS
                            for (_, a), b in zip(tokens[1:], record["logprobs"][1:], strict=False)
                        ),
                    )
                mine[condition.condition_name] = [TokenScore(t, v) for t, v in tokens]
                theirs[condition.condition_name] = [
                    TokenScore(t, v)
                    for t, v in zip(record["texts"], record["logprobs"], strict=False)
                ]
            bos = SMOLLM2_135M.bos_text
            a = evaluate_item(suite, item, mine, prefix=bos)
            b = evaluate_item(suite, item, theirs, prefix=bos)
            items += 1
            items_otherwise += bool(a.passed) != bool(b.passed)
    return [
        "",
        "Word-boundary correction: the plugin's `~bow` model changes "
        f"{changed:,} of {items:,} items' verdicts against its plain model. Under minicons' rule "
        "(the end of text not a word boundary; the plugin's engine with "
        f"`boundary_end_of_text=False`), {same_tokens:,} of {compared:,} conditions tokenized "
        f"alike, largest token difference from minicons' `bow_correction` {largest:.2g} bits, "
        f"{items_otherwise:,} of {items:,} items otherwise. The `word-boundary` row above "
        "compares minicons with the `~bow` model, whose boundary set also holds the end of text "
        "(docs/scoring.md, Word boundaries): its last-token values differ by that.",
    ]
