"""The aligner's entry points: :func:`align` and its result :class:`Alignment`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from syntaxgym_helm.core.alignment.search import NoAlignment, Search
from syntaxgym_helm.core.alignment.spans import RegionLike, region_pairs
from syntaxgym_helm.core.alignment.text import SentenceBytes
from syntaxgym_helm.core.errors import AlignmentError
from syntaxgym_helm.core.suite_data import DEFAULT_SEPARATOR

__all__ = ["Alignment", "align", "align_tokens"]


@dataclass(frozen=True)
class Alignment:
    """Which region each token belongs to (``None``: no region); see the package's rules."""

    region_of_token: tuple[int | None, ...]
    region_numbers: tuple[int, ...]
    case_insensitive: bool = False


def align(regions: Sequence[RegionLike], tokens: Sequence[str], *, prefix: str = "",
          separator: str = DEFAULT_SEPARATOR) -> Alignment:
    """Assign each of ``tokens`` to a region of the sentence built from ``regions``.

    ``tokens`` are the texts of the tokens of ``prefix + sentence_text(regions, separator)``, in
    order (``separator``: how the suite joins its regions).
    Raises :class:`AlignmentError` (naming the token, its index, the character offset and the
    text around it) when they cannot be aligned without guessing.
    """
    pairs = region_pairs(regions)
    for index, token in enumerate(tokens):
        if not isinstance(token, str):
            raise TypeError(f"token {index} is {token!r}, not a string")
    # Rule 6, and servers that drop pieces of characters (rule 5): each looser reading is tried
    # only when the stricter ones have failed outright, so it can never change an alignment
    # that exists without it.
    exact_failure: NoAlignment | None = None
    owners: list[int | None] | None = None
    for folded, loose in ((False, False), (False, True), (True, False), (True, True)):
        text = SentenceBytes(prefix, pairs, fold=folded, separator=separator)
        try:
            owners = Search(text, tokens, loose=loose).run()
            break
        except NoAlignment as failure:
            exact_failure = exact_failure or failure
        except AlignmentError:
            if not folded:  # the real text can be covered in more than one way: say so
                raise
            break  # a lowercased alignment that is ambiguous is no alignment
    if owners is None:
        # The exact attempt's message is the one that describes the real text.
        raise AlignmentError(str(exact_failure)) from None
    numbers = tuple(number for number, _ in pairs)
    return Alignment(
        region_of_token=tuple(None if owner is None else numbers[owner] for owner in owners),
        region_numbers=numbers,
        case_insensitive=folded,
    )


def align_tokens(
    regions: Sequence[RegionLike], tokens: Sequence[str], *, prefix: str = "",
    separator: str = DEFAULT_SEPARATOR,
) -> list[int | None]:
    """The region number of each token (``None``: no region); :func:`align` without the extras."""
    return list(align(regions, tokens, prefix=prefix, separator=separator).region_of_token)
