"""BLiMP suites by name: ``blimp_<UID>`` to a converted suite file, from a checked source.

The paradigm's JSONL file is taken, in this order, from an offline folder (the ``data_dir``
argument, then ``$SYNTAXGYM_BLIMP_DIR``; ``<UID>.jsonl`` in it or in its ``data/`` subfolder, so a
checkout of the BLiMP repository works), from the cache (``<cache_dir>/blimp/<UID>.jsonl``), or
downloaded from the pinned commit into the cache. Every copy must match the SHA-256 recorded in
:mod:`.sources`; an offline copy that does not is refused, since a modified paradigm must not pass
under BLiMP's name (convert it with :func:`~.convert.convert_file` and run it by path instead).
The conversion is cheap, so it is redone each time and written to ``<cache_dir>/blimp_<UID>.json``.
:func:`load_blimp_suite` gives the converted suite itself, as the converter built it: it is not
read back from that file nor validated again (the converter reassembles BLiMP's exact sentences
from the regions it makes, and the tests validate every paradigm's conversion), which on a
paradigm of 1,000 pairs saves twice the conversion's own time, in every run.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from syntaxgym_helm.core.download import DownloadError, fetch, sha256_hex, write_atomically
from syntaxgym_helm.core.files import read_regular_file
from syntaxgym_helm.core.suite import Suite, dumps_suite_json
from syntaxgym_helm.core.blimp.convert import BlimpConversion, BlimpError, convert_bytes
from syntaxgym_helm.core.blimp.sources import BLIMP_URL, PARADIGMS, SUITE_PREFIX, Paradigm

BLIMP_DIR_ENV = "SYNTAXGYM_BLIMP_DIR"


def resolve_blimp_suite(name: str, cache_dir: str | Path, data_dir: str | Path | None = None,
                        url: str = BLIMP_URL) -> Path:
    """The path of the converted suite ``name`` (``blimp_<UID>``), fetching its source if needed.

    ``url`` is the download address pattern with ``{uid}`` (tests point it at a local server).
    """
    return _convert(name, cache_dir, data_dir, url)[0]


def load_blimp_suite(name: str, cache_dir: str | Path, data_dir: str | Path | None = None,
                     url: str = BLIMP_URL) -> Suite:
    """The converted suite ``name`` (``blimp_<UID>``), also written as
    :func:`resolve_blimp_suite` writes it, but built from the conversion itself (see the module
    doc)."""
    target, conversion = _convert(name, cache_dir, data_dir, url)
    return Suite.from_trusted_json(conversion.suite, source=f"{name} ({target})")


def _convert(name: str, cache_dir: str | Path, data_dir: str | Path | None,
             url: str) -> tuple[Path, BlimpConversion]:
    paradigm = _paradigm(name)
    data = _source_bytes(paradigm, Path(cache_dir), data_dir, url)
    conversion = convert_bytes(data, paradigm.uid, source=f"{paradigm.uid}.jsonl")
    target = Path(cache_dir) / f"{paradigm.suite_name}.json"
    write_atomically(target, dumps_suite_json(conversion.suite).encode("utf-8"))
    return target, conversion


def _paradigm(name: str) -> Paradigm:
    uid = name[len(SUITE_PREFIX):] if name.startswith(SUITE_PREFIX) else name
    if uid in PARADIGMS:
        return PARADIGMS[uid]
    close = difflib.get_close_matches(uid, list(PARADIGMS), n=3)
    hint = (f"did you mean {', '.join(SUITE_PREFIX + c for c in close)}?" if close
            else "the 67 names are blimp_ followed by a BLiMP UID, e.g. blimp_adjunct_island")
    raise BlimpError(f"unknown BLiMP suite {name!r}: {hint}")


def _source_bytes(paradigm: Paradigm, cache_dir: Path, data_dir: str | Path | None,
                  url: str) -> bytes:
    folders = [Path(f).expanduser() for f in (data_dir, os.environ.get(BLIMP_DIR_ENV)) if f]
    for folder in folders:
        for candidate in (folder / f"{paradigm.uid}.jsonl",
                          folder / "data" / f"{paradigm.uid}.jsonl"):
            if candidate.is_file():
                data = read_regular_file(candidate)  # bounded, as every suite file
                if sha256_hex(data) != paradigm.sha256:
                    raise BlimpError(
                        f"{candidate} is not BLiMP's {paradigm.uid} at the pinned commit (its "
                        f"SHA-256 differs from {paradigm.sha256}); to run a modified copy, convert "
                        "it with syntaxgym_helm.core.blimp.convert.convert_file and pass the suite "
                        "file by path")
                return data
    cached = cache_dir / "blimp" / f"{paradigm.uid}.jsonl"
    if cached.is_file():
        data = read_regular_file(cached)
        if sha256_hex(data) == paradigm.sha256:
            return data
    address = url.format(uid=paradigm.uid)
    try:
        data, _ = fetch(address)
    except DownloadError as exc:
        where = "".join(f" and {folder} has no {paradigm.uid}.jsonl" for folder in folders)
        raise BlimpError(f"{exc}{where}. Offline, set {BLIMP_DIR_ENV} (or the data_dir argument) "
                         "to a folder holding BLiMP's <UID>.jsonl files") from exc
    if sha256_hex(data) != paradigm.sha256:
        raise BlimpError(f"{address} does not match its recorded SHA-256 {paradigm.sha256}")
    write_atomically(cached, data)
    return data

