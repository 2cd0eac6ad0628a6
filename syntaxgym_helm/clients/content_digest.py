"""The SHA-256 of a file's bytes, read once per version of the file.

What names a checkpoint (:mod:`.checkpoint_identity`: request-cache keys, model names, the record
of a run) and the copies the plugin makes of a GGUF checkpoint (its dequantised weights, its
converted tokenizer) are digests of what the files hold, not of where they lie: the same file
installed in another virtual environment (a second clone's ``make install``) finds the copy made
before, and a folder saved again under the same path is another checkpoint.

Hashing reads the whole file, so the digest of a file of :data:`MEMO_MIN_BYTES` or more is kept
under ``<cache_root()>/digests/``, in a file named after the path, size, modification and
status-change times, inode and device it was computed for (:func:`file_version`): a later run
reads 64 bytes instead of the checkpoint, and a changed file is read again. Two writes within
one tick of the file system's clock can leave all of those the same, so a digest is kept only
when the file's last change is :data:`RACY_SECONDS` older than the hashing (as git treats
"racily clean" files); a file changed while it was read is not kept either.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from pathlib import Path

from syntaxgym_helm.clients.cache_dirs import cache_root
from syntaxgym_helm.clients.checked_folders import new_temporary, remove_stale_temporaries

_HEX_DIGEST = re.compile(r"[0-9a-f]{64}")
#: A digest is kept only for a file last changed at least this long (seconds) before it was read:
#: file systems keep times in ticks (FAT in 2 s), and a file written twice within one tick may
#: keep the same size and times.
RACY_SECONDS = 2.0
#: Smaller files are hashed each time (reading one costs about what reading its memo does) and
#: leave no memo behind: a config or tokenizer file saved again and again (a training loop, the
#: tests) does not fill the folder of digests.
MEMO_MIN_BYTES = 1 << 20


def digests_dir() -> Path:
    """Where the digests are kept: ``<cache_root()>/digests``."""
    return cache_root() / "digests"


def file_version(path: str | os.PathLike[str]) -> tuple[str, int, int, int, int, int]:
    """What a kept digest is valid for: the resolved path, size, modification and status-change
    times (ns), inode and device. Writing the file, or setting its times back (which changes
    the status-change time), gives another version."""
    resolved = Path(path).resolve()
    stat = resolved.stat()
    return (str(resolved), stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino,
            stat.st_dev)


def file_digest(path: str | os.PathLike[str], memo_dir: Path | None = None) -> str:
    """The hex SHA-256 of the file at ``path``, from ``memo_dir`` (default :func:`digests_dir`)
    when this version of the file was hashed before (see the module doc). The memo is an
    optimisation: one that cannot be read or written, or holds anything but a digest, is
    ignored."""
    version = file_version(path)
    if version[1] < MEMO_MIN_BYTES:
        return sha256_of_file(version[0])
    key = "\0".join(str(part) for part in version)
    memo = (memo_dir or digests_dir()) / hashlib.sha256(key.encode()).hexdigest()[:32]
    try:
        kept = memo.read_text().strip()
        if _HEX_DIGEST.fullmatch(kept):
            return kept
    except OSError:
        pass
    started = time.time()
    digest = sha256_of_file(version[0])
    if started - version[3] / 1e9 < RACY_SECONDS or file_version(version[0]) != version:
        return digest  # changed lately, or while it was read: hashed again next time
    try:
        remove_stale_temporaries(memo.parent)  # left by processes killed while writing a memo
        temporary = new_temporary(memo.parent, memo.name, directory=False)
        temporary.write_text(digest + "\n")
        temporary.replace(memo)  # never a half-written memo under the final name
    except OSError:
        pass
    return digest


def sha256_of_file(path: str | os.PathLike[str]) -> str:
    """The hex SHA-256 of the file's bytes, read now (no memo)."""
    hasher = hashlib.sha256()
    with open(path, "rb") as stream:  # hashlib.file_digest is Python 3.11+
        for block in iter(lambda: stream.read(8 << 20), b""):
            hasher.update(block)
    return hasher.hexdigest()
