"""Hugging Face Hub ids and the commits their revisions are, asked without loading anything.

A Hub id names a repository whose branches move: ``main`` today is not ``main`` next month. The
plugin pins a Hub checkpoint to the commit its revision resolves to when it is first used, loads
that commit, and records it with the run (:mod:`.checkpoint_identity`).
"""

from __future__ import annotations

import re
from pathlib import Path

#: How long asking the Hub which commit a revision is may take (seconds).
HUB_TIMEOUT_S = 20.0
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")


def looks_like_hub_id(text: str) -> bool:
    """Whether ``text`` can be a Hugging Face Hub id (``org/name`` or ``name``), not a path."""
    return bool(_HUB_ID.match(text)) and not Path(text).exists()


def hub_commit(repo_id: str, revision: str | None = None) -> str | None:
    """The commit ``revision`` (default: the default branch) of the Hub model ``repo_id`` is:
    asked of the Hub (within :data:`HUB_TIMEOUT_S`; not when ``HF_HUB_OFFLINE`` is set), else
    read from the local cache's ``refs/`` (huggingface_hub's ``resolve_revision``); None when
    neither knows, or ``repo_id`` is no Hub id."""
    if revision and _COMMIT.match(revision):
        return revision
    if not looks_like_hub_id(repo_id):
        return None
    from huggingface_hub import HfApi, constants, resolve_revision

    if not constants.HF_HUB_OFFLINE:
        try:
            sha = HfApi().repo_info(repo_id, revision=revision, timeout=HUB_TIMEOUT_S).sha
            if sha:
                return str(sha)
        except Exception:  # noqa: BLE001 - unreachable, unknown or gated: the cache may know
            pass
    try:
        return str(resolve_revision(repo_id, revision=revision, local_files_only=True).resolved)
    except Exception:  # noqa: BLE001 - not in the cache either
        return None
