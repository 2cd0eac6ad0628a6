"""oneDNN matrix products with pre-packed weights for a model's linear layers (CPU, float32).

On x86 CPUs PyTorch computes ``nn.Linear`` with MKL's sgemm. oneDNN, given weights reordered
once into the layout of its kernels, is faster at the shapes the engine uses (a few hundred
positions by a few hundred features; BENCHMARKS.md has the figures), still in float32. Its
summation order differs from MKL's, so results differ by float rounding, which is harmless except
where a layer's inputs are huge ("massive activations"): the beginning-of-text position (the
"attention sink") and the inputs of the MLP's output projection (several times larger than any
other layer's in SmolLM2), where the difference exceeds the 1e-4 nats within which the engine's
scores must equal plain scoring. So the
engine computes passes that hold the beginning-of-text position with the default kernels (once:
it is then stored and reused), and leaves layers whose input is wider than the model's hidden
size (the MLP's output projection: ``down_proj``, ``fc2``, ``dense_4h_to_h``) on the default
kernels; everything else, about three quarters of the matrix products, runs on oneDNN.

:func:`install` swaps a model's ``nn.Linear`` layers for :class:`PackedLinear` layers that share
their parameters (same state dict) and compute exactly as before, except on a thread inside
:func:`packed_kernels`. Other users of the model see no change. The packed copies assume the
weights do not change afterwards (inference only) and take as much memory again as the weights.

That second copy need not stay in memory twice: transformers maps a safetensors checkpoint's weights
from the file, so once a layer's packed copy exists, :func:`release_file_pages` hands the pages of
its original weight back to the kernel (after checking in the process's page map that none was
written: they hold the file's bytes); :func:`install` does so layer by layer, so that the two copies
never coexist. The original stays usable: touched again (the default kernels, a plain pass), its
pages are read back from the file. The layers left on the default kernels are copied into ordinary
memory first (:func:`copy_off_file`): the kernel maps a file's page cache in large folios (up to
2 MB), so reading them from the mapping would map the released neighbours of each folio again.
The output layer's vocabulary blocks are packed and handed back the same way, a block at a time
(:meth:`.output_layer.OutputLayer.pack_for_onednn`).
The embedding table is also dropped
from the page cache and read a page per row from then on (:func:`release_for_sparse_reads`); a
second engine set up on the same model (the same checkpoint under other settings) reads it whole in
its probes, so :func:`prepare_for_dense_reads` first gives it back the default read-ahead (read a
page at a time, a large table takes seconds).
"""

from __future__ import annotations

import ctypes
import mmap
import os
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import torch
import torch.nn.functional as F

_STATE = threading.local()


def available(device: torch.device, dtype: torch.dtype) -> bool:
    """Whether this torch build can run oneDNN's packed float32 linear kernels on ``device``."""
    return (device.type == "cpu" and dtype == torch.float32
            and torch.backends.mkldnn.is_available()
            and hasattr(torch.ops.mkldnn, "_reorder_linear_weight")
            and hasattr(torch.ops.mkldnn, "_linear_pointwise"))


def pack_weight(weight: torch.Tensor, batch_hint: int) -> torch.Tensor:
    """``weight`` (out x in) reordered for oneDNN; ``batch_hint``: the usual number of rows."""
    return torch.ops.mkldnn._reorder_linear_weight(weight.detach().contiguous(), batch_hint)


def packed_linear(x: torch.Tensor, packed: torch.Tensor, bias: torch.Tensor | None,
                  out_features: int) -> torch.Tensor:
    """``F.linear(x, weight, bias)`` with the packed weight, any leading dimensions."""
    flat = x.reshape(-1, x.shape[-1])
    out = torch.ops.mkldnn._linear_pointwise(flat, packed, bias, "none", [], "")
    return out.reshape(*x.shape[:-1], out_features)


@contextmanager
def packed_kernels(enabled: bool = True) -> Iterator[None]:
    """Within this block, :class:`PackedLinear` layers called from this thread use oneDNN."""
    saved = getattr(_STATE, "enabled", False)
    _STATE.enabled = enabled
    try:
        yield
    finally:
        _STATE.enabled = saved


def packed_kernels_enabled() -> bool:
    return getattr(_STATE, "enabled", False)


class PackedLinear(torch.nn.Linear):
    """An ``nn.Linear`` (the same parameters) that multiplies with a oneDNN-packed copy of its
    weight inside :func:`packed_kernels`, and exactly as ``nn.Linear`` elsewhere."""

    def __init__(self, linear: torch.nn.Linear, batch_hint: int) -> None:
        torch.nn.Module.__init__(self)
        self.in_features = linear.in_features
        self.out_features = linear.out_features
        self.weight = linear.weight
        self.bias = linear.bias
        self.packed = pack_weight(linear.weight, batch_hint)  # an attribute: not in state dicts

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if packed_kernels_enabled():
            return packed_linear(x, self.packed, self.bias, self.out_features)
        return F.linear(x, self.weight, self.bias)


def install(model: torch.nn.Module, batch_hint: int, skip: tuple[torch.nn.Module, ...] = (),
            max_in_features: int | None = None, release_originals: bool = False) -> int:
    """Swap the float32 ``nn.Linear`` layers of ``model`` for :class:`PackedLinear`, except those
    in ``skip``, those with more than ``max_in_features`` inputs and those already swapped;
    returns how many were swapped. ``release_originals``: first copy the parameters that stay in
    use (except embedding tables, read a row at a time, and ``skip``'s) into ordinary memory
    (:func:`copy_off_file`: read from the file later, they would map released neighbours again),
    then hand back each swapped layer's file pages as soon as its packed copy exists."""
    packed: list[tuple[torch.nn.Module, str, torch.nn.Linear]] = []
    left: list[PackedLinear] = []
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, PackedLinear):
                left.append(child)  # packed earlier; its original may have been read since
            elif (type(child) is torch.nn.Linear and child.weight.dtype == torch.float32
                    and not any(child is s for s in skip)):
                if max_in_features is None or child.in_features <= max_in_features:
                    packed.append((parent, name, child))
    # The process's file mappings, read once: packing and copying only add anonymous memory.
    mappings = file_mappings() if release_originals else []
    if release_originals:
        release_file_pages([layer.weight for layer in left], mappings)
        to_pack = {id(child.weight) for _, _, child in packed}
        for module in model.modules():
            if isinstance(module, torch.nn.Embedding) or any(module is s for s in skip):
                continue  # read a row at a time, or handed back by the caller
            for parameter in module.parameters(recurse=False):
                if id(parameter) not in to_pack and not isinstance(module, PackedLinear):
                    copy_off_file(parameter, mappings)
    for parent, name, child in packed:
        setattr(parent, name, PackedLinear(child, batch_hint))
        if release_originals:
            release_file_pages([child.weight], mappings)
    return len(packed)


def copy_off_file(parameter: torch.nn.Parameter,
                  mappings: list[tuple[int, int, int, str]] | None = None) -> None:
    """Give ``parameter`` a copy of its values in ordinary memory when it is mapped from a file,
    and hand back the file's pages it held. ``mappings``: :func:`file_mappings`, if read
    already."""
    if not os.path.exists("/proc/self/maps"):
        return
    mappings = file_mappings() if mappings is None else mappings
    if not _file_mapping_of(parameter.data, mappings):
        return
    mapped = parameter.data
    parameter.data = mapped.clone()
    release_file_pages([mapped], mappings)


_MADV_DONTNEED = 4  # Linux: drop the pages; a private file mapping is read back from the file


def release_file_pages(tensors: Iterable[torch.Tensor],
                       mappings: list[tuple[int, int, int, str]] | None = None) -> int:
    """Hand back the resident pages of ``tensors`` that are mapped from a file and none of whose
    pages was written (weights transformers mapped from safetensors and nobody changed); returns
    how many bytes were handed back. Anything else (a tensor in ordinary memory, another system,
    a page shared with other data at a tensor's edges) is left as it is. ``mappings``:
    :func:`file_mappings`, if read already (reading them takes milliseconds: once per model)."""
    if not hasattr(os, "pread") or not os.path.exists("/proc/self/maps"):
        return 0
    libc = ctypes.CDLL(None, use_errno=True)
    mappings = file_mappings() if mappings is None else mappings
    page = mmap.PAGESIZE
    released = 0
    for tensor in tensors:
        if tensor.device.type != "cpu" or not tensor.is_contiguous() or tensor.numel() == 0:
            continue
        start = tensor.data_ptr()
        size = tensor.numel() * tensor.element_size()
        found = _file_mapping_of(tensor, mappings)
        if found is None:
            continue
        first = -(-start // page) * page
        last = (start + size) // page * page
        if last <= first:
            continue
        written = _pages_written(first, last)
        if written is None:  # no page map to read: compare the bytes with the file's
            low, _, offset, path = found
            with open(path, "rb") as stream:
                on_disk = os.pread(stream.fileno(), size, offset + start - low)
            written = len(on_disk) != size or on_disk != ctypes.string_at(start, size)
        if written:
            continue  # changed since it was mapped: keep it
        if libc.madvise(ctypes.c_void_p(first), ctypes.c_size_t(last - first),
                        _MADV_DONTNEED) == 0:
            released += last - first
    return released


_PRESENT, _SWAPPED, _FILE_PAGE = 1 << 63, 1 << 62, 1 << 61  # /proc/self/pagemap's flag bits


def _pages_written(first: int, last: int) -> bool | None:
    """Whether any page of ``[first, last)`` (page-aligned addresses in a private file mapping)
    was written since it was mapped, read from ``/proc/self/pagemap`` without touching the pages:
    a written page is the process's own copy (present but not a file page, or swapped out); an
    untouched or only read one holds the file's bytes. None where the page map cannot be read.
    (Comparing the bytes instead would read each page in from the file: seconds for a large
    embedding table.)"""
    import numpy as np

    page = mmap.PAGESIZE
    try:
        descriptor = os.open("/proc/self/pagemap", os.O_RDONLY)
    except OSError:
        return None
    try:
        count = (last - first) // page
        data = os.pread(descriptor, count * 8, first // page * 8)
    except OSError:
        return None
    finally:
        os.close(descriptor)
    if len(data) != count * 8:
        return None
    entries = np.frombuffer(data, dtype=np.uint64)
    own = ((entries & np.uint64(_PRESENT)) != 0) & ((entries & np.uint64(_FILE_PAGE)) == 0)
    return bool(np.any(own | ((entries & np.uint64(_SWAPPED)) != 0)))


_MADV_RANDOM = 1  # Linux: no read-around on faults: one page from the file per page touched


def release_for_sparse_reads(tensor: torch.Tensor) -> int:
    """:func:`release_file_pages` for a table read a few rows at a time (the embeddings): also
    drop its pages from the page cache and fault it in page by page from then on, so that a
    lookup maps the 4 kB page of its row, not the up to 2 MB folio around it (which would make
    the whole table resident again within a few thousand lookups). Returns the bytes handed
    back."""
    released = release_file_pages([tensor])
    found = _file_mapping_of(tensor, file_mappings()) if released else None
    if found is None or not hasattr(os, "posix_fadvise"):
        return released
    low, _, offset, path = found
    page = mmap.PAGESIZE
    start = tensor.data_ptr()
    first = -(-start // page) * page
    last = (start + tensor.numel() * tensor.element_size()) // page * page
    ctypes.CDLL(None, use_errno=True).madvise(ctypes.c_void_p(first),
                                              ctypes.c_size_t(last - first), _MADV_RANDOM)
    descriptor = os.open(path, os.O_RDONLY)
    try:  # only pages no process maps are dropped: others keep theirs
        os.posix_fadvise(descriptor, offset + first - low, last - first, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(descriptor)
    return released


_MADV_NORMAL, _MADV_WILLNEED = 0, 3  # Linux: the default read-around; read the range ahead


def prepare_for_dense_reads(tensor: torch.Tensor) -> bool:
    """Undo :func:`release_for_sparse_reads` before ``tensor`` is read whole again (another
    engine set up on the same model computes its probes with the default kernels): the range gets
    the default read-around back and is read ahead from the file in large requests, instead of
    faulting in page by page, which takes far longer for a large table.
    Returns whether ``tensor`` is mapped from a file (nothing is done otherwise)."""
    if not os.path.exists("/proc/self/maps") or tensor.device.type != "cpu":
        return False
    page = mmap.PAGESIZE
    first = -(-tensor.data_ptr() // page) * page
    last = (tensor.data_ptr() + tensor.numel() * tensor.element_size()) // page * page
    # The advice given to the table's whole pages split its mapping in three: ask for the
    # mapping at its first whole page, not for one holding all of it.
    if last <= first or not any(low <= first < high for low, high, _, _ in file_mappings()):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    for advice in (_MADV_NORMAL, _MADV_WILLNEED):
        libc.madvise(ctypes.c_void_p(first), ctypes.c_size_t(last - first), advice)
    return True


def _file_mapping_of(tensor: torch.Tensor, mappings: list[tuple[int, int, int, str]]
                     ) -> tuple[int, int, int, str] | None:
    """The private file mapping that holds all of ``tensor``'s bytes, if any."""
    if tensor.device.type != "cpu" or tensor.numel() == 0:
        return None
    start = tensor.data_ptr()
    end = start + tensor.numel() * tensor.element_size()
    return next((m for m in mappings if m[0] <= start and end <= m[1]), None)


def file_mappings() -> list[tuple[int, int, int, str]]:
    """(start, end, file offset, path) of this process's private mappings of regular files."""
    found = []
    regular: dict[str, bool] = {}  # a library or model file is mapped in many pieces
    with open("/proc/self/maps") as maps:
        for line in maps:
            parts = line.split(maxsplit=5)
            if len(parts) < 6 or not parts[5].startswith("/") or parts[1][3] != "p":
                continue
            path = parts[5].rstrip("\n")
            if path not in regular:
                regular[path] = os.path.isfile(path)
            if not regular[path]:
                continue  # deleted, or not a regular file
            low, high = (int(x, 16) for x in parts[0].split("-"))
            found.append((low, high, int(parts[2], 16), path))
    return found
