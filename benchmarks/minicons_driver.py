"""Token logprobs of sentences with minicons (``IncrementalLMScorer.token_score``), run by
``compare_minicons.py`` in minicons' own virtual environment (it imports nothing of this project).

Reads a JSON request ``{"folder", "gguf_file", "batch_size", "variants": {name: {"bos": ...}},
"sentences": [...]}`` and writes one JSON line per variant and sentence: ``{"variant", "index",
"bos", "texts", "logprobs"}``. A variant's ``bos`` is what minicons puts before each sentence: a
text (``bos_token=True`` with the tokenizer's ``bos_token`` set to it), ``"declared"``
(``bos_token=True`` with the tokenizer's own ``bos_token``) or null (``bos_token=False``,
minicons' default); its ``bow_correction`` (default false) turns on minicons' correction for
tokenizers that mark the beginning of a word. ``texts`` are the tokens minicons scored, each
decoded alone (as HELM's clients return them); ``logprobs`` are minicons' own values in nats,
0.0 for the first token as it returns it.

    python minicons_driver.py REQUEST.json OUTPUT.jsonl
"""

from __future__ import annotations

import json
import sys
import time

import torch
from minicons import scorer
from transformers import AutoModelForCausalLM, AutoTokenizer


def main() -> None:
    request = json.load(open(sys.argv[1], encoding="utf-8"))
    torch.manual_seed(0)
    started = time.perf_counter()
    model = AutoModelForCausalLM.from_pretrained(request["folder"], gguf_file=request["gguf_file"],
                                                 dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(request["folder"], gguf_file=request["gguf_file"])
    lm = scorer.IncrementalLMScorer(model, device="cpu", tokenizer=tokenizer)
    declared_bos = lm.tokenizer.bos_token
    print(f"model loaded in {time.perf_counter() - started:.1f} s; the tokenizer's bos_token is "
          f"{declared_bos!r}", flush=True)
    sentences = request["sentences"]
    size = int(request["batch_size"])
    with open(sys.argv[2], "w", encoding="utf-8") as out:
        for name, variant in request["variants"].items():
            bos = declared_bos if variant["bos"] == "declared" else variant["bos"]
            lm.tokenizer.bos_token = bos if bos is not None else declared_bos
            started = time.perf_counter()
            for start in range(0, len(sentences), size):
                batch = sentences[start: start + size]
                scored = lm.token_score(batch, bos_token=bos is not None,
                                        bow_correction=bool(variant.get("bow_correction")))
                encoded, _ = lm.prepare_text(batch, bos_token=bos is not None)
                for offset, (pairs, ids, mask) in enumerate(zip(
                        scored, encoded["input_ids"].tolist(),
                        encoded["attention_mask"].tolist(), strict=False)):
                    kept = [i for i, m in zip(ids, mask, strict=False) if m]
                    if len(kept) != len(pairs):
                        raise SystemExit(f"sentence {start + offset}: {len(pairs)} scores for "
                                         f"{len(kept)} tokens")
                    out.write(json.dumps({"variant": name, "index": start + offset, "bos": bos,
                                          "texts": [lm.tokenizer.decode([i]) for i in kept],
                                          "logprobs": [float(s) for _, s in pairs]}) + "\n")
            print(f"{name}: {len(sentences)} sentences (word-boundary correction "
                  f"{'on' if variant.get('bow_correction') else 'off'}, "
                  f"{'a' if lm.is_bow_tokenizer else 'not a'} beginning-of-word tokenizer) in "
                  f"{time.perf_counter() - started:.1f} s", flush=True)


if __name__ == "__main__":
    main()
