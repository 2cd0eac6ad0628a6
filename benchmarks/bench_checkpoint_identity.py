"""Benchmark: what naming a checkpoint by its content costs, the first time and on later runs.

A checkpoint's identity (``syntaxgym_helm/clients/checkpoint_identity.py``) is a digest of the
SHA-256 of each of its files; a file's digest is kept per version of the file
(``content_digest.py``), so only a first use reads the weights. Each step runs in a process of its
own with a digests folder of its own (``SYNTAXGYM_HELM_CACHE`` pointed at an empty folder before the
first step), and reports counts that the machine's load hardly moves, beside the seconds:

- ``first``: ``identify`` with no digest kept (a machine's first use of the checkpoint);
- ``later``: ``identify`` again, in a new process (every later run);
- ``watch``: a client's check at each request (``CheckpointWatch.current`` on files unchanged),
  microseconds per call over 2,000 calls.

Counts: bytes the process read (``rchar`` of ``/proc/self/io``: every ``read`` call, page cache or
disk), files hashed, digests read from the kept folder; and CPU seconds. Checkpoints: the embedded
SmolLM2-135M GGUF file, and with ``--folder`` any checkpoint folder (e.g. the dequantised SmolLM2
copy under ``~/.cache/syntaxgym_helm/weights/``: config, 540 MB of safetensors, tokenizer).

Not a test. Run from the project root (the counts need no quiet machine; the seconds do)::

    python benchmarks/bench_checkpoint_identity.py [--folder ~/.cache/syntaxgym_helm/weights/...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from syntaxgym_helm.clients import content_digest
from syntaxgym_helm.clients.checkpoint_identity import CheckpointWatch, identify

def rchar():
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    return 0

source, gguf, step = sys.argv[1], sys.argv[2] or None, sys.argv[3]
hashed = []
original = content_digest.sha256_of_file
content_digest.sha256_of_file = lambda path: hashed.append(path) or original(path)
if step == "watch":
    watch = CheckpointWatch(source, gguf)
    watch.current()
    started = time.perf_counter()
    for _ in range(2000):
        watch.current()
    print(json.dumps({"us_per_call": (time.perf_counter() - started) / 2000 * 1e6}))
    sys.exit()
before, read_before = resource.getrusage(resource.RUSAGE_SELF), rchar()
started = time.perf_counter()
identity = identify(source, gguf)
seconds = time.perf_counter() - started
after, read_after = resource.getrusage(resource.RUSAGE_SELF), rchar()
print(json.dumps({"digest": identity.digest, "files": len(identity.files),
                  "files_hashed": len(hashed), "bytes_read": read_after - read_before,
                  "bytes_of_files": sum(Path(path).stat().st_size for path in hashed),
                  "seconds": seconds, "cpu": after.ru_utime + after.ru_stime
                  - before.ru_utime - before.ru_stime}))
"""


def _step(source: str, gguf: str | None, step: str, cache: Path) -> dict:
    env = {**os.environ, "SYNTAXGYM_HELM_CACHE": str(cache)}
    done = subprocess.run([sys.executable, "-c", CHILD, source, gguf or "", step], env=env,
                          capture_output=True, text=True, timeout=1800, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folder", type=Path, action="append", default=[],
                        help="a checkpoint folder to measure too (repeatable)")
    args = parser.parse_args()
    from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M

    checkpoints = [("SmolLM2-135M GGUF", str(SMOLLM2_135M.directory()), SMOLLM2_135M.gguf_file)]
    checkpoints += [(str(folder), str(folder), None) for folder in args.folder]
    for name, source, gguf in checkpoints:
        with tempfile.TemporaryDirectory(prefix="identity-bench.") as cache:
            results = {step: _step(source, gguf, step, Path(cache))
                       for step in ("first", "later", "watch")}
        assert results["first"]["digest"] == results["later"]["digest"]
        print(f"{name}:")
        for step in ("first", "later"):
            found = results[step]
            print(f"  {step:5}: {found['files']} files, {found['files_hashed']} hashed "
                  f"({found['bytes_of_files'] / 1e6:.1f} MB), {found['bytes_read'] / 1e6:.3f} MB "
                  f"read, {found['cpu']:.3f} s CPU, {found['seconds']:.3f} s")
        print(f"  watch: {results['watch']['us_per_call']:.1f} us per request")
    return 0


if __name__ == "__main__":
    sys.exit(main())
