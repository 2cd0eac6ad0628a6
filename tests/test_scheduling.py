"""How ``make test`` shares the test files out between its pytest-xdist workers
(``tests/scheduling.py``): by the seconds each group took when last recorded, longest first."""

from __future__ import annotations

from pathlib import Path

from scheduling import (
    DURATIONS_FILE,
    GUESS_OTHER_S,
    GUESS_SLOW_S,
    SAME_WORKER,
    group_costs,
    recorded_durations,
)

TESTS = Path(__file__).parent


def test_the_recorded_durations_name_groups_that_exist() -> None:
    """A file renamed or removed since ``make test-durations`` would keep a stale entry, and
    the new name would be guessed: record them again."""
    recorded = recorded_durations()
    assert len(recorded) >= 40, f"{DURATIONS_FILE} is missing or unreadable"
    stale = [group for group in recorded
             if group not in SAME_WORKER and not (TESTS.parent / group).is_file()]
    assert not stale, f"run `make test-durations` (stale entries: {stale})"
    assert all(seconds >= 0 for seconds in recorded.values())


def test_groups_cost_their_recorded_seconds_and_new_ones_are_guessed() -> None:
    report = SAME_WORKER["report_runs"]
    tests = [(f"{report[0]}::test_a", True), (f"{report[1]}::test_b", False),
             ("tests/new/test_new.py::test_c", True), ("tests/new/test_new.py::test_d", False),
             ("tests/core/test_formula.py::test_e", False)]
    costs = group_costs(tests, {"report_runs": 59.5, "tests/core/test_formula.py": 2.1})
    # The files of a group that shares a fixture are one unit, whatever the test.
    assert costs == {"report_runs": 59.5, "tests/new/test_new.py": GUESS_SLOW_S + GUESS_OTHER_S,
                     "tests/core/test_formula.py": 2.1}
