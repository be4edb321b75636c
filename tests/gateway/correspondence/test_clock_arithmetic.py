"""The pure parts of correspondence clocks: the deadline a vacation moves (gateway/vacation/model.py),
the allowance's hours, the time controls as answered, and the test clock's switch
(kit/timesource.py), which must refuse to come on by accident."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from gateway.timecontrol import DAY_MS, is_correspondence, time_control_of
from gateway.vacation.model import HOUR_MS, Vacation, effective_deadline, parse_log

T = 1_800_000_000_000


def test_no_vacation_leaves_the_deadline_alone() -> None:
    assert effective_deadline(T, 3 * DAY_MS, []) == T + 3 * DAY_MS
    # Vacations wholly before the turn, or after its deadline, change nothing.
    assert effective_deadline(T, 3 * DAY_MS, [(T - 5 * DAY_MS, T - DAY_MS), (T + 4 * DAY_MS, T + 6 * DAY_MS)]) == (
        T + 3 * DAY_MS
    )


def test_the_clock_stands_still_during_each_vacation() -> None:
    # A day away in the middle: a day later.
    assert effective_deadline(T, 3 * DAY_MS, [(T + DAY_MS, T + 2 * DAY_MS)]) == T + 4 * DAY_MS
    # Away when the turn began (a move made to a player on vacation): the clock starts at the return.
    assert effective_deadline(T, 3 * DAY_MS, [(T - DAY_MS, T + DAY_MS)]) == T + 4 * DAY_MS
    # Two vacations, unordered and overlapping: the time away is counted once.
    away = [(T + 2 * DAY_MS, T + 3 * DAY_MS), (T + DAY_MS, T + 2 * DAY_MS + HOUR_MS)]
    assert effective_deadline(T, 3 * DAY_MS, away) == T + 5 * DAY_MS
    # A vacation that begins exactly at the deadline comes too late.
    assert effective_deadline(T, DAY_MS, [(T + DAY_MS, T + 2 * DAY_MS)]) == T + DAY_MS
    # ... one that begins a millisecond before it moves it by its whole length.
    assert effective_deadline(T, DAY_MS, [(T + DAY_MS - 1, T + 2 * DAY_MS)]) == T + 2 * DAY_MS + 1


def test_the_log_and_the_allowance() -> None:
    assert parse_log([b"10|20", "30|40", b"junk", "5|"]) == [(10, 20), (30, 40)]
    away = Vacation(start_ms=T, end_ms=T + 10 * DAY_MS, year=2027, used_ms=0, allowance_ms=30 * DAY_MS, now_ms=T + 1)
    assert away.active and away.used_now_ms == HOUR_MS  # an hour at least, as it runs
    later = Vacation(T, T + 10 * DAY_MS, 2027, 2 * HOUR_MS, 30 * DAY_MS, T + 90 * 60_000)
    assert later.used_now_ms == 4 * HOUR_MS and later.left_ms == 30 * DAY_MS - 4 * HOUR_MS
    over = Vacation(T, T + DAY_MS, 2027, 0, 30 * DAY_MS, T + DAY_MS)
    assert not over.active


def test_time_controls_as_answered() -> None:
    assert time_control_of(3 * DAY_MS).days_per_move == 3
    assert time_control_of(4 * DAY_MS).days_per_move == 0  # not an offered length: per_move only
    assert time_control_of(60_000).days_per_move == 0 and time_control_of(60_000).per_move.ToSeconds() == 60
    assert is_correspondence(DAY_MS) and not is_correspondence(DAY_MS - 1)


@pytest.mark.parametrize(
    ("env", "fails"),
    [
        ({"TAFEL_TIME_OFFSET_FILE": "/tmp/x"}, True),  # the file alone: refused
        ({"TAFEL_TEST_TIME": "on"}, True),  # the switch alone: refused
        ({"TAFEL_TEST_TIME": "yes", "TAFEL_TIME_OFFSET_FILE": "/tmp/x"}, True),
        ({}, False),
    ],
)
def test_the_moved_clock_needs_both_settings(env: dict[str, str], fails: bool) -> None:
    clean = {k: v for k, v in os.environ.items() if k not in ("TAFEL_TIME_OFFSET_FILE", "TAFEL_TEST_TIME")}
    code = "import time; from kit import timesource as t; assert t.now_ns is time.time_ns and not t.moved()"
    done = subprocess.run([sys.executable, "-c", code], env={**clean, **env}, capture_output=True, text=True)
    assert (done.returncode != 0) == fails, done.stderr
    if fails:
        assert "TimeSourceError" in done.stderr


def test_the_moved_clock_reads_its_offset(tmp_path: object) -> None:
    path = os.path.join(str(tmp_path), "offset")
    code = (
        "import time; from kit import timesource as t\n"
        "assert t.moved()\n"
        f"t.write_offset({path!r}, 7 * 86400000); time.sleep(0.01)\n"
        "assert abs(t.now_ms() - time.time() * 1000 - 7 * 86400000) < 1000\n"
        "assert abs(t.now_s() - time.time() - 7 * 86400) < 1\n"
    )
    env = {**os.environ, "TAFEL_TIME_OFFSET_FILE": path, "TAFEL_TEST_TIME": "on"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
