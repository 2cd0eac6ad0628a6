"""oneDNN packed linear layers (syntaxgym_helm.clients.local.cpu_kernels): exact outside the
context, equal up to float rounding inside it, thread-local, and invisible in the model's state
dict."""

from __future__ import annotations

import mmap
import os
import threading

import pytest
import torch

from syntaxgym_helm.clients.local import cpu_kernels

pytestmark = pytest.mark.skipif(
    not cpu_kernels.available(torch.device("cpu"), torch.float32),
    reason="this torch build has no oneDNN packed linear kernels")


class TwoLayers(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.inner = torch.nn.Sequential(torch.nn.Linear(64, 96), torch.nn.SiLU(),
                                         torch.nn.Linear(96, 32, bias=False))
        self.head = torch.nn.Linear(32, 50)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.inner(x))


def test_packed_layers_compute_as_before_outside_the_context_and_close_inside():
    model = TwoLayers()
    x = torch.randn(3, 7, 64)
    with torch.inference_mode():
        before = model(x)
        keys = list(model.state_dict())
        # The 96-wide projection back to 32 features is left out, as is the head.
        assert cpu_kernels.install(model, batch_hint=21, skip=(model.head,),
                                   max_in_features=64) == 1
        assert cpu_kernels.install(model, batch_hint=21, skip=(model.head,)) == 1  # the rest
        assert cpu_kernels.install(model, batch_hint=21) == 1  # the head; then nothing is left
        assert cpu_kernels.install(model, batch_hint=21) == 0
        assert all(isinstance(m, cpu_kernels.PackedLinear)
                   for m in (model.inner[0], model.inner[2], model.head))
        assert list(model.state_dict()) == keys  # same parameters, same names
        assert torch.equal(model(x), before)  # default kernels: bit for bit
        with cpu_kernels.packed_kernels():
            packed = model(x)
        assert packed.shape == before.shape
        assert torch.allclose(packed, before, rtol=1e-5, atol=1e-5)
        for rows in (1, 5, 40):  # other row counts than the hint
            y = torch.randn(rows, 64)
            with cpu_kernels.packed_kernels():
                got = model.inner(y)
            assert torch.allclose(got, model.inner(y), rtol=1e-5, atol=1e-5)


def test_the_context_is_per_thread_and_nests():
    seen: list[bool] = []
    with cpu_kernels.packed_kernels():
        assert cpu_kernels.packed_kernels_enabled()
        thread = threading.Thread(target=lambda: seen.append(cpu_kernels.packed_kernels_enabled()))
        thread.start()
        thread.join()
        with cpu_kernels.packed_kernels(False):
            assert not cpu_kernels.packed_kernels_enabled()
        assert cpu_kernels.packed_kernels_enabled()
    assert seen == [False] and not cpu_kernels.packed_kernels_enabled()


def test_only_cpu_float32_qualifies():
    assert not cpu_kernels.available(torch.device("cpu"), torch.bfloat16)
    assert not cpu_kernels.available(torch.device("meta"), torch.float32)


def _smaps_field(address: int, field: str) -> list[str]:
    """The values of ``field`` (``"Rss:"``, ``"VmFlags:"``) of the mapping that holds
    ``address``, from this process's smaps."""
    inside = False
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            head = line.split()[0]
            if "-" in head and all(c in "0123456789abcdef-" for c in head):
                low, high = (int(x, 16) for x in head.split("-"))
                inside = low <= address < high
            elif inside and head == field:
                return line.split()[1:]
    raise AssertionError("no mapping holds the address")


def _resident_kb(tensor: torch.Tensor) -> int:
    """This process's resident memory (kB) in the mapping that holds ``tensor``."""
    return int(_smaps_field(tensor.data_ptr(), "Rss:")[0])


def test_file_pages_are_handed_back_only_while_they_hold_the_files_bytes(tmp_path):
    """Weights mapped from a file (as transformers maps safetensors) and unchanged give their
    pages back and read the same afterwards; changed ones, or ones in ordinary memory, stay."""
    import numpy as np

    values = np.random.default_rng(0).standard_normal(3 * 2**18).astype(np.float32)  # 3 MB
    path = tmp_path / "weights.bin"
    values.tofile(path)
    kept = torch.from_numpy(np.memmap(path, dtype=np.float32, mode="c"))  # private mapping
    changed = torch.from_numpy(np.memmap(path, dtype=np.float32, mode="c"))
    changed[12345] = 7.0  # this copy no longer holds the file's bytes
    ordinary = torch.from_numpy(values.copy())
    assert float(kept.sum()) == float(torch.from_numpy(values).sum())  # every page resident
    assert _resident_kb(kept) >= 3000
    # Told apart by the process's page map, without reading the pages (Linux's pagemap).
    page = mmap.PAGESIZE
    for tensor, written in ((kept, False), (changed, True)):
        start = tensor.data_ptr()
        first, last = -(-start // page) * page, (start + tensor.numel() * 4) // page * page
        assert cpu_kernels._pages_written(first, last) is written

    released = cpu_kernels.release_file_pages([kept, changed, ordinary])
    assert 2.9 * 2**20 < released <= 3 * 2**20  # kept's pages, edges aside
    assert _resident_kb(kept) <= 8  # the two pages at its edges at most
    assert torch.equal(kept, torch.from_numpy(values))  # read back from the file
    assert float(changed[12345]) == 7.0 and torch.equal(ordinary, torch.from_numpy(values))


def _random_read_advice(address: int) -> bool:
    """Whether the mapping holding ``address`` was advised MADV_RANDOM (smaps' ``rr`` flag)."""
    return "rr" in _smaps_field(address, "VmFlags:")


def test_a_table_handed_back_for_sparse_reads_is_read_whole_again_with_read_ahead(tmp_path):
    """A second engine on the same model reads the embedding table whole (its probes, with the
    default kernels): :func:`prepare_for_dense_reads` takes back the first engine's advice to
    fault it in page by page, though that advice split the table's mapping (its first and last
    part pages kept the file mapping's own advice)."""
    import numpy as np

    if not os.path.exists("/proc/self/smaps"):
        pytest.skip("needs Linux's /proc/self/smaps")
    values = np.random.default_rng(1).standard_normal(2**20).astype(np.float32)  # 4 MB
    path = tmp_path / "table.bin"
    values.tofile(path)
    mapped = np.memmap(path, dtype=np.float32, mode="c")
    table = torch.from_numpy(mapped)[3: 3 + 10**6].view(1000, 1000)  # starts inside a page
    page = mmap.PAGESIZE
    expected = torch.from_numpy(values[3: 3 + 10**6].copy()).view(1000, 1000)
    assert table.data_ptr() % page and torch.equal(table, expected)  # every page read
    inner = -(-table.data_ptr() // page) * page
    assert cpu_kernels.release_for_sparse_reads(table) > 3.8 * 2**20
    assert _random_read_advice(inner)
    assert cpu_kernels._file_mapping_of(table, cpu_kernels.file_mappings()) is None  # split
    assert cpu_kernels.prepare_for_dense_reads(table)
    assert not _random_read_advice(inner)
    assert torch.equal(table, expected)
    # The mapping is whole again, so the second engine hands the table back as the first did.
    assert cpu_kernels._file_mapping_of(table, cpu_kernels.file_mappings()) is not None
    assert cpu_kernels.release_for_sparse_reads(table) > 3.8 * 2**20
    assert _random_read_advice(inner)
    assert not cpu_kernels.prepare_for_dense_reads(torch.from_numpy(values.copy()))  # not mapped
