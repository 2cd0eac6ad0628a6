"""Cache folders that prove what they hold: written whole or not at all, checked when read.

The clients keep derived files between runs (the dequantised weights of a GGUF checkpoint, a
tokenizer converted from one, a GGUF file assembled from parts). A folder of them is written under
a temporary name and renamed into place once complete, with a manifest listing each file's size and
CRC-32 (:data:`MANIFEST`, written last: its presence says the folder is complete). A reader checks
every listed file against it (:func:`folder_problem`) and, when one was cut short, changed or
removed, says which and why, so the caller can warn naming the folder and make it again
(:func:`discard`, then :func:`publish` a new one) instead of using it or failing on every run.

Why CRC-32 (zlib, hardware-assisted): it reads a model's fp32 weights in a small fraction of the
time loading them takes, in under half of SHA-256's time, and any damage short of a deliberate
forgery (zeros over a page, a truncation, a torn write) changes it; these folders guard against
accidents, not attackers. A sampled check would miss 4 KiB of zeros in the pages it skips.

A process killed while writing (``kill -9``, power loss) leaves its temporary behind: temporaries
are named with the host and process id (:func:`new_temporary`), and :func:`remove_stale_temporaries`
removes those of processes that no longer run (or older than a day, from any host) the next time
the parent folder is used.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import socket
import tempfile
import time
import uuid
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path

from helm.common.hierarchical_logger import hwarn

MANIFEST = "syntaxgym-manifest.json"
#: The completion marker of versions before the manifest (written too; never trusted alone).
LEGACY_MARKER = "syntaxgym-complete"
#: A temporary from any host, older than this, is stale whatever its process (seconds).
STALE_AFTER_S = 24 * 3600
#: Temporaries named by earlier versions (no process id) are removed once this old (seconds).
LEGACY_STALE_AFTER_S = 3600
_TEMPORARY = re.compile(r"^\..+\.tmp-(?P<host>[0-9a-f]{8})-(?P<pid>\d+)-[a-z0-9_]+$")
_LEGACY_TEMPORARIES = (
    re.compile(r"^.+-[0-9a-f]{16}\.[a-z0-9_]{8}$"),  # dequantised weights (tempfile.mkdtemp)
    re.compile(r"^\.tokenizer\.[a-z0-9_]{8}$"),  # a converted tokenizer
    re.compile(r"^\..+\.\d+\.[0-9a-f]{8}\.tmp$"),  # an assembled GGUF file
)
_CHUNK = 16 << 20


def file_checksum(path: Path) -> str:
    """The CRC-32 of a file's bytes, as 8 hex digits, read a chunk at a time into one buffer (a
    memory map of the file would count all of it in the process's resident memory, on top of a
    model loaded beside it)."""
    crc = 0
    buffer = bytearray(_CHUNK)
    view = memoryview(buffer)
    with open(path, "rb", buffering=0) as stream:
        while True:
            count = stream.readinto(buffer)
            if not count:
                break
            crc = zlib.crc32(view[:count], crc)
    view.release()
    return f"{crc:08x}"


def write_manifest(folder: Path, names: Iterable[str] | None = None) -> None:
    """Record the size and checksum of ``names`` (default: every file under ``folder``) in its
    manifest; write it last, once the files are complete. A whole folder also gets the marker
    that versions before the manifest looked for (:data:`LEGACY_MARKER`), so that they use it
    too instead of dequantising again on every run."""
    if names is None:
        (folder / LEGACY_MARKER).write_text("ok\n")
        names = sorted(str(p.relative_to(folder)) for p in folder.rglob("*")
                       if p.is_file() and p.name != MANIFEST)
    entries = {name: {"size": (folder / name).stat().st_size,
                      "crc32": file_checksum(folder / name)} for name in names}
    partial = new_temporary(folder, MANIFEST, directory=False)
    partial.write_text(json.dumps({"files": entries}, indent=1, sort_keys=True))
    os.replace(partial, folder / MANIFEST)


def folder_problem(folder: Path) -> str | None:
    """What is wrong with a cache folder (its manifest missing or damaged, a file missing,
    truncated or changed), naming the file; None when every listed file matches."""
    manifest = folder / MANIFEST
    if not manifest.is_file():
        return (f"it has no {MANIFEST} (saving it was cut short, or an older version of "
                "syntaxgym-helm made it)")
    try:
        entries = json.loads(manifest.read_text())["files"]
        expected = {str(name): (int(entry["size"]), str(entry["crc32"]))
                    for name, entry in entries.items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        return f"its {MANIFEST} is damaged ({type(exc).__name__}: {exc})"
    for name, (size, crc) in sorted(expected.items()):
        path = folder / name
        try:
            actual = path.stat().st_size
            if actual != size:
                return f"{path} has {actual:,} bytes, not {size:,} (cut short or overwritten)"
            if file_checksum(path) != crc:
                return f"{path} does not match its checksum (its content changed after saving)"
        except OSError as exc:
            return f"{path} cannot be read ({type(exc).__name__}: {exc})"
    return None


def _host() -> str:
    return hashlib.sha1(socket.gethostname().encode()).hexdigest()[:8]


def new_temporary(parent: Path, name: str, *, directory: bool = True) -> Path:
    """A temporary folder (or, ``directory=False``, a free file name) in ``parent`` for what will
    become ``parent / name``, named with this host and process so that leftovers can be told
    from work in progress."""
    parent.mkdir(parents=True, exist_ok=True)
    prefix = f".{name}.tmp-{_host()}-{os.getpid()}-"
    if directory:
        path = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
        path.chmod(0o755)  # mkdtemp's 0o700 would hide a shared cache from other users
        return path
    return parent / (prefix + uuid.uuid4().hex[:8])


def _process_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # another user's process: alive
        return False
    return False


def remove_stale_temporaries(parent: Path) -> list[Path]:
    """Remove the temporaries in ``parent`` left by processes that were killed while writing;
    returns them. Never raises (another process may be removing them too)."""
    removed: list[Path] = []
    try:
        entries = list(parent.iterdir())
    except OSError:
        return removed
    now = time.time()
    for entry in entries:
        try:
            age = now - entry.lstat().st_mtime
            match = _TEMPORARY.match(entry.name)
            if match:
                stale = age > STALE_AFTER_S or (match["host"] == _host()
                                                 and _process_gone(int(match["pid"])))
            else:
                stale = age > LEGACY_STALE_AFTER_S and any(
                    pattern.match(entry.name) for pattern in _LEGACY_TEMPORARIES)
            if stale:
                _remove(entry)
                removed.append(entry)
        except OSError:
            continue
    return removed


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def discard(path: Path) -> None:
    """Take a damaged folder or file out of the way at once (renamed to a temporary name, so that
    a process killed while deleting it still leaves nothing for good), then delete it."""
    try:
        doomed = new_temporary(path.parent, path.name, directory=False)
        os.replace(path, doomed)
    except FileNotFoundError:
        return  # another process discarded it
    _remove(doomed)


def publish(temporary: Path, folder: Path) -> bool:
    """Rename a complete temporary folder to ``folder``; a damaged ``folder`` in the way is
    replaced, an intact one (another process was quicker) kept. Returns whether ``temporary``
    became ``folder``; the temporary is gone either way."""
    try:
        for attempt in range(2):
            try:
                os.replace(temporary, folder)
                return True
            except OSError:
                if attempt or folder_problem(folder) is None:
                    return False
                discard(folder)
        return False
    finally:
        if temporary.exists():
            _remove(temporary)


def usable_folder(folder: Path, subject: str, remedy: str) -> bool:
    """Whether ``folder`` holds a complete, intact copy, after removing the temporaries of killed
    processes beside it. A damaged one is removed, with the warning ``<subject> unusable:
    <problem>; <remedy>`` (see :func:`reject`)."""
    remove_stale_temporaries(folder.parent)
    if not folder.exists():
        return False
    problem = folder_problem(folder)
    if problem is not None:
        reject(folder, subject, problem, remedy)
    return problem is None


def reject(folder: Path, subject: str, problem: str, remedy: str) -> None:
    """Warn that ``folder`` cannot be used (``subject`` names it, e.g. ``the dequantised weights
    cached in <folder> are``) and why, then remove it so that it is made again."""
    hwarn(f"{subject} unusable: {problem}; {remedy}")
    discard(folder)


def save_folder(folder: Path, write: Callable[[Path], object]) -> bool:
    """Make ``folder``: ``write`` fills a temporary folder, the manifest is added, and the whole
    is renamed into place (see :func:`publish`). Returns whether this call's copy is the one in
    place; what ``write`` raises is raised, with the temporary removed."""
    temporary = new_temporary(folder.parent, folder.name)
    try:
        write(temporary)
        write_manifest(temporary)
        return publish(temporary, folder)
    finally:
        if temporary.exists():
            _remove(temporary)
