"""A vacation and the clock arithmetic it implies (pure: no Redis, no clock of its own).

A correspondence turn armed at `start` with `per_move` ms runs out when `per_move` ms of the
to-act player's time *outside* their vacations have passed since `start`: effective_deadline. It
is computed from stored facts only (the turn's start, the player's vacation log), so every replica,
before and after a restart, gets the same deadline: a timeout is neither fired early, twice (the
timeout's request id is the version's), nor lost.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from dataclasses import dataclass

HOUR_MS = 3_600_000
DAY_MS = 24 * HOUR_MS
# Vacations older than this leave the log (no correspondence turn lasts that long: 14 days a move
# and a year's allowance at most).
LOG_KEPT_MS = 550 * DAY_MS


def utc_year(ms: int) -> int:
    return datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC).year


@dataclass(frozen=True)
class Vacation:
    """A player's vacation state as of `now_ms`."""

    start_ms: int | None  # the one in progress (None: not on vacation)
    end_ms: int | None  # when it ends by itself
    year: int
    used_ms: int  # of this year's allowance, finished vacations only (whole hours)
    allowance_ms: int
    now_ms: int

    @property
    def active(self) -> bool:
        return self.start_ms is not None and self.end_ms is not None and self.now_ms < self.end_ms

    @property
    def used_now_ms(self) -> int:
        """Used this year, counting the one in progress up to now (whole hours, at least one)."""
        if not self.active or self.start_ms is None:
            return self.used_ms
        away = self.now_ms - self.start_ms
        return self.used_ms + max(HOUR_MS, -(-away // HOUR_MS) * HOUR_MS)

    @property
    def left_ms(self) -> int:
        return max(0, self.allowance_ms - self.used_now_ms)


def effective_deadline(start_ms: int, per_move_ms: int, away: Iterable[tuple[int, int]]) -> int:
    """When a turn that began at `start_ms` runs out, the clock standing still during each interval
    [from, to) of `away` (the player's vacations, any order, overlapping or not)."""
    at, left = start_ms, per_move_ms
    for begin, end in sorted(away):
        if end <= at:
            continue
        begin = max(begin, at)
        if begin - at >= left:
            break
        left -= begin - at
        at = end
    return at + left


def parse_log(members: Iterable[bytes | str]) -> list[tuple[int, int]]:
    """The log's members "<start>|<end>" as intervals (malformed ones skipped)."""
    out: list[tuple[int, int]] = []
    for raw in members:
        member = raw.decode() if isinstance(raw, bytes) else raw
        begin, _, end = member.partition("|")
        if begin.isdigit() and end.isdigit():
            out.append((int(begin), int(end)))
    return out
