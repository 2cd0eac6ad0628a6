"""A SyntaxGym suite and the ways to get one: the data model, read and checked, or written.

The data classes live in :mod:`.suite_data` and the checks in :mod:`.validation`; this module
puts them together, so that callers import everything about suites from one place:

- :func:`load_suite`: a suite file, read safely and validated;
- :func:`parse_suite`: decoded JSON, validated;
- :meth:`Suite.from_trusted_json`: JSON this package wrote, read back without checks;
- :func:`dumps_suite`: the suite as JSON text;
- :func:`dumps_suite_json`: suite-shaped JSON (a suite's, an annotated suite's) written fast, one
  item a line; :func:`suite_json_pieces`: the same text in pieces, the items made one at a time.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from syntaxgym_helm.core.suite_data import (
    Condition,
    Item,
    Prediction,
    Region,
    Suite,
    SuiteMeta,
    join_regions,
)
from syntaxgym_helm.core.validation import SuiteReport, check_suite, check_suite_file

__all__ = ["Condition", "Item", "Prediction", "Region", "Suite", "SuiteMeta", "dumps_suite",
           "dumps_suite_json", "join_regions", "load_suite", "parse_suite", "suite_json_pieces"]


def parse_suite(data: Any, source: str = "<suite>") -> Suite:
    """Build a :class:`Suite` from decoded JSON; raise :class:`SuiteError` at the first problem."""
    return _suite_of(check_suite(data, source))


def load_suite(path: str | Path, source: str | None = None,
               default_name: str | None = None) -> Suite:
    """Read and validate a suite file. ``source`` names it in errors (default: the path) and
    ``default_name`` is its name when ``meta.name`` is missing (default: the file's stem)."""
    return _suite_of(check_suite_file(path, source, default_name))


def _suite_of(report: SuiteReport) -> Suite:
    report.raise_first()
    assert report.suite is not None  # raise_first raises when there is none
    return report.suite


def dumps_suite(suite: Suite) -> str:
    """The suite as indented JSON text, ending in a newline (stable, for byte comparisons)."""
    return json.dumps(suite.to_json_dict(), indent=2, ensure_ascii=False) + "\n"


#: Stands for the items while the rest is indented (control characters never occur in a suite).
_ITEMS_MARK = "\u0000syntaxgym-helm items\u0000"


def dumps_suite_json(data: Mapping[str, Any]) -> str:
    """Suite-shaped JSON as text ending in a newline: indented, except that each of its
    ``items`` is written on one line. ``allow_nan=False``: a NaN is an error, not invalid JSON.

    Python indents JSON with its pure-Python encoder, many times slower than its C encoder, which
    only writes without indentation. So everything but the items is indented, and each item is
    written by the C encoder.
    """
    items = data.get("items")
    if not isinstance(items, list):
        return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    return "".join(suite_json_pieces(data, items))


def suite_json_pieces(data: Mapping[str, Any], items: Iterable[Any],
                      encode_item: Callable[[Any], str] | None = None) -> Iterator[str]:
    """The text :func:`dumps_suite_json` writes for ``data`` with ``items`` as its ``items``, in
    pieces: each item is made and encoded only when it is reached, so that a writer need not
    hold them all (an annotated suite of a large data set takes far more memory as Python objects
    than as text).
    ``encode_item``: how to write one item on its line (default: the C encoder, NaN refused)."""
    head = json.dumps({**data, "items": _ITEMS_MARK}, indent=2, ensure_ascii=False,
                      allow_nan=False)
    before, after = head.split(json.dumps(_ITEMS_MARK), 1)
    yield before
    encode = encode_item or json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode
    first = True
    for item in items:
        yield ("[\n    " if first else ",\n    ") + encode(item)
        first = False
    yield ("[]" if first else "\n  ]") + after + "\n"
