"""The version of the files a SyntaxGym run writes, and how a run of another version is refused.

A run folder holds HELM's files and the plugin's ``syntaxgym_scored_items.json``
(:mod:`syntaxgym_helm.harness.scored_items`). What the plugin puts in them (each instance's
one-item suite and condition tags, the scored items' fields) is the *run format*, one number,
:data:`RUN_FORMAT_VERSION`: the scenario writes it into every instance
(``Instance.extra_data[FORMAT_KEY]``) and the metric into the scored items. Readers accept this
version only: a run written by another one is refused with :class:`RunFormatError`, whose
message names the version that wrote it and the command that runs it again (the request cache
makes that quick), instead of code paths that read old layouts.

The number goes up when a reader of the previous version would misread a run; fields added
where readers look them up by name (the scored items' ``extras``) do not change it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from importlib import metadata
from typing import Any

#: The run format this version writes and reads (3: the first versioned one; runs written
#: before carry no number).
RUN_FORMAT_VERSION = 3
def _version() -> str:
    try:
        return metadata.version("syntaxgym-helm")
    except metadata.PackageNotFoundError:  # run from a source tree that was not installed
        return "unknown version"


#: Who wrote a run, as the scored items record it.
WRITTEN_BY = f"syntaxgym-helm {_version()}"
#: Key of ``Instance.extra_data`` holding the run format of the instance.
FORMAT_KEY = "syntaxgym_run_format"


class RunFormatError(ValueError):
    """A run written by another version of the plugin than this one reads."""


def check_run_format(version: Any, written_by: str | None, run_name: str, model: str | None,
                     run_suite: str, max_items: int | None = None) -> None:
    """Nothing when ``version`` is :data:`RUN_FORMAT_VERSION`; else :class:`RunFormatError`
    saying who wrote the run and how to run it again."""
    if version == RUN_FORMAT_VERSION:
        return
    who = (f"{written_by} (run format {version})" if written_by else
           f"a syntaxgym-helm from before run formats were versioned (run format "
           f"{version if version is not None else 'none'})")
    raise RunFormatError(
        f"written by {who}; this {WRITTEN_BY} reads run format {RUN_FORMAT_VERSION} only. "
        f"Run it again (answers come from the request cache): "
        f"{rerun_command(run_name, model, run_suite, max_items)}")


def rerun_command(run_name: str, model: str | None, run_suite: str,
                  max_items: int | None = None) -> str:
    """The ``helm-run`` command that makes run ``run_name`` again in run suite ``run_suite``
    (a run name writes its model's ``/`` as ``_``: ``model`` puts it back), with
    ``--max-eval-instances`` where the run had one."""
    entry = run_name
    if model and "model=" in entry:
        head, _, rest = entry.partition("model=")
        tail = rest.partition(",")[2]
        entry = f"{head}model={model}" + (f",{tail}" if tail else "")
    limit = f" --max-eval-instances {max_items}" if max_items is not None else ""
    return f"helm-run --run-entries '{entry}' --suite {run_suite}{limit}"


def canonical_digest(value: Any) -> str:
    """SHA-256 of ``value`` as canonical JSON (keys sorted, no spaces): the same for a dataclass
    turned into a dict here and for the same dict read back from HELM's JSON files."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def adapter_digest(adapter_spec: Any) -> str:
    """The digest of an ``AdapterSpec`` (a dataclass, or the dict ``run_spec.json`` holds) as
    HELM writes it (``asdict_without_nones``)."""
    if not isinstance(adapter_spec, Mapping):
        from helm.common.general import asdict_without_nones

        adapter_spec = json.loads(json.dumps(asdict_without_nones(adapter_spec)))
    return canonical_digest(adapter_spec)
