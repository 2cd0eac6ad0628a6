"""Output files written whole or not at all, their destination checked before the work begins.

A command that computes for minutes and then writes one file (``syntaxgym-helm surprisal -o``,
``evaluate --output``) must not find out at the end that the folder is read-only, nor leave a file
cut mid-row on a full disk, nor have already overwritten the earlier file at that path. So
:func:`check_destination` is called before the work (the folder exists, the path is not a folder,
and a file can be created there: a real test, which a read-only mount, missing permissions or a
full inode table fail) and :func:`write_whole` writes to a temporary file beside the destination
and renames it into place only once complete (a rename within a folder replaces the file at once:
a reader sees the earlier file or the new one, never a part). A failure raises
:class:`OutputFileError`, one line naming the path and the reason, the temporary removed and any
earlier file untouched. A destination that exists and is not a regular file (``/dev/stdout``, a
named pipe) is written directly: it cannot be replaced, and holds nothing to keep. A process
ended by a signal while it writes removes its temporaries (:func:`remove_partial_outputs`, from
:mod:`syntaxgym_helm.clients.interruption`).
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from syntaxgym_helm.core.errors import SyntaxGymError


class OutputFileError(SyntaxGymError, OSError):
    """An output file that cannot be written (the message names the path and why)."""


#: The temporaries being written now (removed by :func:`remove_partial_outputs`).
_PARTIAL: set[Path] = set()


def remove_partial_outputs() -> None:
    """Remove the temporaries being written now (the process is ending mid-write)."""
    for temporary in list(_PARTIAL):
        try:
            temporary.unlink(missing_ok=True)
        except OSError:
            continue


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _target(path: str | Path) -> Path:
    """Where the bytes go: a symbolic link's target (the link itself stays)."""
    return Path(os.path.realpath(path))


def _replaceable(target: Path) -> bool:
    """Whether ``target`` is absent or a regular file (else it is written directly)."""
    try:
        return stat.S_ISREG(os.stat(target).st_mode)
    except FileNotFoundError:
        return True


def _temporary(target: Path) -> tuple[int, Path]:
    """A new file beside ``target`` (hidden, named after it and this process), opened for
    writing with the permissions a new file gets (the umask applies)."""
    while True:
        candidate = target.with_name(f".{target.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")
        try:
            return os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), candidate
        except FileExistsError:
            continue


def check_destination(path: str | Path) -> None:
    """Raise :class:`OutputFileError` unless a file can be written at ``path`` now."""
    target = _target(path)
    folder = target.parent
    if target.is_dir():
        raise OutputFileError(f"{path}: is a folder; give a file name")
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise OutputFileError(f"{path}: its folder {folder} {what}; create it first")
    if not _replaceable(target):
        return
    try:
        descriptor, temporary = _temporary(target)
    except OSError as exc:
        raise OutputFileError(f"{path}: cannot write in {folder} ({_reason(exc)})") from None
    os.close(descriptor)
    temporary.unlink(missing_ok=True)


def write_whole(path: str | Path, data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8) at ``path`` whole or not at all (see the module doc)."""
    content = data.encode("utf-8") if isinstance(data, str) else data
    target = _target(path)
    if not _replaceable(target):
        try:
            with open(target, "wb") as stream:
                stream.write(content)
        except OSError as exc:
            raise OutputFileError(f"{path}: could not be written ({_reason(exc)})") from None
        return
    temporary = None
    try:
        descriptor, temporary = _temporary(target)
        _PARTIAL.add(temporary)
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(content)
            stream.flush()
            os.fsync(stream.fileno())
        if target.exists():
            os.chmod(temporary, stat.S_IMODE(os.stat(target).st_mode))
        os.replace(temporary, target)
    except OSError as exc:
        if temporary is not None:
            temporary.unlink(missing_ok=True)
        earlier = "the earlier file there is unchanged" if target.exists() else "nothing written"
        raise OutputFileError(f"{path}: could not be written ({_reason(exc)}); {earlier}"
                              ) from None
    finally:
        if temporary is not None:
            _PARTIAL.discard(temporary)
