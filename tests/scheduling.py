"""How ``make test`` shares the tests out between its pytest-xdist workers (``tests/conftest.py``
applies it): whole groups of test files, each on one worker, the longest first by the seconds
``make test-durations`` recorded. ``tests/`` is on ``sys.path``: import this as ``scheduling``.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

#: Test files that share costly runs: under pytest-xdist each group runs on one worker, which makes
#: the runs once. A group named after a session fixture must list every file that uses it
#: (``tests/conftest.py`` checks at collection).
SAME_WORKER = {
    "builtin_runs": ("tests/clients/test_embedded.py", "tests/harness/test_parallel_runners.py",
                     "tests/runners/test_ray_runner.py", "tests/runners/test_slurm_runner.py"),
    # test_report.produce_runs: made once per worker, kept in its temporary folder.
    "report_runs": ("tests/report/test_report.py", "tests/report/test_browser.py",
                    "tests/report/test_scored_items.py", "tests/report/test_stats_on_real_runs.py"),
    "training_run": ("tests/api/test_sweep.py", "tests/cli/test_sweep_command.py",
                     "tests/faults/test_faults_interrupt.py"),
}
GROUP_OF_FILE = {path: fixture for fixture, paths in SAME_WORKER.items() for path in paths}


def group_of(nodeid: str) -> str:
    """The unit of work a test belongs to under pytest-xdist: its file, or its fixture's group."""
    path = nodeid.split("::", 1)[0]
    return GROUP_OF_FILE.get(path, path)


#: Seconds each group (:func:`group_of`) took in a whole run (``make test-durations`` writes it):
#: under pytest-xdist the longest go first (``tests/conftest.py``).
DURATIONS_FILE = Path(__file__).parent / "durations.json"
#: What a group missing from :data:`DURATIONS_FILE` (a new file) is taken to cost: seconds per
#: slow test and per other test.
GUESS_SLOW_S, GUESS_OTHER_S = 8.0, 0.1


def group_costs(tests: list[tuple[str, bool]], recorded: dict[str, float]) -> dict[str, float]:
    """Seconds per group of ``tests`` (node id, whether marked slow): as ``recorded``, else
    guessed (:data:`GUESS_SLOW_S`, :data:`GUESS_OTHER_S`)."""
    guessed: Counter[str] = Counter()
    for nodeid, slow in tests:
        guessed[group_of(nodeid)] += GUESS_SLOW_S if slow else GUESS_OTHER_S
    return {group: recorded.get(group, guess) for group, guess in guessed.items()}


def recorded_durations() -> dict[str, float]:
    """:data:`DURATIONS_FILE`'s seconds per group; empty where it is missing or unreadable (the
    order is then guessed: slower, never wrong)."""
    try:
        return {str(group): float(seconds) for group, seconds in
                json.loads(DURATIONS_FILE.read_text())["seconds"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}
