"""The Python API's checks of its arguments' types and values, in one place.

A Python caller gets a ``TypeError`` for an argument of the wrong type and a ``ValueError`` for one
out of range, each naming the argument, what it got and what it takes, before anything runs
(``max_items=2.5`` or ``"3"`` would fail deep inside with an unrelated ``TypeError``, and
``max_items=True``, a ``bool`` being an ``int`` to Python, would score one item). The checks are
declared once, as a table (:data:`ARGUMENTS`), so that a typed run-options object can take it over.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

#: Per argument: the types it takes (None: None allowed), and its least value for numbers.
ARGUMENTS: Mapping[str, tuple[tuple[type, ...], bool, int | None]] = {
    "max_items": ((int,), True, 0),
    "prefix": ((str,), False, None),
    "first_token": ((str,), False, None),
    "context": ((str, Path), False, None),
    "context_sentences": ((int,), False, 0),
    "context_seed": ((int,), False, None),
    "suites_dir": ((str, Path), True, None),
    "cache_dir": ((str, Path), True, None),
    "local_path": ((str, Path), True, None),
    "num_threads": ((int,), False, 1),
    "model": ((str,), False, None),
}


def check_arguments(values: Mapping[str, Any]) -> None:
    """TypeError or ValueError for the first of ``values`` (argument name to value) that
    :data:`ARGUMENTS` does not allow; names it doesn't list are not checked."""
    for name, value in values.items():
        if name not in ARGUMENTS:
            continue
        types, optional, least = ARGUMENTS[name]
        if value is None and optional:
            continue
        takes = " or ".join(t.__name__ for t in types) + (" or None" if optional else "")
        # bool is an int to Python, never a count: True would be 1 item.
        if isinstance(value, bool) or not isinstance(value, types):
            raise TypeError(f"{name} must be {takes}, not {type(value).__name__} ({value!r})")
        if least is not None and value < least:
            raise ValueError(f"{name}={value} must be {least} or more"
                             + (" (None: every item)" if name == "max_items" else ""))
