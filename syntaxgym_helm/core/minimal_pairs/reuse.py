"""A converted suite reused from the cache while everything that made it is unchanged.

Converting a paradigm costs far more than reading and hashing its source, and a sweep loads the
same suites at every checkpoint (and a run again, the suites of the run before). So the cache keeps,
beside each converted suite ``<cache_dir>/<suite>.json``, a record ``<suite>.json.key``: the
*conversion key* and the SHA-256 of the suite file's bytes. The key is a digest of everything a
conversion reads:

- the SHA-256 of the source bytes just read and checked (so a source changed on disk, whether
  refused or taken as it is by an unpinned data set, never matches a record made from another);
- the file's row (:class:`SourceFile`: suite, paths, language, paradigm, group);
- the companion figures the suite's meta takes (ZhoBLiMP's human agreement, or why they are
  unavailable);
- a digest of the source of every module under ``syntaxgym_helm/core`` (readers, regions,
  conversion, the data sets' declarations), so a changed converter never serves an old
  conversion.

Only the registry reuses conversions (:func:`syntaxgym_helm.core.registry.load_named_suite`: the
catalogue's own data sets, whose declarations that digest covers); a data set declared elsewhere,
as tests do, is converted each time. A suite file whose bytes do not match its record (edited,
cut short), a record that cannot be read, or any other key: the suite is converted again and
both files rewritten. The suite is built from the reused JSON without validating it again, as
from a fresh conversion: those bytes are the conversion's, byte for byte.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from syntaxgym_helm.core.download import sha256_hex, write_atomically
from syntaxgym_helm.core.errors import SyntaxGymError
from syntaxgym_helm.core.files import read_regular_file
from syntaxgym_helm.core.minimal_pairs.dataset import DataSet, SourceFile

#: Bumped when the key's recipe or the record's layout changes.
KEY_VERSION = 1
RECORD_SUFFIX = ".key"


def record_path(suite_path: Path) -> Path:
    """The record kept beside a converted suite's file."""
    return suite_path.with_name(suite_path.name + RECORD_SUFFIX)


@functools.cache
def code_digest() -> str | None:
    """A digest of the source of every module under ``syntaxgym_helm/core`` (None where they
    cannot be read, e.g. a zipped install: nothing is reused then)."""
    core = Path(__file__).resolve().parents[1]
    digest = sha256_hex(b"")
    try:
        for path in sorted(core.rglob("*.py")):
            digest = sha256_hex(f"{digest} {path.relative_to(core).as_posix()} ".encode()
                                + path.read_bytes())
    except OSError:
        return None
    return digest


def conversion_key(dataset: DataSet, file: SourceFile, source_sha256: str,
                   companion: Mapping[str, Any] | None) -> str | None:
    """The key of the conversion of ``file`` of the catalogue's ``dataset`` from source bytes
    of ``source_sha256``; None when the package's source cannot be read (nothing is reused)."""
    code = code_digest()
    if code is None:
        return None
    recipe = {"key_version": KEY_VERSION, "code": code, "dataset": dataset.name,
              "file": repr(file), "source_sha256": source_sha256, "companion": companion}
    return sha256_hex(json.dumps(recipe, sort_keys=True, ensure_ascii=False,
                                 default=repr).encode("utf-8"))


def reused_suite(suite_path: Path, key: str | None) -> dict[str, Any] | None:
    """The suite JSON at ``suite_path`` when its record holds ``key`` and the SHA-256 of its
    bytes; None otherwise (convert again)."""
    if key is None:
        return None
    try:
        record = json.loads(read_regular_file(record_path(suite_path)))
        if not isinstance(record, dict) or record.get("key") != key:
            return None
        data = read_regular_file(suite_path)
        if sha256_hex(data) != record.get("suite_sha256"):
            return None
        suite = json.loads(data)
    except (SyntaxGymError, OSError, ValueError):
        return None
    return suite if isinstance(suite, dict) else None


def remember(suite_path: Path, key: str | None, data: bytes) -> None:
    """Record that ``data``, just written to ``suite_path``, is the conversion of ``key``."""
    if key is None:
        return
    write_atomically(record_path(suite_path), json.dumps(
        {"key": key, "suite_sha256": sha256_hex(data)}).encode("utf-8"))
