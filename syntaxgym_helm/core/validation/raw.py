"""The raw shape of each suite JSON element, for dacite: fields and their JSON types.

Lists stay raw values (``list``), so that the walk in :mod:`.structure` can index their elements
in the JSON paths of its errors.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Condition names usable in formulas (``%name%``).
NAME_RE = re.compile(r"[A-Za-z0-9_-]+")


@dataclass
class RawMeta:
    name: str | None = None
    metric: str | list | None = None
    author: str | None = None
    reference: str | None = None
    description: str | None = None
    comment: str | None = None
    tags: list | None = None
    region_separator: str | None = None


@dataclass
class RawItem:
    item_number: int
    conditions: list


@dataclass
class RawCondition:
    condition_name: str
    regions: list


@dataclass
class RawRegion:
    region_number: int
    content: str


@dataclass
class RawFormulaPrediction:
    formula: str
    type: str = "formula"


@dataclass
class RawLegacyPrediction:
    region_number: int
    l_operand: str
    relation: str
    r_operand: str
