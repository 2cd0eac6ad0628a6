"""Downloads with a deadline for the whole transfer and a size cap, written atomically.

Not pooch: its downloader bounds each read, not the transfer, and caps no size, so it would need
:func:`fetch` as a custom downloader anyway; what it adds beyond that (a SHA-256 and a rename) is
:func:`sha256_hex` and :func:`write_atomically` here, three lines without a new dependency.
"""

from __future__ import annotations

import hashlib
import http.client
import time
import urllib.error
import urllib.request
from pathlib import Path

from syntaxgym_helm.core import files
from syntaxgym_helm.core.errors import SyntaxGymError

#: The longest one download may take, all of it (connecting and every read).
DOWNLOAD_TIMEOUT_S = 60


class DownloadError(SyntaxGymError):
    """A download failed, took too long or was too large; the message names the address."""


def fetch(url: str, *, timeout_s: float | None = None,
          max_bytes: int | None = None) -> tuple[bytes, str]:
    """The body ``url`` sends and its content type, within ``timeout_s`` in all (a server
    sending a byte a minute would pass every single read's timeout) and at most ``max_bytes``
    (defaults: :data:`DOWNLOAD_TIMEOUT_S`, ``files.MAX_FILE_BYTES``)."""
    timeout_s = DOWNLOAD_TIMEOUT_S if timeout_s is None else timeout_s
    max_bytes = files.MAX_FILE_BYTES if max_bytes is None else max_bytes
    deadline = time.monotonic() + timeout_s
    chunks: list[bytes] = []
    size = 0
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:
            content_type = response.headers.get_content_type()
            # read1: what has come, at once; read(n) would wait for all n bytes.
            while chunk := response.read1(1 << 16):
                chunks.append(chunk)
                size += len(chunk)
                if size > max_bytes:
                    raise DownloadError(f"{url} sends more than {max_bytes:,} bytes, the limit "
                                        "for a suite file")
                if time.monotonic() > deadline:
                    raise DownloadError(f"could not download {url}: it took more than "
                                        f"{timeout_s:g} s")
    except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as exc:
        raise DownloadError(f"could not download {url}: {exc}") from exc
    return b"".join(chunks), content_type


def write_atomically(target: Path, data: bytes) -> None:
    """Write ``data`` to ``target`` under a temporary name, then rename: a killed run never
    leaves half a file behind."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".part")
    partial.write_bytes(data)
    partial.replace(target)


def sha256_hex(data: bytes) -> str:
    """The SHA-256 of ``data`` in hex, as the registries record it."""
    return hashlib.sha256(data).hexdigest()
