"""The run options on the command line: one ``--NAME`` flag per field of
:class:`~syntaxgym_helm.core.run_options.RunOptions` (``first_token`` is ``--first-token``), made
from the class, so a new option is a flag with no code here. Values are read as a run entry's
strings are, by :func:`~syntaxgym_helm.core.run_options.options_from`."""

from __future__ import annotations

import argparse
import dataclasses
from typing import get_type_hints

from syntaxgym_helm.core.options import choices_of
from syntaxgym_helm.core.run_options import RunOptions, options_from


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def add_run_option_arguments(parser: argparse.ArgumentParser) -> None:
    """One flag per run option, in a group of its own; left out, an option keeps its default."""
    group = parser.add_argument_group(
        "run options", "as the syntaxgym run entry's arguments (docs/running.md)")
    hints = get_type_hints(RunOptions)
    for field in dataclasses.fields(RunOptions):
        choices = choices_of(hints[field.name])
        group.add_argument(flag(field.name), dest=f"option_{field.name}", default=None,
                           metavar=None if choices else field.name.upper(),
                           choices=[str(choice) for choice in choices] or None,
                           help=f"{field.metadata['help']} (default: {field.default!r})")


def run_options_from(args: argparse.Namespace) -> RunOptions:
    """The run options the flags give (the defaults for those not given)."""
    given = {field.name: getattr(args, f"option_{field.name}")
             for field in dataclasses.fields(RunOptions)
             if getattr(args, f"option_{field.name}", None) is not None}
    return options_from(given)
