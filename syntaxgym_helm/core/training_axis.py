"""Where a checkpoint lies in its training: the x axis of a learning curve, read from the
checkpoint's name or given.

Names are read as the field names its checkpoints (the forms BabyLM's evaluation pipeline, the
Pythia suite, OLMo and a transformers ``Trainer`` write):

- ``chck_10M``: BabyLM's branches, in words seen (a number and ``K``, ``M`` or ``B``, as its
  pipeline's ``extract_step_number`` reads them: ``chck_10M`` is 10,000,000 words);
- ``step1000-tokens4B``: OLMo's and Marin's branches (``stage1-step1000-tokens5B`` too), in steps
  and tokens seen;
- ``step1000``: Pythia's branches, in steps;
- ``checkpoint-500``: a ``Trainer``'s folders, in steps.

Any other name has no x of its own (``final``, ``best``): :func:`training_axis` refuses it,
naming it and how to give x. Given values (:func:`read_given_values`) take precedence over
names. The unit is one for the whole sweep (``words``, ``tokens`` or ``steps``), chosen as the
first of those that every checkpoint has unless asked for.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

UNITS = ("words", "tokens", "steps")
_MULTIPLIERS = {"": 1, "K": 10**3, "M": 10**6, "B": 10**9, "T": 10**12}
_NUMBER = r"(\d+(?:\.\d+)?)([KMBT]?)"
_PATTERNS = (
    (re.compile(rf"^chck_{_NUMBER}$", re.IGNORECASE), ("words",)),
    (re.compile(rf"^(?:.*[-_])?step(\d+)-tokens{_NUMBER}$", re.IGNORECASE), ("steps", "tokens")),
    (re.compile(r"^(?:.*[-_])?step[-_]?(\d+)$", re.IGNORECASE), ("steps",)),
    (re.compile(r"^checkpoint[-_](\d+)$", re.IGNORECASE), ("steps",)),
)


class TrainingAxisError(ValueError):
    """A checkpoint whose place in training cannot be told, or x values that cannot be used."""


def _amount(number: str, unit: str = "") -> float:
    return float(number) * _MULTIPLIERS[unit.upper()]


def positions_in_name(name: str) -> dict[str, float]:
    """What ``name`` says of its checkpoint's place in training, by unit (see the module doc):
    ``{"words": 1e7}`` for ``chck_10M``; empty when it says nothing."""
    for pattern, units in _PATTERNS:
        match = pattern.match(name.strip())
        if match is None:
            continue
        groups = match.groups()
        if units == ("words",):
            return {"words": _amount(groups[0], groups[1])}
        if units == ("steps", "tokens"):
            return {"steps": float(groups[0]), "tokens": _amount(groups[1], groups[2])}
        return {"steps": float(groups[0])}
    return {}


@dataclass(frozen=True)
class TrainingAxis:
    """The sweep's x axis: its unit, each checkpoint's x (by name), and where x came from."""

    unit: str
    values: Mapping[str, float]
    source: str  # "names" or "given"

    def ordered(self) -> list[str]:
        """The checkpoints' names by x (then by name)."""
        return sorted(self.values, key=lambda name: (self.values[name], name))


def training_axis(names: Sequence[str], unit: str | None = None,
                  given: Mapping[str, float] | None = None) -> TrainingAxis:
    """The x of every checkpoint in ``names``: ``given`` values where there are any (then every
    name needs one), else read from the names in ``unit`` (default: the first of
    :data:`UNITS` every name gives). Raises :class:`TrainingAxisError` naming the checkpoints
    without an x and how to give one."""
    if unit is not None and unit not in UNITS:
        raise TrainingAxisError(f"x unit {unit!r} is not one of {', '.join(UNITS)}")
    if given:
        missing = [name for name in names if name not in given]
        if missing:
            raise TrainingAxisError(
                f"no x given for {len(missing)} checkpoint(s): {', '.join(missing[:5])}"
                f"{' ...' if len(missing) > 5 else ''}; the x values name "
                f"{', '.join(sorted(given)[:5])}: give one for every checkpoint")
        return TrainingAxis(unit or "steps", {name: float(given[name]) for name in names},
                            "given")
    found = {name: positions_in_name(name) for name in names}
    silent = [name for name, units in found.items() if not units]
    if silent:
        raise TrainingAxisError(
            f"cannot read the training position from the name of {', '.join(silent[:5])}"
            f"{' ...' if len(silent) > 5 else ''} (names read: chck_10M, step1000, "
            "step1000-tokens4B, checkpoint-500): rename the checkpoints, or give each its x "
            "(--x-values NAME=X,... or a CSV file of name,x)")
    shared = [u for u in UNITS if all(u in units for units in found.values())]
    chosen = unit or (shared[0] if shared else None)
    if chosen is None or chosen not in shared:
        kinds = sorted({"/".join(units) for units in found.values()})
        raise TrainingAxisError(
            f"the checkpoints' names do not share a unit{f' {unit!r}' if unit else ''} (they "
            f"give {'; '.join(kinds)}): sweep checkpoints named alike, or give each its x")
    return TrainingAxis(chosen, {name: found[name][chosen] for name in names}, "names")


def read_given_values(text: str) -> dict[str, float]:
    """``NAME=X,NAME=X`` or the lines of a CSV/TSV file's text (``name,x``; a header line whose
    x is not a number is skipped) as ``{name: x}``. Raises :class:`TrainingAxisError` naming
    the entry that is not ``name, number``."""
    entries: list[tuple[int, str]]
    if "\n" in text.strip() or "=" not in text:
        entries = [(number, line) for number, line in enumerate(text.splitlines(), start=1)]
        separator = None
    else:
        entries = [(number, part) for number, part in enumerate(text.split(","), start=1)]
        separator = "="
    values: dict[str, float] = {}
    for number, entry in entries:
        if not entry.strip():
            continue
        sep = separator or ("\t" if "\t" in entry else ",")
        name, mark, value = entry.partition(sep)
        try:
            values[name.strip()] = float(value.replace("_", ""))
        except ValueError:
            if number == 1 and separator is None:
                continue  # a header line
            raise TrainingAxisError(
                f"x value {number} ({entry.strip()!r}) is not NAME{sep}NUMBER") from None
        if not mark or not name.strip():
            raise TrainingAxisError(f"x value {number} ({entry.strip()!r}) is not "
                                    f"NAME{sep}NUMBER")
    return values
