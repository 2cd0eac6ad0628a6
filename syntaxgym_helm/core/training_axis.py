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

Any other name has no x of its own (``final``, ``best``, a ``Trainer``'s output folder holding
its final model): :func:`training_axis` refuses it, naming it and how to give x. Given values
(:func:`given_values`, :func:`read_given_values`) take precedence over names, and the names of
the others are read. The unit is one for the whole sweep (``words``, ``tokens`` or ``steps``),
chosen as the first of those that every checkpoint read from its name has unless asked for;
given values are in it. A given x is a finite number, 0 or more, for a checkpoint of the sweep,
given once: anything else is refused, naming it, as NaN sorts anywhere, a negative or infinite
x has no logarithm, and a misspelt name would otherwise be dropped unseen. Two checkpoints at one
x, and names whose step follows different beginnings (OLMo-2's ``stage1-`` and
``stage2-ingredient1-``, whose steps start again), are refused too: they are not one curve.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from syntaxgym_helm.core.errors import SuiteFileError
from syntaxgym_helm.core.files import read_regular_file

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
    source: str  # "names", "given", or "given and names" (given for some, names for the rest)

    def ordered(self) -> list[str]:
        """The checkpoints' names by x (then by name)."""
        return sorted(self.values, key=lambda name: (self.values[name], name))


def training_axis(names: Sequence[str], unit: str | None = None,
                  given: Mapping[str, float] | None = None) -> TrainingAxis:
    """The x of every checkpoint in ``names``: its ``given`` value where there is one, else read
    from its name in ``unit`` (default: the first of :data:`UNITS` every such name gives; when
    every checkpoint is given, ``unit`` or steps). Raises :class:`TrainingAxisError` naming the
    checkpoints without an x and how to give one, and a given x that is not a finite number
    0 or more or names no checkpoint of ``names``."""
    if unit is not None and unit not in UNITS:
        raise TrainingAxisError(f"x unit {unit!r} is not one of {', '.join(UNITS)}")
    chosen_x = _checked_given(names, given or {})
    rest = [name for name in names if name not in chosen_x]
    if not rest:
        return TrainingAxis(unit or "steps", _distinct({name: chosen_x[name] for name in names}),
                            "given")
    found = {name: positions_in_name(name) for name in rest}
    silent = [name for name, units in found.items() if not units]
    if silent:
        raise TrainingAxisError(
            f"cannot read the training position from the name of {', '.join(silent[:5])}"
            f"{' ...' if len(silent) > 5 else ''} (names read: chck_10M, step1000, "
            "step1000-tokens4B, checkpoint-500): rename the checkpoints, or give their x "
            f"(--x-values {silent[0]}=X,... or a CSV file of name,x)")
    shared = [u for u in UNITS if all(u in units for units in found.values())]
    chosen = unit or (shared[0] if shared else None)
    if chosen is None or chosen not in shared:
        kinds = sorted({"/".join(units) for units in found.values()})
        raise TrainingAxisError(
            f"the checkpoints' names do not share a unit{f' {unit!r}' if unit else ''} (they "
            f"give {'; '.join(kinds)}): sweep checkpoints named alike, or give each its x")
    _one_run([name for name in rest if found[name]])
    values = {name: chosen_x[name] if name in chosen_x else found[name][chosen]
              for name in names}
    return TrainingAxis(chosen, _distinct(values), "given and names" if chosen_x else "names")


def _one_run(names: Sequence[str]) -> None:
    """Refuse names whose step comes after different beginnings (OLMo-2's ``stage1-step...``
    and ``stage2-ingredient1-step...``, ``seed1-step...`` and ``seed2-step...``): their counts
    are of different runs or stages (a stage's steps start again at 0), not one curve."""
    starts: dict[str, str] = {}
    for name in names:
        match = re.match(r"^(.*[-_])step", name.strip(), re.IGNORECASE)
        starts.setdefault(match.group(1) if match else "", name)
    if len(starts) > 1:
        shown = ", ".join(f"{start or '(none)'} ({name})" for start, name in starts.items())
        raise TrainingAxisError(
            f"the checkpoints' names begin differently before their step ({shown}): they count "
            "steps of different runs or stages; sweep each on its own (a --revisions pattern or "
            "folder each, and --name), or give every checkpoint its x")


def _distinct(values: dict[str, float]) -> dict[str, float]:
    """``values``, refusing two checkpoints at one x: a curve has one point there, and two
    runs' checkpoints (or a final model named after no step) would be taken for one."""
    at: dict[float, list[str]] = {}
    for name, x in values.items():
        at.setdefault(x, []).append(name)
    shared = next((names for names in at.values() if len(names) > 1), None)
    if shared is not None:
        raise TrainingAxisError(
            f"{' and '.join(shared[:3])} are {'both' if len(shared) == 2 else 'all'} at "
            f"x={values[shared[0]]:g}: a curve has one "
            "point at an x; leave one out, or give each its x (--x-values), or sweep separate "
            "runs each on its own (--name)")
    return values


def _checked_given(names: Sequence[str], given: Mapping[str, float]) -> dict[str, float]:
    """``given`` as floats, refusing an x for no checkpoint of ``names`` (with the name it may
    be a misspelling of) and an x that is not a finite number 0 or more."""
    unknown = [name for name in given if name not in names]
    if unknown:
        close = difflib.get_close_matches(unknown[0], names, n=1)
        raise TrainingAxisError(
            f"an x is given for {', '.join(repr(n) for n in unknown[:5])}"
            f"{' ...' if len(unknown) > 5 else ''}, not a checkpoint of this sweep"
            f"{f' (did you mean {close[0]!r}?)' if close else ''}; its checkpoints are "
            f"{', '.join(list(names)[:8])}{' ...' if len(names) > 8 else ''}: give x by their "
            "names")
    checked = {}
    for name, value in given.items():
        try:
            x = float(value)
        except (TypeError, ValueError):
            x = math.nan
        if not math.isfinite(x) or x < 0:
            raise TrainingAxisError(
                f"the x given for {name} is {value!r}: give a finite number, 0 or more (the "
                "words, tokens or steps it was trained on)")
        checked[name] = x
    return checked


def given_values(argument: str) -> dict[str, float]:
    """``--x-values``: the path of a CSV/TSV file of name,x, or ``NAME=X,NAME=X``, as
    ``{name: x}`` (see :func:`read_given_values`). An argument that is neither (a missing file,
    pairs without ``=``) is a :class:`TrainingAxisError` saying which."""
    if argument.strip() and _exists(argument):
        try:
            text = read_regular_file(argument).decode("utf-8-sig")
        except (SuiteFileError, OSError, UnicodeDecodeError) as error:
            reason = error.reason if isinstance(error, SuiteFileError) else str(error)
            raise TrainingAxisError(f"--x-values {argument}: cannot be read ({reason}); give "
                                    "the path of a CSV file of name,x") from None
        return read_given_values(text, pairs=None, file=argument)
    if "=" not in argument and "," not in argument:
        raise TrainingAxisError(
            f"--x-values {argument!r}: no such file, and not NAME=X pairs: give the path of a "
            "CSV file of name,x, or each checkpoint's x as NAME=X,NAME=X")
    return read_given_values(argument, pairs=True)


def _exists(path: str) -> bool:
    try:
        return Path(path).exists()
    except (OSError, ValueError):  # a name too long for a path (a long NAME=X list): no file
        return False


def read_given_values(text: str, *, pairs: bool | None = None,
                      file: str | None = None) -> dict[str, float]:
    """``NAME=X,NAME=X`` (``pairs``) or the lines of a CSV/TSV file's text (``name,x``; a first
    line whose x is not a number is a header, skipped) as ``{name: x}``; ``pairs`` None: pairs
    when ``text`` is one line with an ``=``. Raises :class:`TrainingAxisError` naming the entry
    (by number, in ``file`` when it is one) that is not ``name, number``, a name given twice,
    and a text with no values."""
    if pairs is None:
        pairs = "\n" not in text.strip() and "=" in text
    entries = list(enumerate(text.split(",") if pairs else text.splitlines(), start=1))
    where = ("x value" if pairs else "line") if file is None else \
        f"{file}, {'x value' if pairs else 'line'}"
    values: dict[str, float] = {}
    first: dict[str, int] = {}
    header = ""
    for number, entry in entries:
        if not entry.strip():
            continue
        sep = "=" if pairs else ("\t" if "\t" in entry else ",")
        name, mark, value = entry.partition(sep)
        name = name.strip()
        try:
            x: float | None = float(value.replace("_", ""))
        except ValueError:
            if number == 1 and not pairs:
                header = entry.strip()
                continue
            x = None
        if x is None or not mark or not name:
            form = "NAME=X,NAME=X" if pairs else "a name,x line for each checkpoint"
            raise TrainingAxisError(f"{where} {number} ({entry.strip()!r}) is not "
                                    f"NAME{sep}NUMBER: give {form}")
        if name in values:
            raise TrainingAxisError(
                f"{where} {number} ({entry.strip()!r}) gives {name} an x again ({where} "
                f"{first[name]} gave it {values[name]:g}): give each checkpoint one x")
        values[name] = x
        first[name] = number
    if not values:
        read = f" (its line 1, {header!r}, is read as a header)" if header else ""
        raise TrainingAxisError(f"{file or '--x-values'}: no x values{read}; give "
                                "NAME=X,NAME=X or a CSV file of name,x lines")
    return values
