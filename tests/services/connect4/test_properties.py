"""Invariants of Connect Four over arbitrary games (hypothesis) and the published positions."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from tafel.connect4.v1 import connect4_pb2 as pb
from tafel_rules.connect4 import RULES, Move, Options, notation, replay
from tafel_rules.game import IllegalMove

from services.connect4.codec import CODEC
from services.host import conformance

DATA = Path(__file__).resolve().parents[2] / "data" / "connect4"


@st.composite
def games(draw: st.DrawFn) -> tuple[Options, list[int]]:
    options = Options(rows=draw(st.integers(4, 10)), columns=draw(st.integers(4, 10)))
    state = RULES.new_game(options, 2, 0)
    moves: list[int] = []
    while state.outcome is None and draw(st.booleans() | st.just(True)):
        legal = RULES.legal_moves(state, state.to_move)
        move = draw(st.sampled_from(legal))
        moves.append(move.column)
        state, _ = RULES.apply_move(state, state.to_move, move)
    return options, moves


@given(games())
@settings(max_examples=200, deadline=None)
def test_disc_counts_alternate_and_columns_never_overflow(game: tuple[Options, list[int]]) -> None:
    options, moves = game
    state = replay(options, moves)
    view = RULES.view(state, None)
    flat = [seat for column in view.board for seat in column]
    assert len(flat) == len(moves)
    assert flat.count(0) - flat.count(1) in (0, 1)  # seat 0 moved first
    assert all(len(column) <= options.rows for column in view.board)
    assert view.moves == notation(moves)


@given(games(), st.integers(-2, 12), st.integers(0, 1))
@settings(max_examples=200, deadline=None)
def test_a_refused_move_changes_nothing(game: tuple[Options, list[int]], column: int, seat: int) -> None:
    options, moves = game
    state = replay(options, moves)
    before = CODEC.state_to_bytes(state)
    try:
        new, events = RULES.apply_move(state, seat, Move(column))
    except IllegalMove:
        assert CODEC.state_to_bytes(state) == before
    else:
        assert len(new.moves) == len(moves) + 1 and events


@given(games())
@settings(max_examples=200, deadline=None)
def test_game_ends_exactly_at_a_line_or_a_full_board(game: tuple[Options, list[int]]) -> None:
    options, moves = game
    state = replay(options, moves)
    full = len(moves) == options.rows * options.columns
    if state.outcome is None:
        assert not full and RULES.legal_moves(state, state.to_move)
    else:
        assert state.outcome.reason == "FOUR_IN_A_ROW" or full
        # The winner is always the player who made the last move.
        if state.outcome.reason == "FOUR_IN_A_ROW":
            assert state.outcome.winners == ((len(moves) - 1) % 2,)


@given(games())
@settings(max_examples=100, deadline=None)
def test_state_round_trips_through_the_codec(game: tuple[Options, list[int]]) -> None:
    options, moves = game
    state = replay(options, moves)
    assert CODEC.state_from_bytes(CODEC.state_to_bytes(state)) == state


@given(games(), st.sampled_from([None, 0, 1]))
@settings(max_examples=100, deadline=None)
def test_a_view_is_the_message_its_fields_make(game: tuple[Options, list[int]], seat: int | None) -> None:
    """view_to_proto fills its columns and cells in place: the same message as one built from
    lists of messages (any board, finished ones with their winning cells too)."""
    options, moves = game
    view = RULES.view(replay(options, moves), seat)
    expected = pb.View(
        rows=view.rows,
        columns=view.columns,
        board=[pb.Column(seats=column) for column in view.board],
        moves=view.moves,
        legal_columns=view.legal_columns,
        winning_cells=[pb.Cell(row=row, column=column) for row, column in view.winning_cells],
    )
    if view.to_move is not None:
        expected.to_move = view.to_move
    assert CODEC.view_to_proto(view) == expected
    assert CODEC.view_to_proto(view).SerializeToString() == expected.SerializeToString()


def test_conformance_suite_default_board() -> None:
    conformance.run_suite(RULES, CODEC, Options(), 2, seeds=range(40))


def test_conformance_suite_other_sizes() -> None:
    for rows, columns in ((4, 4), (10, 10), (4, 10), (7, 5)):
        conformance.run_suite(RULES, CODEC, Options(rows=rows, columns=columns), 2, seeds=range(5))


def test_published_reference_positions_replay_as_running_games() -> None:
    """Every position of Pons' test sets is legal and unfinished under our rules."""
    count = 0
    for name in ("Test_L3_R1", "Test_L2_R1"):
        for line in (DATA / name).read_text().split("\n"):
            if not line.strip():
                continue
            moves, score = line.split()
            state = replay(Options(), [int(ch) - 1 for ch in moves])
            assert state.outcome is None, moves
            assert -21 <= int(score) <= 21
            count += 1
    assert count == 2000
