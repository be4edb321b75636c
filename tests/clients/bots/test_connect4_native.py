"""The compiled Connect Four solver (connect4_solver.c through connect4_native) against Pascal Pons'
published scores, its best moves, its result-only (weak) search and its budgets.

`make test` builds the library first (`make native`); these tests skip only on a machine without a
C compiler, where the bots use the pure-Python engine (tested in test_connect4_solver.py).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tafel.bots.connect4 import Engine, position_from_moves
from tafel.bots.connect4_native import NativeSolver, load

DATA = Path(__file__).resolve().parents[2] / "data" / "connect4"


@pytest.fixture(scope="module")
def native() -> NativeSolver:
    solver = load()
    if solver is None:
        if shutil.which("cc") is None:
            pytest.skip("no C compiler: the compiled solver cannot be built here")
        pytest.fail("the compiled solver is not built: run `make native`")
    return solver


def load_set(name: str) -> list[tuple[str, int]]:
    rows = []
    for line in (DATA / name).read_text().splitlines():
        if line.strip():
            moves, score = line.split()
            rows.append((moves, int(score)))
    return rows


def sign(x: int) -> int:
    return (x > 0) - (x < 0)


@pytest.mark.parametrize("name", ["Test_L3_R1", "Test_L2_R1"])
def test_every_published_score(native: NativeSolver, name: str) -> None:
    engine = Engine()
    wrong = []
    for moves, expected in load_set(name):
        current, mask, nb = position_from_moves(engine, moves)
        got = native.solve(current, mask, nb)
        weak = native.solve(current, mask, nb, weak=True)
        if got != expected or weak != sign(expected):
            wrong.append((moves, expected, got, weak))
    assert not wrong, wrong[:10]


def test_best_moves_keep_the_score(native: NativeSolver) -> None:
    """The chosen column's position is worth exactly the negated score (strong), or has the
    opposite result (weak), checked against the Python engine."""
    engine = Engine()
    for moves, expected in load_set("Test_L2_R1")[:150]:
        current, mask, nb = position_from_moves(engine, moves)
        for weak in (False, True):
            best = native.best(current, mask, nb, weak=weak)
            assert best is not None
            assert best.score == (sign(expected) if weak else expected)
            if engine.is_win(current, mask, best.column):
                assert expected == (43 - nb) // 2
                continue
            child_current, child_mask = engine.play(current, mask, best.column)
            child = engine.solve(child_current, child_mask, nb + 1)
            if weak:
                assert sign(-child) == sign(expected), (moves, best)
            else:
                assert -child == expected, (moves, best)


def test_budgets_abort(native: NativeSolver) -> None:
    engine = Engine()
    current, mask, nb = position_from_moves(engine, "4")
    assert native.solve(current, mask, nb, max_nodes=10_000) is None
    assert native.best(current, mask, nb, weak=True, max_nodes=10_000) is None
    assert native.best(current, mask, nb, max_seconds=0.01) is None
    assert 0 < native.nodes


def test_win_now_and_lost_positions(native: NativeSolver) -> None:
    engine = Engine()
    # the side to move completes four in column 1 (0-based 0) with its fourth disc: 22 - 4
    current, mask, nb = position_from_moves(engine, "121212")
    best = native.best(current, mask, nb)
    assert best is not None and (best.column, best.score) == (0, 18)
    # the first player holds columns 3-5 (1-based) of the bottom row, the second player two discs
    # on top: both ends are open, the second player blocks one and loses to the first player's
    # fourth disc (-(22 - 4))
    current, mask, nb = position_from_moves(engine, "33445")
    best = native.best(current, mask, nb)
    assert best is not None and best.score == -18 and best.column in (1, 5)
