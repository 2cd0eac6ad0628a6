"""The checkpoints of a training run, found where they are kept: folders on disk and revisions
(branches) of a Hugging Face Hub repository.

- Folders (:func:`folder_checkpoints`): a glob (``out/checkpoint-*``), a folder holding
  checkpoint folders at any depth (every folder with a ``config.json`` or a GGUF file), or one
  checkpoint folder. Each is named by its folder (``checkpoint-500``). A folder that is a
  checkpoint and holds checkpoints too (a transformers ``Trainer``'s ``output_dir``: the final
  model at its top, ``checkpoint-N`` below) is all of them, as when it lies below the folder
  given: its final model may be at a later step than the last checkpoint, and leaving out
  either would drop a point of the curve unseen. The top one is named by its folder, which
  seldom says its step: the sweep asks for its x (``--x-values``).
- Hub revisions (:func:`hub_checkpoints`): the repository's branches, by a list
  (``step0,step1000``), a pattern (``chck_*M``, ``step*``, ``step*-tokens*``) or ``all`` (every
  branch but ``main``, the final model, which has no place in training of its own). Listed by
  huggingface_hub's ``list_repo_refs``; offline (``HF_HUB_OFFLINE=1``) from the refs of the local
  Hugging Face cache (``scan_cache_dir``), where each revision must already be. Each is pinned to
  the commit its branch pointed at when listed, and fetched by that commit
  (``snapshot_download``) only when the sweep reaches it (:func:`local_folder`), so that a sweep
  of 154 Pythia checkpoints does not download them all first.

Nothing found is a :class:`CheckpointSearchError` naming the pattern or repository and what was
there.
"""

from __future__ import annotations

import fnmatch
import glob
from dataclasses import dataclass
from pathlib import Path

#: The branch ``all`` leaves out: the final model, not a point in training.
FINAL_BRANCH = "main"


class CheckpointSearchError(ValueError):
    """No checkpoint where the sweep was told to look (the message says where and what is there)."""


@dataclass(frozen=True)
class CheckpointSource:
    """One checkpoint of a sweep: its ``name`` (the folder or branch name, what x is read from),
    its local folder (None until a Hub revision is fetched), and for a Hub revision its
    repository, branch and the commit the branch pointed at."""

    name: str
    folder: str | None
    repo: str | None = None
    revision: str | None = None
    commit: str | None = None

    @property
    def where(self) -> str:
        """For messages: the folder, or ``repo@revision``."""
        return (self.folder or self.name) if self.repo is None else f"{self.repo}@{self.revision}"


def _is_checkpoint_folder(path: Path) -> bool:
    return path.is_dir() and ((path / "config.json").is_file() or any(path.glob("*.gguf")))


def folder_checkpoints(where: str) -> list[CheckpointSource]:
    """The checkpoint folders ``where`` names (see the module doc), sorted by path (a folder
    before those below it). A glob match without ``config.json`` is kept (the sweep reports
    what it lacks)."""
    path = Path(where).expanduser()
    if glob.has_magic(where):
        folders = [Path(p) for p in sorted(glob.glob(str(path))) if Path(p).is_dir()]
        if not folders:
            raise CheckpointSearchError(
                f"{where}: the pattern matches no folder (in {path.parent.resolve()}: "
                f"{_listing(path.parent)}); check the pattern (quote it, so that the shell does "
                "not expand it)")
    elif path.is_dir():
        below = {config.parent for config in path.rglob("*/config.json")} | {
            gguf.parent for gguf in path.rglob("*/*.gguf")}
        folders = [path, *sorted(below)] if _is_checkpoint_folder(path) else sorted(below)
        if not folders:
            raise CheckpointSearchError(
                f"{where}: no checkpoint folder under it (none holds a config.json or a .gguf "
                f"file; it holds {_listing(path)}); give the folder a training run saved its "
                "checkpoints in, or a glob such as out/checkpoint-*")
    else:
        raise CheckpointSearchError(f"{where}: no such folder (give a folder, a glob such as "
                                    "out/checkpoint-*, or a Hub repository with --revisions)")
    return [CheckpointSource(folder.name, str(folder.resolve())) for folder in folders]


def _listing(folder: Path, shown: int = 8) -> str:
    try:
        names = sorted(p.name for p in folder.iterdir())
    except OSError:
        return "nothing readable"
    if not names:
        return "nothing"
    return ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown
                                       else "")


def hub_checkpoints(repo: str, revisions: str) -> list[CheckpointSource]:
    """The revisions of ``repo`` that ``revisions`` selects (see the module doc), each pinned to
    its commit."""
    branches, tags = _branches(repo)
    wanted = [part.strip() for part in revisions.split(",") if part.strip()]
    if wanted == ["all"]:  # branches: not main, nor tags, nor a pull request's refs/pr/N
        chosen = [name for name in branches
                  if name != FINAL_BRANCH and name not in tags and not name.startswith("refs/")]
    else:
        chosen = [name for name in branches
                  if any(fnmatch.fnmatchcase(name, pattern) for pattern in wanted)]
        missing = [p for p in wanted if not glob.has_magic(p) and p not in branches]
        if missing:
            raise CheckpointSearchError(f"{repo}: no revision {', '.join(missing)} (it has "
                                        f"{_shown(branches)})")
        unmatched = [p for p in wanted if glob.has_magic(p)
                     and not any(fnmatch.fnmatchcase(name, p) for name in branches)]
        if unmatched and len(wanted) > 1:  # (a lone pattern: said below)
            raise CheckpointSearchError(f"{repo}: no revision matches {', '.join(unmatched)} "
                                        f"(it has {_shown(branches)})")
    if not chosen:
        raise CheckpointSearchError(f"{repo}: no revision matches {revisions!r} (it has "
                                    f"{_shown(branches)})")
    return [CheckpointSource(name, None, repo, name, branches[name]) for name in chosen]


def _shown(names: dict[str, str], shown: int = 8) -> str:
    listed = sorted(names)
    return (", ".join(listed[:shown]) + (f" and {len(listed) - shown} more"
                                         if len(listed) > shown else "")) or "no branches"


def _branches(repo: str) -> tuple[dict[str, str], set[str]]:
    """Revision name -> commit (branches and tags), and which are tags: from the Hub, or offline
    from the local cache's refs (which do not say which are tags)."""
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        return _cached_branches(repo), set()
    from huggingface_hub import HfApi

    try:
        refs = HfApi().list_repo_refs(repo)
    except Exception as error:  # noqa: BLE001 - network, unknown or gated repository: say which
        raise CheckpointSearchError(
            f"{repo}: its revisions could not be listed from the Hub ({type(error).__name__}: "
            f"{error}); check the name and the network, or set HF_HUB_OFFLINE=1 to sweep the "
            "revisions already in the local Hugging Face cache") from None
    return ({ref.name: ref.target_commit for ref in [*refs.branches, *refs.tags]},
            {ref.name for ref in refs.tags})


def _cached_branches(repo: str) -> dict[str, str]:
    from huggingface_hub import constants, scan_cache_dir

    cache = constants.HF_HUB_CACHE
    try:
        info = scan_cache_dir(cache)
    except Exception as error:  # noqa: BLE001 - a missing or damaged cache: say where
        raise CheckpointSearchError(f"{repo}: offline (HF_HUB_OFFLINE), and the Hugging Face "
                                    f"cache {cache} cannot be read ({error})") from None
    for cached in info.repos:
        if cached.repo_id == repo and cached.repo_type == "model":
            return {ref: revision.commit_hash for revision in cached.revisions
                    for ref in revision.refs}
    raise CheckpointSearchError(f"{repo}: offline (HF_HUB_OFFLINE), and not in the Hugging Face "
                                f"cache {cache}; download its revisions first, or go online")


def local_folder(source: CheckpointSource) -> CheckpointSource:
    """``source`` with its local folder: a Hub revision is fetched at its pinned commit (from
    the cache when it is there)."""
    if source.folder is not None or source.repo is None:
        return source
    from huggingface_hub import snapshot_download

    folder = snapshot_download(source.repo, revision=source.commit or source.revision)
    return CheckpointSource(source.name, folder, source.repo, source.revision, source.commit)
