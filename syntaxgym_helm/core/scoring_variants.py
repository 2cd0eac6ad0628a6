"""Scoring variants, declared and parsed in one place: the same weights scored another way, each
its own HELM model named ``NAME~VARIANT`` (so its own deployment, request-cache entries and
leaderboard row).

Every kind of model has its default, ``original``, and the variants of :data:`VARIANTS`: a causal
LM ``~bow`` (the word-boundary correction, :mod:`.word_boundary`), a masked LM
``~within_word_l2r`` (pseudo-log-likelihood with the word's later pieces masked too), an
encoder-decoder LM ``~enc_dec_mask`` and ``~enc_dec_prefix`` (BabyLM's conventions). Each says
the client argument it sets; :func:`split_variant` reads a model name, :func:`variant_name`
writes one, :func:`check_variant` refuses a variant of another kind with a message saying which.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

#: Between a model's name and its variant's: ``syntaxgym/smollm2-135m-instruct-q4_1~bow``.
VARIANT_MARK = "~"
#: Every kind's default variant: no mark, the client's default arguments.
DEFAULT_VARIANT = "original"

ModelKind = Literal["causal", "masked", "seq2seq"]
PllVariant = Literal["original", "within_word_l2r"]
Seq2SeqConvention = Literal["original", "enc_dec_mask", "enc_dec_prefix"]

#: A masked LM's pseudo-log-likelihood variants (client argument ``pll``), the default first.
PLL_VARIANTS: tuple[PllVariant, ...] = get_args(PllVariant)
#: An encoder-decoder LM's conventions (client argument ``convention``), the default first.
SEQ2SEQ_VARIANTS: tuple[Seq2SeqConvention, ...] = get_args(Seq2SeqConvention)
#: The causal LM's word-boundary-corrected variant.
WORD_BOUNDARY_VARIANT = "bow"


@dataclass(frozen=True)
class ScoringVariant:
    """A variant of one kind of model: its name, the client arguments it sets and what it is
    (for reports)."""

    name: str
    kind: ModelKind
    client_args: Mapping[str, Any]
    description: str


VARIANTS: tuple[ScoringVariant, ...] = (
    ScoringVariant("original", "causal", {}, ""),
    ScoringVariant(WORD_BOUNDARY_VARIANT, "causal", {"word_boundary": True},
                   "the word-boundary correction (Pimentel & Meister 2024): a word's probability "
                   "includes that the token after it begins a new word (docs/scoring.md, \"Word "
                   "boundaries\")"),
    ScoringVariant("original", "masked", {"pll": "original"},
                   "pseudo-log-likelihood, one token masked at a time (Salazar et al. 2020)"),
    ScoringVariant("within_word_l2r", "masked", {"pll": "within_word_l2r"},
                   "pseudo-log-likelihood with the tokens of the same word to the right also "
                   "masked (Kauf & Ivanova 2023), where the plain model masks one token at a "
                   "time (docs/models.md)"),
    ScoringVariant("original", "seq2seq", {},
                   "the sentence as the decoder's output (minicons' Seq2SeqScorer)"),
    ScoringVariant("enc_dec_mask", "seq2seq", {"convention": "enc_dec_mask"},
                   "BabyLM's enc_dec_mask: pseudo-log-likelihood through the decoder "
                   "(docs/models.md)"),
    ScoringVariant("enc_dec_prefix", "seq2seq", {"convention": "enc_dec_prefix"},
                   "BabyLM's enc_dec_prefix: the sentence as the filling of a masked span "
                   "(docs/models.md)"),
)

_OWNERS = {"causal": "causal LMs (the word-boundary correction)",
           "masked": "masked LMs (pseudo-log-likelihood)",
           "seq2seq": "encoder-decoder LMs (BabyLM's conventions)"}


def variants_of(kind: str) -> tuple[str, ...]:
    """The variant names of a kind of model, the default first."""
    return tuple(v.name for v in VARIANTS if v.kind == kind)


def variant(kind: str, name: str) -> ScoringVariant:
    """The declaration of ``kind``'s variant ``name`` (KeyError: none)."""
    for declared in VARIANTS:
        if declared.kind == kind and declared.name == name:
            return declared
    raise KeyError(f"{name!r} is not a variant of a {kind} LM")


def split_variant(model: str) -> tuple[str, str | None]:
    """``"PATH~within_word_l2r"`` -> ``("PATH", "within_word_l2r")``; no mark: ``(model, None)``."""
    base, mark, name = model.rpartition(VARIANT_MARK)
    return (base, name) if mark and base and name else (model, None)


def variant_name(model: str, name: str) -> str:
    """The model name of ``name``: the name itself for the default (``original``)."""
    return model if name == DEFAULT_VARIANT else f"{model}{VARIANT_MARK}{name}"


def check_variant(kind: str, name: str, model: str) -> None:
    """Raise ValueError when ``~name`` is not a variant of ``kind`` (``model``: what the user
    gave), saying which kind it belongs to, if any."""
    allowed = variants_of(kind)
    if name in allowed:
        return
    owner = next((v.kind for v in VARIANTS if v.name == name), None)
    if owner is not None:
        raise ValueError(f"{model}: the variant ~{name} applies to {_OWNERS[owner]}; this is a "
                         f"{kind} LM: drop ~{name}")
    raise ValueError(f"{model}: ~{name} is not a variant of a {kind} LM (one of "
                     f"{', '.join(allowed)})")


def corrects_word_boundaries(model: str) -> bool:
    """Whether the model name is a word-boundary-corrected variant (``...~bow``)."""
    return split_variant(model)[1] == WORD_BOUNDARY_VARIANT


def describe_variant(name: str) -> str:
    """What variant ``name`` is, for a report (any kind that has it)."""
    return next((v.description for v in VARIANTS if v.name == name and v.description),
                "a scoring variant of the same weights, registered as a model of its own")
