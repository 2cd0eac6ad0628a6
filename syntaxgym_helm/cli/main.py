"""The ``syntaxgym-helm`` command line: one module per subcommand.

Each module listed in ``COMMAND_MODULES`` defines ``register(subparsers)``, which adds its parser
and sets ``handler`` (a function of the parsed arguments returning the exit status).

Ctrl-C (SIGINT) or SIGTERM ends every command at once, at any moment (an import, a model loading
in another thread, a write), with one line and status 130 (143): the handling of
:mod:`~syntaxgym_helm.clients.interruption`, installed first thing, which also stores what a run's
engine computed; a command says what an interrupt would leave through
:func:`~syntaxgym_helm.clients.interruption.leaves`. An error the package raises on purpose
(:class:`~syntaxgym_helm.core.errors.SyntaxGymError`) that a command does not handle itself ends
it with its one-line message and status 2, not a traceback; a reader that leaves early
(``syntaxgym-helm list blimp | head``) ends it quietly (status 141, as a shell's SIGPIPE).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from syntaxgym_helm.supported_versions import refuse_unsupported

#: Modules that each add one subcommand (see the module docstring).
COMMAND_MODULES: tuple[str, ...] = (
    "syntaxgym_helm.cli.validate",
    "syntaxgym_helm.cli.generate",
    "syntaxgym_helm.cli.report",
    "syntaxgym_helm.cli.compare",
    "syntaxgym_helm.cli.leaderboard",
    "syntaxgym_helm.cli.pairs",
    "syntaxgym_helm.cli.evaluate",
    "syntaxgym_helm.cli.model",
    "syntaxgym_helm.cli.surprisal",
    "syntaxgym_helm.cli.sweep",
)


def main(argv: Sequence[str] | None = None) -> int:
    from syntaxgym_helm.clients import interruption

    # As a command (console script, python -m): end on Ctrl-C with one line. Called in a
    # process that is no command (a test, a notebook), the signals are left as they were.
    if _is_command():
        interruption.install(end_process=True)

    # torch, transformers or gguf outside the tested ranges: stop here, with one line.
    refuse_unsupported()
    parser = argparse.ArgumentParser(
        prog="syntaxgym-helm", description="SyntaxGym suites and reports for HELM")
    commands = parser.add_subparsers(dest="command", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(commands)
    args = parser.parse_args(argv)
    from syntaxgym_helm.core.errors import SyntaxGymError

    try:
        status = int(args.handler(args))
        sys.stdout.flush()  # here, where a reader gone is caught, not at the interpreter's exit
        return status
    except SyntaxGymError as error:  # one the package raises on purpose: its message says all
        print(f"syntaxgym-helm {args.command}: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader left (``| head``): end quietly, as a Unix tool does
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


def _is_command() -> bool:
    """Whether this process is the ``syntaxgym-helm`` command (its console script, or
    ``python -m syntaxgym_helm.cli.main``)."""
    import os

    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    return (os.path.basename(sys.argv[0] if sys.argv else "").startswith("syntaxgym-helm")
            or getattr(spec, "name", "") == "syntaxgym_helm.cli.main")


if __name__ == "__main__":
    sys.exit(main())
