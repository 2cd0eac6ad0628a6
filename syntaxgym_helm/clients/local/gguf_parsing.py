"""One parse of a GGUF file per load, instead of one for the config, the tokenizer and the weights.

transformers builds a GGUF checkpoint's config, its tokenizer and its weights each from a fresh
``gguf.GGUFReader``, which reads every metadata field element by element, then converts every
field to Python values (a vocabulary and its merges: seconds each time, tens of seconds for a
large one), and maps tensor names with ``gguf.get_tensor_name_map(arch,
layers)``, which it rebuilds for every submodule (some 400 times). Within
:func:`gguf_parsed_once` the reader, the metadata-only ``load_gguf_checkpoint`` (each caller gets
its own deep copy) and the name table are memoised, and the reader reads a plain array view of its
memory map (several times faster): the same values, the same tensors, fewer repeats.

transformers imports these names from their modules when it calls them, so replacing the modules'
attributes for the length of a load is enough. Where a release no longer has them, nothing is
replaced (a slower load, never a different one), and ``tests/clients/test_gguf_parsing.py``
fails. Loads hold a lock: the replacement is process-wide.
"""

from __future__ import annotations

import copy
import functools
import importlib
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: What is memoised during a load: module -> attributes.
MEMOISED = {"gguf": ("GGUFReader", "get_tensor_name_map"),
            "transformers.modeling_gguf_pytorch_utils": ("load_gguf_checkpoint",)}

_lock = threading.RLock()


def _memoised_reader(reader_class: Any) -> Any:
    """``reader_class(path, mode)``, made once per path and mode, reading a plain array."""
    readers: dict[tuple[str, str], Any] = {}
    plain_reader = _plain_array_reader(reader_class)

    def reader(path: Any, mode: str = "r") -> Any:
        key = (os.path.realpath(os.fspath(path)), mode)
        if key not in readers:
            readers[key] = plain_reader(path, mode)
        return readers[key]

    return reader


def _plain_array_reader(reader_class: type) -> type:
    """``reader_class`` reading its file through a plain ``numpy.ndarray`` view of the memory map
    it makes (``self.data``), the same bytes: slicing a ``numpy.memmap`` runs two Python-level
    hooks per slice, and the reader slices once per element of every metadata array, so those
    hooks took most of the parse."""
    import numpy as np

    class PlainArrayReader(reader_class):
        @property
        def data(self) -> Any:
            return self.__dict__["_plain_data"]

        @data.setter
        def data(self, mapped: Any) -> None:  # the view keeps the map open (its base)
            self.__dict__["_plain_data"] = (mapped.view(np.ndarray)
                                            if isinstance(mapped, np.memmap) else mapped)

    PlainArrayReader.__name__ = PlainArrayReader.__qualname__ = reader_class.__name__
    return PlainArrayReader


def _memoised_metadata(load: Any) -> Any:
    """``load(path, return_tensors=False)`` (config and tokenizer metadata) computed once per
    path, a deep copy to each caller (they edit what they get); other calls go through."""
    metadata: dict[str, Any] = {}

    def load_gguf_checkpoint(path: Any, return_tensors: bool = False, **kwargs: Any) -> Any:
        if return_tensors or kwargs:
            return load(path, return_tensors=return_tensors, **kwargs)
        key = os.path.realpath(os.fspath(path))
        if key not in metadata:
            metadata[key] = load(path, return_tensors=False)
        return copy.deepcopy(metadata[key])

    return load_gguf_checkpoint


def _replacements(originals: dict[tuple[Any, str], Any]) -> dict[tuple[Any, str], Any]:
    wrap = {"GGUFReader": _memoised_reader, "load_gguf_checkpoint": _memoised_metadata,
            "get_tensor_name_map": functools.lru_cache(maxsize=None)}
    return {(module, name): wrap[name](original) for (module, name), original in originals.items()}


def _originals() -> dict[tuple[Any, str], Any] | None:
    """(module, attribute) -> the object to memoise; None where one is missing."""
    found: dict[tuple[Any, str], Any] = {}
    for module_name, names in MEMOISED.items():
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            return None
        for name in names:
            if not callable(getattr(module, name, None)):
                return None
            found[(module, name)] = getattr(module, name)
    return found


_active = False


@contextmanager
def gguf_parsed_once() -> Iterator[bool]:
    """Within the block, each GGUF file is parsed once, its metadata converted once and each
    tensor-name table built once; yields whether that is in place (False: gguf or transformers
    lacks a name, and loads go on unchanged)."""
    global _active
    with _lock:
        originals = None if _active else _originals()
        if originals is None:
            yield _active  # a load inside a load keeps the outer memo
            return
        for (module, name), replacement in _replacements(originals).items():
            setattr(module, name, replacement)
        _active = True
        try:
            yield True
        finally:
            _active = False
            for (module, name), original in originals.items():
                setattr(module, name, original)
