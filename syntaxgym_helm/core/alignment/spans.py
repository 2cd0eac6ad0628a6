"""The sentence a model reads, and where each region lies in it (character spans)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from syntaxgym_helm.core.suite_data import DEFAULT_SEPARATOR, join_regions


class _RegionObject(Protocol):
    @property
    def region_number(self) -> int: ...

    @property
    def content(self) -> str: ...


RegionLike = tuple[int, str] | _RegionObject
"""A region as a ``(region_number, content)`` pair or an object with those two attributes."""


@dataclass(frozen=True)
class RegionSpan:
    """Where one region lies in :func:`sentence_text`: characters ``start`` to ``end`` (exclusive).

    An empty region has ``start == end``, placed right after the text before it (before the
    separator that comes before the next region).
    """

    region_number: int
    start: int
    end: int

    @property
    def is_empty(self) -> bool:
        return self.start == self.end


def region_pairs(regions: Sequence[RegionLike]) -> list[tuple[int, str]]:
    """Regions as ``(number, content)`` pairs; region numbers must be unique."""
    pairs: list[tuple[int, str]] = []
    for region in regions:
        if isinstance(region, (tuple, list)):
            number, content = region
        else:
            number, content = region.region_number, region.content
        if not isinstance(content, str):
            raise TypeError(f"region {number!r} has content {content!r}, not a string")
        pairs.append((number, content))
    numbers = [number for number, _ in pairs]
    if len(set(numbers)) != len(numbers):
        raise ValueError(f"region numbers repeat in one sentence: {numbers}")
    return pairs


def sentence_text(regions: Sequence[RegionLike], separator: str = DEFAULT_SEPARATOR) -> str:
    """The sentence a model reads: the non-empty region contents joined by ``separator``."""
    return join_regions((content for _, content in region_pairs(regions)), separator)


def region_spans(regions: Sequence[RegionLike],
                 separator: str = DEFAULT_SEPARATOR) -> tuple[RegionSpan, ...]:
    """Each region's character span in :func:`sentence_text`, in region order."""
    spans: list[RegionSpan] = []
    offset = 0
    placed_any = False
    for number, content in region_pairs(regions):
        if not content:
            spans.append(RegionSpan(number, offset, offset))
            continue
        if placed_any:
            offset += len(separator)
        spans.append(RegionSpan(number, offset, offset + len(content)))
        offset += len(content)
        placed_any = True
    return tuple(spans)
