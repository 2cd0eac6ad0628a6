"""Compare two HELM run-suite folders item by item: every stat of every instance must be equal
(except those of the run, not the model: time and cache hits).

For checking that a change (a refactor, a new engine setting) leaves every outcome as it was:

    python benchmarks/compare_item_outcomes.py \
        OLD/benchmark_output/runs/S NEW/benchmark_output/runs/S

Runs are paired by their SyntaxGym suite (``suite=`` in the run name), instances by id. Prints the
instances that differ or are missing, and the stat names only one side has; exit status 1 if any
instance differs or is missing.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from syntaxgym_helm.harness.stats import RUN_DEPENDENT_STATS

Stats = dict[tuple[str, str], dict[str, float]]


def instance_stats(run_suite_dir: Path) -> Stats:
    """(suite, instance id) -> stat name -> mean, over the run suite's SyntaxGym runs."""
    found: Stats = {}
    for run in sorted(Path(run_suite_dir).glob("syntaxgym:*")):
        suite = re.search(r"suite=([^,]+)", run.name).group(1)
        for instance in json.loads((run / "per_instance_stats.json").read_text()):
            found[(suite, instance["instance_id"])] = {
                stat["name"]["name"]: stat["mean"] for stat in instance["stats"]
                if not stat["name"].get("perturbation")
                and stat["name"]["name"] not in RUN_DEPENDENT_STATS}
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    args = parser.parse_args()
    old, new = instance_stats(args.old), instance_stats(args.new)
    differing, one_sided = 0, set()
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if a is None or b is None:
            differing += 1
            print(f"{key[0]} {key[1]}: only in {'new' if a is None else 'old'}")
            continue
        one_sided |= set(a) ^ set(b)
        changed = {name: (a[name], b[name]) for name in set(a) & set(b) if a[name] != b[name]}
        if changed:
            differing += 1
            print(f"{key[0]} {key[1]}: {changed}")
    print(f"{len(old)} and {len(new)} instances; {differing} differ or are missing; "
          f"stats on one side only: {sorted(one_sided) or 'none'}")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
