"""The options of a SyntaxGym run, declared once: :class:`RunOptions`.

The ``syntaxgym`` run entry (``helm-run --run-entries syntaxgym:suite=NAME,OPTION=VALUE,...``),
the scenario, the metric, the Python API (``evaluate(..., OPTION=VALUE)``) and the command line
all take these options and read them from one object; a run records the ones it sets in its
scenario and metric arguments (``run_spec.json``), from which reports read them back.

How an option is added: a field here, with its type (``Literal[...]`` for a closed choice), its
default (the behaviour of runs made without it) and its help (:func:`~.options.option`), and,
in its metadata, ``recorded_in`` (which of the run spec's ``scenario`` and ``metric`` arguments
record it; default the metric's). It is then taken by the run entry, the API and the CLI, checked
with an error naming it and its values, recorded when it differs from its default (so runs
without it keep their run spec and name), and named in the run's name. The code that acts on it
reads ``options.NAME`` where it receives the object (the metric's ``self.options``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Literal, get_args

from syntaxgym_helm.core.options import (
    OptionError,
    changed_fields,
    check_fields,
    option,
    options_from as _options_from,
)

FirstTokenPolicy = Literal["error", "exclude"]
TiePolicy = Literal["fail", "pass"]
FIRST_TOKEN_POLICIES: tuple[str, ...] = get_args(FirstTokenPolicy)
TIE_POLICIES: tuple[str, ...] = get_args(TiePolicy)

AUTO_PREFIX = "auto"
NO_PREFIX = "none"
NO_CONTEXT = "none"
DEFAULT_CONTEXT_SENTENCES = 3
DEFAULT_CONTEXT_SEED = 0

SCENARIO = "scenario"
METRIC = "metric"
#: Options of this group are recorded together, and only when ``context`` is not ``none``.
CONTEXT_GROUP = "context"


class RunOptionError(OptionError):
    """A run option's value is not one it takes (the message names the option and its values)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class RunOptions:
    """How a suite is run and scored (every field is a run-entry argument of the same name)."""

    suites_dir: str = option(
        "", "a local folder of <name>.json suite files that stands in for the download",
        recorded_in=(SCENARIO,), in_name=False)
    prefix: str = option(
        AUTO_PREFIX, "text put before every sentence and not scored: auto (the model's "
        "beginning-of-text token where its client does not put one itself), none, or the text",
        always_recorded=True)
    first_token: FirstTokenPolicy = option(
        "error", "what to do when a sentence's first token comes back without context: error "
        "(the item is unscorable) or exclude (leave that token out)", always_recorded=True)
    ties: TiePolicy = option(
        "fail", "how a < or > between two exactly equal values is scored: fail or pass")
    context: str = option(
        NO_CONTEXT, "sentences put before every condition of an item: none, acceptable, "
        "unacceptable, unrelated, or the path of a text file", recorded_in=(SCENARIO, METRIC),
        group=CONTEXT_GROUP)
    context_sentences: int = option(
        DEFAULT_CONTEXT_SENTENCES, "how many context sentences", minimum=0,
        recorded_in=(SCENARIO, METRIC), group=CONTEXT_GROUP)
    context_seed: int = option(
        DEFAULT_CONTEXT_SEED, "the seed that draws the context sentences",
        recorded_in=(SCENARIO, METRIC), group=CONTEXT_GROUP)

    def __post_init__(self) -> None:
        try:
            check_fields(self)
        except OptionError as error:
            raise _run_error(error) from None
        if self.prefix.strip() != self.prefix:
            raise RunOptionError(f"prefix={self.prefix!r} must not begin or end with spaces")
        if not self.context.strip():
            raise RunOptionError("context= is empty: give none, acceptable, unacceptable, "
                                 "unrelated or the path of a text file with one sentence a line")

    @property
    def has_context(self) -> bool:
        return self.context != NO_CONTEXT

    def replace(self, **changes: Any) -> RunOptions:
        """A copy with ``changes`` (checked as the constructor checks)."""
        return dataclasses.replace(self, **changes)

    def recorded(self, spec: str) -> dict[str, str | int | float | bool]:
        """The options the run spec's ``spec`` (``scenario`` or ``metric``) arguments record:
        those set to other than their defaults (or recorded always), a group all together."""
        changed = changed_fields(self)
        out: dict[str, Any] = {}
        for field in dataclasses.fields(self):
            meta = field.metadata
            if spec not in meta.get("recorded_in", (METRIC,)):
                continue
            group = meta.get("group")
            wanted = (self.has_context if group == CONTEXT_GROUP
                      else meta.get("always_recorded") or field.name in changed)
            if wanted:
                out[field.name] = getattr(self, field.name)
        return out

    def name_parts(self, context_label: str) -> list[str]:
        """``NAME=VALUE`` of each option the run's name shows: those not at their defaults, and
        the context group (the context named by ``context_label``: a file by its stem, since
        HELM makes the run name a folder name) when there is a context."""
        changed = changed_fields(self)
        parts = []
        for field in dataclasses.fields(self):
            if not field.metadata.get("in_name", True):
                continue
            if field.metadata.get("group") == CONTEXT_GROUP:
                if self.has_context:
                    value = context_label if field.name == "context" else getattr(self, field.name)
                    parts.append(f"{field.name}={value}")
            elif field.name in changed:
                parts.append(f"{field.name}={getattr(self, field.name)}")
        return parts


def _run_error(error: OptionError) -> RunOptionError:
    """The error as a :class:`RunOptionError` (a ``TypeError`` too when it was one)."""
    if isinstance(error, TypeError):
        return RunOptionTypeError(str(error))
    return RunOptionError(str(error))


class RunOptionTypeError(RunOptionError, TypeError):
    """A run option's value has the wrong type (from Python: ``context_sentences="3"``)."""


def options_from(values: Mapping[str, Any], where: str = "") -> RunOptions:
    """:class:`RunOptions` from run-entry strings or recorded values (``run_spec.json``); an
    unknown name or a bad value is a :class:`RunOptionError` that names it (after ``where``)."""
    try:
        options = _options_from(RunOptions, values, where)  # the class given: a RunOptions
        assert isinstance(options, RunOptions)
        return options
    except RunOptionError:
        raise
    except OptionError as error:
        raise _run_error(error) from None


def option_help() -> dict[str, tuple[str, Any]]:
    """Each option's (help, default), in declaration order (``--help`` texts, docs)."""
    return {field.name: (field.metadata["help"], field.default)
            for field in dataclasses.fields(RunOptions)}
