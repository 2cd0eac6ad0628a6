"""A fast local HELM client that scores prompts with a Hugging Face causal LM.

``SyntaxGymClient`` answers the requests SyntaxGym (and any perplexity-style run) sends: echo the
prompt, generate nothing (``echo_prompt=True, max_tokens=0``), and report each prompt token's
logprob. It differs from HELM's ``HuggingFaceClient`` in four ways:

1. **The first token gets a context.** It puts the model's beginning-of-text token before the
   prompt, returns it as the first token (logprob 0.0, never part of the prompt) and then every
   prompt token with its real logprob given the beginning-of-text token and the tokens before it.
2. **Token texts are exact.** Each token's text is the slice of the prompt its characters come
   from (the tokenizer's offsets; a leading space belongs to the token after it), so the texts
   after the first concatenate to exactly the prompt.
3. **Batches.** Requests from HELM's worker threads are gathered by one scoring thread into
   batches (:class:`ScoringService`). Before HELM executes a run, the plugin hands the client all
   of the run's requests (:mod:`syntaxgym_helm.prefetch`), so batches are as large as configured
   whatever ``--num-threads`` is; without that, a batch closes as soon as every HELM thread waits.
4. **Prefix sharing.** The prompts of a batch are packed as a prefix tree (:mod:`.prefix_trie`):
   each distinct prefix is one position, seen by its descendants only through a tree-shaped 4D
   attention mask with explicit position ids; prefixes computed in earlier batches (the same
   item's other conditions, the next suite's identical beginnings) are not recomputed but read
   from a store of their keys and values (``prefix_cache_mb``). Cost follows distinct prefixes,
   not tokens. The results equal one-prompt-at-a-time scoring up to float rounding (checked on
   every model load; a model that ignores custom masks, position ids or past keys and values, or
   post-processes its logits, falls back to plain padded batches).

Identical prompts are scored once: HELM's cache (sqlite) serves repeats across runs, and a prompt
already queued or recently scored is not scored again. Requests it cannot serve (generation,
several completions, chat messages, an empty or over-long prompt) fail with a clear error that
HELM records as a non-fatal, non-retried failure, so the run goes on and the metric reports it.

GGUF checkpoints are dequantised once and kept as safetensors in a cache folder (see
:func:`default_weights_cache_dir`), which makes later loads take a second instead of many.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
import time
from collections import Counter, OrderedDict
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import torch
from transformers import DynamicCache

from helm.clients.client import CachingClient
from helm.common.cache import CacheConfig, KeyValueStoreCacheConfig, create_key_value_store
from helm.common.hierarchical_logger import hexception, hlog, hwarn
from helm.common.request import (
    ErrorFlags,
    GeneratedOutput,
    Request,
    RequestResult,
    Token,
    wrap_request_time,
)

from syntaxgym_helm.prefix_trie import (
    ROOT,
    PackedRow,
    PrefixIndex,
    attention_allowed,
    plan_passes,
)

__all__ = [
    "PromptError",
    "PrefixScorer",
    "ScoredPrompt",
    "ScoringService",
    "SyntaxGymClient",
    "default_weights_cache_dir",
    "load_model_and_tokenizer",
]

CACHE_FORMAT = "syntaxgym-echo-logprobs-v1"
"""Part of every cache key: bump when the scoring or the stored response changes."""

DTYPES = {"float32": torch.float32, "float": torch.float32, "bfloat16": torch.bfloat16,
          "float16": torch.float16, "half": torch.float16}


class PromptError(ValueError):
    """A request this client cannot serve (its fault, not the model's): reported, not retried."""


@dataclass(frozen=True)
class ScoredPrompt:
    """A prompt's tokens, beginning-of-text token first, and their logprobs (nats)."""

    prompt: str
    texts: tuple[str, ...]
    logprobs: tuple[float, ...]


@dataclass(frozen=True)
class _Encoded:
    prompt: str
    ids: tuple[int, ...]  # beginning-of-text id first
    texts: tuple[str, ...]  # beginning-of-text text first


# ------------------------------------------------------------------------------------------------
# Loading
# ------------------------------------------------------------------------------------------------

def resolve_device(device: str | None) -> str:
    """``auto`` (or None): ``cuda`` when available, else ``cpu``; anything else as given."""
    if device in (None, "", "auto"):
        return "cuda" if torch.cuda.is_available() else "cpu"
    return device


def resolve_dtype(dtype: str | torch.dtype) -> torch.dtype:
    if isinstance(dtype, torch.dtype):
        return dtype
    name = dtype[len("torch."):] if dtype.startswith("torch.") else dtype
    if name not in DTYPES:
        raise ValueError(f"dtype {dtype!r} is not one of {', '.join(DTYPES)}")
    return DTYPES[name]


def default_weights_cache_dir() -> Path:
    """Where dequantised GGUF weights go: ``$SYNTAXGYM_HELM_CACHE/weights``, else
    ``$XDG_CACHE_HOME/syntaxgym_helm/weights``, else ``~/.cache/syntaxgym_helm/weights``."""
    if os.environ.get("SYNTAXGYM_HELM_CACHE"):
        return Path(os.environ["SYNTAXGYM_HELM_CACHE"]) / "weights"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "syntaxgym_helm" / "weights"


def _gguf_cache_folder(root: Path, pretrained: str, gguf_file: str, revision: str | None,
                       dtype: torch.dtype) -> Path:
    import transformers

    source = Path(pretrained) / gguf_file
    identity = [str(pretrained), gguf_file, str(revision), str(dtype), transformers.__version__]
    if source.is_file():
        stat = source.stat()
        identity += [str(source.resolve()), str(stat.st_size), str(stat.st_mtime_ns)]
    digest = hashlib.sha256("\0".join(identity).encode()).hexdigest()[:16]
    return root / f"{Path(gguf_file).stem}-{str(dtype).replace('torch.', '')}-{digest}"


_COMPLETE = "syntaxgym-complete"


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
):
    """Load a causal LM and its tokenizer (hub name, folder, or GGUF file in a folder).

    A GGUF checkpoint is dequantised to ``dtype`` once and saved as safetensors (with its
    tokenizer) under ``weights_cache_dir`` (default :func:`default_weights_cache_dir`; ``none``
    turns this off); later loads read that copy.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch_dtype = resolve_dtype(dtype)
    device = resolve_device(device)
    common: dict[str, Any] = {"trust_remote_code": trust_remote_code}
    if revision:
        common["revision"] = revision
    extra = dict(model_kwargs or {})
    source: str = pretrained_model_name_or_path
    source_kwargs: dict[str, Any] = dict(common)
    cache_folder: Path | None = None
    if gguf_file:
        source_kwargs["gguf_file"] = gguf_file
        if weights_cache_dir is None or weights_cache_dir.strip().lower() not in ("none", "off"):
            root = Path(weights_cache_dir) if weights_cache_dir else default_weights_cache_dir()
            cache_folder = _gguf_cache_folder(root, pretrained_model_name_or_path, gguf_file,
                                              revision, torch_dtype)
            if (cache_folder / _COMPLETE).is_file():
                source, source_kwargs = str(cache_folder), {"trust_remote_code": trust_remote_code}
                cache_folder = None  # nothing to write
    started = time.time()
    tokenizer = AutoTokenizer.from_pretrained(source, **source_kwargs)
    model = AutoModelForCausalLM.from_pretrained(source, dtype=torch_dtype, **source_kwargs,
                                                 **extra)
    hlog(f"SyntaxGymClient: loaded {pretrained_model_name_or_path}"
         f"{' / ' + gguf_file if gguf_file else ''} from {source} in {time.time() - started:.1f}s")
    if cache_folder is not None:
        _save_dequantised(model, tokenizer, cache_folder)
    model.to(device)
    model.eval()
    return model, tokenizer


def _save_dequantised(model, tokenizer, folder: Path) -> None:
    """Save a dequantised GGUF model as safetensors; a failure only costs the next load time."""
    temporary: Path | None = None
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        temporary = Path(tempfile.mkdtemp(prefix=folder.name + ".", dir=folder.parent))
        temporary.chmod(0o755)
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
        (temporary / _COMPLETE).write_text("ok\n")
        try:
            os.replace(temporary, folder)
            temporary = None
            hlog(f"SyntaxGymClient: saved the dequantised weights to {folder}")
        except OSError:
            pass  # another process saved them first
    except Exception as exc:  # noqa: BLE001 - caching is an optimisation
        hwarn(f"SyntaxGymClient: could not save the dequantised weights to {folder}: {exc}")
    finally:
        if temporary is not None:
            shutil.rmtree(temporary, ignore_errors=True)


# ------------------------------------------------------------------------------------------------
# Scoring (synchronous, one caller at a time)
# ------------------------------------------------------------------------------------------------

PROBE_PROMPTS = (
    "The keys to the cabinet are on the table.",
    "The keys to the cabinet is on the table.",
    "The author that the guards like laughs.",
    "The author that the guards like laugh.",
    "No",
)


class _PrefixStore:
    """Stored prefixes: the index, and per slot each layer's key and value, the final hidden
    state (what the output layer turns into logits) and the log of the softmax's normaliser over
    the vocabulary (so that a stored prefix scores a token with one dot product)."""

    def __init__(self, index: PrefixIndex, keys: list[torch.Tensor], values: list[torch.Tensor],
                 hidden: torch.Tensor) -> None:
        self.index = index
        self.keys = keys
        self.values = values
        self.hidden = hidden
        self.normaliser = torch.empty(index.capacity, dtype=torch.float32, device=hidden.device)

    @classmethod
    def sized(cls, layer_shapes: list[tuple[int, int]], hidden_size: int, budget_bytes: int,
              dtype: torch.dtype, device: torch.device) -> "_PrefixStore":
        """As many slots as ``budget_bytes`` holds; ``layer_shapes``: (kv heads, head dim)."""
        element = torch.empty((), dtype=dtype).element_size()
        per_slot = element * (hidden_size + sum(2 * heads * dim for heads, dim in layer_shapes))
        per_slot += 4  # the normaliser
        capacity = max(0, int(budget_bytes) // per_slot)
        def slots(heads: int, dim: int) -> torch.Tensor:
            return torch.empty(capacity, heads, dim, dtype=dtype, device=device)

        return cls(PrefixIndex(capacity), [slots(h, d) for h, d in layer_shapes],
                   [slots(h, d) for h, d in layer_shapes],
                   torch.empty(capacity, hidden_size, dtype=dtype, device=device))


class PrefixScorer:
    """Scores prompts with a loaded model: beginning-of-text token + prompt, one logprob each.

    With ``prefix_sharing`` (default), each forward pass packs its prompts' distinct prefixes as
    trees (:mod:`syntaxgym_helm.prefix_trie`), and prefixes computed in earlier passes are reused
    from a store of their keys and values (``prefix_cache_mb`` of memory; 0: no reuse across
    passes). Limits of one forward pass: ``batch_size`` prompts and ``max_batch_positions``
    positions (padding included), in rows of at most ``max_row_nodes`` positions (default: one
    row, so no padding; attention then costs the square of the row's length). Calls are
    serialised by a lock.
    """

    HEAD_CHUNK = 512  # rows of hidden states turned into logits at once (bounds memory)

    def __init__(
        self,
        model,
        tokenizer,
        *,
        bos_text: str | None = None,
        batch_size: int = 128,
        prefix_sharing: bool = True,
        prefix_cache_mb: float = 256,
        max_batch_positions: int = 512,
        max_row_nodes: int | None = None,
        max_sequence_length: int | None = None,
        check_prefix_sharing: bool = True,
    ) -> None:
        max_row_nodes = max_row_nodes or max_batch_positions
        if batch_size < 1 or max_row_nodes < 1 or max_batch_positions < 1:
            raise ValueError("batch_size, max_row_nodes and max_batch_positions must be positive")
        self.model = model
        self.tokenizer = tokenizer
        self.batch_size = batch_size
        self.max_row_nodes = max_row_nodes
        self.max_batch_positions = max_batch_positions
        self.device = next(model.parameters()).device
        self.dtype = next(model.parameters()).dtype
        self.bos_text, self.bos_id = self._beginning_of_text(bos_text)
        self.max_length = max_sequence_length or self._model_max_length()
        self.counts: Counter[str] = Counter()
        """Totals of ``prompts``, ``tokens`` (with the beginning-of-text token), ``positions``
        (computed, padding included), ``reused`` (positions served by the store) and forward
        ``passes``, over :meth:`score_encoded` calls."""
        self._lock = threading.Lock()
        self._store: _PrefixStore | None = None
        self.prefix_sharing = False
        if prefix_sharing:
            self.prefix_sharing = self._set_up_prefix_sharing(prefix_cache_mb,
                                                              check_prefix_sharing)
            self.counts.clear()

    # -- setup ----------------------------------------------------------------------------------

    def _beginning_of_text(self, bos_text: str | None) -> tuple[str, int]:
        tokenizer = self.tokenizer
        text = bos_text or tokenizer.bos_token or tokenizer.eos_token
        if not text:
            raise ValueError("the tokenizer has no beginning-of-text (bos) or end-of-text token; "
                             "pass bos_text")
        token_id = tokenizer.convert_tokens_to_ids(text)
        if not isinstance(token_id, int) or (
                token_id == tokenizer.unk_token_id and text != tokenizer.unk_token):
            raise ValueError(f"bos_text {text!r} is not a single token of the tokenizer")
        return text, token_id

    def _model_max_length(self) -> int:
        config = self.model.config
        for name in ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length"):
            value = getattr(config, name, None)
            if isinstance(value, int) and value > 0:
                return value
        value = getattr(self.tokenizer, "model_max_length", None)
        if isinstance(value, int) and 0 < value < 10**8:
            return value
        return 2048

    def _set_up_prefix_sharing(self, cache_mb: float, check: bool) -> bool:
        """Find the model's parts and key/value shapes, then score probe prompts with prefix
        sharing (small store, several passes, evictions) and without: a model that ignores
        custom 4D masks, explicit position ids or past keys/values, or post-processes its logits,
        disagrees and gets plain batches instead."""
        try:
            self.base = self.model.base_model
            self.head = self.model.get_output_embeddings()
            if (self.head is None or self.base is self.model
                    or not isinstance(getattr(self.head, "weight", None), torch.Tensor)):
                raise ValueError("no separate linear output layer")
            with torch.inference_mode():
                out = self.base(input_ids=torch.tensor([[self.bos_id] * 2], device=self.device),
                                use_cache=True)
            shapes = [(layer.keys.shape[1], layer.keys.shape[3])
                      for layer in out.past_key_values.layers]
            hidden_size = out.last_hidden_state.shape[-1]

            def store(budget: float) -> _PrefixStore:
                return _PrefixStore.sized(shapes, hidden_size, int(budget), self.dtype,
                                          self.device)

            if check:
                encoded = [self.encode(prompt) for prompt in PROBE_PROMPTS]
                plain = self._score_plain(encoded)
                slots_per_mb = store(2**20).hidden.shape[0]
                scratch = store(2**20 * 12 / max(slots_per_mb, 1))  # 12 slots: evictions happen
                saved = self.batch_size
                worst = 0.0
                try:
                    self.batch_size = 2  # several passes: later ones reuse stored prefixes
                    for _ in range(2):
                        shared = self._score_shared(encoded, scratch)
                        worst = max(worst, max(abs(a - b) for x, y in zip(shared, plain)
                                               for a, b in zip(x, y)))
                finally:
                    self.batch_size = saved
                tolerance = 1e-3 if self.dtype == torch.float32 else 5e-2
                if worst > tolerance:
                    raise ValueError(f"its logprobs differ by up to {worst:.3g} nats from plain "
                                     "scoring")
            self._store = store(cache_mb * 2**20)
            return True
        except Exception as exc:  # noqa: BLE001
            hwarn(f"SyntaxGymClient: prefix sharing is off for this model, which is scored in "
                  f"plain batches ({type(exc).__name__}: {exc})")
            return False

    # -- tokens ---------------------------------------------------------------------------------

    def encode(self, prompt: str) -> _Encoded:
        """Token ids (beginning-of-text first) and exact token texts; PromptError when unusable."""
        encoded = self.encode_many([prompt])[0]
        if isinstance(encoded, PromptError):
            raise encoded
        return encoded

    def encode_many(self, prompts: Sequence[str]) -> list[_Encoded | PromptError]:
        results: list[_Encoded | PromptError] = []
        usable = [i for i, p in enumerate(prompts) if p]
        encodings: dict[int, tuple[list[int], list[str]]] = {}
        if usable and getattr(self.tokenizer, "is_fast", False):
            batch = self.tokenizer([prompts[i] for i in usable], add_special_tokens=False,
                                   return_offsets_mapping=True)
            for k, i in enumerate(usable):
                ids = list(batch["input_ids"][k])
                encodings[i] = (ids, _texts_from_offsets(prompts[i], batch["offset_mapping"][k]))
        else:
            for i in usable:
                ids = self.tokenizer(prompts[i], add_special_tokens=False)["input_ids"]
                encodings[i] = (list(ids), self._texts_by_decoding(prompts[i], ids))
        for i, prompt in enumerate(prompts):
            if i not in encodings:
                results.append(PromptError("the prompt is empty: there is nothing to score"))
                continue
            ids, texts = encodings[i]
            if not ids:
                results.append(PromptError(f"the prompt {prompt!r} has no tokens"))
            elif "".join(texts) != prompt:
                results.append(PromptError(f"the tokenizer's tokens of {prompt!r} do not cover "
                                           f"it exactly: {texts!r}"))
            elif len(ids) + 1 > self.max_length:
                results.append(PromptError(
                    f"the prompt is {len(ids)} tokens long; with the beginning-of-text token that "
                    f"exceeds the model's context of {self.max_length} tokens"))
            else:
                results.append(_Encoded(prompt, (self.bos_id, *ids), (self.bos_text, *texts)))
        return results

    def _texts_by_decoding(self, prompt: str, ids: Sequence[int]) -> list[str]:
        texts: list[str] = []
        previous = ""
        for end in range(1, len(ids) + 1):
            decoded = self.tokenizer.decode(ids[:end])
            texts.append(decoded[len(previous):] if decoded.startswith(previous) else decoded)
            previous = decoded
        return texts

    # -- scoring --------------------------------------------------------------------------------

    def score(self, prompts: Sequence[str]) -> list[ScoredPrompt]:
        """Score ``prompts`` (raises PromptError for the first unusable one)."""
        encoded = self.encode_many(prompts)
        for item in encoded:
            if isinstance(item, PromptError):
                raise item
        usable: list[_Encoded] = encoded  # type: ignore[assignment]
        logprobs = self.score_encoded(usable)
        return [ScoredPrompt(e.prompt, e.texts, tuple(lp)) for e, lp in zip(usable, logprobs)]

    def score_encoded(
        self,
        encoded: Sequence[_Encoded],
        on_batch: Callable[[list[int], list[list[float]]], None] | None = None,
    ) -> list[list[float]]:
        """Logprobs of each encoded prompt's tokens (0.0 first, for the beginning-of-text token).

        ``on_batch(indices, logprobs)`` is called after each forward pass with what it scored.
        """
        with self._lock:
            if self.prefix_sharing:
                assert self._store is not None
                return self._score_shared(encoded, self._store, on_batch)
            results: list[list[float]] = [[] for _ in encoded]
            for indices in self._plain_passes(encoded):
                scored = self._score_plain([encoded[i] for i in indices])
                for i, logprobs in zip(indices, scored):
                    results[i] = logprobs
                if on_batch is not None:
                    on_batch(indices, scored)
            return results

    def _plain_passes(self, encoded: Sequence[_Encoded]) -> list[list[int]]:
        """Prompt indices of each plain forward pass: sorted by length, then chunked."""
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i].ids))
        passes: list[list[int]] = []
        current: list[int] = []
        for i in order:
            length = len(encoded[i].ids)
            if current and (len(current) >= self.batch_size
                            or (len(current) + 1) * length > self.max_batch_positions):
                passes.append(current)
                current = []
            current.append(i)
        if current:
            passes.append(current)
        return passes

    @torch.inference_mode()
    def _score_plain(self, encoded: Sequence[_Encoded]) -> list[list[float]]:
        """One forward pass of the whole model over ``encoded`` as right-padded rows."""
        length = max(len(e.ids) for e in encoded)
        input_ids = torch.full((len(encoded), length), self.bos_id, dtype=torch.long)
        attention = torch.zeros(len(encoded), length, dtype=torch.long)
        for b, item in enumerate(encoded):
            input_ids[b, : len(item.ids)] = torch.tensor(item.ids)
            attention[b, : len(item.ids)] = 1
        logits = self.model(input_ids=input_ids.to(self.device),
                            attention_mask=attention.to(self.device), use_cache=False).logits
        self.counts.update(prompts=len(encoded), tokens=sum(len(e.ids) for e in encoded),
                           positions=len(encoded) * length, passes=1)
        flat = logits.reshape(-1, logits.shape[-1])
        sources = [b * length + j for b, item in enumerate(encoded)
                   for j in range(len(item.ids) - 1)]
        targets = [t for item in encoded for t in item.ids[1:]]
        values = self._logprobs_from_logits(flat, sources, targets)
        return self._split(encoded, values)

    @staticmethod
    def _split(encoded: Sequence[_Encoded], values: list[float]) -> list[list[float]]:
        results, start = [], 0
        for item in encoded:
            count = len(item.ids) - 1
            results.append([0.0] + values[start: start + count])
            start += count
        return results

    @staticmethod
    def _logprobs_from_logits(logits: torch.Tensor, sources: list[int],
                              targets: list[int]) -> list[float]:
        nodes = torch.tensor(sources, device=logits.device)
        unique, inverse = torch.unique(nodes, return_inverse=True)
        normaliser = torch.logsumexp(logits[unique].float(), dim=-1)[inverse]
        chosen = logits[nodes, torch.tensor(targets, device=logits.device)].float()
        return (chosen - normaliser).tolist()

    @torch.inference_mode()
    def _score_shared(self, encoded: Sequence[_Encoded], store: _PrefixStore,
                      on_batch: Callable[[list[int], list[list[float]]], None] | None = None,
                      ) -> list[list[float]]:
        results: list[list[float]] = [[] for _ in encoded]
        # One row per pass (the default) with a store: keep the order prompts came in, so that
        # HELM's threads get their answers pass by pass; several rows: sort, to share rows.
        sort = self.max_row_nodes < self.max_batch_positions or not store.index.capacity
        for builder in plan_passes([e.ids for e in encoded], store.index, self.max_row_nodes,
                                   self.max_batch_positions, self.batch_size, sort=sort):
            scored = self._run_pass(builder.rows, encoded, store)
            for index, logprobs in scored.items():
                results[index] = logprobs
            if on_batch is not None:
                indices = list(scored)
                on_batch(indices, [scored[i] for i in indices])
        return results

    def _run_pass(self, rows: list[PackedRow], encoded: Sequence[_Encoded],
                  store: _PrefixStore) -> dict[int, list[float]]:
        """One forward pass over the rows' new nodes; the logprobs of the rows' sequences."""
        rows = [row for row in rows if row.members]
        compute = [row for row in rows if len(row)]
        index = store.index
        hidden = kv = None
        length = past_length = 0
        if compute:
            length = max(len(row) for row in compute)
            past_length = max(len(row.past) for row in compute)
            input_ids = torch.zeros(len(compute), length, dtype=torch.long)
            positions = torch.zeros(len(compute), length, dtype=torch.long)
            for b, row in enumerate(compute):
                input_ids[b, : len(row)] = torch.tensor(row.tokens)
                positions[b, : len(row)] = torch.tensor(row.depths)
            allowed = torch.from_numpy(attention_allowed(compute, length, past_length, index))
            mask = torch.zeros(allowed.shape, dtype=self.dtype)
            mask.masked_fill_(~allowed, torch.finfo(self.dtype).min)
            past = None
            if past_length:
                slots = torch.zeros(len(compute), past_length, dtype=torch.long)
                for b, row in enumerate(compute):
                    if row.past:
                        slots[b, : len(row.past)] = torch.tensor(list(row.past))
                slots = slots.to(self.device)
                past = DynamicCache(ddp_cache_data=[
                    (keys[slots].transpose(1, 2), values[slots].transpose(1, 2))
                    for keys, values in zip(store.keys, store.values)], config=self.model.config)
            out = self.base(input_ids=input_ids.to(self.device),
                            attention_mask=mask[:, None].to(self.device),
                            position_ids=positions.to(self.device), past_key_values=past,
                            use_cache=True)
            hidden, kv = out.last_hidden_state, out.past_key_values
            self.counts.update(positions=len(compute) * length, passes=1)
        # Outputs: of new nodes from this pass's hidden states (all of the vocabulary's logits:
        # the softmax's normaliser), of stored ones from the store (one logit each).
        batch_of = {id(row): b for b, row in enumerate(compute)}
        new_rows: dict[int, int] = {}
        new_at: list[int] = []  # (output index, hidden row, target)
        new_source: list[int] = []
        new_target: list[int] = []
        stored_at: list[int] = []
        stored_slot: list[int] = []
        stored_target: list[int] = []
        count = 0
        for row in rows:
            for sequence, refs in row.members:
                for (is_new, where), target in zip(refs, encoded[sequence].ids[1:]):
                    if is_new:
                        key = batch_of[id(row)] * length + where
                        new_at.append(count)
                        new_source.append(new_rows.setdefault(key, len(new_rows)))
                        new_target.append(target)
                    else:
                        stored_at.append(count)
                        stored_slot.append(where)
                        stored_target.append(target)
                    count += 1
        values = torch.empty(count, dtype=torch.float32)
        normaliser = None
        if new_rows:
            assert hidden is not None
            new_hidden = hidden.reshape(-1, hidden.shape[-1])[
                torch.tensor(list(new_rows), device=self.device)]
            scored, normaliser = self._head_logprobs(new_hidden, new_source, new_target)
            values[new_at] = scored
        if stored_slot:
            values[stored_at] = self._stored_logprobs(store, stored_slot, stored_target)
            self.counts["reused"] += len(set(stored_slot))
        if compute and index.capacity:
            self._store_nodes(compute, kv, hidden, past_length, store, new_rows, normaliser)
        flat = values.tolist()
        results: dict[int, list[float]] = {}
        start = 0
        for row in rows:
            for sequence, refs in row.members:
                results[sequence] = [0.0] + flat[start: start + len(refs)]
                start += len(refs)
        self.counts.update(prompts=len(results),
                           tokens=sum(len(encoded[i].ids) for i in results))
        return results

    def _head_logprobs(self, hidden: torch.Tensor, sources: list[int],
                       targets: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
        """Logprob of ``targets[k]`` after the hidden state ``hidden[sources[k]]``, computing
        the logits a chunk of rows at a time; and each row's log normaliser (float32)."""
        source = torch.tensor(sources)
        target = torch.tensor(targets)
        values = torch.empty(len(sources), dtype=torch.float32)
        normalisers = torch.empty(hidden.shape[0], dtype=torch.float32, device=hidden.device)
        for start in range(0, hidden.shape[0], self.HEAD_CHUNK):
            logits = self.head(hidden[start: start + self.HEAD_CHUNK]).float()
            normaliser = torch.logsumexp(logits, dim=-1)
            normalisers[start: start + logits.shape[0]] = normaliser
            chosen = ((source >= start) & (source < start + logits.shape[0])).nonzero().flatten()
            if len(chosen):
                rows = (source[chosen] - start).to(logits.device)
                values[chosen] = (logits[rows, target[chosen].to(logits.device)]
                                  - normaliser[rows]).cpu()
        return values, normalisers

    def _stored_logprobs(self, store: _PrefixStore, slots: list[int],
                         targets: list[int]) -> torch.Tensor:
        """Logprob of ``targets[k]`` after the stored prefix ``slots[k]``: its logit (a dot
        product with the output layer's row for the token) less the stored normaliser."""
        slot = torch.tensor(slots, device=self.device)
        target = torch.tensor(targets, device=self.device)
        weight = self.head.weight[target]
        logits = (store.hidden[slot].float() * weight.float()).sum(-1)
        bias = getattr(self.head, "bias", None)
        if bias is not None:
            logits = logits + bias[target].float()
        return (logits - store.normaliser[slot]).cpu()

    def _store_nodes(self, rows: list[PackedRow], kv, hidden: torch.Tensor, past_length: int,
                     store: _PrefixStore, output_rows: Mapping[int, int],
                     normaliser: torch.Tensor | None) -> None:
        """Keep the keys, values, final hidden states and normalisers of the pass's new nodes
        (``output_rows``: flat position in ``hidden`` -> row of ``normaliser``)."""
        index = store.index
        length = hidden.shape[1]
        fill_slots: list[int] = []
        fill_rows: list[int] = []
        fill_positions: list[int] = []
        fill_outputs: list[int] = []
        for b, row in enumerate(rows):
            slot_of: list[int | None] = [None] * len(row)
            for i in range(len(row)):
                parent = row.parents[i]
                parent_slot = slot_of[parent] if parent != ROOT else row.anchors[i]
                if parent_slot is None:
                    continue  # the parent could not be stored
                slot, fresh = index.insert(parent_slot, row.tokens[i], row.depths[i])
                slot_of[i] = slot
                if fresh:
                    fill_slots.append(slot)  # type: ignore[arg-type]
                    fill_rows.append(b)
                    fill_positions.append(i)
                    fill_outputs.append(output_rows[b * length + i])
        if not fill_slots:
            return
        slots = torch.tensor(fill_slots, device=self.device)
        batch = torch.tensor(fill_rows, device=self.device)
        position = torch.tensor(fill_positions, device=self.device)
        for layer, keys, values in zip(kv.layers, store.keys, store.values):
            keys[slots] = layer.keys[batch, :, past_length + position, :]
            values[slots] = layer.values[batch, :, past_length + position, :]
        store.hidden[slots] = hidden[batch, position]
        assert normaliser is not None
        store.normaliser[slots] = normaliser[torch.tensor(fill_outputs, device=self.device)]


def _texts_from_offsets(prompt: str, offsets: Iterable[tuple[int, int]]) -> list[str]:
    """Exact prompt slices, one per token: each token runs from the previous token's end to its
    own end (so a space the tokenizer leaves out of a token's span goes with the token after it),
    the last to the end of the prompt. Concatenated they give the prompt back."""
    ends: list[int] = []
    furthest = 0
    for _, end in offsets:
        furthest = max(furthest, min(int(end), len(prompt)))
        ends.append(furthest)
    if ends:
        ends[-1] = len(prompt)
    texts: list[str] = []
    start = 0
    for end in ends:
        texts.append(prompt[start:end])
        start = end
    return texts


# ------------------------------------------------------------------------------------------------
# Batching across threads
# ------------------------------------------------------------------------------------------------

class ScoringService:
    """One scoring thread per model that gathers prompts from any number of threads.

    :meth:`result` blocks until a prompt is scored. The scoring thread takes everything queued
    when either ``batch_size`` prompts wait, every thread that recently asked is waiting (HELM's
    threads cannot send more until answered), or ``max_wait_s`` passed since the oldest arrived.
    :meth:`reserve` queues prompts ahead of the requests that will ask for them (the results are
    kept until asked for). A prompt queued, being scored or scored lately is not scored again.
    """

    CALLER_TTL_S = 2.0
    LOG_ROUNDS_FROM = 64  # prompts: a summary line for rounds this large (a prefetched run)

    def __init__(self, scorer: PrefixScorer, *, max_wait_s: float = 0.02, progress: bool = True,
                 memo_size: int = 4096) -> None:
        self.scorer = scorer
        self.max_wait_s = max_wait_s
        self.progress = progress
        self.memo_size = memo_size
        self.prompts_scored = 0
        self.forward_passes = 0
        self._cond = threading.Condition()
        self._queue: list[str] = []
        self._pending: dict[str, Future] = {}
        self._reserved: Counter[str] = Counter()
        self._kept: dict[str, ScoredPrompt | PromptError] = {}  # reserved results not yet asked for
        self._memo: OrderedDict[str, ScoredPrompt | PromptError] = OrderedDict()
        self._waiting: set[threading.Thread] = set()
        self._callers: dict[threading.Thread, float] = {}
        self._bar = None
        self._thread = threading.Thread(target=self._run, name="syntaxgym-scorer", daemon=True)
        self._thread.start()

    # -- callers --------------------------------------------------------------------------------

    def result(self, prompt: str) -> ScoredPrompt:
        """The prompt's scores (blocking); raises PromptError when it cannot be scored."""
        me = threading.current_thread()
        with self._cond:
            self._callers[me] = time.monotonic()
            if self._reserved.get(prompt):
                self._reserved[prompt] -= 1
                if not self._reserved[prompt]:
                    del self._reserved[prompt]
                    kept = self._kept.pop(prompt, None)
                    if kept is not None:
                        self._remember(prompt, kept)
            found = self._kept.get(prompt)
            if found is None:
                found = self._memo.get(prompt)
                if found is not None:
                    self._memo.move_to_end(prompt)
            if found is None:
                future = self._submit(prompt)
                self._waiting.add(me)
                self._cond.notify_all()
        if found is None:
            try:
                found = future.result()
            finally:
                with self._cond:
                    self._waiting.discard(me)
                    self._callers[me] = time.monotonic()
        if isinstance(found, PromptError):
            raise PromptError(str(found))
        return found

    def reserve(self, prompts: Iterable[str]) -> int:
        """Queue ``prompts`` (with repeats: one per request to come) without waiting; returns how
        many distinct prompts were newly queued."""
        counts = Counter(prompts)
        with self._cond:
            # HELM executes one run at a time: what an earlier run reserved and never asked for
            # is released (kept in the ordinary memo).
            for prompt, result in self._kept.items():
                self._remember(prompt, result)
            self._kept.clear()
            self._reserved.clear()
            before = len(self._queue)
            for prompt, count in counts.items():
                self._reserved[prompt] += count
                done = self._memo.pop(prompt, None)
                if done is not None:
                    self._kept[prompt] = done
                elif prompt not in self._kept:
                    self._submit(prompt)
            self._cond.notify_all()
            return len(self._queue) - before

    def score_many(self, prompts: Sequence[str]) -> list[ScoredPrompt | PromptError]:
        """Score ``prompts`` through the service (for scripts and tests): errors are returned."""
        with self._cond:
            futures = [self._memo.get(p) or self._kept.get(p) or self._submit(p) for p in prompts]
            self._cond.notify_all()
        return [f.result() if isinstance(f, Future) else f for f in futures]

    def _submit(self, prompt: str) -> Future:
        future = self._pending.get(prompt)
        if future is None:
            future = Future()
            self._pending[prompt] = future
            self._queue.append(prompt)
        return future

    def _remember(self, prompt: str, result: ScoredPrompt | PromptError) -> None:
        self._memo[prompt] = result
        self._memo.move_to_end(prompt)
        while len(self._memo) > self.memo_size:
            self._memo.popitem(last=False)

    # -- scoring thread -------------------------------------------------------------------------

    def _all_callers_waiting(self) -> bool:
        if not self._waiting:
            return False
        now = time.monotonic()
        for thread, seen in list(self._callers.items()):
            if thread not in self._waiting and (not thread.is_alive()
                                                or now - seen > self.CALLER_TTL_S):
                del self._callers[thread]
        return len(self._waiting) >= len(self._callers)

    def _gather(self) -> list[str]:
        with self._cond:
            while not self._queue:
                self._cond.wait()
            deadline = time.monotonic() + self.max_wait_s
            while len(self._queue) < self.scorer.batch_size and not self._all_callers_waiting():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._cond.wait(remaining)
            prompts, self._queue = self._queue, []
            return prompts

    def _run(self) -> None:
        while True:
            prompts = self._gather()
            try:
                self._score_round(prompts)
            except BaseException as exc:  # noqa: BLE001 - hand every failure to the callers
                failure = RuntimeError(f"scoring failed: {type(exc).__name__}: {exc}")
                failure.__cause__ = exc
                with self._cond:
                    futures = [self._pending.pop(p) for p in prompts if p in self._pending]
                for future in futures:
                    if not future.done():
                        future.set_exception(failure)

    def _score_round(self, prompts: list[str]) -> None:
        bar = self._progress_bar(len(prompts))
        encoded = self.scorer.encode_many(prompts)
        errors = [(p, e) for p, e in zip(prompts, encoded) if isinstance(e, PromptError)]
        if errors:
            self._complete(errors)
        usable = [e for e in encoded if not isinstance(e, PromptError)]

        def done(indices: list[int], logprobs: list[list[float]]) -> None:
            self.forward_passes += 1
            self._complete([(usable[i].prompt, ScoredPrompt(usable[i].prompt, usable[i].texts,
                                                            tuple(lp)))
                            for i, lp in zip(indices, logprobs)])

        before, started = Counter(self.scorer.counts), time.time()
        if usable:
            self.scorer.score_encoded(usable, on_batch=done)
        if bar is not None and errors:
            bar.update(len(errors))
        if len(usable) >= self.LOG_ROUNDS_FROM:
            counts = self.scorer.counts - before
            hlog(f"SyntaxGymClient: scored {counts['prompts']} prompts ({counts['tokens']} "
                 f"tokens) computing {counts['positions']} positions in {counts['passes']} "
                 f"forward passes ({counts['reused']} earlier positions reused), "
                 f"{time.time() - started:.1f}s")

    def _complete(self, results: list[tuple[str, ScoredPrompt | PromptError]]) -> None:
        with self._cond:
            futures = []
            for prompt, result in results:
                if self._reserved.get(prompt):
                    self._kept[prompt] = result
                else:
                    self._remember(prompt, result)
                future = self._pending.pop(prompt, None)
                if future is not None:
                    futures.append((future, result))
            self.prompts_scored += len(results)
        for future, result in futures:
            future.set_result(result)
        if self._bar is not None:
            self._bar.update(sum(1 for _, r in results if isinstance(r, ScoredPrompt)))

    def _progress_bar(self, count: int):
        if not self.progress:
            return None
        if self._bar is None:
            from tqdm import tqdm

            # disable=None: shown on a terminal, silent when the output goes to a file.
            self._bar = tqdm(total=0, desc="SyntaxGym scoring", unit=" prompts", disable=None,
                             dynamic_ncols=True)
        self._bar.total += count
        self._bar.refresh()
        return self._bar


# ------------------------------------------------------------------------------------------------
# Process-wide sharing of loaded models and scoring services
# ------------------------------------------------------------------------------------------------

_LOCK = threading.Lock()
_MODELS: dict[tuple, tuple[Any, Any]] = {}
_SERVICES: dict[tuple, ScoringService] = {}


def _service_for(model_key: tuple, load: Callable[[], tuple[Any, Any]],
                 scorer_args: Mapping[str, Any], service_args: Mapping[str, Any]) -> ScoringService:
    key = (model_key, tuple(sorted(scorer_args.items())), tuple(sorted(service_args.items())))
    with _LOCK:
        service = _SERVICES.get(key)
        if service is None:
            if model_key not in _MODELS:
                _MODELS[model_key] = load()
            model, tokenizer = _MODELS[model_key]
            service = ScoringService(PrefixScorer(model, tokenizer, **scorer_args),
                                     **service_args)
            _SERVICES[key] = service
        return service


# ------------------------------------------------------------------------------------------------
# The HELM client
# ------------------------------------------------------------------------------------------------

def _failure(message: str, *, fatal: bool) -> RequestResult:
    return RequestResult(success=False, cached=False, error=message, completions=[],
                         embedding=[], error_flags=ErrorFlags(is_retriable=False,
                                                              is_fatal=fatal))


class SyntaxGymClient(CachingClient):
    """HELM client scoring echo requests (``echo_prompt=True, max_tokens=0``) locally.

    Args (the ``args`` of a model deployment's ``client_spec``):

    - ``pretrained_model_name_or_path``: hub name or local folder;
    - ``gguf_file``: a GGUF file in that folder or repository (dequantised to ``dtype``);
    - ``device``: ``auto`` (default: CUDA when available, else CPU), ``cpu``, ``cuda:0``...;
    - ``dtype``: ``float32`` (default), ``bfloat16`` or ``float16``;
    - ``batch_size``: most prompts in one forward pass (default 128: with prefix sharing a
      prompt adds only a few positions to a pass; plain batches are bounded by
      ``max_batch_positions`` first);
    - ``bos_text``: the beginning-of-text token put before each prompt (default: the
      tokenizer's bos token, else its eos token);
    - ``prefix_sharing``: pack prompts as prefix trees (default True);
    - ``prefix_cache_mb``: memory for keeping computed prefixes (keys/values) for later batches
      (default 256; 0: none);
    - ``max_batch_positions``: most positions in one forward pass (default 512);
    - ``max_row_nodes``: most positions of one prefix-tree row (default: ``max_batch_positions``,
      one row per pass);
    - ``max_wait_ms``: how long a batch waits for more requests (default 20);
    - ``prefetch``: take all of a run's requests before HELM sends them (default True);
    - ``progress``: a tqdm progress bar on a terminal (default True);
    - ``weights_cache_dir``: where dequantised GGUF weights are kept (``none``: nowhere);
    - ``max_sequence_length``: the context length (default: from the model config);
    - ``revision``, ``trust_remote_code``, ``model_kwargs``: passed to ``from_pretrained``.

    HELM passes ``cache_config`` (its request cache) and ``model_name`` itself.
    """

    def __init__(
        self,
        cache_config: CacheConfig,
        pretrained_model_name_or_path: str,
        gguf_file: str | None = None,
        device: str = "auto",
        dtype: str = "float32",
        batch_size: int = 128,
        bos_text: str | None = None,
        prefix_sharing: bool = True,
        prefix_cache_mb: float = 256,
        max_batch_positions: int = 512,
        max_row_nodes: int | None = None,
        max_wait_ms: float = 20.0,
        prefetch: bool = True,
        progress: bool = True,
        weights_cache_dir: str | None = None,
        max_sequence_length: int | None = None,
        revision: str | None = None,
        trust_remote_code: bool = False,
        model_kwargs: Mapping[str, Any] | None = None,
        model_name: str | None = None,
    ) -> None:
        super().__init__(cache_config=cache_config)
        resolve_dtype(dtype)  # fail early on a bad name
        self.pretrained_model_name_or_path = pretrained_model_name_or_path
        self.gguf_file = gguf_file
        self.device = resolve_device(device)
        self.dtype = str(dtype).replace("torch.", "")
        self.bos_text = bos_text
        self.prefetch_enabled = prefetch
        self.model_name = model_name
        self._model_key = (pretrained_model_name_or_path, gguf_file, revision, self.device,
                           self.dtype, trust_remote_code)
        self._load_args = dict(gguf_file=gguf_file, dtype=self.dtype, device=self.device,
                               revision=revision, trust_remote_code=trust_remote_code,
                               weights_cache_dir=weights_cache_dir, model_kwargs=model_kwargs)
        self._scorer_args = dict(bos_text=bos_text, batch_size=int(batch_size),
                                 prefix_sharing=bool(prefix_sharing),
                                 prefix_cache_mb=float(prefix_cache_mb),
                                 max_row_nodes=int(max_row_nodes) if max_row_nodes else None,
                                 max_batch_positions=int(max_batch_positions),
                                 max_sequence_length=max_sequence_length)
        self._service_args = dict(max_wait_s=float(max_wait_ms) / 1000.0, progress=bool(progress))
        self._service: ScoringService | None = None

    @property
    def service(self) -> ScoringService:
        """The scoring service (the model is loaded on first use)."""
        if self._service is None:
            self._service = _service_for(
                self._model_key,
                lambda: load_model_and_tokenizer(self.pretrained_model_name_or_path,
                                                 **self._load_args),
                self._scorer_args, self._service_args)
        return self._service

    # -- requests -------------------------------------------------------------------------------

    @staticmethod
    def unsupported(request: Request) -> str | None:
        """Why this client cannot serve ``request``; None when it can."""
        if request.embedding:
            return "embeddings are not supported"
        if request.messages or request.multimodal_prompt:
            return "only plain-text prompts are supported (no chat messages or media)"
        if not request.echo_prompt or request.max_tokens != 0:
            return (f"generation is not supported (echo_prompt={request.echo_prompt}, "
                    f"max_tokens={request.max_tokens}): this client only scores prompts, "
                    "which needs echo_prompt=True and max_tokens=0")
        if request.num_completions != 1:
            return f"num_completions={request.num_completions}: only 1 is supported"
        if not request.prompt:
            return "the prompt is empty: there is nothing to score"
        return None

    def _cache_key(self, request: Request) -> Mapping:
        raw = {"format": CACHE_FORMAT, "model": request.model, "prompt": request.prompt,
               "echo_prompt": True, "max_tokens": 0, "bos_text": self.bos_text,
               "dtype": self.dtype}
        return CachingClient.make_cache_key(raw, request)

    def make_request(self, request: Request) -> RequestResult:
        problem = self.unsupported(request)
        if problem:
            return _failure(f"SyntaxGymClient: {problem}", fatal=False)

        def compute() -> dict[str, Any]:
            scored = self.service.result(request.prompt)
            return {"tokens": list(scored.texts), "logprobs": list(scored.logprobs)}

        try:
            if self.cache is None:
                response, cached = wrap_request_time(compute)(), False
            else:
                response, cached = self.cache.get(self._cache_key(request),
                                                  wrap_request_time(compute))
        except PromptError as exc:
            return _failure(f"SyntaxGymClient: {exc}", fatal=False)
        except Exception as exc:  # noqa: BLE001 - a broken model should stop the run, clearly
            hexception(exc)
            return _failure(f"SyntaxGymClient error: {type(exc).__name__}: {exc}", fatal=True)
        tokens = [Token(text=text, logprob=logprob)
                  for text, logprob in zip(response["tokens"], response["logprobs"])]
        completion = GeneratedOutput(text="".join(response["tokens"]),
                                     logprob=sum(response["logprobs"]), tokens=tokens)
        return RequestResult(success=True, cached=cached, request_time=response["request_time"],
                             request_datetime=response.get("request_datetime"),
                             completions=[completion], embedding=[])

    def prefetch(self, requests: Sequence[Request]) -> int:
        """Queue the prompts of ``requests`` that the cache lacks, before HELM asks for them, so
        that they are scored in full batches; returns how many distinct prompts were queued."""
        wanted = [r for r in requests if self.unsupported(r) is None]
        if not wanted:
            return 0
        if self.cache is not None and isinstance(self.cache.config, KeyValueStoreCacheConfig):
            with create_key_value_store(self.cache.config) as store:
                wanted = [r for r in wanted if not store.contains(self._cache_key(r))]
        if not wanted:
            return 0
        queued = self.service.reserve(r.prompt for r in wanted)
        hlog(f"SyntaxGymClient: scoring {queued} distinct prompts of {len(wanted)} requests "
             "in batches")
        return queued
