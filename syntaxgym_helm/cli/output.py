"""Printing for the command line."""

from __future__ import annotations

import sys
from typing import TextIO


def say(line: str, stream: TextIO | None = None) -> None:
    """Print ``line``, escaping what the stream's encoding cannot show (a suite's text may hold
    anything, e.g. a lone surrogate from a JSON escape, or non-ASCII under an ASCII locale)."""
    stream = stream or sys.stdout
    encoding = getattr(stream, "encoding", None) or "utf-8"
    print(line.encode(encoding, "backslashreplace").decode(encoding), file=stream)
