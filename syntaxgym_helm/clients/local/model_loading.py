"""Loading a Hugging Face causal LM (hub name, folder or GGUF file) for the local engine.

GGUF checkpoints are dequantised once and kept as safetensors in a cache folder (see
:func:`default_weights_cache_dir`), which makes later loads take a second instead of many; a local
file is dequantised into it a tensor at a time (:mod:`.gguf_copy`), then read from it. The
copy is checked against its manifest at every load but the one that has just written it
(:mod:`syntaxgym_helm.clients.checked_folders`) and made again when damaged.
"""

from __future__ import annotations

import gc
import hashlib
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import torch
from helm.common.hierarchical_logger import hlog, hwarn

from syntaxgym_helm.clients import reaches
from syntaxgym_helm.clients.cache_dirs import default_weights_cache_dir
from syntaxgym_helm.clients.checked_folders import reject, save_folder, usable_folder
from syntaxgym_helm.clients.content_digest import file_digest
from syntaxgym_helm.clients.local.dtype_names import dtype_attribute
from syntaxgym_helm.clients.local.freed_memory import drop_tokenizer_build_inputs
from syntaxgym_helm.clients.local.gguf_parsing import gguf_parsed_once


def resolve_device(device: str | None) -> str:
    """``auto`` (or None): ``cuda`` when available, else ``cpu``; anything else as given."""
    if device in (None, "", "auto"):
        return "cuda" if torch.cuda.is_available() else "cpu"
    return device


def resolve_dtype(dtype: str | torch.dtype) -> torch.dtype:
    if isinstance(dtype, torch.dtype):
        return dtype
    return getattr(torch, dtype_attribute(dtype))


def _gguf_cache_folder(root: Path, pretrained: str, gguf_file: str, revision: str | None,
                       dtype: torch.dtype) -> Path:
    """The copy's folder, named by the file's bytes where it is a local file (the same file in
    another environment finds the same copy, :mod:`..content_digest`), else by the hub name and
    revision; and by the dtype and transformers' version, which make the copy."""
    import transformers

    source = Path(pretrained) / gguf_file
    identity = [gguf_file, str(dtype), transformers.__version__]
    if source.is_file():
        identity += ["sha256", file_digest(source)]
    else:
        identity += [str(pretrained), str(revision)]
    digest = hashlib.sha256("\0".join(identity).encode()).hexdigest()[:16]
    return root / f"{Path(gguf_file).stem}-{str(dtype).replace('torch.', '')}-{digest}"


def load_model_and_tokenizer(
    pretrained_model_name_or_path: str,
    *,
    gguf_file: str | None = None,
    dtype: str | torch.dtype = "float32",
    device: str | None = "auto",
    revision: str | None = None,
    trust_remote_code: bool = False,
    weights_cache_dir: str | None = None,
    model_kwargs: Mapping[str, Any] | None = None,
    stock: bool = False,
):
    """Load a causal LM and its tokenizer (hub name, folder, or GGUF file in a folder).

    A GGUF checkpoint is dequantised to ``dtype`` once and saved as safetensors (with its
    tokenizer) under ``weights_cache_dir`` (default :func:`default_weights_cache_dir`; ``none``
    turns this off; a local file in float32 is written a tensor at a time, and the model is read
    from the copy); later loads read that copy after checking it against its manifest
    (:mod:`syntaxgym_helm.clients.checked_folders`). A copy that is damaged (a file cut short or
    changed, its manifest missing) or cannot be loaded is replaced, with a warning naming it.
    ``stock``: every reach into transformers' and gguf's internals off
    (:mod:`syntaxgym_helm.clients.reaches`): transformers loads the GGUF file and
    ``save_pretrained`` writes the copy.
    """
    torch_dtype = resolve_dtype(dtype)
    device = resolve_device(device)
    common: dict[str, Any] = {"trust_remote_code": trust_remote_code}
    if revision:
        common["revision"] = revision
    extra = dict(model_kwargs or {})
    source_kwargs: dict[str, Any] = dict(common)
    cache_folder: Path | None = None
    loaded = None
    if gguf_file:
        source_kwargs["gguf_file"] = gguf_file
        cache_folder = _copy_folder(weights_cache_dir, pretrained_model_name_or_path, gguf_file,
                                    revision, torch_dtype)
        if cache_folder is not None:
            loaded = _load_cached(cache_folder, Path(pretrained_model_name_or_path) / gguf_file,
                                  torch_dtype, trust_remote_code, extra, stock=stock)
    if loaded is None and cache_folder is not None and (saved := _save_streamed(
            pretrained_model_name_or_path, source_kwargs, torch_dtype, cache_folder, stock)):
        # The copy written a tensor at a time, read as every later load reads it; the one this
        # call has just written and checksummed is not read through a second time to check it.
        loaded = _load_cached(cache_folder, Path(pretrained_model_name_or_path) / str(gguf_file),
                              torch_dtype, trust_remote_code, extra, checked=saved == "written",
                              stock=stock)
    if loaded is None:
        name = pretrained_model_name_or_path + (f" / {gguf_file}" if gguf_file else "")
        model, tokenizer = _load(name, pretrained_model_name_or_path, source_kwargs, torch_dtype,
                                 extra, stock)
        if (cache_folder is not None and gguf_file  # (a copy is kept of GGUF weights only)
                and _save_dequantised(model, tokenizer, cache_folder)):
            # Read back from the copy just saved: mapped from its file (pages the kernel can
            # reclaim and share), as on every later load. The dequantised model goes first, so
            # that the two are never in memory together.
            del model
            gc.collect()  # and what the GGUF file's parse left in reference cycles
            again = _load_cached(cache_folder, Path(pretrained_model_name_or_path) / gguf_file,
                                 torch_dtype, trust_remote_code, extra, stock=stock)
            model, tokenizer = again if again is not None else _load(
                name, pretrained_model_name_or_path, source_kwargs, torch_dtype, extra, stock)
    else:
        model, tokenizer = loaded
    model.to(device)
    model.eval()
    # What the load left in reference cycles (a GGUF file's parse) is collected before the
    # engine's packed weights come on top.
    drop_tokenizer_build_inputs(tokenizer, stock)
    gc.collect()
    return model, tokenizer


def dequantised_copy(pretrained_model_name_or_path: str, gguf_file: str, *,
                     revision: str | None = None, dtype: str | torch.dtype = "float32",
                     trust_remote_code: bool = False,
                     weights_cache_dir: str | None = None, stock: bool = False) -> Path | None:
    """The folder of a GGUF checkpoint's dequantised copy, the one
    :func:`load_model_and_tokenizer` reads (made now, from the GGUF file, where there is none or
    it is damaged), for loaders that take a folder: HELM's HuggingFaceClient would otherwise
    dequantise the file again in every run. None where the cache is turned off (``none``) or
    the copy could not be saved; a checkpoint that cannot be loaded raises
    :class:`ModelLoadError`."""
    torch_dtype = resolve_dtype(dtype)
    folder = _copy_folder(weights_cache_dir, pretrained_model_name_or_path, gguf_file, revision,
                          torch_dtype)
    if folder is None:
        return None
    if usable_folder(folder, *_copy_words(folder, Path(pretrained_model_name_or_path) / gguf_file)):
        return folder
    kwargs: dict[str, Any] = {"trust_remote_code": trust_remote_code, "gguf_file": gguf_file}
    if revision:
        kwargs["revision"] = revision
    if _save_streamed(pretrained_model_name_or_path, kwargs, torch_dtype, folder, stock):
        return folder
    model, tokenizer = _load(f"{pretrained_model_name_or_path} / {gguf_file}",
                             pretrained_model_name_or_path, kwargs, torch_dtype, {}, stock)
    return folder if _save_dequantised(model, tokenizer, folder) else None


def _copy_folder(weights_cache_dir: str | None, pretrained: str, gguf_file: str,
                 revision: str | None, dtype: torch.dtype) -> Path | None:
    """Where a GGUF checkpoint's dequantised copy is kept; None where the cache is turned off
    (``weights_cache_dir`` ``none`` or ``off``)."""
    if weights_cache_dir is not None and weights_cache_dir.strip().lower() in ("none", "off"):
        return None
    root = Path(weights_cache_dir) if weights_cache_dir else default_weights_cache_dir()
    return _gguf_cache_folder(root, pretrained, gguf_file, revision, dtype)


def _copy_words(folder: Path, gguf: Path) -> tuple[str, str]:
    """The subject and remedy of the warning for a damaged copy (``checked_folders.reject``)."""
    return (f"syntaxgym local engine: the dequantised weights cached in {folder} are",
            f"dequantising {gguf} again to replace them")


def _load(name: str, source: str, kwargs: Mapping[str, Any], dtype: torch.dtype,
          extra: Mapping[str, Any], stock: bool = False):
    """(model, tokenizer) from ``source``; an error names what was being loaded."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    started = time.time()
    try:
        # A GGUF file: parsed once for config, tokenizer and weights (unless stock).
        with gguf_parsed_once(stock):
            tokenizer = AutoTokenizer.from_pretrained(source, **kwargs)
            model = AutoModelForCausalLM.from_pretrained(source, dtype=dtype, **kwargs, **extra)
    except Exception as exc:
        raise ModelLoadError(f"could not load {name}: {type(exc).__name__}: {exc}") from exc
    hlog(f"syntaxgym local engine: loaded {name} in {time.time() - started:.1f}s")
    return model, tokenizer


class ModelLoadError(OSError):
    """A checkpoint could not be loaded; the message names it."""


def _load_cached(folder: Path, gguf: Path, dtype: torch.dtype, trust_remote_code: bool,
                 extra: Mapping[str, Any], checked: bool = False, stock: bool = False):
    """(model, tokenizer) from the dequantised copy in ``folder``, checked first (unless
    ``checked``: its manifest was just computed from the bytes this process wrote); None when
    there is none or it is unusable (then it is removed, with a warning naming it and why)."""
    subject, remedy = _copy_words(folder, gguf)
    if not checked and not usable_folder(folder, subject, remedy):
        return None
    try:
        return _load(f"{gguf} (dequantised copy {folder})", str(folder),
                     {"trust_remote_code": trust_remote_code}, dtype, extra, stock)
    except ModelLoadError as exc:
        if not_the_files(exc.__cause__):
            raise  # the folder is not at fault: it stays
        reject(folder, subject, f"it cannot be loaded ({exc.__cause__!r})", remedy)
        return None


def not_the_files(error: BaseException | None) -> bool:
    """Whether a load failed for a reason other than the files it read: the interpreter is
    shutting down (Ctrl-C in a script while the engine thread loads: Python's exit refuses new
    work, "cannot schedule new futures after interpreter shutdown"), or memory ran out. Such a
    failure must not remove a checked folder of weights (it once removed the 540 MB copy)."""
    return (sys.is_finalizing() or isinstance(error, (MemoryError, KeyboardInterrupt))
            or "interpreter shutdown" in str(error))


def _save_streamed(source: str, kwargs: Mapping[str, Any], dtype: torch.dtype,
                   folder: Path, stock: bool = False) -> Literal["written", "found"] | None:
    """Write the float32 dequantised copy of a local GGUF file to ``folder`` a tensor at a time
    (:mod:`.gguf_copy`: the weights are never in memory whole); returns whether a copy is in
    place: ``"written"`` (this one), ``"found"`` (another process's, written meanwhile) or
    None: the caller loads the model whole and saves that, as for other dtypes, files on a hub,
    architectures transformers loads otherwise, and where the reach ``gguf_streamed_copy`` is off
    (``stock``)."""
    from syntaxgym_helm.clients.local.gguf_copy import NotStreamable, write_streamed_copy

    gguf = Path(source) / str(kwargs.get("gguf_file"))
    if (dtype != torch.float32 or not gguf.is_file()
            or not reaches.active("gguf_streamed_copy", stock)):
        return None
    started = time.time()
    try:
        saved = save_folder(folder, lambda temporary: write_streamed_copy(
            gguf, source, dict(kwargs), temporary))
    except NotStreamable:
        return None
    except Exception as exc:  # noqa: BLE001 - the whole model is loaded and saved instead
        hwarn(f"syntaxgym local engine: could not write the dequantised copy of {gguf} a tensor "
              f"at a time ({type(exc).__name__}: {exc}); loading the whole model instead")
        return None
    if saved:
        hlog(f"syntaxgym local engine: dequantised {gguf} to {folder} a tensor at a time in "
             f"{time.time() - started:.1f}s")
        return "written"
    return "found" if folder.is_dir() else None


def _save_dequantised(model, tokenizer, folder: Path) -> bool:
    """Save a dequantised GGUF model as safetensors with its manifest; returns whether it was
    saved (a failure only costs the next load time)."""

    def write(temporary: Path) -> None:
        # The weights are plain tensors now, but transformers still marks the model as GGUF-
        # quantised and refuses to save it: save with the marks taken off, then put them back.
        quantizer = getattr(model, "hf_quantizer", None)
        config_quantization = model.config.__dict__.pop("quantization_config", None)
        model.hf_quantizer = None
        try:
            model.save_pretrained(temporary)
        finally:
            model.hf_quantizer = quantizer
            if config_quantization is not None:
                model.config.quantization_config = config_quantization
        tokenizer.save_pretrained(temporary)

    try:
        if save_folder(folder, write):
            hlog(f"syntaxgym local engine: saved the dequantised weights to {folder}")
            return True
    except Exception as exc:  # noqa: BLE001 - caching is an optimisation
        hwarn(f"syntaxgym local engine: could not save the dequantised weights to {folder}: {exc}")
    return False
