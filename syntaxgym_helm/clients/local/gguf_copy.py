"""A GGUF checkpoint's dequantised copy written a tensor at a time (:func:`write_streamed_copy`).

transformers loads a GGUF checkpoint of the architectures its older loader handles (llama,
gemma3, ...) by dequantising every tensor into one state dict, then copying that into the model:
both are in memory at once, twice the fp32 weights, and ``gguf``'s ``dequantize`` holds the rows it
has dequantised twice more while it joins them. The copy kept in the weights cache needs neither:
the tokenizer and config are saved from one parse of the file, the parse is handed back, and then
each tensor is dequantised (``ROWS_AT_ONCE`` rows at a time), put in transformers' layout by the
tensor processor and name map transformers' loader uses (``TENSOR_PROCESSORS``,
``get_gguf_hf_weights_map``: llama's query and key rows un-permuted, Gemma's norms less one),
written to the safetensors file and dropped, with the file's pages it was read from; the model is
built on the meta device only to name its tensors. The folder holds the bytes ``save_pretrained``
writes after transformers' loader (``tests/clients/test_gguf_copy.py``): the same tensors under
the same names (tied ones once), config, generation config and tokenizer.

Where transformers' newer loader handles the architecture, a tensor of the model has none in the
file (or another size), or saving would convert weights, :class:`NotStreamable` is raised before
anything is written, and the caller loads the model whole.
"""

from __future__ import annotations

import gc
import json
import mmap
import struct
from collections.abc import Callable
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from syntaxgym_helm.clients.local.gguf_parsing import gguf_parsed_once

#: Rows dequantised at once (Gemma-3's embedding table: 262,144 rows of 640).
ROWS_AT_ONCE = 512


#: What this module uses of transformers' GGUF loader beyond its public API: module -> names.
TRANSFORMERS_NAMES = {
    "transformers.modeling_gguf_pytorch_utils": ("TENSOR_PROCESSORS", "TensorProcessor",
                                                 "get_gguf_hf_weights_map",
                                                 "load_gguf_checkpoint", "read_field"),
    "transformers.core_model_loading": ("revert_weight_conversion",),
    "transformers.modeling_utils": ("remove_tied_weights_from_state_dict",),
    "gguf.quants": ("Q4_0", "Q4_1", "Q8_0", "Q4_K", "Q6_K"),
}


def missing_names() -> list[str]:
    """What the installed transformers and gguf lack of :data:`TRANSFORMERS_NAMES` (the probe of
    the reach ``gguf_streamed_copy``, :mod:`syntaxgym_helm.clients.reaches`)."""
    from syntaxgym_helm.clients.reaches import missing_attributes

    return missing_attributes(TRANSFORMERS_NAMES)


class NotStreamable(Exception):
    """The copy of this file cannot be written a tensor at a time (see the module's docstring)."""


@dataclass(frozen=True)
class _Stored:
    """Where one tensor lies in the GGUF file and how it is stored, as ``gguf``'s reader reads it
    (``ReaderTensor``: its type, and the offset, dtype and shape of its ``data``)."""

    name: str
    kind: int
    offset: int
    dtype: np.dtype
    shape: tuple[int, ...]


def write_streamed_copy(gguf_path: Path, source: str, kwargs: dict[str, Any],
                        folder: Path) -> None:
    """Write the float32 dequantised copy of ``gguf_path`` (loaded as ``source`` with
    ``kwargs``: ``gguf_file``, ``trust_remote_code``, ``revision``) into ``folder``: tokenizer,
    config and generation config from one parse of the file, then ``model.safetensors`` a tensor
    at a time, the parse handed back first. Raises :class:`NotStreamable`, before anything is
    written, where the copy cannot be written so."""
    from transformers import AutoTokenizer

    with gguf_parsed_once():
        plan = _plan(gguf_path, source, kwargs)
        tokenizer = AutoTokenizer.from_pretrained(source, **kwargs)
        tokenizer.save_pretrained(folder)
        del tokenizer
        plan.save_config(folder)
    gc.collect()  # the file's parse, held in reference cycles, goes before the first tensor
    plan.save_weights(gguf_path, folder / "model.safetensors")


@dataclass
class _Plan:
    """The meta model (names, shapes, config), the file's tensor for each tensor to write, and how
    transformers puts the file's tensors in its layout."""

    model: Any
    tensors: dict[str, _Stored]
    processor: Any
    names: dict[str, str]  # the file's tensor name -> the model's

    def save_config(self, folder: Path) -> None:
        config = self.model.config
        config.dtype = "float32"  # what save_pretrained records of the model it saves
        config.architectures = [type(self.model).__name__]
        config.save_pretrained(folder)
        if self.model.can_generate():
            self.model.generation_config.save_pretrained(folder)

    def save_weights(self, gguf_path: Path, path: Path) -> None:
        shapes = {name: tuple(self.model.get_parameter_or_buffer(name).shape)
                  for name in self.tensors}
        threads = max(1, torch.get_num_threads())
        with open(gguf_path, "rb") as stream, \
                mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ) as mapped, \
                ThreadPoolExecutor(threads) as pool:

            def values(name: str) -> np.ndarray:
                stored = self.tensors[name]
                data = np.frombuffer(mapped, dtype=stored.dtype,
                                     count=int(np.prod(stored.shape, dtype=np.int64)),
                                     offset=stored.offset).reshape(stored.shape)
                weights = dequantised(data, stored.kind, pool if threads > 1 else None)
                end = stored.offset + data.nbytes
                del data
                # The file's pages it was read from are handed back (a read-only mapping).
                first = stored.offset // mmap.PAGESIZE * mmap.PAGESIZE
                mapped.madvise(mmap.MADV_DONTNEED, first, end - first)
                return self._in_model_layout(weights, stored.name)

            write_safetensors(path, shapes, values)

    def _in_model_layout(self, weights: np.ndarray, name: str) -> np.ndarray:
        """``weights`` as transformers' loader puts them in the model (its tensor processor:
        llama's query and key rows un-permuted, Gemma's norms less one; then float32)."""
        handed: dict[str, dict] = {"tensors": {}}
        result = self.processor.process(weights=weights, name=name,
                                        tensor_key_mapping=self.names, parsed_parameters=handed)
        if result.name != name or handed["tensors"]:
            raise ValueError(f"the tensor processor renamed or merged {name}")
        return torch.from_numpy(np.ascontiguousarray(result.weights)).to(torch.float32).numpy()


def _plan(gguf_path: Path, source: str, kwargs: dict[str, Any]) -> _Plan:
    """What :func:`write_streamed_copy` writes; raises :class:`NotStreamable` where it cannot.
    Within :func:`.gguf_parsing.gguf_parsed_once` (one parse of the file)."""
    from gguf import GGUFReader
    from transformers import AutoConfig, AutoModelForCausalLM
    from transformers.core_model_loading import revert_weight_conversion
    from transformers.modeling_gguf_pytorch_utils import (
        TENSOR_PROCESSORS,
        TensorProcessor,
        get_gguf_hf_weights_map,
        load_gguf_checkpoint,
        read_field,
    )
    from transformers.modeling_utils import remove_tied_weights_from_state_dict

    reader = GGUFReader(gguf_path)
    architecture = read_field(reader, "general.architecture")[0]
    if _newer_loader_handles(architecture):
        raise NotStreamable(f"transformers loads {architecture} GGUF files another way")
    config = AutoConfig.from_pretrained(source, **kwargs)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(
            config, dtype=torch.float32, trust_remote_code=kwargs.get("trust_remote_code", False))
    # The tensors save_pretrained writes, found as it finds them.
    state = model.state_dict()
    for ignored in model._keys_to_ignore_on_save or ():
        state.pop(ignored, None)
    state = remove_tied_weights_from_state_dict(state, model)
    reverted = revert_weight_conversion(model, dict(state))
    if set(reverted) != set(state) or any(reverted[k] is not v for k, v in state.items()):
        raise NotStreamable("saving the model converts its weights")
    if any(value.dtype != torch.float32 for value in state.values()):
        raise NotStreamable("the model keeps tensors in other dtypes")
    metadata = load_gguf_checkpoint(str(gguf_path), return_tensors=False)
    processor = TENSOR_PROCESSORS.get(architecture, TensorProcessor)(config=metadata["config"])
    names = get_gguf_hf_weights_map(model, processor)
    tensors = {names[t.name]: _Stored(t.name, int(t.tensor_type), int(t.data_offset),
                                      t.data.dtype, tuple(t.data.shape))
               for t in reader.tensors if names.get(t.name) in state}
    missing = set(state) - set(tensors)
    if missing or any(int(t.n_elements) != state[names[t.name]].numel()
                      for t in reader.tensors if names.get(t.name) in state):
        raise NotStreamable(f"the file's tensors are not the model's ({sorted(missing)[:3]})")
    return _Plan(model, tensors, processor, names)


def _newer_loader_handles(architecture: str) -> bool:
    """Whether transformers loads this GGUF architecture with its newer loader (which keeps
    weights in blocks, or dequantises them with conversions of its own)."""
    try:
        from transformers.integrations.gguf.utils import is_gguf_arch_supported
    except ImportError:
        return False
    return bool(is_gguf_arch_supported(architecture))


def dequantised(data: np.ndarray, kind: int, pool: Executor | None = None) -> np.ndarray:
    """A GGUF tensor's ``data`` (as ``gguf``'s reader gives it) of ggml type ``kind`` as float32
    values: what ``gguf.dequantize`` gives, computed ``ROWS_AT_ONCE`` rows at a time into one
    array, the blocks of rows shared out among ``pool``'s threads, if given (numpy lets go of the
    GIL while it computes). ``dequantize`` on a whole table holds every group of rows it
    dequantised beside the array it joins them into, and it dequantises 16 rows per call: its
    Python, not its arithmetic, took most of the time. Each value is computed by the same
    operations whatever the rows around it (``tests/clients/test_gguf_copy.py``)."""
    from gguf import GGMLQuantizationType

    kind = GGMLQuantizationType(kind)
    rows = data.reshape(-1, data.shape[-1])
    convert = _row_dequantiser(kind)
    first = convert(rows[:ROWS_AT_ONCE])
    out = np.empty((rows.shape[0], first.shape[-1]), dtype=first.dtype)
    out[:len(first)] = first
    del first

    def block(start: int) -> None:
        out[start: start + ROWS_AT_ONCE] = convert(rows[start: start + ROWS_AT_ONCE])

    starts = range(ROWS_AT_ONCE, rows.shape[0], ROWS_AT_ONCE)
    if pool is not None and len(starts) > 1:
        list(pool.map(block, starts))
    else:
        for start in starts:
            block(start)
    return out.reshape(*data.shape[:-1], out.shape[-1])


def _row_dequantiser(kind: Any) -> Callable[[np.ndarray], np.ndarray]:
    """Rows of ggml type ``kind`` (bytes as ``gguf``'s reader gives them) to float32 values:
    the type's ``dequantize_rows`` in ``gguf.quants`` called on all of them at once (what
    ``gguf.dequantize`` calls on each group of 16), or ``gguf.dequantize`` itself for a type
    with no such class (the float types)."""
    import gguf.quants
    from gguf import dequantize

    quant: Any = getattr(gguf.quants, kind.name, None)
    rows_of = getattr(quant, "dequantize_rows", None)
    init_grid = getattr(quant, "init_grid", None)
    if getattr(quant, "qtype", None) == kind and callable(rows_of) and callable(init_grid):
        init_grid()
        return rows_of
    return lambda rows: dequantize(rows, kind)


def write_safetensors(path: Path, shapes: dict[str, tuple[int, ...]],
                      values: Callable[[str], np.ndarray]) -> None:
    """Write a safetensors file of float32 tensors (``shapes``: name -> shape), each asked of
    ``values`` when its turn comes and written at once. The layout is the one ``safetensors``'
    ``save_file`` writes: an 8-byte little-endian header length, the JSON header (``__metadata__``
    ``{"format": "pt"}`` first, then the tensors in the order of their names' bytes, each with its
    dtype, shape and data offsets), padded with spaces to a multiple of 8, then the data in that
    order."""
    order = sorted(shapes, key=lambda name: name.encode())
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name in order:
        size = 4 * int(np.prod(shapes[name], dtype=np.int64))
        header[name] = {"dtype": "F32", "shape": list(shapes[name]),
                        "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as stream:
        stream.write(struct.pack("<Q", len(text)))
        stream.write(text)
        for name in order:
            array = values(name)
            if array.dtype != np.float32 or array.shape != shapes[name]:
                raise ValueError(f"{name}: {array.dtype} {array.shape}, not float32 "
                                 f"{shapes[name]}")
            stream.write(np.ascontiguousarray(array).reshape(-1).view(np.uint8).data)
            del array
