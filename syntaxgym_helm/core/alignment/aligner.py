"""The aligner's entry points: :func:`align` and its result :class:`Alignment`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from syntaxgym_helm.core.alignment.search import NoAlignment, Search
from syntaxgym_helm.core.alignment.spans import RegionLike, region_pairs
from syntaxgym_helm.core.alignment.text import SentenceBytes
from syntaxgym_helm.core.errors import AlignmentError

__all__ = ["Alignment", "align", "align_tokens"]


@dataclass(frozen=True)
class Alignment:
    """Which region each token belongs to (``None``: no region); see the package's rules."""

    region_of_token: tuple[int | None, ...]
    region_numbers: tuple[int, ...]
    case_insensitive: bool = False


def align(regions: Sequence[RegionLike], tokens: Sequence[str], *, prefix: str = "") -> Alignment:
    """Assign each of ``tokens`` to a region of the sentence built from ``regions``.

    ``tokens`` are the texts of the tokens of ``prefix + sentence_text(regions)``, in order.
    Raises :class:`AlignmentError` (naming the token, its index, the character offset and the
    text around it) when they cannot be aligned without guessing.
    """
    pairs = region_pairs(regions)
    for index, token in enumerate(tokens):
        if not isinstance(token, str):
            raise TypeError(f"token {index} is {token!r}, not a string")
    folded = False
    try:
        owners = Search(SentenceBytes(prefix, pairs, fold=False), tokens).run()
    except NoAlignment as exact_failure:
        # Rule 6: a lowercasing word-level model; exact matching has failed outright.
        try:
            owners = Search(SentenceBytes(prefix, pairs, fold=True), tokens).run()
        except AlignmentError:
            # The exact attempt's message is the one that describes the real text.
            raise AlignmentError(str(exact_failure)) from None
        folded = True
    numbers = tuple(number for number, _ in pairs)
    return Alignment(
        region_of_token=tuple(None if owner is None else numbers[owner] for owner in owners),
        region_numbers=numbers,
        case_insensitive=folded,
    )


def align_tokens(
    regions: Sequence[RegionLike], tokens: Sequence[str], *, prefix: str = ""
) -> list[int | None]:
    """The region number of each token (``None``: no region); :func:`align` without the extras."""
    return list(align(regions, tokens, prefix=prefix).region_of_token)
