"""Masked-LM and encoder-decoder scores beside minicons 0.3.39's, on the same sentences and weights.

The sentences are BLiMP minimal pairs (``--blimp-dir``, the first ``--pairs`` of each of
``--paradigms``). The model is a real architecture built from its config (no masked or
encoder-decoder checkpoint can be installed here): a WordPiece (BERT) or byte-level BPE (RoBERTa)
tokenizer learnt from the sentences and a model of ``--shape`` (``base``, the default: BERT-base /
RoBERTa-base, hidden 768, 12 layers, the real vocabulary size, what a user scores; ``small``:
hidden 256, 4 layers, where start-up costs weigh more), seeded, trained for a few steps and saved
to a folder; ``--model DIR`` scores a checkpoint of your own instead (a Hub model's folder).

Each side runs as its own process, back to back, timed whole (``/usr/bin/time``: wall seconds and
peak resident memory): this plugin through its Python API (``score_sentences(sentences,
"DIR~VARIANT")``: the code path of a ``helm-run``), and minicons (``minicons_masked_driver.py`` in
its own virtual environment, ``--minicons-python``, batches of ``--batch-size`` sentences, the
transformers-5 fix applied). It prints the largest difference of a token logprob (nats), the
tokens counted alike, the verdicts (good sentence's sum above the bad one's) that differ, and the
two processes' times and memory with their ratio, the load average seen before each run, and
(masked LMs) the multiply-adds of each side's matrix products, whose ratio bounds the ratio of
the computation's time (:func:`matmul_work`).

    python benchmarks/compare_minicons_masked.py --blimp-dir ../shared/blimp/data \\
        --minicons-python /work/venvs/minicons/bin/python [--kind bert|roberta|t5] \\
        [--shape base|small] [--output BENCHMARKS.md]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests" / "clients"))

PARADIGMS = ("regular_plural_subject_verb_agreement_1", "anaphor_number_agreement",
             "npi_present_1", "wh_vs_that_with_gap")


def blimp_sentences(folder: Path, paradigms, pairs: int) -> list[str]:
    sentences: list[str] = []
    for paradigm in paradigms:
        lines = (folder / f"{paradigm}.jsonl").read_text(encoding="utf-8").splitlines()[:pairs]
        for line in lines:
            row = json.loads(line)
            sentences += [row["sentence_good"], row["sentence_bad"]]
    return sentences


#: Model shapes: (hidden, layers) and the output vocabulary of each kind (None: the tokenizer's).
#: ``base`` is BERT-base / RoBERTa-base / T5-base: what a user scores; ``small`` shows the fixed
#: costs (start-up, model load) beside little computation.
SHAPES = {
    "small": {"hidden": 256, "layers": 4, "vocab": None, "tokenizer_vocab": None},
    "base": {"hidden": 768, "layers": 12, "tokenizer_vocab": 1200,
             "vocab": {"bert": 30522, "roberta": 50265, "t5": 32128}},
}
#: The model is trained for a few steps on this many of the sentences (its tokenizer learns all).
TRAINED_ON = 64


def build_model(kind: str, sentences: list[str], folder: Path, hidden: int, layers: int, *,
                vocab: int | None = None, tokenizer_vocab: int | None = None) -> Path:
    """A ``kind`` model of the given size (``hidden // 64`` attention heads, at least 4), seeded,
    trained for a few steps on the first :data:`TRAINED_ON` ``sentences``. Its tokenizer learns
    ``tokenizer_vocab`` entries from all of them (default: the tests'); ``vocab``: the model's
    output vocabulary (default: the tokenizer's), larger to give the model a real checkpoint's
    embedding table and output head (the rows no token reaches still take part in each softmax)."""
    import transformers as tf

    import tiny_checkpoints as tiny

    tiny.SENTENCES = tuple(sentences)
    if tokenizer_vocab:
        tiny.TOKENIZER_VOCAB = {**tiny.TOKENIZER_VOCAB, kind: tokenizer_vocab}
    heads = max(4, hidden // 64)
    sizes = dict(hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
                 intermediate_size=4 * hidden)
    original = tiny._model

    def sized(kind_: str, tokenizer):
        model = original(kind_, tokenizer)
        tiny.SENTENCES = tuple(sentences[:TRAINED_ON])  # the tokenizer has learnt from all
        config = model.config
        if vocab:
            config.update(dict(vocab_size=max(vocab, len(tokenizer))))
        if kind_ == "t5":
            config.update(dict(d_model=hidden, d_ff=4 * hidden, num_layers=layers,
                               num_decoder_layers=layers, num_heads=heads,
                               d_kv=hidden // heads))
            return tf.T5ForConditionalGeneration(config)
        config.update(sizes)
        return type(model)(config)

    tiny._model = sized
    try:
        return tiny.build_checkpoint(kind, folder, steps=4)
    finally:
        tiny._model = original


def timed(command: list[str], env: dict[str, str]) -> dict[str, float]:
    load = os.getloadavg()[0]
    finished = subprocess.run(["/usr/bin/time", "-f", "TIME %e %M", *command], env=env,
                              capture_output=True, text=True, timeout=7200)
    if finished.returncode != 0:
        raise RuntimeError(f"{command[:3]} failed:\n{finished.stderr[-3000:]}")
    line = [x for x in finished.stderr.splitlines() if x.startswith("TIME ")][-1].split()
    return {"seconds": float(line[1]), "peak_mib": int(line[2]) / 1024, "load": load}


def ours_worker(request_file: str, output_file: str) -> None:
    from syntaxgym_helm.api.evaluate import score_sentences

    request = json.load(open(request_file, encoding="utf-8"))
    model = request["folder"] + ("" if request["variant"] == "original"
                                 else f"~{request['variant']}")
    scores = score_sentences(request["sentences"], model)
    json.dump({"tokens": [list(s.tokens) for s in scores],
               "logprobs": [[0.0] + [-b * 0.6931471805599453 for b in s.surprisals[1:]]
                            for s in scores]}, open(output_file, "w"))


def compare(ours: dict, theirs: dict, kind: str) -> dict[str, float]:
    """Token by token: ours start with the start token (0.0), minicons' masked scores do not."""
    worst, same_count, verdicts = 0.0, 0, 0
    sums = []
    for a, b in zip(ours["logprobs"], theirs["logprobs"], strict=True):
        a, b = a[1:], (b if kind == "masked" else b[1:])
        if len(a) == len(b):
            same_count += 1
            worst = max(worst, max((abs(x - y) for x, y in zip(a, b, strict=True)), default=0.0))
        sums.append((sum(a), sum(b)))
    for good, bad in zip(sums[0::2], sums[1::2], strict=True):
        verdicts += (good[0] > bad[0]) != (good[1] > bad[1])
    pairs = list(zip(sums[0::2], sums[1::2], strict=True))
    ours_accuracy = sum(g[0] > b[0] for g, b in pairs) / max(1, len(pairs))
    return {"worst": worst, "same_count": same_count, "sentences": len(sums),
            "verdicts_differ": verdicts, "accuracy": ours_accuracy}


def matmul_work(folder: Path, sentences: list[str], batch_size: int) -> tuple[float, float]:
    """The multiply-adds of the matrix products (attention's among them) each side computes for
    pseudo-log-likelihood on a BERT-family model: ours (copies of one length, the last layer and
    the output head at the masked position only) and minicons' (copies padded to the longest
    sentence of their batch, the head at every position). Their ratio bounds the time ratio of
    the computation: no scorer can do the same products in less time than their count allows."""
    from transformers import AutoConfig, AutoTokenizer

    config = AutoConfig.from_pretrained(folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    h, ff = config.hidden_size, config.intermediate_size
    layers, head = config.num_hidden_layers, config.hidden_size ** 2 + h * config.vocab_size
    encoded = tokenizer(sentences, return_special_tokens_mask=True)
    lengths = [len(ids) for ids in encoded["input_ids"]]
    copies = [len(mask) - sum(mask) for mask in encoded["special_tokens_mask"]]

    def layer(length: int) -> int:  # one position of one layer: Q, K, V, O, feed-forward, attention
        return 4 * h * h + 2 * h * ff + 2 * length * h

    ours = sum(n * ((layers - 1) * length * layer(length) + 2 * h * h * length
                    + 2 * h * h + 2 * h * ff + 2 * length * h + head)
               for n, length in zip(copies, lengths, strict=True))
    theirs = 0
    for start in range(0, len(sentences), batch_size):
        width = max(lengths[start:start + batch_size])
        rows = sum(copies[start:start + batch_size])
        theirs += rows * width * (layers * layer(width) + head)
    return float(ours), float(theirs)


def model_words(args, hidden: int, layers: int, vocab: int | None) -> str:
    if args.model:
        return f"the checkpoint {args.model}"
    return (f"{args.kind} at hidden {hidden}, {layers} layers, vocabulary "
            f"{vocab or 'of the tokenizer'} (--shape {args.shape})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blimp-dir", type=Path, default=ROOT.parent / "shared/blimp/data")
    parser.add_argument("--paradigms", nargs="+", default=list(PARADIGMS[:2]))
    parser.add_argument("--pairs", type=int, default=100)
    parser.add_argument("--kind", choices=("bert", "roberta", "t5"), default="bert")
    parser.add_argument("--variants", nargs="+", default=["original", "within_word_l2r"])
    parser.add_argument("--model", type=Path, help="a checkpoint folder (default: build one)")
    parser.add_argument("--shape", choices=tuple(SHAPES), default="base",
                        help="the built model's size: base (BERT-/RoBERTa-base: hidden 768, "
                        "12 layers, the real vocabulary size) or small (hidden 256, 4 layers)")
    parser.add_argument("--hidden", type=int, help="the built model's width (default: --shape's)")
    parser.add_argument("--layers", type=int, help="its depth (default: --shape's)")
    parser.add_argument("--vocab", type=int, help="its output vocabulary (default: --shape's)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--minicons-python", default="/work/venvs/minicons/bin/python")
    parser.add_argument("--ours-worker", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--output", type=Path, help="write the result as a BENCHMARKS.md section")
    args = parser.parse_args()
    if args.ours_worker:
        return ours_worker(*args.ours_worker)
    sentences = blimp_sentences(args.blimp_dir, args.paradigms, args.pairs)
    work = Path(tempfile.mkdtemp(prefix="masked_minicons."))
    shape = SHAPES[args.shape]
    hidden, layers = args.hidden or shape["hidden"], args.layers or shape["layers"]
    vocab = args.vocab or (shape["vocab"] or {}).get(args.kind)
    folder = args.model or build_model(args.kind, sentences, work / args.kind, hidden, layers,
                                       vocab=vocab, tokenizer_vocab=shape["tokenizer_vocab"])
    kind = "seq2seq" if args.kind == "t5" else "masked"
    variants = ["original"] if kind == "seq2seq" else args.variants
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    lines = [f"{len(sentences)} sentences ({len(args.paradigms)} BLiMP paradigms x {args.pairs} "
             f"pairs), {model_words(args, hidden, layers, vocab)}; minicons batch "
             f"size {args.batch_size}", "",
             "| variant | max token diff (nats) | same tokens | verdicts differ | accuracy | "
             "ours s / MiB (load) | minicons s / MiB (load) | time ratio | memory ratio |",
             "|---|---|---|---|---|---|---|---|---|"]
    if kind == "masked":
        ours_work, theirs_work = matmul_work(folder, sentences, args.batch_size)
        lines.insert(1, f"Matrix products (multiply-adds): ours {ours_work:.3g}, minicons "
                        f"{theirs_work:.3g}: {ours_work / theirs_work:.2f}x, the bound on the "
                        "computation's time ratio")
    for variant in variants:
        request = work / f"request-{variant}.json"
        json.dump({"folder": str(folder), "kind": kind, "variant": variant,
                   "batch_size": args.batch_size, "sentences": sentences}, open(request, "w"))
        ours_out, theirs_out = work / f"ours-{variant}.json", work / f"minicons-{variant}.json"
        ours_run = timed([sys.executable, __file__, "--ours-worker", str(request), str(ours_out)],
                         env)
        theirs_run = timed([args.minicons_python, str(ROOT / "benchmarks" /
                                                      "minicons_masked_driver.py"),
                            str(request), str(theirs_out)], env)
        result = compare(json.load(open(ours_out)), json.load(open(theirs_out)), kind)
        lines.append(
            f"| {variant} | {result['worst']:.2e} | {result['same_count']}/{result['sentences']} "
            f"| {result['verdicts_differ']} | {result['accuracy']:.3f} "
            f"| {ours_run['seconds']:.1f} / {ours_run['peak_mib']:.0f} ({ours_run['load']:.1f}) "
            f"| {theirs_run['seconds']:.1f} / {theirs_run['peak_mib']:.0f} "
            f"({theirs_run['load']:.1f}) | {ours_run['seconds'] / theirs_run['seconds']:.2f}x "
            f"| {ours_run['peak_mib'] / theirs_run['peak_mib']:.2f}x |")
        print(lines[-1], flush=True)
    text = "\n".join(lines)
    print(text)
    if args.output:
        import time

        from markdown_sections import commit, machine, write_section

        header = (f"{time.strftime('%Y-%m-%d %H:%M')}, commit {commit()}, {machine()}. "
                  f"`python benchmarks/compare_minicons_masked.py {' '.join(sys.argv[1:])}` "
                  "(load before each process in brackets).")
        write_section(args.output, f"## Masked and encoder-decoder LMs beside minicons "
                      f"({args.kind}, --shape {args.shape})\n\n{header}\n\n{text}\n",
                      f"benchmarks/compare_minicons_masked.py ({args.kind}, {args.shape})")


if __name__ == "__main__":
    main()
