"""Word surprisals of whole texts with minicons (``IncrementalLMScorer.word_score_tokenized``), run
by ``bench_naturalstories.py`` in minicons' own virtual environment (it imports nothing of this
project).

Reads a JSON request ``{"folder", "gguf_file", "bos", "corrections": [false, true], "texts":
[...]}`` and writes one JSON line per correction and text: ``{"bow_correction", "index", "words",
"surprisals"}`` (bits, minicons' ``surprisal=True, base_two=True``), the words split on whitespace
(``str.split``, which keeps the texts' own segmentation). ``bos``: a text minicons puts before each
text (``bos_token=True`` with the tokenizer's ``bos_token`` set to it), or null when the tokenizer
adds its own (Gemma's ``<bos>``).

    python minicons_words_driver.py REQUEST.json OUTPUT.jsonl
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
    started = time.perf_counter()
    model = AutoModelForCausalLM.from_pretrained(request["folder"], gguf_file=request["gguf_file"],
                                                 dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(request["folder"], gguf_file=request["gguf_file"])
    lm = scorer.IncrementalLMScorer(model, device="cpu", tokenizer=tokenizer)
    bos = request["bos"]
    if bos is not None:
        lm.tokenizer.bos_token = bos
    print(f"model loaded in {time.perf_counter() - started:.1f} s", flush=True)
    with open(sys.argv[2], "w", encoding="utf-8") as out:
        for correction in request["corrections"]:
            started = time.perf_counter()
            for index, text in enumerate(request["texts"]):
                scored = lm.word_score_tokenized([text], str.split, bow_correction=correction,
                                                 bos_token=bos is not None, surprisal=True,
                                                 base_two=True)[0]
                out.write(json.dumps({"bow_correction": correction, "index": index,
                                      "words": [w for w, _ in scored],
                                      "surprisals": [float(s) for _, s in scored]}) + "\n")
            print(f"bow_correction={correction}: {len(request['texts'])} texts in "
                  f"{time.perf_counter() - started:.1f} s", flush=True)


if __name__ == "__main__":
    main()
