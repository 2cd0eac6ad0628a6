"""A run written apart and moved into place whole, so that no folder under ``runs/<suite>/`` ever
passes HELM's completed check (``Runner._is_run_completed``: its five files exist) half-written.

A worker writes each run into a staging folder of its own (:func:`new_stage`, under
``<output>/ray_staging/<suite>/<session>/`` where the workers see the output path, else in the
node's temporary folder), records where and how it ran (:data:`RECORD`), and then renames the
run's folder into ``runs/<suite>/`` (:func:`move_into_place`): one ``rename`` on one file system,
so the folder appears complete or not at all. A previous folder of the same run (a run made again
without ``--skip-completed-runs``) is renamed aside first and removed after. A worker that dies
leaves only its staging folder, which the driver removes at the end of the session. Where the
workers do not see the output path, the worker returns the run's files (:func:`pack`) and the
driver writes them into a staging folder of its own and moves that into place the same way.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: The file in each run folder saying where and how the run ran (node, process, attempt, times).
RECORD = "syntaxgym_runner.json"
#: The folder under the output path that holds runs being written.
STAGING = "ray_staging"
#: The files HELM's ``Runner._is_run_completed`` requires.
COMPLETED_FILES = ("run_spec.json", "scenario.json", "scenario_state.json", "stats.json",
                   "per_instance_stats.json")


def staging_root(output_path: str | Path, suite: str, session: str) -> Path:
    """The folder that holds one session's staging folders."""
    return Path(output_path) / STAGING / suite / session


def new_stage(root: Path) -> Path:
    """A fresh, empty staging folder under ``root`` (HELM's ``runs_path`` for one run)."""
    stage = root / uuid.uuid4().hex
    stage.mkdir(parents=True)
    return stage


def is_complete(folder: Path) -> bool:
    """HELM's completed check: every file of :data:`COMPLETED_FILES` exists in ``folder``."""
    return folder.is_dir() and all((folder / name).exists() for name in COMPLETED_FILES)


def write_record(folder: Path, record: Mapping[str, Any]) -> None:
    """Write :data:`RECORD` into ``folder`` (whole: a temporary file renamed over it)."""
    folder.mkdir(parents=True, exist_ok=True)
    temporary = folder / f".{RECORD}.{os.getpid()}"
    temporary.write_text(json.dumps(dict(record), indent=2, sort_keys=True), encoding="utf-8")
    os.replace(temporary, folder / RECORD)


def read_record(folder: Path) -> dict[str, Any] | None:
    """The :data:`RECORD` of a run folder, or None where it has none (or it is unreadable)."""
    try:
        data = json.loads((folder / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def move_into_place(folder: Path, target: Path) -> None:
    """Rename the written run ``folder`` to ``target`` (same file system); a folder already at
    ``target`` is renamed aside first and removed once the new one is in place."""
    target.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(5):  # another writer of the same run may move its folder in between
        try:
            os.rename(folder, target)
            return
        except OSError:
            if not target.exists():
                raise
        aside = folder.with_name(f"{folder.name}.previous.{uuid.uuid4().hex[:8]}")
        try:
            os.rename(target, aside)
        except FileNotFoundError:
            continue
        try:
            os.rename(folder, target)
        finally:
            shutil.rmtree(aside, ignore_errors=True)
        return
    raise OSError(f"could not move {folder} to {target}: another writer keeps replacing it")


def pack(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` by its relative path (the run's files, for the driver)."""
    return {str(path.relative_to(folder)): path.read_bytes()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def unpack(files: Mapping[str, bytes], folder: Path) -> None:
    """Write what :func:`pack` gave into ``folder``; a path leaving it is refused."""
    root = folder.resolve()
    for name, data in files.items():
        path = (folder / name).resolve()
        if root not in path.parents:
            raise ValueError(f"a returned run file {name!r} is outside its run folder")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
