"""The SHA-256 of a file's bytes, read once per version of the file.

The copies the plugin makes of a GGUF checkpoint (its dequantised weights, its converted
tokenizer) are named by what the file holds, not by where it lies: the same file installed in
another virtual environment (a second clone's ``make install``, a reinstall of its package) finds
the copy made before instead of making another (each copy is several times the file's size and
takes seconds to make).

Hashing reads the whole file, so each digest is kept under
``<cache_root()>/digests/``, in a file named after the path, size, modification time and inode it
was computed for: a later run reads 64 bytes instead of the checkpoint, and a changed file is read
again. (Request-cache keys name a checkpoint by its path instead, :mod:`.checkpoint_identity`:
there a move must not look like the same cache.)
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from syntaxgym_helm.clients.cache_dirs import cache_root
from syntaxgym_helm.clients.checked_folders import new_temporary, remove_stale_temporaries

_HEX_DIGEST = re.compile(r"[0-9a-f]{64}")


def digests_dir() -> Path:
    """Where the digests are kept: ``<cache_root()>/digests``."""
    return cache_root() / "digests"


def file_digest(path: str | os.PathLike[str], memo_dir: Path | None = None) -> str:
    """The hex SHA-256 of the file at ``path``, from ``memo_dir`` (default :func:`digests_dir`)
    when this version of the file was hashed before. The memo is an optimisation: one that
    cannot be read or written, or holds anything but a digest, is ignored."""
    resolved = Path(path).resolve()
    stat = resolved.stat()
    version = "\0".join(str(part) for part in (resolved, stat.st_size, stat.st_mtime_ns,
                                                 stat.st_ino, stat.st_dev))
    memo = (memo_dir or digests_dir()) / hashlib.sha256(version.encode()).hexdigest()[:32]
    try:
        kept = memo.read_text().strip()
        if _HEX_DIGEST.fullmatch(kept):
            return kept
    except OSError:
        pass
    digest = sha256_of_file(resolved)
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
