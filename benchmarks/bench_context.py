"""Benchmark: robustness to context (``context=`` run entries), its cost and its results.

Two parts, each written between this script's markers into ``--output`` (the rest of the file is
kept): ``cost`` into BENCHMARKS.md ("Cost of a context before each item"), ``robustness`` into
docs/context.md ("Measured"):

``cost``
    One ``helm-run`` per context length (``--sentences 0,1,3,6``, kind ``--kind``, default
    ``acceptable``) of the built-in suites (or ``--suites hu2020``: the 34 of Hu et al. 2020 from
    ``--suites-dir``) on SmolLM2-135M through the plugin's engine, each in a fresh folder (cold
    request cache). Per length: the whole process's wall time, the time in HELM's execution
    phase, and the engine's own counts (its log line "this run scored N prompts (T tokens)
    computing P positions"), summed over runs. Without prefix sharing an engine computes at
    least every token of every prompt; with it, an item's conditions share the context, so the
    positions grow with the context about (conditions) times slower than the tokens.
``robustness``
    Every kind of context (none, acceptable, unacceptable, unrelated; ``--sentences-full``
    sentences, default 3) on both embedded models (those installed): the built-in suites
    (``run_specs/syntaxgym_context.conf``, run suite ``context_builtin``), then the 34 Hu et al.
    suites (``run_specs/syntaxgym_context_hu2020.conf``, ``context_hu2020``), each followed by
    ``syntaxgym-helm report``: the robustness tables, the commands and the whole time, one
    subsection per family (markers ``robustness-builtin``, ``robustness-hu2020``).

Not a test. Run from the project root, e.g.::

    python benchmarks/bench_context.py --parts cost --output BENCHMARKS.md
    python benchmarks/bench_context.py --parts robustness --output docs/context.md

``--families builtin`` runs the robustness part on the built-in suites only; ``--max-items 2``
makes a quick trial of either part (helm-run's ``--max-eval-instances``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench_scoring import helm_phases, timed  # same folder: run as a script
from markdown_sections import commit, without_scratch_paths

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SUITES_DIR = ROOT.parent / "shared" / "suites" / "hu2020"
BIN = Path(sys.executable).parent
SECTION = "## Robustness to context"
_COUNTS = re.compile(r"this run scored (\d+) prompts \((\d+) tokens\) computing (\d+) positions "
                     r"in (\d+) forward passes")


def engine_counts(log: str) -> dict[str, int]:
    """The engine's log lines of a helm-run, summed: prompts, tokens, positions, passes."""
    totals = dict.fromkeys(("prompts", "tokens", "positions", "passes"), 0)
    for match in _COUNTS.finditer(log):
        for key, value in zip(totals, match.groups(), strict=False):
            totals[key] += int(value)
    return totals


def helm_run(entries: list[str] | None, confs: list[Path] | None, models: list[str],
             folder: Path | None, env: dict[str, str], run_suite: str,
             cwd: Path | None = None) -> dict[str, Any]:
    """One helm-run in the fresh ``folder`` (or, with ``folder`` None, in ``cwd``, which an
    earlier run made), timed; its phases and engine counts."""
    command = [str(BIN / "helm-run"), "--suite", run_suite, "--max-eval-instances",
               str(env.get("BENCH_CONTEXT_MAX_ITEMS", "100000"))]
    if entries:
        command += ["--run-entries", *entries]
    if confs:
        command += ["--conf-paths", *map(str, confs), "--models-to-run", *models]
    log_path = (folder or cwd) / f"helm-run-{run_suite}.log"
    if env.get("BENCH_CONTEXT_REUSE") and log_path.is_file():
        result = logged(log_path)  # a finished run of an earlier call: read, not run again
    else:
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
        result = timed(command, folder or cwd, env, log_path)
    result["phases"] = helm_phases(result["log"], result["started"], result["ended"])
    result["counts"] = engine_counts(result["log"])
    # Paths inside the repository as a reader's clone has them.
    result["command"] = " ".join(["helm-run", *command[1:]]).replace(f"{ROOT}/", "")
    return result


def logged(log_path: Path) -> dict[str, Any]:
    """What :func:`bench_scoring.timed` returns, read back from a finished run's log (its
    ``/usr/bin/time -v`` lines; the end is the log's modification time)."""
    text = log_path.read_text()

    def number(label: str) -> float:
        return float(re.search(rf"{re.escape(label)}: ([0-9.:]+)", text).group(1).split(":")[-1])

    clock = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([0-9:.]+)", text)
    wall = sum(float(part) * 60 ** index
               for index, part in enumerate(reversed(clock.group(1).split(":"))))
    ended = log_path.stat().st_mtime
    return {"wall_s": wall, "cpu_s": number("User time (seconds)")
            + number("System time (seconds)"),
            "peak_rss_mb": number("Maximum resident set size (kbytes)") / 1024, "log": text,
            "started": ended - wall, "ended": ended}


def cost_part(args: argparse.Namespace, work: Path,
              env: dict[str, str]) -> list[tuple[str, str]]:
    """The cost report (marker ``cost``), as the one (marker, text) pair of its part."""
    from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M
    from syntaxgym_helm.core.registry import HU2020_SUITES, builtin_suites

    suites = sorted(HU2020_SUITES) if args.suites == "hu2020" else builtin_suites()
    model = SMOLLM2_135M.syntaxgym_name
    rows = []
    for count in args.sentences:
        entries = [f"syntaxgym:suite={s},context={args.kind},context_sentences={count},"
                   f"model={model}" for s in suites]
        result = helm_run(entries, None, [], work / f"cost-{count}", env, f"cost{count}")
        rows.append((count, result))
        counts = result["counts"]
        print(f"context_sentences={count}: {result['wall_s']:.1f} s, {counts['tokens']} tokens, "
              f"{counts['positions']} positions", flush=True)
    base = rows[0][1]
    which = "Hu et al. (2020)" if args.suites == "hu2020" else "built-in"
    lines = [
        f"**Cost of a context** ({len(suites)} {which} suites, `{model}`, context={args.kind}, "
        "cold request cache, one helm-run per "
        "length; tokens: what the engine scored, the least a scorer without prefix "
        "sharing computes; positions: what it computed)",
        "",
        "| context_sentences | prompts | tokens | positions computed | positions / tokens "
        "| forward passes | helm-run CPU time (s) | whole helm-run, wall (s) | "
        "peak RSS (MB) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for count, result in rows:
        c = result["counts"]
        lines.append(f"| {count} | {c['prompts']} | {c['tokens']} | {c['positions']} | "
                     f"{c['positions'] / max(c['tokens'], 1):.2f} | {c['passes']} | "
                     f"{result['cpu_s']:.1f} | {result['wall_s']:.1f} | "
                     f"{result['peak_rss_mb']:.0f} |")
    last_count, last = rows[-1]

    def grow(key: str) -> float:
        return last["counts"][key] / max(base["counts"][key], 1)

    example = (f"syntaxgym:suite={suites[0]},context={args.kind},context_sentences=N,"
               f"model={model}")
    lines += ["", f"From {rows[0][0]} to {last_count} sentences the tokens grow "
              f"{grow('tokens'):.2f}x, the positions computed {grow('positions'):.2f}x: the "
              f"context adds {last['counts']['tokens'] - base['counts']['tokens']} tokens but "
              f"only {last['counts']['positions'] - base['counts']['positions']} positions "
              "(the conditions of an item share it); the "
              f"helm-run's CPU time {last['cpu_s'] / base['cpu_s']:.2f}x (its wall time "
              f"{last['wall_s'] / base['wall_s']:.2f}x: the machine is shared, so wall times "
              "depend on what else runs; CPU time much less).", "",
              f"Command (per length N): `helm-run --run-entries {example} ... (one run entry per "
              f"suite) --suite costN --max-eval-instances {args.max_items}`", ""]
    return [("cost", _stamped("cost", lines, args, dt.datetime.fromtimestamp(last["ended"])))]


def robustness_part(args: argparse.Namespace, work: Path,
                    env: dict[str, str]) -> list[tuple[str, str]]:
    """One report per family of suites (``robustness-builtin``, ``robustness-hu2020``), each
    with its own markers, so that running one family leaves the other's report in place."""
    from syntaxgym_helm.clients.embedded.catalogue import installed_syntaxgym_names

    models = installed_syntaxgym_names()
    folder = work / "robustness"
    parts = [("builtin", "the 11 built-in suites", "syntaxgym_context.conf"),
             ("hu2020", "the 34 Hu et al. (2020) suites", "syntaxgym_context_hu2020.conf")]
    reports = []
    parts = [part for part in parts if part[0] in args.families]
    for index, (name, label, conf_name) in enumerate(parts):
        conf = ROOT / "run_specs" / conf_name
        # The confs hold the default context_sentences; another count goes through a copy.
        if args.sentences_full != 3:
            conf = _with_count(conf, args.sentences_full, work)
        run_suite = f"context_{name}"
        chosen = [m for m in models if name != "hu2020" or not args.hu2020_models
                  or m in args.hu2020_models]
        result = helm_run(None, [conf], chosen, folder if index == 0 else None, env, run_suite,
                          cwd=folder)
        print(f"robustness {name}: {result['wall_s']:.1f} s", flush=True)
        subprocess.run([str(BIN / "syntaxgym-helm"), "report", "benchmark_output", "--suite",
                        run_suite], cwd=folder, env=env, capture_output=True, text=True,
                       check=True, timeout=3600)
        summary = (folder / "benchmark_output" / "syntaxgym_report" / run_suite / "summary.md")
        text = summary.read_text()
        section = text[text.index("## Robustness to context"):].split("\n", 1)[1]
        section = section.replace("\n### ", "\n#### ")
        c = result["counts"]
        suites_dir = f"SYNTAXGYM_SUITES_DIR={args.suites_dir} " if name == "hu2020" else ""
        lines = [f"**Robustness run, {label}**: context none, acceptable, unacceptable, "
                 f"unrelated ({args.sentences_full} sentences, seed 0), then "
                 f"`syntaxgym-helm report benchmark_output --suite {run_suite}`; models "
                 f"{', '.join(f'`{m}`' for m in chosen)} ({c['prompts']} prompts, {c['tokens']} "
                 f"tokens, {c['positions']} positions computed; whole helm-run "
                 f"**{result['wall_s']:.0f} s** wall, {result['cpu_s']:.0f} s CPU, peak RSS "
                 f"{result['peak_rss_mb']:.0f} MB). "
                 f"Command: `{suites_dir}{result['command']}`", "",
                 section.strip(), ""]
        reports.append((f"robustness-{name}", _stamped(
            "robustness", lines, args, dt.datetime.fromtimestamp(result["ended"]),
            flags=f" --families {name}")))
    return reports


def _with_count(conf: Path, count: int, work: Path) -> Path:
    text = re.sub(r",context=(\w+),", rf",context=\1,context_sentences={count},",
                  conf.read_text())
    copy = work / conf.name
    copy.write_text(text)
    return copy


def _stamped(part: str, lines: list[str], args: argparse.Namespace, when: dt.datetime,
             flags: str = "") -> str:
    load = os.getloadavg()
    machine = (f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
               f", load average {load[0]:.1f} at the end (the CPU is shared)")
    return "\n".join([*lines, f"_Measured (last run ended {when:%Y-%m-%d %H:%M}) at commit "
                      f"{commit()} on {machine} by "
                      f"`python benchmarks/bench_context.py --parts {part}{flags}` ({part})._",
                      ""])


def _markers(part: str) -> tuple[str, str]:
    return (f"<!-- benchmarks/bench_context.py {part}: start -->",
            f"<!-- benchmarks/bench_context.py {part}: end -->")


def write_part(path: Path, part: str, text: str) -> None:
    """Put ``text`` between the part's markers under :data:`SECTION` (made at the end of the
    file when missing), replacing an earlier report of that part; the rest stays."""
    start, end = _markers(part)
    block = f"{start}\n{without_scratch_paths(text).rstrip()}\n{end}\n"
    old = path.read_text() if path.exists() else "# Benchmarks\n"
    if start in old and end in old:
        before, rest = old.split(start, 1)
        path.write_text(before + block + rest.split(end, 1)[1].lstrip("\n"))
        return
    if SECTION not in old:
        old = old.rstrip("\n") + f"\n\n{SECTION}\n\n"
    head, tail = old.split(SECTION, 1)
    # After the section's other blocks: before the next "## " heading, if any.
    following = re.search(r"\n## ", tail)
    cut = following.start() + 1 if following else len(tail)
    path.write_text(head + SECTION + tail[:cut].rstrip("\n") + "\n\n" + block
                    + ("\n" + tail[cut:] if following else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", default="cost", help="comma-separated: cost, robustness")
    parser.add_argument("--suites", default="builtin", choices=("builtin", "hu2020"),
                        help="the cost part's suites")
    parser.add_argument("--kind", default="acceptable", help="the cost part's context kind")
    parser.add_argument("--sentences", default="0,1,3,6",
                        type=lambda text: [int(n) for n in text.split(",")])
    parser.add_argument("--sentences-full", type=int, default=3,
                        help="context_sentences of the robustness part")
    parser.add_argument("--suites-dir", type=Path, default=DEFAULT_SUITES_DIR)
    parser.add_argument("--families", default="builtin,hu2020", type=lambda t: t.split(","),
                        help="the robustness part's suites: builtin, hu2020 or both")
    parser.add_argument("--workdir", type=Path, help="default: a new temporary folder")
    parser.add_argument("--output", type=Path, help="write the parts into this Markdown file")
    parser.add_argument("--hu2020-models", type=lambda t: t.split(","), default=None,
                        help="the robustness part's models on the Hu et al. suites (default: "
                        "every embedded model installed)")
    parser.add_argument("--reuse", action="store_true",
                        help="read the runs already in --workdir instead of running them again")
    parser.add_argument("--max-items", type=int, default=100000,
                        help="helm-run's --max-eval-instances (fewer: a quick trial)")
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="syntaxgym-bench-context-"))
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "SYNTAXGYM_SUITES_DIR": str(args.suites_dir),
           "PYTHONPATH": str(ROOT), "BENCH_CONTEXT_MAX_ITEMS": str(args.max_items),
           **({"BENCH_CONTEXT_REUSE": "1"} if args.reuse else {})}
    parts = {"cost": cost_part, "robustness": robustness_part}
    for part in args.parts.split(","):
        for name, text in parts[part](args, work, env):
            print(text)
            if args.output:
                write_part(args.output, name, text)


if __name__ == "__main__":
    main()
