"""Runs of two different suites that share a name are told apart.

A report groups runs by their suite's name (``RunRecord.suite_name``: a registered name, or a
suite file's stem). Two suite files with the same name but other items (a suite edited between
two runs, two folders holding a ``agreement.json`` each) would then be one row of every table,
one suite's figures hiding the other's. So runs whose suites share a name are compared: two runs
are of one suite when their suites' headers (meta, regions, predictions) are equal and every
item number they both ran has the same item (runs of a suite that ran other samples of it, e.g.
``--max-eval-instances``, agree); otherwise each version of the suite gets a name of its own,
``<name> [<the suite argument of its runs>]``, or ``<name> [items <digest>]`` where the argument
is the same, and a warning names them.

Runs of one suite can still meet in one cell of a report's tables: one model's runs of two files
of one suite (items 1-6 in one, 7-14 in the other), or of one suite under two run-entry arguments
a label does not show (``ties=pass`` beside ``ties=fail``). Each table would then show one of
them while others count both. :func:`separate_cells` tells them apart: by the suite argument
(the suite's name gets it) where that differs, by the other arguments that differ (the label gets
them), and by the run's name where nothing else does; a warning names them.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Sequence
from dataclasses import replace
from typing import Any


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _fingerprint(run: Any) -> tuple[str, dict[int, str]]:
    """The digest of the suite's header, and of each of its items by number."""
    data = run.suite.to_json_dict()
    items = data.pop("items")
    return _digest(data), {item["item_number"]: _digest(item) for item in items}


def _agree(one: tuple[str, dict[int, str]], other: tuple[str, dict[int, str]]) -> bool:
    return one[0] == other[0] and all(other[1].get(number, digest) == digest
                                      for number, digest in one[1].items())


def distinguish_suites(runs: Sequence[Any]) -> list[Any]:
    """``runs``, those whose suites share a name but not their items renamed apart (see the
    module doc)."""
    by_name: dict[str, list[int]] = {}
    for index, run in enumerate(runs):
        by_name.setdefault(run.suite_name, []).append(index)
    renamed = list(runs)
    for name, indices in by_name.items():
        if len(indices) < 2:
            continue
        versions: list[tuple[tuple[str, dict[int, str]], list[int]]] = []
        for index in indices:
            fingerprint = _fingerprint(runs[index])
            for known, members in versions:
                if _agree(fingerprint, known):
                    members.append(index)
                    known[1].update(fingerprint[1])
                    break
            else:
                versions.append((fingerprint, [index]))
        if len(versions) < 2:
            continue
        sources = [{runs[i].suite_source for i in members} for _, members in versions]
        by_source = all(len(s) == 1 for s in sources) and len({min(s) for s in sources}) == len(
            sources)
        tags = [f"{min(s)}" if by_source else f"items {_digest(sorted(known[1].items()))[:8]}"
                for s, (known, _) in zip(sources, versions, strict=True)]
        for tag, (_, members) in zip(tags, versions, strict=True):
            for index in members:
                renamed[index] = replace(runs[index], suite_name=f"{name} [{tag}]")
        print(f"warning: runs of {len(versions)} different suites named {name!r} are reported "
              f"apart, as {', '.join(repr(f'{name} [{tag}]') for tag in tags)}: "
              + "; ".join(f"{name} [{tag}]: {', '.join(str(runs[i].run_dir) for i in members)}"
                          for tag, (_, members) in zip(tags, versions, strict=True)),
              file=sys.stderr)
    return renamed


def _entry_arguments(run: Any) -> dict[str, str]:
    """The run entry's arguments, from the run's name (``syntaxgym:suite=X,ties=pass,model=M``)."""
    body = run.run_name.split(":", 1)[-1]
    return dict(part.partition("=")[::2] for part in body.split(",") if "=" in part)


def _default(name: str) -> str:
    from syntaxgym_helm.core.run_options import RunOptions

    return str(getattr(RunOptions(), name, ""))


def _cells(runs: Sequence[Any]) -> dict[tuple[str, str], list[int]]:
    cells: dict[tuple[str, str], list[int]] = {}
    for index, run in enumerate(runs):
        cells.setdefault((run.suite_name, run.name), []).append(index)
    return {cell: members for cell, members in cells.items() if len(members) > 1}


def separate_cells(runs: Sequence[Any]) -> list[Any]:
    """``runs`` (labelled), those that would share a cell of the tables told apart (see the
    module doc)."""
    apart = list(runs)
    shared = _cells(runs)
    for (suite, label), members in shared.items():
        sources = {runs[i].suite_source for i in members}
        arguments = {i: _entry_arguments(runs[i]) for i in members}
        names = sorted({k for values in arguments.values() for k in values} - {"model", "suite"})
        differing = [k for k in names
                     if len({values.get(k, _default(k)) for values in arguments.values()}) > 1]
        for i in members:
            run = apart[i]
            if len(sources) > 1:
                run = replace(run, suite_name=f"{suite} [{run.suite_source}]")
            if differing:
                shown = ", ".join(f"{k}={arguments[i].get(k, _default(k))}" for k in differing)
                run = replace(run, label=f"{label} [{shown}]")
            apart[i] = run
    for members in _cells(apart).values():  # nothing else differs: the runs' names do
        for i in members:
            apart[i] = replace(apart[i], label=f"{apart[i].name} ({apart[i].run_name})")
    if shared:
        print(f"warning: {sum(len(m) for m in shared.values())} runs would share a cell of the "
              "tables (one suite, one model): reported apart, as "
              + "; ".join(", ".join(f"{apart[i].suite_name} / {apart[i].name} "
                                    f"({apart[i].run_dir})" for i in members)
                          for members in shared.values()), file=sys.stderr)
    return apart
