"""The games scenario's measured window (tafel_loadgen/window.py), as the peers' harness defines
it: it opens once every player has its first match and lasts the duration; what happens before
does not count, and timeouts taken before it opened end with it."""

from __future__ import annotations

import asyncio
import math
import time

import pytest
from tafel_loadgen import window as window_module
from tafel_loadgen.window import Board, Window


async def test_the_window_opens_when_the_last_player_has_its_first_match() -> None:
    board = Board(3)
    window = Window(board, duration_s=0.2)
    follow = asyncio.get_running_loop().create_task(window.follow())
    board.matched_first()
    board.matched_first()
    await asyncio.sleep(0.05)
    assert not window.inside() and window.end == math.inf  # two of three: still setup
    board.matched_first()
    opened = time.monotonic()
    await asyncio.sleep(0.05)
    assert window.inside() and window.start == pytest.approx(opened, abs=0.02)
    assert window.end == pytest.approx(window.start + 0.2)
    await follow  # it ends with the window, having noted this process's CPU inside it
    assert not window.inside() and window.cpu_in_window >= 0.0


async def test_a_timeout_taken_during_setup_ends_with_the_window() -> None:
    board = Board(1)
    window = Window(board, duration_s=0.1)
    follow = asyncio.get_running_loop().create_task(window.follow())
    started = time.monotonic()

    async def wait_in_a_game() -> None:
        async with window.timeout(grace_s=0.1):
            await asyncio.sleep(10)  # a game that would outlive the run

    game = asyncio.get_running_loop().create_task(wait_in_a_game())
    await asyncio.sleep(0.1)  # set up for a while: no deadline yet
    board.matched_first()
    with pytest.raises(TimeoutError):
        await game
    took = time.monotonic() - started
    assert 0.25 < took < 1.0  # setup 0.1 + window 0.1 + grace 0.1
    async with window.timeout(at_least_s=0.05) as late:  # after the end: at least the minimum
        assert late.when() is not None
    await follow


async def test_a_setup_that_never_completes_opens_the_window_anyway(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(window_module, "SETUP_TIMEOUT_S", 0.05)
    window = Window(Board(2), duration_s=0.05)
    await window.follow()
    assert window.setup_timed_out and window.start != math.inf


def test_the_unbounded_window_counts_everything() -> None:
    window = Window.unbounded()
    assert window.inside() and window.end == math.inf
