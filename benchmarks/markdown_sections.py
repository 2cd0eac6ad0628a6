"""What every benchmark script shares: a description of the machine and of the commit measured, and
writing its report as a section of BENCHMARKS.md between the script's own markers (other sections
stay as they are)."""

from __future__ import annotations

import os
import platform
import re
import statistics
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path


def machine() -> str:
    """CPU, cores, memory, OS, and the versions that decide the numbers."""
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    import torch
    import transformers

    return (f"{cpu}, {os.cpu_count()} cores, {memory:.0f} GiB RAM, {platform.platform()}; "
            f"Python {platform.python_version()}, torch {torch.__version__} "
            f"({torch.get_num_threads()} threads), transformers {transformers.__version__}")


def commit() -> str:
    """The checkout's commit (short hash), marked when tracked files differ from it: what was
    measured, so that a figure can be traced to its code."""
    root = Path(__file__).resolve().parents[1]

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                              timeout=30, check=True).stdout.strip()

    try:
        head = git("rev-parse", "--short", "HEAD")
        changed = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return "unknown (not a git checkout)"
    return head + (" with uncommitted changes" if changed else "")


def markers(script: str) -> tuple[str, str]:
    """The start and end markers of ``script``'s section (e.g. ``benchmarks/bench_scoring.py``)."""
    return f"<!-- {script}: start -->", f"<!-- {script}: end -->"


def without_scratch_paths(text: str) -> str:
    """``text`` with every path under the temporary folder written ``$TMPDIR/...``: a scratch
    folder means nothing to a reader of BENCHMARKS.md, which says how to run a benchmark
    anywhere."""
    scratch = re.escape(tempfile.gettempdir().rstrip("/"))
    return re.sub(rf"(?<![\w$]){scratch}(?=/|\b)", "$TMPDIR", text)


def write_section(path: Path, text: str, script: str) -> None:
    """Put ``text`` in ``path`` between ``script``'s markers, replacing its earlier report and
    leaving the rest of the file as it is (a new section goes at the end). Paths of scratch
    folders are written ``$TMPDIR/...`` (:func:`without_scratch_paths`)."""
    start, end = markers(script)
    section = f"{start}\n{without_scratch_paths(text).rstrip()}\n{end}\n"
    old = path.read_text() if path.exists() else "# Benchmarks\n"
    if start in old and end in old:
        before, rest = old.split(start, 1)
        new = before + section + rest.split(end, 1)[1].lstrip("\n")
    else:
        new = old.rstrip("\n") + "\n\n" + section
    path.write_text(new)


def before_after_tables(rounds: Sequence[Mapping[str, Mapping[str, float]]]) -> list[str]:
    """Markdown lines for rounds of an older checkout's process (``before``) and this one's
    (``after``), each measured by ``bench_scoring.timed``: every round's wall time, then the
    medians of wall time, CPU time and peak memory with their ratio."""
    def median(side: str, key: str) -> float:
        return statistics.median(r[side][key] for r in rounds)

    lines = ["| round | before | after |", "|---:|---:|---:|"]
    for index, result in enumerate(rounds, 1):
        lines.append(f"| {index} | {result['before']['wall_s']:.1f} s | "
                     f"{result['after']['wall_s']:.1f} s |")
    lines += ["", "| median | before | after | after / before |", "|---|---:|---:|---:|"]
    for key, label, unit in (("wall_s", "whole process", "s"), ("cpu_s", "CPU time", "s"),
                             ("peak_rss_mb", "peak memory", "MiB")):
        before, after = median("before", key), median("after", key)
        lines.append(f"| {label} | {before:.1f} {unit} | {after:.1f} {unit} | "
                     f"{after / before:.2f}x |")
    return lines


def commit_of(checkout: Path) -> str:
    """The short hash of another checkout's commit (an older one measured beside this one)."""
    return subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True, timeout=30, check=True).stdout.strip()
