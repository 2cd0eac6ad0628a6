"""An output file is written whole or not at all, and its destination is checked before the work.

Before: ``syntaxgym-helm surprisal -o`` onto a read-only folder or a full disk printed a Python
traceback only after all the scoring, left a TSV cut mid-row on a full disk, and had already
overwritten the earlier file at that path; ``evaluate --output`` and ``compare -o`` did the same.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from fault_helpers import syntaxgym_helm

EARLIER = "the earlier results\n"

# Commands run in this process: the first to import torch takes seconds, more on a busy machine.
pytestmark = pytest.mark.limit(300)

#: Writes 40 kB, as the surprisal, evaluate and compare commands write their files, under a
#: 4 KiB file-size limit (EFBIG, as a full disk's ENOSPC).
LIMITED_WRITE = textwrap.dedent(r"""
    import resource, signal, sys
    from syntaxgym_helm.core.output_files import write_whole
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write then fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
    try:
        write_whole(sys.argv[1], "1\t0\tword\t word\t1.5\n" * 2000)
    except OSError as error:
        print("refused:", error)
""")


def test_a_full_disk_leaves_the_earlier_file_whole_and_says_so_in_one_line(
        tmp_path: Path) -> None:
    out = tmp_path / "words.tsv"
    out.write_text(EARLIER)
    done = subprocess.run([sys.executable, "-c", LIMITED_WRITE, str(out)], capture_output=True,
                          text=True, timeout=120)
    assert done.stdout.strip() == (f"refused: {out}: could not be written (File too large); "
                                   "the earlier file there is unchanged"), done.stderr[-2000:]
    assert out.read_text() == EARLIER
    assert sorted(p.name for p in tmp_path.iterdir()) == ["words.tsv"]  # no temporary left


@contextlib.contextmanager
def _small_disk(folder: Path, options: str) -> Iterator[Path]:
    """A 64 KiB tmpfs mounted at ``folder`` (root only; skips elsewhere)."""
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size=64k,{options}", "tmpfs",
                              str(folder)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], capture_output=True)


def test_a_real_full_disk_is_named_and_the_earlier_file_kept(tmp_path: Path) -> None:
    from syntaxgym_helm.api.surprisal import SurprisalTable, write_surprisal_tsv
    from syntaxgym_helm.api.surprisal_scoring import WordSurprisal
    from syntaxgym_helm.core.output_files import OutputFileError

    rows = [WordSurprisal("1", k, "word", " word", 1.5, 1.25, None, None, "", "")
            for k in range(4000)]
    with _small_disk(tmp_path / "disk", "rw") as disk:
        out = disk / "words.tsv"
        out.write_text(EARLIER)
        with pytest.raises(OutputFileError, match=r"words.tsv: could not be written \(No space "
                                                  r"left on device\); the earlier file there "
                                                  "is unchanged"):
            write_surprisal_tsv(SurprisalTable({"model": "m"}, rows), out)
        assert out.read_text() == EARLIER and [p.name for p in disk.iterdir()] == ["words.tsv"]


def test_the_destination_is_checked_before_anything_is_scored(tmp_path: Path) -> None:
    """The model named does not exist: the error is the destination's, so it was checked
    before the model was looked for, let alone loaded and run."""
    texts = tmp_path / "texts.txt"
    texts.write_text("The cat sat.\n")
    (tmp_path / "a_file").write_text("")
    cases = [(tmp_path / "missing" / "out.tsv", "its folder " + str(tmp_path / "missing")
              + " does not exist; create it first"),
             (tmp_path / "a_file" / "out.tsv", "is not a folder"),
             (tmp_path, "is a folder; give a file name")]
    for out, message in cases:
        done = syntaxgym_helm("surprisal", str(texts), "--model", "nolab/no-such-model",
                              "-o", str(out))
        assert done.returncode == 1 and message in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
        done = syntaxgym_helm("evaluate", "sgh_agreement_pp", "--model", "nolab/no-such-model",
                              "--output", str(out))
        assert done.returncode == 2 and message in done.stderr, done.stderr


def test_a_read_only_folder_is_refused_before_scoring(tmp_path: Path) -> None:
    texts = tmp_path / "texts.txt"
    texts.write_text("The cat sat.\n")
    with _small_disk(tmp_path / "disk", "ro") as disk:
        done = syntaxgym_helm("surprisal", str(texts), "--model", "nolab/no-such-model",
                              "-o", str(disk / "out.tsv"))
    assert done.returncode == 1, done.stderr
    assert f"{disk / 'out.tsv'}: cannot write in {disk} (Read-only file system)" in done.stderr
