"""Connect Four rules, one test per rule on shared/rules/connect-four.md."""

from __future__ import annotations

import pytest
from tafel_rules.connect4 import (
    BOARD_FULL,
    COLUMN_FULL,
    COLUMN_OUT_OF_RANGE,
    FOUR_IN_A_ROW,
    GAME_OVER,
    NOT_YOUR_TURN,
    RESIGNED,
    RULES,
    TIMEOUT,
    DiscDropped,
    Move,
    Options,
    notation,
    replay,
)
from tafel_rules.game import GameEnded, IllegalMove, InvalidOptions, Resigned, TimedOut


def play(moves: str, options: Options = Options()):  # type: ignore[no-untyped-def]
    """Replay a 1-based move string; returns (state, events of the last move)."""
    state = RULES.new_game(options, 2, 0)
    events: tuple[object, ...] = ()
    for ch in moves:
        state, events = RULES.apply_move(state, state.to_move, Move(int(ch) - 1))  # type: ignore[assignment]
    return state, events


def test_default_board_is_seven_by_six_and_seat_zero_starts() -> None:
    state = RULES.new_game(RULES.default_options(), 2, 0)
    assert (state.options.columns, state.options.rows) == (7, 6)
    assert RULES.to_act(state) == {0}
    assert [m.column for m in RULES.legal_moves(state, 0)] == list(range(7))
    assert RULES.legal_moves(state, 1) == ()


def test_disc_falls_to_lowest_empty_cell() -> None:
    state, events = play("444")
    assert events == (DiscDropped(seat=0, column=3, row=2),)
    assert RULES.view(state, None).board[3] == (0, 1, 0)


@pytest.mark.parametrize(
    ("moves", "rows", "winner", "cells"),
    [
        # vertical, both seats
        ("3232373", 6, 0, ((0, 2), (1, 2), (2, 2), (3, 2))),
        ("56462626", 6, 1, ((0, 5), (1, 5), (2, 5), (3, 5))),
        # horizontal, both seats
        ("4424553", 6, 0, ((0, 1), (0, 2), (0, 3), (0, 4))),
        ("2233112424", 4, 1, ((1, 0), (1, 1), (1, 2), (1, 3))),
        # diagonal rising to the right
        ("34245531455", 6, 0, ((0, 1), (1, 2), (2, 3), (3, 4))),
        ("32441324423", 4, 0, ((0, 0), (1, 1), (2, 2), (3, 3))),
        # diagonal falling to the right
        ("4745665544", 6, 1, ((0, 6), (1, 5), (2, 4), (3, 3))),
        ("3114112322", 4, 1, ((0, 3), (1, 2), (2, 1), (3, 0))),
    ],
)
def test_four_in_a_line_wins_for_the_mover(
    moves: str, rows: int, winner: int, cells: tuple[tuple[int, int], ...]
) -> None:
    options = Options() if rows == 6 else Options(rows=4, columns=4)
    before, _ = play(moves[:-1], options)
    assert before.outcome is None
    state, events = play(moves, options)
    assert state.outcome is not None
    assert state.outcome.reason == FOUR_IN_A_ROW
    assert state.outcome.winners == (winner,)
    dropped = events[0]
    assert isinstance(dropped, DiscDropped)
    assert dropped.seat == winner and dropped.column == int(moves[-1]) - 1
    assert dropped.winning_cells == cells
    assert events[-1] == GameEnded(state.outcome)
    assert RULES.view(state, None).winning_cells == cells
    assert RULES.to_act(state) == frozenset()


def test_line_of_five_reports_all_five_cells() -> None:
    state, events = play("553122624")
    assert state.outcome is not None and state.outcome.winners == (0,)
    assert events[0].winning_cells == ((0, 1), (0, 2), (0, 3), (0, 4), (0, 5))


def test_two_lines_at_once_report_every_cell() -> None:
    # The last disc at (0, 3) completes a horizontal line of five and a vertical... checked by cells:
    state, events = play("271132372152154")
    assert state.outcome is not None and state.outcome.winners == (0,)
    assert events[0].winning_cells == (
        (0, 0),
        (0, 1),
        (0, 2),
        (0, 3),
        (0, 4),  # row 0
        (1, 2),
        (2, 1),
        (3, 0),  # the falling diagonal through (0, 3)
    )


def test_win_on_the_last_cell_is_a_win_not_a_draw() -> None:
    options = Options(rows=4, columns=4)
    state, events = play("3213332442124411", options)
    assert len(state.moves) == 16
    assert state.outcome is not None
    assert state.outcome.reason == FOUR_IN_A_ROW and state.outcome.winners == (1,)


def test_full_board_without_line_is_a_draw() -> None:
    for options, moves in (
        (Options(rows=4, columns=4), "2234114322434311"),
        (Options(), "671466223662511231134133354654447722755757"),
    ):
        state, events = play(moves, options)
        assert state.outcome is not None
        assert state.outcome.reason == BOARD_FULL
        assert state.outcome.ranks == (1, 1) and state.outcome.is_draw
        assert isinstance(events[-1], GameEnded)
        assert RULES.to_act(state) == frozenset()
        assert RULES.legal_moves(state, 0) == () and RULES.legal_moves(state, 1) == ()


def test_full_column_is_refused_and_changes_nothing() -> None:
    state, _ = play("111111")
    with pytest.raises(IllegalMove) as refused:
        RULES.apply_move(state, 0, Move(0))
    assert refused.value.reason == COLUMN_FULL
    assert len(state.moves) == 6


@pytest.mark.parametrize("column", [-1, 7, 100])
def test_column_off_the_board_is_refused(column: int) -> None:
    state = RULES.new_game(Options(), 2, 0)
    with pytest.raises(IllegalMove) as refused:
        RULES.apply_move(state, 0, Move(column))
    assert refused.value.reason == COLUMN_OUT_OF_RANGE


def test_out_of_turn_is_refused() -> None:
    state = RULES.new_game(Options(), 2, 0)
    with pytest.raises(IllegalMove) as refused:
        RULES.apply_move(state, 1, Move(0))
    assert refused.value.reason == NOT_YOUR_TURN


def test_any_move_after_the_end_is_refused() -> None:
    state, _ = play("1212121")
    for seat in (0, 1):
        with pytest.raises(IllegalMove) as refused:
            RULES.apply_move(state, seat, Move(3))
        assert refused.value.reason == GAME_OVER
        with pytest.raises(IllegalMove):
            RULES.resign(state, seat)


def test_resign_at_any_time_lets_the_other_player_win() -> None:
    state, _ = play("44")
    new, events = RULES.resign(state, 1)  # not seat 1's turn: resigning is allowed anyway
    assert new.outcome is not None and new.outcome.winners == (0,) and new.outcome.reason == RESIGNED
    assert events[0] == Resigned(1)


def test_timeout_forfeits_the_seat_on_the_clock_only() -> None:
    state, _ = play("4")
    with pytest.raises(IllegalMove):
        RULES.timeout(state, 0)
    new, events = RULES.timeout(state, 1)
    assert new.outcome is not None and new.outcome.winners == (0,) and new.outcome.reason == TIMEOUT
    assert events[0] == TimedOut(1)


@pytest.mark.parametrize(("rows", "columns"), [(3, 7), (6, 11), (11, 4), (6, 3)])
def test_options_out_of_range_are_refused(rows: int, columns: int) -> None:
    with pytest.raises(InvalidOptions):
        RULES.check_options(Options(rows=rows, columns=columns), 2)


def test_only_two_seats() -> None:
    with pytest.raises(InvalidOptions):
        RULES.check_options(Options(), 3)


def test_large_board_and_notation() -> None:
    options = Options(rows=10, columns=10)
    state = replay(options, [9, 0, 9, 0])
    assert notation(state.moves) == "[10]1[10]1"
    assert RULES.view(state, 0).board[9] == (0, 0)
