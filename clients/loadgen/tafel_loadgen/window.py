"""The measured window of the `games` scenario, defined as the peers' harness defines it
(../shared/peers/README.md, "What is measured"): it opens once every player has its first match
(sign-ins, connections and the first searches are setup, not measured) and lasts the run's
duration. Moves, finished games, move latencies, searches and every process's CPU count inside
it only; the setup's length and its first searches are reported beside it.

Players in several client processes share one `Board` (multiprocessing values): the player whose
first match completes the count opens the window for all of them; each process's `Window` learns
it by polling the board (every 10 ms, during setup only).
"""

from __future__ import annotations

import asyncio
import math
import multiprocessing
import time
from typing import Any

POLL_S = 0.01
SETUP_TIMEOUT_S = 120.0  # a setup that never completes opens the window anyway (and says so)


class Board:
    """What the client processes share: players matched once so far, and the window's start
    (time.monotonic(), CLOCK_MONOTONIC: the same clock in every process; 0 until it opens)."""

    def __init__(self, players: int, context: Any = None) -> None:
        context = context or multiprocessing.get_context("spawn")
        self.players = players
        self.launched = time.monotonic()  # the setup's start: before any client process starts
        self.matched = context.Value("i", 0)
        self.start = context.Value("d", 0.0)

    def matched_first(self) -> None:
        """One more player has its first match; the last one opens the window."""
        with self.matched.get_lock():
            self.matched.value += 1
            if self.matched.value >= self.players and not self.start.value:
                self.start.value = time.monotonic()

    def open_now(self) -> bool:
        """Open the window if it is not yet (a setup that ran out of time); True if this did."""
        with self.matched.get_lock():
            if self.start.value:
                return False
            self.start.value = time.monotonic()
            return True

    def started(self) -> float:
        return float(self.start.value)


class Window:
    """One process's view of the window: `start` and `end` (time.monotonic()) are infinite until
    it opens; timeouts taken from it before then are moved to its end when it does."""

    def __init__(self, board: Board, duration_s: float) -> None:
        self.board = board
        self.duration_s = duration_s
        self.start = math.inf
        self.end = math.inf
        self.cpu_at_start = 0.0  # this process's CPU (time.process_time) when it opened
        self.cpu_in_window = 0.0
        self.setup_timed_out = False  # the window opened after SETUP_TIMEOUT_S, not every player matched
        self._timeouts: list[tuple[asyncio.Timeout, float]] = []

    @classmethod
    def unbounded(cls) -> Window:
        """Always open, never ending: everything counts (the tournament scenario, played to its end)."""
        window = cls(Board(0), math.inf)
        window.start = 0.0
        return window

    def inside(self) -> bool:
        return self.start <= time.monotonic() < self.end

    def timeout(self, grace_s: float = 0.0, at_least_s: float = 0.0) -> asyncio.Timeout:
        """A timeout at the window's end + `grace_s` (at least `at_least_s` from now); taken
        before the window opened, it is set when the window opens."""
        if self.start == 0.0:  # unbounded: no end to time out at
            return asyncio.timeout(None)
        if self.end != math.inf:
            return asyncio.timeout_at(self._loop_time(max(self.end + grace_s, time.monotonic() + at_least_s)))
        timeout = asyncio.timeout(None)  # entered by the caller before the loop runs anything else
        self._timeouts.append((timeout, grace_s))
        return timeout

    @staticmethod
    def _loop_time(monotonic: float) -> float:
        return asyncio.get_running_loop().time() + (monotonic - time.monotonic())

    def _open(self, start: float) -> None:
        self.start, self.end = start, start + self.duration_s
        self.cpu_at_start = time.process_time()
        for timeout, grace_s in self._timeouts:
            try:
                timeout.reschedule(self._loop_time(self.end + grace_s))
            except (RuntimeError, AssertionError):  # its block has ended already
                continue
        self._timeouts.clear()

    async def follow(self) -> None:
        """Learn when the window opens (polling the board), then note this process's CPU at its
        end. Runs beside the players; cancelled with them."""
        while not (start := self.board.started()):
            if time.monotonic() - self.board.launched > SETUP_TIMEOUT_S and self.board.open_now():
                self.setup_timed_out = True
            await asyncio.sleep(POLL_S)
        self._open(start)
        await asyncio.sleep(max(0.0, self.end - time.monotonic()))
        self.cpu_in_window = time.process_time() - self.cpu_at_start
