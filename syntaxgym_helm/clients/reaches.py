"""Every place the plugin reaches into the internals of torch, transformers, gguf or the C library,
in one register (as :mod:`syntaxgym_helm.helm_compat` is for HELM's), and the one switch that
turns them all off.

Each :class:`Reach` says what it touches, why, what it gains on a whole process (the
BENCHMARKS.md section that measured it), the versions it was checked on, and its probe: what is
checked at run time before it is used. A reach whose probe fails is not used: the plugin scores
with the stock path instead (transformers' own forwards and loaders, torch's default kernels), with
one warning naming the reach and what failed. Nothing here changes state outside the model being
scored: no environment variable, allocator setting or other process-wide switch (``malloc_trim``
hands back pages already freed, once a model is released; it sets nothing).

**The switch.** ``stock: true`` among a local client's arguments (the causal engine's
:class:`~.local.engine_settings.EngineSettings`, the masked and encoder-decoder clients'
:class:`~.batch_settings.BatchScoringSettings`) turns every reach off for that model, and
``SYNTAXGYM_STOCK=1`` in the environment for every model of the process; ``SYNTAXGYM_STOCK`` may
instead name reaches, comma-separated, to turn only those off (``benchmarks/bench_reaches.py``
measures each reach so). ``tests/clients/test_stock_paths.py`` checks that stock and fast paths
give the same scores for every kind of model; ``tests/clients/test_reaches.py`` checks the
register itself (every probe passes on the installed versions, a module that reaches into
another library's internals is registered, the switch turns everything off).
"""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

#: The environment variable of the switch (see the module doc).
STOCK_VARIABLE = "SYNTAXGYM_STOCK"
_ALL = ("1", "true", "yes", "on", "all")
_NONE = ("", "0", "false", "no", "off")

#: BENCHMARKS.md's section of the reaches' interleaved A/B measurements.
MEASURED = "BENCHMARKS.md, \"Reaches into other libraries' internals: what each gains\""


class StockSettingError(ValueError):
    """``SYNTAXGYM_STOCK`` names no reach of the register (the message names it)."""


@dataclass(frozen=True)
class Reach:
    """One reliance on another library's internals: where, what, why, what it gains (whole
    process, measured), the versions it was checked on, and its probe (run at first use: the
    problems found, none where it may be used). ``at_load``: what is checked again on each model
    before the reach is used on it."""

    name: str
    used_by: tuple[str, ...]
    touches: str
    why: str
    gain: str
    checked_on: tuple[str, ...]
    probe: Callable[[], list[str]] | str
    at_load: str = ""

    def problems(self) -> list[str]:
        """What the probe finds (``probe``: a function, or ``"module:function"`` where the
        module that uses the reach knows what it needs)."""
        probe = self.probe
        if isinstance(probe, str):
            module, _, function = probe.partition(":")
            probe = getattr(importlib.import_module(module), function)
        return list(probe())


def missing_attributes(wanted: Mapping[str, Iterable[str]], *,
                       callables: bool = False) -> list[str]:
    """What the installed libraries lack of ``wanted`` (module name -> attribute names): each
    module that cannot be imported and each name it lacks (``callables``: or that is not
    callable), for a reach's probe."""
    found = []
    for module_name, names in wanted.items():
        try:
            module = importlib.import_module(module_name)
        except ImportError as error:
            found.append(f"{module_name} cannot be imported ({error})")
            continue
        found += [f"{module_name}.{name} is missing" for name in names
                  if not (callable(getattr(module, name, None)) if callables
                          else hasattr(module, name))]
    return found


def _no_problems() -> list[str]:
    return []


#: The releases each probe and the stock-against-fast tests passed on: ``make install``'s torch and
#: the supported ranges' ends, where ``make test-compat`` runs them (docs/install.md).
_CHECKED_ON = ("torch 2.8.0, 2.13.0 and 2.15.0", "transformers 5.23.0 and 5.24.0",
               "gguf 0.16.2 and 0.19.0", "glibc 2.36")

REACHES: dict[str, Reach] = {reach.name: reach for reach in (
    Reach("gguf_parse_once",
          ("syntaxgym_helm/clients/local/gguf_parsing.py",),
          "five attributes of gguf's and transformers' GGUF readers (gguf.GGUFReader, "
          "get_tensor_name_map; transformers' load_gguf_checkpoint, _gguf_parse_value, the "
          "reader's _mapped) replaced for the length of a load, under a lock; GGUFReader's "
          "private _get_field_parts and _get",
          "transformers parses a GGUF file afresh for the config, the tokenizer and the weights, "
          "element by element: a first load of a GGUF file parses it once, reading arrays in "
          "one walk",
          f"{MEASURED}, `causal-cold`: off, CPU +153% (SmolLM2's GGUF file, first load)",
          _CHECKED_ON[1:3],
          "syntaxgym_helm.clients.local.gguf_parsing:missing_names",
          "tests/clients/test_gguf_parsing.py compares every value with an unreplaced parse"),
    Reach("gguf_streamed_copy",
          ("syntaxgym_helm/clients/local/gguf_copy.py",),
          "transformers' GGUF loader's internals (TENSOR_PROCESSORS, TensorProcessor, "
          "get_gguf_hf_weights_map, read_field, load_gguf_checkpoint, "
          "core_model_loading.revert_weight_conversion, "
          "modeling_utils.remove_tied_weights_from_state_dict, the model's "
          "_keys_to_ignore_on_save); gguf.quants' per-type dequantize_rows; a safetensors "
          "file written by hand",
          "transformers' loader holds every dequantised tensor and the model's copy of it at "
          "once: the copy kept in the weights cache is written a tensor at a time instead",
          f"{MEASURED}, `causal-cold`: off, CPU +6.4%, peak memory +6.0% (SmolLM2's GGUF "
          "file, first load)", _CHECKED_ON[1:3],
          "syntaxgym_helm.clients.local.gguf_copy:missing_names",
          "a file whose tensors are not the model's, or whose saving would convert them, is "
          "loaded whole by transformers (tests/clients/test_gguf_copy.py: the same bytes as "
          "transformers' loader and save_pretrained)"),
    Reach("tokenizer_build_inputs",
          ("syntaxgym_helm/clients/local/freed_memory.py",),
          "the private _vocab and _merges attributes of transformers' tokenizers, set to None "
          "once the Rust tokenizer is built from them",
          "Gemma-3's 262,144 words and 514,906 merges are about 150 MB of Python objects that "
          "encoding and decoding never read",
          f"{MEASURED}, `gemma`: off, CPU +4.9%, peak memory +9.4% (Gemma-3 270M)",
          _CHECKED_ON[1:2], _no_problems,
          "only a tokenizer with a Rust tokenizer (backend_tokenizer) loses them"),
    Reach("malloc_trim",
          ("syntaxgym_helm/clients/local/freed_memory.py",
           "syntaxgym_helm/clients/local/server.py"),
          "glibc's malloc_trim(0), called through ctypes once a model is released "
          "(ModelServerFactory.release: a sweep run --in-process, between checkpoints)",
          "glibc keeps a released model's memory in its heaps, fragmented, so each checkpoint "
          "of a sweep would peak on top of what the one before left",
          f"{MEASURED}, `sweep` (--in-process): off, peak memory +7.7% (6 checkpoints of "
          "SmolLM2-135M; on one model's run, under 2% on every count)", _CHECKED_ON[3:],
          "syntaxgym_helm.clients.local.freed_memory:malloc_trim_problems"),
    Reach("masked_head_at_targets",
          ("syntaxgym_helm/clients/masked/pll.py",),
          "a forward pre-hook on a masked LM's output head (the model's first child after the "
          "base model: BERT's cls, RoBERTa's lm_head) that gives it one position per row",
          "a masked copy is scored at one position: the head's product over the vocabulary, "
          "the largest single cost of a small masked LM, is computed there only",
          f"{MEASURED}, `masked`: off, CPU +43%, page faults x5.7, peak memory +18% (a "
          "RoBERTa-base-sized model on 100 BLiMP pairs)", _CHECKED_ON[:2], _no_problems,
          "on each model: the logits at the targets against transformers' full logits on two "
          "masked copies (1e-4); a model that differs or whose head is not found keeps its "
          "forward"),
)}


def names() -> tuple[str, ...]:
    return tuple(REACHES)


def stocked_by_environment() -> frozenset[str]:
    """The reaches ``SYNTAXGYM_STOCK`` turns off (see the module doc)."""
    value = os.environ.get(STOCK_VARIABLE, "").strip()
    if value.lower() in _NONE:
        return frozenset()
    if value.lower() in _ALL:
        return frozenset(REACHES)
    named = frozenset(part.strip() for part in value.split(",") if part.strip())
    unknown = sorted(named - set(REACHES))
    if unknown:
        raise StockSettingError(
            f"{STOCK_VARIABLE}={value!r}: {', '.join(unknown)} is not a reach of "
            f"syntaxgym_helm/clients/reaches.py; give 1 (all of them off) or names among "
            f"{', '.join(REACHES)}")
    return named


_PROBED: dict[str, list[str]] = {}
_WARNED: set[str] = set()
_LOCK = threading.Lock()


def problems(name: str) -> list[str]:
    """What reach ``name``'s probe finds on the installed libraries (probed once a process)."""
    with _LOCK:
        if name not in _PROBED:
            try:
                _PROBED[name] = REACHES[name].problems()
            except Exception as error:  # noqa: BLE001 - a probe that fails is a problem found
                _PROBED[name] = [f"its probe failed ({type(error).__name__}: {error})"]
        return list(_PROBED[name])


def active(name: str, stock: bool = False) -> bool:
    """Whether reach ``name`` is used: not turned off (``stock``, the client's setting, or
    ``SYNTAXGYM_STOCK``) and its probe passes. A failed probe is warned about once, naming the
    reach, what failed and the versions it was checked on."""
    if name not in REACHES:
        raise KeyError(f"{name!r} is not a reach of syntaxgym_helm/clients/reaches.py")
    if stock or name in stocked_by_environment():
        return False
    found = problems(name)
    if found and name not in _WARNED:
        _WARNED.add(name)
        from helm.common.hierarchical_logger import hwarn

        reach = REACHES[name]
        hwarn(f"syntaxgym-helm: {'; '.join(found)}: scoring with the stock path instead of "
              f"{name} ({', '.join(reach.used_by)}; checked on {', '.join(reach.checked_on)})")
    return not found
