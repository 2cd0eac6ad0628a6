"""Reading suite and config files safely: regular files only, and at most ``MAX_FILE_BYTES``.

Reading a named pipe waits for a writer that may never come, and reading a device such as
``/dev/zero`` never ends; a folder or a socket cannot be read at all. So every suite file,
config file and config import goes through :func:`read_regular_file`, which looks at what the
path is before it opens it and refuses anything but a regular file at once, saying what it is.
"""

from __future__ import annotations

import csv
import os
import stat
from importlib import resources
from pathlib import Path

from syntaxgym_helm.core.errors import SuiteFileError

#: The largest suite or config file read, in bytes (100 MB; the largest real suite is under 1 MB).
MAX_FILE_BYTES = 100_000_000

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def file_kind(mode: int) -> str:
    """What a file of this ``st_mode`` is, in words: ``a regular file``, ``a folder``, ..."""
    if stat.S_ISREG(mode):
        return "a regular file"
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def check_regular_file(path: str | Path, label: str | None = None) -> None:
    """Raise :class:`SuiteFileError` unless ``path`` is a regular file of at most
    ``MAX_FILE_BYTES``. Does not open the path, so it never waits (``os.stat`` on a pipe
    returns at once). ``label`` names the file in the error (default: the path)."""
    where = label or str(path)
    try:
        info = os.stat(path)
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        raise SuiteFileError.because(_os_reason(exc), where, "check the path") from None
    _check_stat(info, where)


def read_regular_file(path: str | Path, label: str | None = None) -> bytes:
    """The bytes of the regular file at ``path``; raises :class:`SuiteFileError` at once for
    anything else (a pipe, device, folder or socket), for a file over ``MAX_FILE_BYTES``, or
    when it cannot be opened. ``label`` names the file in the error (default: the path)."""
    where = label or str(path)
    check_regular_file(path, where)
    # Between the stat above and the open below the path may have been replaced by a pipe:
    # O_NONBLOCK makes opening a pipe return at once, and fstat checks what was opened.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        descriptor = os.open(path, flags)
    except (OSError, ValueError) as exc:
        raise SuiteFileError.because(_os_reason(exc), where, "check the path") from None
    with os.fdopen(descriptor, "rb") as file:
        _check_stat(os.fstat(file.fileno()), where)
        data = file.read(MAX_FILE_BYTES + 1)  # bounded even if the file grew since
    if len(data) > MAX_FILE_BYTES:
        raise _too_large(len(data), where)
    return data


def _check_stat(info: os.stat_result, where: str) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise SuiteFileError.because(
            f"it is {file_kind(info.st_mode)}, not a regular file", where,
            "give the path of a suite or config file (a pipe or a device is never read: reading "
            "one could wait forever)")
    if info.st_size > MAX_FILE_BYTES:
        raise _too_large(info.st_size, where)


def _too_large(size: int, where: str) -> SuiteFileError:
    return SuiteFileError.because(
        f"it has {size:,} bytes, over the limit of {MAX_FILE_BYTES // 1_000_000} MB "
        f"({MAX_FILE_BYTES:,} bytes) for suite and config files", where,
        "split it into smaller suites")


def _os_reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc)


def packaged_table(name: str) -> list[dict[str, str]]:
    """The rows of the package's tab-separated ``data/<name>`` (a header row; blank lines and
    ``#`` comment lines skipped): the tables of published figures and data-set files it ships."""
    text = (resources.files("syntaxgym_helm") / "data" / name).read_text("utf-8")
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    return list(csv.DictReader(lines, delimiter="	"))
