"""Token logprobs of sentences with minicons 0.3.39's ``MaskedLMScorer.token_score`` (both PLL
variants) or ``Seq2SeqScorer.conditional_token_score``, run by ``compare_minicons_masked.py`` in
minicons' own virtual environment (it imports nothing of this project).

minicons' ``MaskedLMScorer`` calls ``tokenizer.batch_encode_plus``, which transformers 5 removed;
the one-line fix is to call the tokenizer itself (``self.tokenizer(sentences, ...)`` in
``LMScorer.encode``), done here by giving the tokenizer that attribute.

``Seq2SeqScorer`` is given the model object and tokenizer (given a path, it adds a ``<|bos|>``
token and resizes the model's embeddings, which changes every log-softmax); the source is the
end-of-sequence token (minicons cannot run an empty encoder input).

    python minicons_masked_driver.py REQUEST.json OUTPUT.json

REQUEST: ``{"folder", "kind": "masked"|"seq2seq", "variant", "batch_size", "sentences"}``;
OUTPUT: ``{"logprobs": [[...], ...], "tokens": [[...], ...], "seconds": ...}`` (nats).
"""

from __future__ import annotations

import json
import sys
import time

import torch
from minicons import scorer
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer


def main() -> None:
    request = json.load(open(sys.argv[1], encoding="utf-8"))
    torch.set_grad_enabled(False)
    started = time.perf_counter()
    sentences = request["sentences"]
    size = int(request["batch_size"])
    if request["kind"] == "masked":
        lm = scorer.MaskedLMScorer(request["folder"], "cpu")
        lm.tokenizer.batch_encode_plus = lm.tokenizer.__call__  # the transformers 5 fix
        score = lambda batch: lm.token_score(batch, PLL_metric=request["variant"])  # noqa: E731
    else:
        tokenizer = AutoTokenizer.from_pretrained(request["folder"])
        model = AutoModelForSeq2SeqLM.from_pretrained(request["folder"]).eval()
        lm = scorer.Seq2SeqScorer(model, "cpu", tokenizer=tokenizer)
        source = tokenizer.eos_token
        score = lambda batch: lm.conditional_token_score(  # noqa: E731
            [source] * len(batch), batch, decode=False)
    tokens, logprobs = [], []
    for start in range(0, len(sentences), size):
        for scored in score(sentences[start:start + size]):
            tokens.append([token for token, _ in scored])
            logprobs.append([float(value) for _, value in scored])
    json.dump({"tokens": tokens, "logprobs": logprobs,
               "seconds": time.perf_counter() - started}, open(sys.argv[2], "w"))


if __name__ == "__main__":
    main()
