"""Minimal-pair suites by name: ``<data set>_<paradigm>`` to a converted suite, from a checked
source.

A suite's file is taken, in this order, from an offline folder (the ``data_dir`` argument, then
the data set's variable, e.g. ``$SYNTAXGYM_CLAMS_DIR``), laid out as the project's shared copy
(``en_evalset/simple_agrmt.txt``) or as a checkout of the source repository
(``datasets/add_new_suffix.csv``), the file itself or gzip-compressed beside it (``NAME.gz``),
or, for a data set published as an archive (ZhoBLiMP's ``.tar.gz``), inside that archive; from
the cache (``<cache_dir>/<data set>/<path>``); or downloaded from the pinned commit into the
cache. Every copy must match the SHA-256 recorded for it (of the uncompressed bytes); an offline
copy that does not is refused, since a modified file must not pass under the data set's name
(convert it with ``syntaxgym-helm convert`` and run the suite by path instead). The suite is
written to ``<cache_dir>/<suite>.json``; a later load reuses that file while its source's digest,
companion figures and the converter are unchanged (:mod:`.reuse`), and converts again otherwise.
An archive's members are read once per process (:func:`archive_members`, keyed by the digest of
the archive's bytes, which are read and hashed at every load).
"""

from __future__ import annotations

import difflib
import io
import json
import os
import tarfile
import zlib
from pathlib import Path
from typing import Any, NamedTuple

from syntaxgym_helm.core import files as safe_files
from syntaxgym_helm.core.download import DownloadError, fetch, sha256_hex, write_atomically
from syntaxgym_helm.core.minimal_pairs import reuse
from syntaxgym_helm.core.minimal_pairs.convert import Conversion, convert_data
from syntaxgym_helm.core.minimal_pairs.dataset import DataSet, PairDataError, SourceFile
from syntaxgym_helm.core.suite import Suite


def find_file(dataset: DataSet, name: str) -> SourceFile:
    """The file of suite ``name``; an error suggesting close names when there is none."""
    known = dataset.by_suite()
    wanted = name if name.startswith(dataset.prefix) else dataset.prefix + name
    if wanted in known:
        return known[wanted]
    close = close_names(dataset, wanted, list(known))
    example = next(iter(known))
    hint = (f"did you mean {', '.join(close)}?" if close else
            f"the {len(known)} names are {dataset.prefix}... (e.g. {example}; "
            f"`syntaxgym-helm list {dataset.name}` lists them)")
    raise dataset.error(f"unknown {dataset.title} suite {name!r}: {hint}")


def close_names(dataset: DataSet, wanted: str, known: list[str]) -> list[str]:
    """Up to 3 of ``known`` suite names close to ``wanted``: the same but for case first, then
    languages named in words (``multiblimp_dutch``: ``multiblimp_nld``), then close spellings,
    compared without case."""
    prefix = dataset.prefix.casefold()
    folded = {name.casefold(): name for name in known}
    rest = wanted.casefold().removeprefix(prefix)
    by_language = {language.casefold(): prefix + code.casefold()
                   for code, language in dataset.language_names.items()}
    candidates = [wanted.casefold(), by_language.get(rest, ""),
                  *(by_language[key] for key in difflib.get_close_matches(rest, list(by_language),
                                                                        n=3)),
                  *difflib.get_close_matches(wanted.casefold(), list(folded), n=3)]
    return list(dict.fromkeys(folded[key] for key in candidates if key in folded))[:3]


def convert_named(dataset: DataSet, name: str, cache_dir: str | Path,
                  data_dir: str | Path | None = None, url: str | None = None) -> Conversion:
    """The conversion of suite ``name`` from its checked source. ``url`` is the download address
    pattern (``{path}``: the file's source path), for tests' local servers."""
    return _convert(dataset, _checked_source(dataset, name, Path(cache_dir), data_dir, url))


class _Source(NamedTuple):
    """A suite's checked source: its row, bytes, their digest, its companion figures, and the
    file read as messages name it (an offline copy by its path, else the source path)."""

    file: SourceFile
    data: bytes
    digest: str
    companion: dict[str, object] | None
    label: str


def _checked_source(dataset: DataSet, name: str, cache_dir: Path, data_dir: str | Path | None,
                    url: str | None) -> _Source:
    file = find_file(dataset, name)
    url = url or dataset.url
    data, label = located_source(dataset, file, cache_dir, data_dir, url)
    companion = None if dataset.companion is None else companion_figures(
        dataset, file, cache_dir, data_dir, url)
    return _Source(file, data, file.sha256 or sha256_hex(data), companion, label)


def _convert(dataset: DataSet, source: _Source) -> Conversion:
    conversion = convert_data(dataset, source.file, source.data, source.label, source.digest)
    if dataset.companion is not None:
        conversion.suite["meta"][dataset.companion.key] = source.companion
    return conversion


def resolve_named(dataset: DataSet, name: str, cache_dir: str | Path,
                  data_dir: str | Path | None = None, url: str | None = None, *,
                  reuse_conversion: bool = False) -> Path:
    """The path of the converted suite ``name``, written into ``cache_dir``.
    ``reuse_conversion``: the file there is kept when its record matches (:mod:`.reuse`; only
    for the catalogue's data sets, as the registry passes them)."""
    return _named(dataset, name, Path(cache_dir), data_dir, url, reuse_conversion)[0]


def load_named(dataset: DataSet, name: str, cache_dir: str | Path,
               data_dir: str | Path | None = None, *, reuse_conversion: bool = False) -> Suite:
    """The suite ``name`` itself, its file written too (or reused, as :func:`resolve_named`).
    Built without validating it again: its source is checked byte for byte and the conversion
    of every file is tested to validate (a reused file is the conversion's bytes, checked
    against its record)."""
    path, suite = _named(dataset, name, Path(cache_dir), data_dir, None, reuse_conversion)
    return Suite.from_trusted_json(suite, str(path))


def _named(dataset: DataSet, name: str, cache_dir: Path, data_dir: str | Path | None,
           url: str | None, reusable: bool) -> tuple[Path, dict[str, Any]]:
    """The converted suite ``name``'s file and JSON: reused when ``reusable`` and its record
    holds this conversion's key, else converted from the checked source and written (with its
    record when ``reusable``)."""
    source = _checked_source(dataset, name, cache_dir, data_dir, url)
    key = (reuse.conversion_key(dataset, source.file, source.digest, source.companion)
           if reusable else None)
    target = cache_dir / f"{source.file.suite}.json"
    found = reuse.reused_suite(target, key)
    if found is not None:
        return target, found
    conversion = _convert(dataset, source)
    # The record is kept only where the next load looks (the file of the suite's own name).
    path = write_suite(conversion, cache_dir,
                       key if conversion.name == source.file.suite else None)
    return path, conversion.suite


def write_suite(conversion: Conversion, cache_dir: str | Path, key: str | None = None) -> Path:
    """Write the suite as compact JSON (indenting makes ``json`` use its pure-Python encoder,
    much slower on large data sets), with the record of its conversion ``key`` (None: none)."""
    target = Path(cache_dir) / f"{conversion.name}.json"
    data = (json.dumps(conversion.suite, ensure_ascii=False,
                       separators=(",", ":")) + "\n").encode("utf-8")
    write_atomically(target, data)
    reuse.remember(target, key, data)
    return target


def source_bytes(dataset: DataSet, file: SourceFile, cache_dir: Path,
                 data_dir: str | Path | None, url: str) -> bytes:
    """The file's checked bytes: offline folder, else cache, else download (see the module)."""
    return located_source(dataset, file, cache_dir, data_dir, url)[0]


def located_source(dataset: DataSet, file: SourceFile, cache_dir: Path,
                   data_dir: str | Path | None, url: str) -> tuple[bytes, str]:
    """:func:`source_bytes`, and the file read as messages should name it: an offline copy by
    its path (of the two folders, the one a reader must mend), a pinned one by its source
    path."""
    folders = _folders(dataset, data_dir)
    for folder in folders:
        found = _offline(dataset, file, folder)
        if found is not None:
            return found
    cached = cache_dir / dataset.name / file.path
    if cached.is_file():
        data = safe_files.read_regular_file(cached)
        if file.sha256 and sha256_hex(data) == file.sha256:
            return data, file.path
    if not dataset.pinned:
        where = "".join(f" and {folder} has no {file.path}" for folder in folders)
        raise dataset.error(
            f"{dataset.title}'s files are not pinned in this package (no revision and checksums "
            f"were recorded: its data could not be fetched where the package was built), so "
            f"{file.suite} is not downloaded{where}. Set {dataset.env_var} (or the suites_dir "
            f"argument) to a folder holding {dataset.title}'s files (docs/multilingual.md)")
    if dataset.archive is not None:
        archive = _archive(dataset, cache_dir, url, folders, file)
        data = _member(dataset, file, archive, url.format(path=dataset.archive.source_path))
        if sha256_hex(data) != file.sha256:
            raise dataset.error(f"{file.path} in {dataset.archive.name} does not match its "
                                f"recorded SHA-256 {file.sha256}")
    else:
        data = _download(dataset, url.format(path=file.source_path), folders, file.path)
        if sha256_hex(data) != file.sha256:
            raise dataset.error(f"{url.format(path=file.source_path)} does not match its "
                                f"recorded SHA-256 {file.sha256}")
    write_atomically(cached, data)
    return data, file.path


def companion_figures(dataset: DataSet, file: SourceFile, cache_dir: Path,
                      data_dir: str | Path | None, url: str) -> dict[str, object]:
    """The companion file's figures for ``file`` (offline folder, cache, checked download), with
    where they come from; ``unavailable`` and why when the file cannot be had (the suite runs
    without them)."""
    companion = dataset.companion
    assert companion is not None
    folders = _folders(dataset, data_dir)
    found = [folder / relative for folder in folders
             for relative in dict.fromkeys((companion.path, companion.source_path))
             if (folder / relative).is_file()]
    cached = cache_dir / dataset.name / companion.path
    try:
        if found:
            data = safe_files.read_regular_file(found[0])
        elif cached.is_file() and sha256_hex(safe_files.read_regular_file(cached)) == \
                companion.sha256:
            data = safe_files.read_regular_file(cached)
        else:
            data = _download(dataset, url.format(path=companion.source_path), folders,
                             companion.path)
            write_atomically(cached, data)
    except (PairDataError, OSError) as exc:
        return {"unavailable": str(exc)}
    if sha256_hex(data) != companion.sha256:
        return {"unavailable": f"{found[0] if found else companion.source_path} is not the "
                               f"pinned {companion.path} (its SHA-256 differs from "
                               f"{companion.sha256})"}
    figures = companion.figures(data, file)
    if figures is None:
        return {"unavailable": f"{companion.path} has no row for {file.paradigm}"}
    return {**figures, "source": dataset.url.format(path=companion.source_path),
            "source_sha256": companion.sha256}


def _folders(dataset: DataSet, data_dir: str | Path | None) -> list[Path]:
    return [Path(f).expanduser() for f in (data_dir, os.environ.get(dataset.env_var)) if f]


def _offline(dataset: DataSet, file: SourceFile, folder: Path) -> tuple[bytes, str] | None:
    """The file from an offline folder (the file itself, gzip-compressed beside it, or in the
    data set's archive there), checked, with its path (a member: ``member in archive``); None
    when the folder has none of these."""
    found: tuple[bytes, Path, str] | None = None
    for relative in dict.fromkeys((file.path, file.source_path)):
        for candidate, packed in ((folder / relative, False), (folder / f"{relative}.gz", True)):
            if found is None and candidate.is_file():
                found = read_file(candidate, packed), candidate, str(candidate)
    if found is None and dataset.archive is not None:
        for relative in dict.fromkeys((dataset.archive.name, dataset.archive.source_path)):
            candidate = folder / relative
            if found is None and candidate.is_file():
                archive = safe_files.read_regular_file(candidate)
                found = (_member(dataset, file, archive, str(candidate)), candidate,
                         f"{file.source_path} in {candidate}")
    if found is None:
        return None
    data, where, label = found
    if file.sha256 and sha256_hex(data) != file.sha256:
        raise dataset.error(
            f"{where} is not {dataset.title}'s {file.paradigm} at the pinned commit (the SHA-256 "
            f"of {file.path} differs from {file.sha256}); to run a modified copy, convert it "
            f"(`syntaxgym-helm convert {dataset.name} FILE`, or convert_file in Python) and pass "
            "the suite file by path")
    return data, label


def _download(dataset: DataSet, address: str, folders: list[Path], wanted: str) -> bytes:
    try:
        data, _ = fetch(address)
    except DownloadError as exc:
        where = "".join(f" and {folder} has no {wanted}" for folder in folders)
        raise dataset.error(f"{exc}{where}. Offline, set {dataset.env_var} (or the suites_dir "
                            f"argument) to a folder holding {dataset.title}'s files") from exc
    return data


def _archive(dataset: DataSet, cache_dir: Path, url: str, folders: list[Path],
             file: SourceFile) -> bytes:
    """The data set's archive from the cache, else downloaded, checked whole."""
    archive = dataset.archive
    assert archive is not None
    cached = cache_dir / dataset.name / archive.name
    if cached.is_file():
        data = safe_files.read_regular_file(cached)
        if sha256_hex(data) == archive.sha256:
            return data
    address = url.format(path=archive.source_path)
    data = _download(dataset, address, folders, f"{file.path} or {archive.name}")
    if sha256_hex(data) != archive.sha256:
        raise dataset.error(f"{address} does not match its recorded SHA-256 {archive.sha256}")
    write_atomically(cached, data)
    return data


def _member(dataset: DataSet, file: SourceFile, archive: bytes, where: str) -> bytes:
    """``file.path`` read from a ``.tar.gz`` archive's bytes (bounded as every suite file)."""
    members = archive_members(archive, file.path, where, dataset.error)
    if file.path not in members:
        raise dataset.error(f"{where} holds no {file.path}")
    data = members[file.path]
    if data is None:
        raise dataset.error(f"{where}: {file.path} is not a regular file of at most "
                            f"{safe_files.MAX_FILE_BYTES:,} bytes")
    return data


#: The members of the archive read last, by the SHA-256 of its bytes (one archive at a time).
_MEMBERS: dict[str, dict[str, bytes | None]] = {}
#: The most bytes of members kept in memory (ZhoBLiMP's are 6.6 MB).
MAX_KEPT_MEMBER_BYTES = 256 * 1024 * 1024


def archive_members(archive: bytes, wanted: str, where: str,
                    error: type[PairDataError] = PairDataError) -> dict[str, bytes | None]:
    """The members of a ``.tar.gz`` archive's bytes by path: each one's bytes, or None for one
    that is not a regular file of at most ``MAX_FILE_BYTES`` (the last of a path wins, as in
    ``tarfile``). Finding a member means unpacking the whole archive, so every member is read
    at once and kept for the process, keyed by the archive's digest (the same bytes hold the
    same members), while they come to at most :data:`MAX_KEPT_MEMBER_BYTES`; beyond that, only
    ``wanted`` is read, and nothing kept."""
    digest = sha256_hex(archive)
    found = _MEMBERS.get(digest)
    if found is not None:
        return found
    try:
        with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
            last = {member.name: member for member in tar.getmembers()}
            readable = {name: member for name, member in last.items()
                        if member.isfile() and member.size <= safe_files.MAX_FILE_BYTES}
            keep = sum(member.size for member in readable.values()) <= MAX_KEPT_MEMBER_BYTES
            members: dict[str, bytes | None] = {}
            for name, member in last.items():
                if keep or name == wanted:
                    handle = tar.extractfile(member) if name in readable else None
                    members[name] = None if handle is None else handle.read()
    except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
        raise error(f"{where} is not a readable .tar.gz archive: {exc}") from exc
    if keep:
        _MEMBERS.clear()
        _MEMBERS[digest] = members
    return members


def read_file(path: Path, packed: bool = False) -> bytes:
    """A regular file's bytes (bounded, as every suite file), gunzipped when ``packed``."""
    data = safe_files.read_regular_file(path)
    if not packed:
        return data
    inflater = zlib.decompressobj(wbits=31)  # 31: a gzip header
    try:
        out = inflater.decompress(data, safe_files.MAX_FILE_BYTES + 1)
    except zlib.error as exc:
        raise PairDataError(f"{path} is not a gzip file: {exc}") from exc
    if len(out) > safe_files.MAX_FILE_BYTES or not inflater.eof:
        raise PairDataError(f"{path} unpacks to more than {safe_files.MAX_FILE_BYTES:,} bytes, "
                            "the limit for a suite file, or is cut short")
    return out
