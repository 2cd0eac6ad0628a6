"""One parse of a GGUF file per load, instead of one for the config, the tokenizer and the weights.

transformers builds a GGUF checkpoint's config, its tokenizer and its weights each from fresh
parses: ``gguf.GGUFReader`` (the weights, and the config of the architectures its older loader
handles), which reads every metadata field element by element, and the metadata-only
``load_gguf_checkpoint``, which then converts every field to Python values; and it maps tensor
names with ``gguf.get_tensor_name_map(arch, layers)``, which it rebuilds for every submodule
(some 400 times). A vocabulary and its merges make each parse take seconds (tens of seconds for
a large one). Within :func:`gguf_parsed_once` each of these is made once per file (each caller of
the metadata gets its own copy), and the file is read faster, with the same values:

- gguf's reader and transformers' own (``read_gguf_metadata``, which the config and the tokenizer
  call) read a plain array view of their memory map (slicing a ``numpy.memmap`` runs two
  Python-level hooks per slice, and they slice once per element of every metadata array);
- ``GGUFReader`` builds an array of strings or of numbers in one walk (:func:`_array_parts`:
  the same parts, views of the same bytes, the same indices and types) instead of a recursive
  call per element;
- ``load_gguf_checkpoint`` turns a string's bytes into text at once, not byte by byte.

transformers' ``read_gguf_metadata`` is not memoised: its three calls in a load take a fraction of
a second through the plain array, and keeping their vocabularies raised the load's peak memory.

transformers imports these names from their modules when it calls them, so replacing the modules'
attributes for the length of a load is enough. Where a release no longer has those of a module,
that module's are not replaced (a slower load, never a different one), and
``tests/clients/test_gguf_parsing.py`` fails. Loads hold a lock: the replacement is process-wide.
"""

from __future__ import annotations

import copy
import functools
import importlib
import os
import struct
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

#: What is replaced during a load: module -> attributes (a module's all or none).
MEMOISED = {"gguf": ("GGUFReader", "get_tensor_name_map"),
            "transformers.modeling_gguf_pytorch_utils": ("load_gguf_checkpoint",
                                                         "_gguf_parse_value"),
            "transformers.integrations.gguf.reader": ("_mapped",)}

_lock = threading.RLock()
_STRING, _ARRAY = 8, 9  # GGUF value types


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
    it makes (``self.data``), the same bytes, and building arrays in one walk
    (:func:`_array_parts`)."""
    import numpy as np

    class PlainArrayReader(reader_class):
        @property
        def data(self) -> Any:
            return self.__dict__["_plain_data"]

        @data.setter
        def data(self, mapped: Any) -> None:  # the view keeps the map open (its base)
            self.__dict__["_plain_data"] = (mapped.view(np.ndarray)
                                            if isinstance(mapped, np.memmap) else mapped)

        def _get_field_parts(self, orig_offs: int, raw_type: int) -> Any:
            found = _array_parts(self, orig_offs) if raw_type == _ARRAY else None
            return found if found is not None else super()._get_field_parts(orig_offs, raw_type)

    PlainArrayReader.__name__ = PlainArrayReader.__qualname__ = reader_class.__name__
    return PlainArrayReader


def _array_parts(reader: Any, start: int) -> tuple[int, list, list[int], list] | None:
    """What ``GGUFReader._get_field_parts`` returns for the array at ``start`` (its size, parts,
    data indices and types), built in one walk: per string its length and its bytes, per number
    its value, each a view of ``reader.data`` as gguf's reader makes it. None where gguf's own
    walk must do it: an empty array or one of arrays, a file of the other byte order."""
    import numpy as np
    from gguf import GGUFValueType

    if reader.byte_order != "I" or sys.byteorder != "little":
        return None
    data = reader.data
    item_type, count = struct.unpack_from("<IQ", data, start)
    scalar = reader.gguf_scalar_to_np.get(item_type)
    if count == 0 or (item_type != _STRING and scalar is None):
        return None
    parts = [reader._get(start, np.uint32), reader._get(start + 4, np.uint64)]
    offset = start + 12
    if item_type == _STRING:
        length_at = struct.Struct("<Q").unpack_from
        for _ in range(count):
            (length,) = length_at(data, offset)
            parts.append(data[offset: offset + 8].view(np.uint64))
            parts.append(data[offset + 8: offset + 8 + length])
            offset += 8 + length
        indices = list(range(3, 3 + 2 * count, 2))
    else:
        values = reader._get(offset, scalar, count)
        parts += [values[i: i + 1] for i in range(count)]
        offset += values.nbytes
        indices = list(range(2, 2 + count))
    return offset - start, parts, indices, [GGUFValueType.ARRAY, GGUFValueType(item_type)]


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
        return _copied(metadata[key])

    return load_gguf_checkpoint


_ATOMS = (str, int, float, bool, type(None))
_ATOM_SET = frozenset(_ATOMS)


def _copied(value: Any) -> Any:
    """A deep copy of metadata (dicts, lists and tuples of text and numbers), faster than
    ``copy.deepcopy`` on a vocabulary: a list of texts and numbers is copied whole; anything
    else goes through ``copy.deepcopy``."""
    kind = type(value)
    if kind in _ATOMS:
        return value
    if kind is dict:
        return {key: _copied(item) for key, item in value.items()}
    if kind is list or kind is tuple:
        if set(map(type, value)) <= _ATOM_SET:
            return list(value) if kind is list else value
        return kind(_copied(item) for item in value)
    return copy.deepcopy(value)


def _plain_mapped(mapped: Callable[[str], Any]) -> Callable[[str], Any]:
    """transformers' reader's ``_mapped(path)`` as a plain array view of the same memory map."""
    import numpy as np

    def plain(path: str) -> Any:
        return mapped(path).view(np.ndarray)

    return plain


#: GGUF's number and boolean value types -> the Python type transformers makes of them.
_SCALARS = {**dict.fromkeys((0, 1, 2, 3, 4, 5, 10, 11), int), 6: float, 12: float, 7: bool}


def _text_at_once(parse: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """transformers' ``_gguf_parse_value(value, types)``, a string's bytes (a ``uint8`` array)
    decoded at once (the same text as ``array("B", list(value)).tobytes().decode()``), an
    array's number converted without the recursive call; anything else by ``parse``."""
    import numpy as np

    def _gguf_parse_value(value: Any, data_type: Any) -> Any:
        if type(data_type) is list and len(data_type) == 2 and data_type[0] == _ARRAY:
            item_type = data_type[1]
            if item_type == _STRING and type(value) is np.ndarray and value.dtype == np.uint8:
                return value.tobytes().decode()
            convert = _SCALARS.get(item_type)
            if convert is not None:
                return convert(value[0])
        return parse(value, data_type)

    return _gguf_parse_value


_WRAPPERS: dict[str, Callable[[Any], Any]] = {
    "GGUFReader": _memoised_reader, "load_gguf_checkpoint": _memoised_metadata,
    "get_tensor_name_map": functools.lru_cache(maxsize=None), "_mapped": _plain_mapped,
    "_gguf_parse_value": _text_at_once}


def _replacements(originals: dict[tuple[Any, str], Any]) -> dict[tuple[Any, str], Any]:
    """One replacement per original object (a function two modules name shares its memo)."""
    made: dict[int, Any] = {}
    for (_, name), original in originals.items():
        if id(original) not in made:
            made[id(original)] = _WRAPPERS[name](original)
    return {key: made[id(original)] for key, original in originals.items()}


def _originals() -> dict[tuple[Any, str], Any]:
    """(module, attribute) -> the object to replace, for each module that has all of its."""
    found: dict[tuple[Any, str], Any] = {}
    for module_name, names in MEMOISED.items():
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        objects = {name: getattr(module, name, None) for name in names}
        if all(callable(value) for value in objects.values()):
            found.update({(module, name): value for name, value in objects.items()})
    return found


def missing_names() -> list[str]:
    """What the installed gguf and transformers lack of :data:`MEMOISED` and of gguf's reader
    (the probe of the reach ``gguf_parse_once``, :mod:`syntaxgym_helm.clients.reaches`)."""
    from syntaxgym_helm.clients.reaches import missing_attributes

    found = missing_attributes(MEMOISED, callables=True)
    reader = getattr(sys.modules.get("gguf"), "GGUFReader", None)  # imported above
    found += [f"gguf.GGUFReader.{name} is missing" for name in READER_NAMES
              if reader is not None and not hasattr(reader, name)]
    return found


#: What :func:`_array_parts` reads of gguf's reader besides its public fields.
READER_NAMES = ("_get_field_parts", "_get", "gguf_scalar_to_np")

_active = False


@contextmanager
def gguf_parsed_once(stock: bool = False) -> Iterator[bool]:
    """Within the block, each GGUF file is parsed once by each reader, its metadata converted
    once and each tensor-name table built once; yields whether all of that is in place (False:
    gguf or transformers lacks a name, and what it lacks goes on unchanged; or the reach
    ``gguf_parse_once`` is off, ``stock``, and nothing is replaced)."""
    global _active
    from syntaxgym_helm.clients import reaches

    if not reaches.active("gguf_parse_once", stock):
        yield False
        return
    with _lock:
        if _active:
            yield True  # a load inside a load keeps the outer memo
            return
        originals = _originals()
        for (module, name), replacement in _replacements(originals).items():
            setattr(module, name, replacement)
        _active = True
        try:
            yield len(originals) == sum(len(names) for names in MEMOISED.values())
        finally:
            _active = False
            for (module, name), original in originals.items():
                setattr(module, name, original)
