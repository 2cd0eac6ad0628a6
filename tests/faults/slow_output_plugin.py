"""A HELM plugin (``helm-run --plugins slow_output_plugin``) for the fault tests: HELM's writing
of one run file is slowed, so that a test can send a signal while it is under way.

``SLOW_OUTPUT_FILE`` names the file (``stats.json``, or ``per_instance_stats.json``); HELM's
``write`` then writes half of its text, flushes it, prints ``slow output: <name>`` and waits 60 s
before writing the rest: a signal in that time finds the file half written on disk, as a process
killed in the milliseconds HELM spends writing it would leave it.
"""

from __future__ import annotations

import os
import sys
import time

import helm.benchmark.runner as runner

_WRITE = runner.write
_SLOW = os.environ.get("SLOW_OUTPUT_FILE", "")


def _slow_write(file_path: str, content: str) -> None:
    if not _SLOW or os.path.basename(file_path) != _SLOW:
        _WRITE(file_path, content)
        return
    with open(file_path, "w") as stream:
        stream.write(content[: len(content) // 2])
        stream.flush()
        print(f"slow output: {_SLOW}", file=sys.stderr, flush=True)
        time.sleep(60)
        stream.write(content[len(content) // 2:])


runner.write = _slow_write
