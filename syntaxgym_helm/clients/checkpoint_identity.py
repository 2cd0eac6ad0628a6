"""What names a checkpoint's weights in a request-cache key.

HELM's request cache keys on the model name, so a deployment pointed at another checkpoint under
the same name would be answered from the first checkpoint's entries (the user compares a model with
itself). The plugin's clients add :func:`checkpoint_identity` to every key: a digest of each
weights file's resolved path, size, modification time and first and last bytes (its header: tensor
names, shapes and offsets, and the end of the data), or of the hub name and revision for a
checkpoint that is not a local path. Any change to the files gives new entries (computed once);
reading 1 MiB per file costs milliseconds, where hashing gigabytes of weights on every run would
cost seconds.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

HEAD_BYTES = 1 << 20
TAIL_BYTES = 64 << 10
#: Files of a checkpoint folder that say nothing about its weights or tokenizer.
_IGNORED_SUFFIXES = (".md", ".lock")


def checkpoint_identity(pretrained_model_name_or_path: str | None, gguf_file: str | None = None,
                        revision: str | None = None) -> str:
    """A 16-hex-digit digest naming the checkpoint (see the module doc)."""
    parts: list[str] = []
    base = Path(pretrained_model_name_or_path) if pretrained_model_name_or_path else None
    if base is not None and gguf_file and (base / gguf_file).is_file():
        files = [base / gguf_file]
    elif base is not None and base.is_dir():
        files = sorted(path for path in base.iterdir() if path.is_file()
                       and not path.name.startswith(".")
                       and not path.name.endswith(_IGNORED_SUFFIXES))
    elif base is not None and base.is_file():
        files = [base]
    else:  # a hub name (or a path that does not exist here): only its name can tell
        files = []
        parts += ["hub", str(pretrained_model_name_or_path), str(gguf_file), str(revision)]
    for path in files:
        parts += [str(path.resolve()), *_file_marks(path)]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def _file_marks(path: Path) -> list[str]:
    stat = path.stat()
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        digest.update(stream.read(HEAD_BYTES))
        if stat.st_size > HEAD_BYTES + TAIL_BYTES:
            stream.seek(-TAIL_BYTES, 2)
            digest.update(stream.read())
    return [str(stat.st_size), str(stat.st_mtime_ns), digest.hexdigest()]
