"""What scoring all 34 Hu et al. (2020) suites costs a served model: requests and tokens.

One echo request per condition (sentence); prompt = prefix + sentence. Token counts depend on the
tokenizer; the default is the embedded SmolLM2's (GPT-2-style byte-level BPE, 49,152 entries).
``--tokenizer`` takes any Hugging Face tokenizer folder or name available offline. From the
project root::

    python benchmarks/served_cost.py [--tokenizer PATH] [--prefix '<|endoftext|>']
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SUITES_DIR = ROOT.parent / "shared" / "suites" / "hu2020"


def main() -> None:
    from transformers import AutoTokenizer

    from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M
    from syntaxgym_helm.core.suite import load_suite

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suites-dir", type=Path, default=DEFAULT_SUITES_DIR)
    parser.add_argument("--tokenizer", help="a Hugging Face tokenizer (default: SmolLM2's GGUF)")
    parser.add_argument("--prefix", default="<|endoftext|>",
                        help="text before every sentence (one token when it is a special token)")
    args = parser.parse_args()
    if args.tokenizer:
        tokenizer, name = AutoTokenizer.from_pretrained(args.tokenizer), args.tokenizer
    else:
        tokenizer = AutoTokenizer.from_pretrained(str(SMOLLM2_135M.directory()),
                                                  gguf_file=SMOLLM2_135M.gguf_file)
        name = "SmolLM2-135M (GGUF)"
    prefix_tokens = len(tokenizer(args.prefix, add_special_tokens=False).input_ids) \
        if args.prefix else 0
    suites = sorted(args.suites_dir.glob("*.json"))
    items = requests = tokens = characters = 0
    lengths: list[int] = []
    for path in suites:
        suite = load_suite(path)
        for item in suite.items:
            items += 1
            for condition in item.conditions:
                n = len(tokenizer(condition.sentence, add_special_tokens=False).input_ids)
                requests += 1
                tokens += n
                characters += len(condition.sentence)
                lengths.append(n)
    print(f"tokenizer: {name}")
    print(f"suites: {len(suites)}, items: {items:,}, requests (sentences): {requests:,}")
    print(f"sentence tokens: {tokens:,} (mean {statistics.mean(lengths):.1f}, max {max(lengths)} "
          f"per sentence), characters: {characters:,}")
    print(f"prompt tokens with the prefix ({prefix_tokens} per request): "
          f"{tokens + prefix_tokens * requests:,}")
    print(f"generated tokens: 0 with max_tokens=0; {requests:,} with max_tokens_for_echo: 1")


if __name__ == "__main__":
    main()
