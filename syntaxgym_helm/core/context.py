"""Context before an item: the sentences ``context=`` puts before every condition of an item.

Sinha et al. (2023, ACL, "Language model acceptability judgements are not always robust to
context") put acceptable or unacceptable sentences of the same phenomenon, or unrelated text,
before minimal pairs and saw accuracies move a lot. :class:`ContextSpec` says which context a run
uses; :func:`item_contexts` makes each item's:

- ``acceptable`` / ``unacceptable``: sentences of the suite's *other* items, each in a condition
  the suite's predictions expect to be better / worse (:mod:`syntaxgym_helm.core.context_polarity`);
  ``n`` distinct other items are drawn, then one such condition of each. The same seed draws the
  same items for both kinds, so the two contexts of an item differ only in their conditions;
- ``unrelated``: ``n`` sentences of a public-domain text shipped with the package
  (``syntaxgym_helm/data/context_unrelated.txt``: Aesop's fables, Townsend's translation; its
  header and ``scripts/make_unrelated_context.py`` give the source);
- a file path: ``n`` sentences of that UTF-8 text file, one per line (empty lines and lines that
  start with ``#`` are skipped).

Draws are without repetition; when ``n`` exceeds the pool, the pool is used whole, reshuffled, as
often as needed. Each item has its own random generator, seeded by the run's seed and the item
number, so an item's context does not depend on which other items are run. A context sentence that
does not end in ``.``, ``!`` or ``?`` (or their full-width forms ``。！？``; most SyntaxGym
sentences end in none) gets a full stop; the sentences are joined by the suite's region separator
(a single space, :data:`SEPARATOR`, unless the suite joins its regions without one, as Mandarin
suites do) and followed by one, then comes the item's sentence. ``n = 0`` adds nothing.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

from syntaxgym_helm.core.context_polarity import polarity
from syntaxgym_helm.core.errors import SuiteFileError
from syntaxgym_helm.core.files import read_regular_file
from syntaxgym_helm.core.suite import Item, Suite

NONE = "none"
ACCEPTABLE = "acceptable"
UNACCEPTABLE = "unacceptable"
UNRELATED = "unrelated"
FILE = "file"
#: The kinds a run entry names; anything else given to ``context=`` is read as a file path.
KINDS = (NONE, ACCEPTABLE, UNACCEPTABLE, UNRELATED)
DEFAULT_SENTENCES = 3
DEFAULT_SEED = 0
#: What separates context sentences from each other and from the item's sentence.
SEPARATOR = " "
UNRELATED_RESOURCE = "context_unrelated.txt"
_ENDINGS = (".", "!", "?", "\u3002", "\uff01", "\uff1f")
_T = TypeVar("_T")


class ContextError(ValueError):
    """A context cannot be made: a bad option, file or suite; the message says what to do."""


@dataclass(frozen=True)
class ContextSpec:
    """Which context a run puts before its items."""

    kind: str = NONE  # one of KINDS, or FILE
    sentences: int = DEFAULT_SENTENCES
    seed: int = DEFAULT_SEED
    path: str = ""  # the file, for FILE
    sha256: str = ""  # of the file when the run spec was made, for FILE

    @property
    def active(self) -> bool:
        return self.kind != NONE

    @property
    def label(self) -> str:
        """The kind as run groups and reports name it: ``unrelated``, ``file_<stem>``."""
        if self.kind != FILE:
            return self.kind
        stem = "".join(c if c.isalnum() else "_" for c in Path(self.path).stem.lower())
        return f"file_{stem.strip('_') or 'context'}"

    def describe(self) -> str:
        """For people: ``unrelated, 3 sentences, seed 0``."""
        if not self.active:
            return NONE
        plural = "" if self.sentences == 1 else "s"
        return f"{self.label}, {self.sentences} sentence{plural}, seed {self.seed}"


def spec_from_args(args: Mapping[str, Any]) -> ContextSpec:
    """The context recorded in a run's scenario arguments (``run_spec.json``); none when it has
    none (runs made before contexts existed, or without one)."""
    context = str(args.get("context", NONE))
    kind = context if context in KINDS else FILE
    return ContextSpec(kind, int(args.get("context_sentences", DEFAULT_SENTENCES)),
                       int(args.get("context_seed", DEFAULT_SEED)),
                       context if kind == FILE else "", str(args.get("context_sha256", "")))


def parse_context(context: str, sentences: str | int, seed: str | int) -> ContextSpec:
    """The run entry's ``context``, ``context_sentences`` and ``context_seed`` checked; a file is
    read (and its SHA-256 kept) now, so a bad one fails before anything runs."""
    count = _integer("context_sentences", sentences)
    if count < 0:
        raise ContextError(f"context_sentences={sentences} is negative: give how many sentences "
                           "to put before each item (0 or more, e.g. context_sentences=3)")
    number = _integer("context_seed", seed)
    if context in KINDS:
        return ContextSpec(context, count, number)
    if not context.strip():
        raise ContextError(f"context= is empty: give one of {', '.join(KINDS)} or the path of a "
                           "text file with one sentence per line")
    data = _read_context_file(context)
    read_sentences(data, context)  # refuses an empty or non-text file now
    return ContextSpec(FILE, count, number, context, hashlib.sha256(data).hexdigest())


def _integer(name: str, value: str | int) -> int:
    try:
        return int(str(value).strip())
    except ValueError:
        raise ContextError(f"{name}={value!r} is not a whole number (e.g. {name}="
                           f"{DEFAULT_SENTENCES if name == 'context_sentences' else 0})") from None


def _read_context_file(path: str) -> bytes:
    if not Path(path).exists():
        raise ContextError(
            f"context={path!r} is neither a kind ({', '.join(KINDS)}) nor an existing file: give "
            "a kind, or the path of a UTF-8 text file with one sentence per line")
    try:
        return read_regular_file(path, f"context file {path}")
    except SuiteFileError as error:
        raise ContextError(str(error)) from None


def read_sentences(data: bytes, where: str) -> list[str]:
    """The sentences of a context file: its non-empty lines that do not start with ``#``."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ContextError(f"context file {where}: not UTF-8 text (byte {error.start} is "
                           f"{data[error.start:error.start + 1]!r}); save it as UTF-8 text with "
                           "one sentence per line") from None
    if "\x00" in text:
        raise ContextError(f"context file {where}: holds NUL characters, so it is not text; give "
                           "a UTF-8 text file with one sentence per line")
    lines = [" ".join(line.split()) for line in text.splitlines()]
    found = [line for line in lines if line and not line.startswith("#")]
    if not found:
        raise ContextError(f"context file {where}: has no sentence (empty, or only blank and "
                           "'#' lines); put one sentence per line")
    return found


def unrelated_sentences() -> list[str]:
    """The shipped public-domain sentences of ``context=unrelated``."""
    data = (resources.files("syntaxgym_helm") / "data" / UNRELATED_RESOURCE).read_bytes()
    return read_sentences(data, UNRELATED_RESOURCE)


def file_sentences(spec: ContextSpec) -> list[str]:
    """A FILE context's sentences, checked against the SHA-256 taken with the run spec."""
    data = _read_context_file(spec.path)
    if spec.sha256 and hashlib.sha256(data).hexdigest() != spec.sha256:
        raise ContextError(f"context file {spec.path} changed since the run spec was made (its "
                           "SHA-256 differs): run again, or restore the file")
    return read_sentences(data, spec.path)


def draw(pool: Sequence[_T], count: int, rng: random.Random) -> list[_T]:
    """``count`` elements of ``pool`` without repetition; past its size, the pool again,
    reshuffled (so no element comes twice before every one has come once)."""
    drawn: list[_T] = []
    while len(drawn) < count and pool:
        drawn += rng.sample(list(pool), min(len(pool), count - len(drawn)))
    return drawn


def item_rng(spec: ContextSpec, item: Item) -> random.Random:
    """The generator of one item's context: seeded by the run's seed and the item number (a
    string seed is hashed with SHA-512 by ``random``, the same in every process)."""
    return random.Random(f"syntaxgym-context:{spec.seed}:{item.item_number}")


def join_context(sentences: Sequence[str], separator: str = SEPARATOR) -> str:
    """The text put before the item's sentence (empty for no sentence); ``separator`` follows
    each sentence (the suite's region separator)."""
    ended = [s if s.endswith(_ENDINGS) else s + "." for s in sentences]
    return "".join(s + separator for s in ended)


def item_contexts(suite: Suite, spec: ContextSpec,
                  pool: Sequence[str] | None = None) -> dict[int, str]:
    """Each item's context text, by item number. ``pool``: the sentences of an ``unrelated`` or
    FILE context (read here when not given)."""
    if not spec.active or spec.sentences == 0:
        return {item.item_number: "" for item in suite.items}
    if spec.kind in (ACCEPTABLE, UNACCEPTABLE):
        return _suite_contexts(suite, spec)
    if pool is None:
        pool = unrelated_sentences() if spec.kind == UNRELATED else file_sentences(spec)
    separator = suite.meta.region_separator
    return {item.item_number: join_context(draw(pool, spec.sentences, item_rng(spec, item)),
                                           separator)
            for item in suite.items}


def _suite_contexts(suite: Suite, spec: ContextSpec) -> dict[int, str]:
    wanted = spec.kind == ACCEPTABLE
    found = polarity(suite)
    names = found.conditions(wanted)
    if not names:
        formulas = "; ".join(p.source.strip() for p in suite.predictions)
        raise ContextError(
            f"suite {suite.name}: its predictions ({formulas}) do not say which condition is "
            f"expected to be {'better' if wanted else 'worse'}, so context={spec.kind} cannot "
            "pick its sentences (docs/context.md gives the rule); use context=unrelated or a "
            "file")
    if len(suite.items) < 2:
        raise ContextError(f"suite {suite.name} has one item: context={spec.kind} takes its "
                           "sentences from the suite's other items; use context=unrelated or a "
                           "file")
    contexts = {}
    for item in suite.items:
        rng = item_rng(spec, item)
        others = [other for other in suite.items if other.item_number != item.item_number]
        chosen = draw(others, spec.sentences, rng)
        sentences = [other.condition(rng.choice(names)).sentence for other in chosen]
        contexts[item.item_number] = join_context(sentences, suite.meta.region_separator)
    return contexts
