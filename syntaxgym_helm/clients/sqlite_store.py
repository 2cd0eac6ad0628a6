"""HELM's SQLite request-cache files, read and written without sqlitedict's worker thread.

A ``SqliteCacheConfig`` cache is a sqlitedict file: table ``unnamed``, ``key TEXT PRIMARY KEY``
(the request as sorted JSON), ``value BLOB`` (the response, pickled). sqlitedict runs every
statement in a worker thread and waits for the thread's answer without a deadline; an error the
thread does not expect (damaged pages met while reading rows, "database or disk is full" in a
commit) ends the thread, and its caller then waits for ever (64 KiB of garbage over a cache file,
or a full disk, hung ``helm-run``). :class:`SqliteStore` keeps the file format (HELM,
``helm-summarize`` and earlier runs read the file as before) but uses Python's ``sqlite3`` in the
caller's thread, so every error reaches the caller, and:

- every wait for another process's lock has a deadline (``busy_timeout_s``); past it, a
  :class:`CacheFileError` names the file;
- a file that is not a SQLite database, or whose pages are damaged (checked when opened, and
  whenever a statement meets damage), is moved aside to ``<name>.damaged-<time>`` with a warning
  naming both paths, and a new file is started: its answers are computed again;
- a file deleted or replaced while in use is reopened (a new file at its path);
- a write that fails (disk full, file too large, read-only, I/O error) is reported once, naming
  the file and the error; the process goes on without writing to it (what it computes is still
  scored, and computed again by the next run).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from helm.common.hierarchical_logger import hwarn

TABLE = "unnamed"  # sqlitedict's default table, which HELM uses
_HEADER = b"SQLite format 3\x00"
#: Files up to this size are checked page by page when opened (``PRAGMA quick_check``, whose time
#: grows with the file); larger ones only as their pages are read.
QUICK_CHECK_MAX_BYTES = 256 << 20
_DAMAGE_CODES = {getattr(sqlite3, "SQLITE_CORRUPT", 11), getattr(sqlite3, "SQLITE_NOTADB", 26)}
_DAMAGE_WORDS = ("malformed", "not a database", "corrupt")
_BUSY_CODES = {getattr(sqlite3, "SQLITE_BUSY", 5), getattr(sqlite3, "SQLITE_LOCKED", 6)}


class CacheFileError(RuntimeError):
    """A request-cache file cannot be used (another process holds it locked past the deadline,
    or it cannot be opened at all); the message names it and says what to do."""


def _is_damage(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in _DAMAGE_CODES
    return any(word in str(exc).lower() for word in _DAMAGE_WORDS)


def _is_busy(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in _BUSY_CODES
    return "locked" in str(exc).lower()


def _header_problem(path: Path) -> str | None:
    """Why ``path`` is not a SQLite database at all (an empty or absent file is fine: it is
    made one)."""
    try:
        with open(path, "rb") as stream:
            head = stream.read(len(_HEADER))
    except FileNotFoundError:
        return None
    if head and head != _HEADER:
        return f"it is not a SQLite database (it begins {head[:8]!r})"
    return None


class SqliteStore:
    """A sqlitedict-format file of cached responses; thread-safe (one lock serialises access;
    nothing is computed while holding it). Writes stay uncommitted until :meth:`commit`."""

    def __init__(self, path: str | os.PathLike, busy_timeout_s: float = 300.0) -> None:
        self.path = Path(path)
        self.busy_timeout_s = busy_timeout_s
        self.writable = True
        self.pending = 0  # uncommitted writes
        self.saved = 0  # writes committed by this process
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._inode: int | None = None
        with self._lock:
            self._open()

    # -- opening and replacing the file -------------------------------------------------------

    def _open(self, retry: bool = True) -> None:
        self._inode = None  # whatever is at the path now is ours to check (and move aside)
        problem = _header_problem(self.path)
        if problem:
            self._move_aside(problem)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = sqlite3.connect(str(self.path), timeout=self.busy_timeout_s,
                                   check_same_thread=False)
        except sqlite3.Error as exc:
            raise self._error("open", exc) from exc
        try:
            if self.path.stat().st_size <= QUICK_CHECK_MAX_BYTES:
                rows = [row[0] for row in conn.execute("PRAGMA quick_check").fetchall()]
                if rows != ["ok"]:
                    raise sqlite3.DatabaseError(f"database disk image is malformed "
                                                f"({'; '.join(rows[:2])})")
            conn.execute(f'CREATE TABLE IF NOT EXISTS "{TABLE}" (key TEXT PRIMARY KEY, value BLOB)')
            conn.commit()
        except sqlite3.Error as exc:
            conn.close()
            if _is_damage(exc) and retry:
                self._move_aside(str(exc))
                return self._open(retry=False)
            raise self._error("open", exc) from exc
        self._conn = conn
        self._inode = self.path.stat().st_ino

    def _move_aside(self, reason: str) -> None:
        if self._conn is not None:
            self._close_quietly()
        if self._inode is not None and self._replaced():
            return  # another store (or process) has already replaced the damaged file
        aside = self.path.with_name(f"{self.path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
        try:
            os.replace(self.path, aside)
        except FileNotFoundError:
            return
        for suffix in ("-journal", "-wal", "-shm"):  # a stale journal would damage the new file
            companion = self.path.with_name(self.path.name + suffix)
            if companion.exists():
                os.replace(companion, aside.with_name(aside.name + suffix))
        lost = f" ({self.pending} answers not yet saved are lost)" if self.pending else ""
        self.pending = 0
        hwarn(f"syntaxgym-helm: the request cache {self.path} is damaged ({reason}); moved it to "
              f"{aside} and started a new one{lost}: its answers are computed again")

    def _replaced(self) -> bool:
        """Whether the file at our path is gone or another file (deleted or replaced in use)."""
        try:
            return self.path.stat().st_ino != self._inode
        except FileNotFoundError:
            return True

    def _close_quietly(self) -> None:
        try:
            if self._conn is not None:
                self._conn.close()
        except sqlite3.Error:
            pass
        self._conn = None

    def _error(self, action: str, exc: sqlite3.Error) -> CacheFileError:
        if _is_busy(exc):
            return CacheFileError(
                f"the request cache {self.path} is still locked by another process after "
                f"{self.busy_timeout_s:g} s ({action}: {exc}); is another helm-run stuck on it? "
                "Stop it, or move the file away")
        return CacheFileError(f"the request cache {self.path} cannot be used ({action}: "
                              f"{type(exc).__name__}: {exc}); move it away to start a new one")

    def _recover(self, action: str, exc: sqlite3.Error) -> bool:
        """After a failed statement: damage moves the file aside and starts a new one, a file
        deleted or replaced in use is reopened (True); anything else is not for here (False)."""
        if _is_damage(exc):
            self._move_aside(f"{action}: {exc}")
        elif not _is_busy(exc) and self._replaced():
            hwarn(f"syntaxgym-helm: the request cache {self.path} was deleted or replaced while in "
                  f"use ({action}: {exc}); starting a new one at that path")
            self._close_quietly()
            self.pending = 0
        else:
            return False
        self._open()
        return True

    def _run(self, action: str, statement: Callable[[sqlite3.Connection], Any]) -> Any:
        """``statement(connection)`` under the lock; after damage or a replaced file, once more
        on the new file. Raises :class:`CacheFileError` naming the file."""
        with self._lock:
            for attempt in range(2):
                try:
                    if self._conn is None:
                        self._open()
                    assert self._conn is not None  # _open opens it or raises
                    return statement(self._conn)
                except sqlite3.Error as exc:
                    if attempt or not self._recover(action, exc):
                        raise self._error(action, exc) from exc
            return None

    # -- reading and writing -----------------------------------------------------------------------

    def get(self, key: str) -> Any:
        """The stored value for ``key``, or None (also for an entry that cannot be unpickled)."""
        row = self._run("read", lambda conn: conn.execute(
            f'SELECT value FROM "{TABLE}" WHERE key = ?', (key,)).fetchone())
        if row is None:
            return None
        try:
            return pickle.loads(bytes(row[0]))
        except Exception as exc:  # noqa: BLE001 - a damaged entry is a miss
            hwarn(f"syntaxgym-helm: an entry of the request cache {self.path} cannot be read "
                  f"({type(exc).__name__}: {exc}); it is computed again")
            return None

    def contains(self, keys: Sequence[str]) -> list[bool]:
        def present(conn: sqlite3.Connection) -> list[bool]:
            query = f'SELECT 1 FROM "{TABLE}" WHERE key = ?'
            return [conn.execute(query, (key,)).fetchone() is not None for key in keys]

        return self._run("read", present)

    def put(self, key: str, value: Any) -> None:
        """Store ``value`` (uncommitted); after a failed write, nothing more is stored."""
        if not self.writable:
            return
        blob = sqlite3.Binary(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        self._write("write", lambda conn: conn.execute(
            f'REPLACE INTO "{TABLE}" (key, value) VALUES (?, ?)', (key, blob)), counts=True)

    @contextlib.contextmanager
    def free_within(self, timeout_s: float) -> Iterator[bool]:
        """Hold the store if no other thread lets go of it later than ``timeout_s`` (yields
        whether it is held): what an interrupted run does must not wait on a busy file."""
        held = self._lock.acquire(timeout=timeout_s)
        try:
            yield held
        finally:
            if held:
                self._lock.release()

    def commit(self, timeout_s: float | None = None) -> bool:
        """Commit the pending writes; with ``timeout_s``, give up (False) when another thread
        holds the file that long (an interrupted run must end in seconds)."""
        if not self._lock.acquire(timeout=-1 if timeout_s is None else timeout_s):
            return False
        try:
            if self.writable and self.pending:
                self._write("commit", lambda conn: conn.commit(), counts=False)
            return True
        finally:
            self._lock.release()

    def _write(self, action: str, statement: Callable[[sqlite3.Connection], Any],
               counts: bool) -> None:
        with self._lock:
            try:
                self._run(action, statement)
            except CacheFileError as exc:
                cause = exc.__cause__
                if isinstance(cause, sqlite3.Error) and _is_busy(cause):
                    raise  # a stuck lock: stop, naming the file
                self._stop_writing(action, cause or exc)
                return
            if counts:
                self.pending += 1
            else:
                self.saved, self.pending = self.saved + self.pending, 0

    def _stop_writing(self, action: str, exc: BaseException) -> None:
        self.writable = False
        lost, self.pending = self.pending, 0
        if self._conn is not None:
            try:
                self._conn.rollback()
            except sqlite3.Error:
                pass
        hwarn(f"syntaxgym-helm: cannot write the request cache {self.path} ({action}: "
              f"{type(exc).__name__}: {exc}; is the disk full?); this process saves no more "
              f"answers to it ({lost} unsaved answers dropped): they are scored now and computed "
              "again by the next run")

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self.commit()
                self._close_quietly()


_STORES: dict[str, SqliteStore] = {}
_STORES_LOCK = threading.Lock()


def open_store(path: str | os.PathLike, busy_timeout_s: float = 300.0) -> SqliteStore:
    """The process's store for ``path`` (one per file: a client and a tokenizer of the same
    organisation share HELM's cache file, and two connections of one process would wait for
    each other's locks)."""
    key = os.path.abspath(path)
    with _STORES_LOCK:
        store = _STORES.get(key)
        if store is None:
            store = _STORES[key] = SqliteStore(path, busy_timeout_s)
        return store
