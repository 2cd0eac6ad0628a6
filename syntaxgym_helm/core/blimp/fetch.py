"""BLiMP suites by name: ``blimp_<UID>`` to a converted suite file, from a checked source.

The minimal-pair layer's fetching (:mod:`syntaxgym_helm.core.minimal_pairs.fetch`): the
paradigm's JSONL file is taken from an offline folder (the ``data_dir`` argument, then
``$SYNTAXGYM_BLIMP_DIR``; ``<UID>.jsonl`` in it or in its ``data/`` subfolder, so a checkout of
the BLiMP repository works), from the cache (``<cache_dir>/blimp/<UID>.jsonl``), or downloaded from
the pinned commit into the cache. Every copy must match the SHA-256 recorded in :mod:`.sources`;
an offline copy that does not is refused, since a modified paradigm must not pass under BLiMP's
name (convert it with :func:`~.convert.convert_file` and run it by path instead). The conversion
is cheap, so it is redone each time and written to ``<cache_dir>/blimp_<UID>.json``.
"""

from __future__ import annotations

from pathlib import Path

from syntaxgym_helm.core.blimp.convert import BLIMP
from syntaxgym_helm.core.blimp.sources import BLIMP_URL
from syntaxgym_helm.core.minimal_pairs.fetch import resolve_named

BLIMP_DIR_ENV = BLIMP.env_var


def resolve_blimp_suite(name: str, cache_dir: str | Path, data_dir: str | Path | None = None,
                        url: str = BLIMP_URL) -> Path:
    """The path of the converted suite ``name`` (``blimp_<UID>``), fetching its source if needed.

    ``url`` is the download address pattern with ``{uid}`` (tests point it at a local server).
    """
    return resolve_named(BLIMP, name, cache_dir, data_dir, url)
