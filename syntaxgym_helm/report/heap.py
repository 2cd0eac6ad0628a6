"""Python's cyclic garbage collector around the runs a report holds.

The runs of a big report are millions of small objects (the tokens, regions and surprisals of
every condition) and hold no reference cycles, so the collector can never free any of them. It
examines them all the same: while they are being created (most of the time that reading many
runs takes), after that whenever a report makes enough new objects, and in every process
forked to write files, where examining an object writes to it and so copies the parent's memory
page by page.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collection_paused() -> Iterator[None]:
    """No automatic collection inside (while runs are read); on again after, if it was on."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextmanager
def existing_objects_frozen() -> Iterator[None]:
    """The objects that exist on entry are left out of every collection inside, in this process
    and in processes forked inside (:func:`gc.freeze`); put back into the collector's care after."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
