"""Minimal-pair suites by name: ``<data set>_<paradigm>`` to a converted suite, from a checked
source.

A suite's file is taken, in this order, from an offline folder (the ``data_dir`` argument, then
the data set's variable, e.g. ``$SYNTAXGYM_CLAMS_DIR``), laid out as the project's shared copy
(``en_evalset/simple_agrmt.txt``) or as a checkout of the source repository
(``datasets/add_new_suffix.csv``), the file itself or gzip-compressed beside it (``NAME.gz``);
from the cache (``<cache_dir>/<data set>/<path>``); or downloaded from the pinned commit into the
cache. Every copy must match the SHA-256 recorded for it (of the uncompressed bytes); an offline
copy that does not is refused, since a modified file must not pass under the data set's name
(convert it with ``syntaxgym-helm convert`` and run the suite by path instead). The conversion
is cheap, so it is redone each time and written to ``<cache_dir>/<suite>.json``.
"""

from __future__ import annotations

import difflib
import json
import os
import zlib
from pathlib import Path

from syntaxgym_helm.core import files as safe_files
from syntaxgym_helm.core.download import DownloadError, fetch, sha256_hex, write_atomically
from syntaxgym_helm.core.minimal_pairs.convert import Conversion, convert_data
from syntaxgym_helm.core.minimal_pairs.dataset import DataSet, PairDataError, SourceFile
from syntaxgym_helm.core.suite import Suite


def find_file(dataset: DataSet, name: str) -> SourceFile:
    """The file of suite ``name``; an error suggesting close names when there is none."""
    known = dataset.by_suite()
    wanted = name if name.startswith(dataset.prefix) else dataset.prefix + name
    if wanted in known:
        return known[wanted]
    close = difflib.get_close_matches(wanted, list(known), n=3)
    example = next(iter(known))
    hint = (f"did you mean {', '.join(close)}?" if close else
            f"the {len(known)} names are {dataset.prefix}... (e.g. {example}; "
            f"`syntaxgym-helm list {dataset.name}` lists them)")
    raise dataset.error(f"unknown {dataset.title} suite {name!r}: {hint}")


def convert_named(dataset: DataSet, name: str, cache_dir: str | Path,
                  data_dir: str | Path | None = None, url: str | None = None) -> Conversion:
    """The conversion of suite ``name`` from its checked source. ``url`` is the download address
    pattern (``{path}``: the file's source path), for tests' local servers."""
    file = find_file(dataset, name)
    data = source_bytes(dataset, file, Path(cache_dir), data_dir, url or dataset.url)
    return convert_data(dataset, file, data, file.path, file.sha256)


def resolve_named(dataset: DataSet, name: str, cache_dir: str | Path,
                  data_dir: str | Path | None = None, url: str | None = None) -> Path:
    """The path of the converted suite ``name``, written into ``cache_dir``."""
    return write_suite(convert_named(dataset, name, cache_dir, data_dir, url), cache_dir)


def load_named(dataset: DataSet, name: str, cache_dir: str | Path,
               data_dir: str | Path | None = None) -> Suite:
    """The suite ``name`` itself, its file written too. Built without validating it again: its
    source is checked byte for byte and the conversion of every file is tested to validate."""
    conversion = convert_named(dataset, name, cache_dir, data_dir)
    path = write_suite(conversion, cache_dir)
    return Suite.from_trusted_json(conversion.suite, str(path))


def write_suite(conversion: Conversion, cache_dir: str | Path) -> Path:
    """Write the suite as compact JSON (indenting makes ``json`` use its pure-Python encoder,
    much slower on large data sets)."""
    target = Path(cache_dir) / f"{conversion.name}.json"
    write_atomically(target, (json.dumps(conversion.suite, ensure_ascii=False,
                                         separators=(",", ":")) + "\n").encode("utf-8"))
    return target


def source_bytes(dataset: DataSet, file: SourceFile, cache_dir: Path,
                 data_dir: str | Path | None, url: str) -> bytes:
    """The file's checked bytes: offline folder, else cache, else download (see the module)."""
    folders = [Path(f).expanduser() for f in (data_dir, os.environ.get(dataset.env_var)) if f]
    for folder in folders:
        for relative in dict.fromkeys((file.path, file.source_path)):
            for candidate, packed in ((folder / relative, False),
                                      (folder / f"{relative}.gz", True)):
                if candidate.is_file():
                    data = read_file(candidate, packed)
                    if sha256_hex(data) != file.sha256:
                        raise dataset.error(
                            f"{candidate} is not {dataset.title}'s {file.paradigm} at the pinned "
                            f"commit (its SHA-256 differs from {file.sha256}); to run a modified "
                            f"copy, convert it (`syntaxgym-helm convert {dataset.name} FILE`, or "
                            "convert_file in Python) and pass the suite file by path")
                    return data
    cached = cache_dir / dataset.name / file.path
    if cached.is_file():
        data = safe_files.read_regular_file(cached)
        if sha256_hex(data) == file.sha256:
            return data
    address = url.format(path=file.source_path)
    try:
        data, _ = fetch(address)
    except DownloadError as exc:
        where = "".join(f" and {folder} has no {file.path}" for folder in folders)
        raise dataset.error(f"{exc}{where}. Offline, set {dataset.env_var} (or the suites_dir "
                            f"argument) to a folder holding {dataset.title}'s files") from exc
    if sha256_hex(data) != file.sha256:
        raise dataset.error(f"{address} does not match its recorded SHA-256 {file.sha256}")
    write_atomically(cached, data)
    return data


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
