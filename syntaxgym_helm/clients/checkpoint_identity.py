"""What a checkpoint is: a digest of what its files hold, or the commit a Hub revision resolved to.

HELM knows a model by its name only; the plugin names the weights behind a name by
:func:`identify`, and puts that identity in every request-cache key, in the name a path is given
(:mod:`syntaxgym_helm.api.model_resolution`), in the record of every run and in report rows:

- a folder (what ``save_pretrained`` writes): the SHA-256 of each file that can change what is
  scored (config, weights, tokenizer files, custom code), by file name. Left out: a Trainer's
  state (optimizer, scheduler, RNG state, ``trainer_state.json``, ``training_args.bin``), notes
  (``*.md``), lock and hidden files, and a GGUF export beside the weights;
- a GGUF file: its SHA-256;
- a Hub id: the id and the commit its revision resolved to (:func:`.hub_revisions.hub_commit`:
  the Hub, within a deadline, else the local cache's ``refs/``); the clients then load that
  commit, so what is scored is what is named. With neither the Hub nor the cache, the id and
  revision as given.

Where a folder lies is no part of it: a copy or a move keeps its identity (and its cached
answers); the same folder saved again is another checkpoint. Each file's digest is read once per
version of the file (:mod:`.content_digest`), so a later run costs a ``stat`` per file, and
:class:`CheckpointWatch` lets a client see, request by request, that a folder was saved again.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from syntaxgym_helm.clients.content_digest import RACY_SECONDS, file_digest
from syntaxgym_helm.clients.hub_revisions import hub_commit

#: Files of a checkpoint folder that say nothing about what is scored.
_IGNORED_NAMES = frozenset({"optimizer.pt", "scheduler.pt", "scaler.pt", "trainer_state.json",
                            "training_args.bin"})
_IGNORED = re.compile(r"^(\..*|.*\.(md|lock|gguf)|rng_state.*\.pth)$")
#: How many hex digits of the identity name a checkpoint (64 bits).
DIGEST_CHARS = 16


class CheckpointChanged(RuntimeError):
    """A checkpoint's files changed while it was loaded."""


@dataclass(frozen=True)
class CheckpointIdentity:
    """A checkpoint's identity (see the module doc): ``digest`` names it (cache keys, names, run
    records); the rest says what it was computed from."""

    digest: str
    source: str  # the folder or the Hub id, as given
    gguf_file: str | None = None
    revision: str | None = None  # as asked (Hub)
    commit: str | None = None  # the commit ``revision`` resolved to (Hub)
    files: tuple[tuple[str, str], ...] = field(default=(), repr=False)  # (name, SHA-256)

    @property
    def pinned(self) -> bool:
        """Whether the identity names the bytes scored (a local file, or a resolved commit)."""
        return bool(self.files) or self.commit is not None

    def record(self) -> dict[str, Any]:
        """The identity as JSON, as a run keeps it."""
        return {"digest": self.digest, "source": self.source, "gguf_file": self.gguf_file,
                "revision": self.revision, "commit": self.commit,
                "files": {name: sha for name, sha in self.files}}

    def describe(self) -> str:
        """For messages: ``checkpoint 1a2b3c4d5e6f7a8b (SOURCE)``."""
        where = self.source + (f" / {self.gguf_file}" if self.gguf_file else "")
        if self.commit:
            where += f" at commit {self.commit}"
        return f"checkpoint {self.digest} ({where})"


def checkpoint_files(folder: str | Path) -> list[Path]:
    """The files of a checkpoint folder that its identity covers, by name."""
    return sorted(path for path in Path(folder).iterdir()
                  if path.name not in _IGNORED_NAMES and not _IGNORED.match(path.name)
                  and path.is_file())


def _local_files(source: Path, gguf_file: str | None) -> list[Path] | None:
    """The files a local checkpoint is, or None when ``source`` is not a local path."""
    if gguf_file and (source / gguf_file).is_file():
        return [source / gguf_file]
    if source.is_dir():
        return checkpoint_files(source)
    if source.is_file():
        return [source]
    return None


def identify(source: str | Path | None, gguf_file: str | None = None,
             revision: str | None = None) -> CheckpointIdentity:
    """The :class:`CheckpointIdentity` of a checkpoint given as HELM's deployments give it
    (a folder, a folder and a GGUF file in it, a GGUF file, or a Hub id and revision)."""
    text = str(source) if source is not None else ""
    files = _local_files(Path(text).expanduser(), gguf_file) if text else None
    if files is not None:
        digests = tuple((path.name, file_digest(path)) for path in files)
        return CheckpointIdentity(files_digest(digests), text, gguf_file, revision, None, digests)
    commit = hub_commit(text, revision) if text else None
    if commit is not None:
        return CheckpointIdentity(_digest(["hub", text, str(gguf_file), commit]), text,
                                  gguf_file, revision, commit)
    # Neither a local path nor a commit found: the name and revision are all there is.
    return CheckpointIdentity(_digest(["hub", text, str(gguf_file), str(revision)]), text,
                              gguf_file, revision)


def checkpoint_identity(pretrained_model_name_or_path: str | None, gguf_file: str | None = None,
                        revision: str | None = None) -> str:
    """The digest of :func:`identify` (:data:`DIGEST_CHARS` hex digits)."""
    return identify(pretrained_model_name_or_path, gguf_file, revision).digest


def files_digest(files: Iterable[tuple[str, str]]) -> str:
    """The identity digest of local files given as (name, SHA-256) pairs, in name order (what
    :func:`identify` computes from the files; an embedded model's package gives the SHA-256 of
    its file, so its identity needs no hashing)."""
    return _digest(["files", *(f"{name}={sha}" for name, sha in sorted(files))])


def _digest(parts: Iterable[str]) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:DIGEST_CHARS]


class CheckpointWatch:
    """A checkpoint's identity, kept for a client: :meth:`current` looks at its files' sizes and
    times (a ``stat`` each, and one of the folder: a file added or removed changes its times)
    and digests again only when they changed, so that a folder saved again in the same process
    is seen at the next request. A Hub id is resolved once (its commit is what the client
    loads)."""

    def __init__(self, source: str | None, gguf_file: str | None = None,
                 revision: str | None = None) -> None:
        self.source, self.gguf_file, self.revision = source, gguf_file, revision
        self._lock = threading.Lock()
        self._marks: tuple | None = None
        self._identity: CheckpointIdentity | None = None
        self._folder: str | None = None  # a folder checkpoint's path, whose listing is kept
        self._listing: tuple[tuple, list[str]] | None = None  # (its stat, its files' paths)

    def current(self) -> CheckpointIdentity:
        """The identity of the files as they are now."""
        with self._lock:
            marks = self._marks_now()
            if self._identity is None or (marks is not None and marks != self._marks):
                self._identity = identify(self.source, self.gguf_file, self.revision)
                # Files changed within a clock tick of now may change again unseen.
                self._marks = marks if _trusted(marks) else None
            return self._identity

    def confirm(self, identity: CheckpointIdentity) -> None:
        """Raise :class:`CheckpointChanged` when the files are no longer ``identity`` (they
        changed while a client loaded them)."""
        now = self.current()
        if now.digest != identity.digest:
            raise CheckpointChanged(
                f"{self.source}: its files changed while they were loaded ({identity.digest}, "
                f"now {now.digest}); score it again once it is saved")

    def _marks_now(self) -> tuple | None:
        """The local files' sizes and times (the folder's first); None for a checkpoint that is
        no local path."""
        if not self.source:
            return None
        try:
            folder_mark: tuple = ()
            if self._listing is not None and self._folder is not None:
                folder_mark = _stat_mark(os.stat(self._folder))
            if self._listing is None or folder_mark != self._listing[0]:
                files = _local_files(Path(self.source).expanduser(), self.gguf_file)
                if files is None:
                    return None
                base = Path(self.source).expanduser()
                self._folder = str(base) if base.is_dir() and not self.gguf_file else None
                folder_mark = _stat_mark(os.stat(self._folder)) if self._folder else ()
                self._listing = (folder_mark, [str(path) for path in files])
            return (folder_mark, *(_stat_mark(os.stat(path)) for path in self._listing[1]))
        except OSError:  # a file removed while listed: look again next time
            self._listing = None
            return ("unreadable",)


def _stat_mark(stat: os.stat_result) -> tuple[int, int, int, int, int]:
    return (stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino, stat.st_dev)


def _trusted(marks: tuple | None) -> bool:
    """Whether ``marks`` (from :meth:`CheckpointWatch._marks_now`) can stand for the files'
    bytes until they change: none of them changed within :data:`RACY_SECONDS`."""
    if not marks or not all(isinstance(mark, tuple) for mark in marks):
        return False
    now = time.time()
    return all(now - mark[2] / 1e9 >= RACY_SECONDS for mark in marks if mark)


_USED_LOCK = threading.Lock()
#: Model deployment -> the identity its client last scored with, in this process.
_USED: dict[str, CheckpointIdentity] = {}


def note_use(deployment: str | None, identity: CheckpointIdentity) -> None:
    """Record that ``deployment``'s client scored with ``identity`` (read by the metric, to keep
    it with the run)."""
    if deployment:
        with _USED_LOCK:
            _USED[deployment] = identity


def used_checkpoint(deployment: str | None) -> CheckpointIdentity | None:
    """The identity ``deployment``'s client last scored with in this process, if any."""
    with _USED_LOCK:
        return _USED.get(deployment or "")
