"""Plus 4: every rule and both worked examples of shared/rules/plus-4.md, each mode's end, the move
limit, ties, illegal moves with their reason codes, resign and timeout, options and the view."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest
from tafel_rules.game import GameEnded, IllegalMove, InvalidOptions, Outcome, Resigned, TimedOut
from tafel_rules.plus4 import (
    LINES,
    RULES,
    Disc,
    DiscFellOut,
    DiscPushed,
    LineScored,
    Mode,
    Move,
    Plus4Event,
    Plus4Options,
    Plus4State,
    RoundWon,
    Supply,
    TurnSkipped,
    complete_lines,
    diagram,
    position,
)

POINTS = Plus4Options(Mode.POINTS)
FIRST_LINE = Plus4Options(Mode.FIRST_LINE)
ROUNDS = Plus4Options(Mode.ROUNDS)

ROW0 = ((0, 0), (0, 1), (0, 2), (0, 3))
ROW1 = ((1, 0), (1, 1), (1, 2), (1, 3))
ROW2 = ((2, 0), (2, 1), (2, 2), (2, 3))
COL0 = ((0, 0), (1, 0), (2, 0), (3, 0))
DIAG = ((0, 0), (1, 1), (2, 2), (3, 3))


def push(state: Plus4State, seat: int, column: int, bonus: bool = False) -> tuple[Plus4State, list[Plus4Event]]:
    new, events = RULES.apply_move(state, seat, Move(column, bonus))
    return new, list(events)


def lines_of(events: Sequence[Plus4Event]) -> set[tuple[tuple[tuple[int, int], ...], int, int]]:
    return {(e.cells, e.colour, e.points) for e in events if isinstance(e, LineScored)}


def of_type(events: Sequence[Plus4Event], kind: type) -> list[Plus4Event]:
    return [e for e in events if isinstance(e, kind)]


def new_game(options: Plus4Options = POINTS) -> Plus4State:
    return RULES.new_game(options, 2, 1)


# ---------------------------------------------------------------- setup and the push


def test_identity() -> None:
    assert (RULES.name, RULES.title, RULES.min_seats, RULES.max_seats) == ("plus4", "Plus 4", 2, 2)


def test_new_game_supplies_and_first_player() -> None:
    state = new_game()
    assert state.supply(0) == Supply(9, True) and state.supply(1) == Supply(9, True)
    assert RULES.to_act(state) == frozenset({0})
    assert diagram(state) == ("....",) * 4
    assert (state.scores, state.round_wins, state.moves_made, state.round_no) == ((0, 0), (0, 0), 0, 1)
    assert RULES.outcome(state) is None
    assert set(RULES.legal_moves(state, 0)) == {Move(c, b) for c in range(4) for b in (False, True)}
    assert RULES.legal_moves(state, 1) == ()


def test_push_takes_the_top_and_moves_the_column_down() -> None:
    state = new_game()
    state, events = push(state, 0, 2)
    assert diagram(state) == ("..r.", "....", "....", "....")
    assert events == [DiscPushed(2, 0, False, state.red, state.blue, state.bonus)]
    assert events[0].frame == state.frame()  # the frame after the push, for clients to draw
    assert state.supply(0) == Supply(8, True) and state.to_move == 1
    state, _ = push(state, 1, 2, bonus=True)
    assert diagram(state) == ("..B.", "..r.", "....", "....")
    assert state.supply(1) == Supply(9, False)
    state, _ = push(state, 0, 1)
    assert diagram(state) == (".rB.", "..r.", "....", "....")


def test_any_column_may_be_chosen_full_or_not_and_the_bottom_disc_returns_to_its_owner() -> None:
    state = position(["rbb.", "bb..", "rb..", "br.."], to_move=0)
    before = (state.supply(0), state.supply(1))
    # red pushes into the full column 0: blue's bottom disc falls out and goes back to blue.
    state, events = push(state, 0, 0)
    assert diagram(state) == ("rbb.", "rb..", "bb..", "rr..")
    assert DiscFellOut(1, False, 1) in events
    assert state.supply(0) == Supply(before[0].ordinary - 1, True)
    assert state.supply(1) == Supply(before[1].ordinary + 1, True)
    # red pushes into full column 1: red's own bottom disc falls out back to red.
    state = replace(state, to_move=0)
    state, events = push(state, 0, 1)
    assert of_type(events, DiscFellOut) == [DiscFellOut(0, False, 0)]
    assert diagram(state)[0][1] == "r" and diagram(state)[3][1] == "b"


def _fields(state: Plus4State) -> dict[str, object]:
    return {name: getattr(state, name) for name in state.__slots__}


def test_a_bonus_disc_falls_out_returns_to_its_owner_and_may_be_played_again() -> None:
    state = position(["b...", "b...", "b...", "R..."], to_move=1)
    assert state.supply(0) == Supply(9, False)
    state, events = push(state, 1, 0)
    assert of_type(events, DiscFellOut) == [DiscFellOut(0, True, 0)]
    assert state.supply(0) == Supply(9, True)
    assert Move(3, True) in RULES.legal_moves(state, 0)
    state, _ = push(state, 0, 3, bonus=True)
    assert diagram(state)[0] == "b..R" and state.supply(0) == Supply(9, False)


def test_only_the_pushed_column_changes() -> None:
    state = position(["rbrb", "brbr", "rb..", "b..."], to_move=0)
    after, _ = push(state, 0, 1)
    for r in range(4):
        for c in (0, 2, 3):
            assert after.disc_at(r, c) == state.disc_at(r, c)


# ---------------------------------------------------------------- skipped turns


def test_empty_supply_skips_turns_until_a_disc_of_that_player_falls_out() -> None:
    state = position(["bbbb", "bbbb", "Bbrr", "rr.."], to_move=0)
    assert state.supply(1).empty and RULES.legal_moves(state, 1) == ()
    # no blue disc falls out: blue is skipped, red moves again
    state, events = push(state, 0, 3)
    assert events[-1] == TurnSkipped(1) and state.to_move == 0
    assert RULES.to_act(state) == frozenset({0})
    with pytest.raises(IllegalMove) as err:
        RULES.apply_move(state, 1, Move(0))
    assert err.value.reason == "NOT_YOUR_TURN"
    # red's own disc falls out: blue still has nothing, skipped again
    state, events = push(state, 0, 0)
    assert of_type(events, DiscFellOut) == [DiscFellOut(0, False, 0)]
    assert events[-1] == TurnSkipped(1) and state.to_move == 0
    # blue's bonus disc falls out: blue moves, and only with the bonus disc
    state, events = push(state, 0, 0)
    assert of_type(events, DiscFellOut) == [DiscFellOut(1, True, 1)]
    assert not of_type(events, TurnSkipped)
    assert state.to_move == 1 and state.supply(1) == Supply(0, True)
    assert set(RULES.legal_moves(state, 1)) == {Move(c, True) for c in range(4)}
    with pytest.raises(IllegalMove) as err:
        RULES.apply_move(state, 1, Move(0, False))
    assert err.value.reason == "NO_ORDINARY_DISC"


# ---------------------------------------------------------------- scoring


def test_worked_example_1_a_line_that_stays_complete_does_not_score_again() -> None:
    state = position(["rb..", "r...", "r...", "r..."], to_move=0, scores=(1, 0))
    state, events = push(state, 0, 0)
    assert of_type(events, DiscFellOut) == [DiscFellOut(0, False, 0)]
    assert diagram(state)[0][0] == "r" and 4 in complete_lines(state, 0)
    assert lines_of(events) == set() and state.scores == (1, 0)


def test_worked_example_2_both_colours_score_whoever_pushed() -> None:
    state = position(["bbrb", "rr.r", "....", "...."], to_move=1)
    state, events = push(state, 1, 2)
    assert diagram(state)[:2] == ("bbbb", "rrrr")
    assert lines_of(events) == {(ROW0, 1, 1), (ROW1, 0, 1)}
    assert state.scores == (1, 1)
    # the same with red's bonus disc in row 1: that line is worth 2
    state = position(["bbrb", "Rr.r", "....", "...."], to_move=1)
    state, events = push(state, 1, 2)
    assert lines_of(events) == {(ROW0, 1, 1), (ROW1, 0, 2)}
    assert state.scores == (2, 1)


def test_a_line_with_its_owners_bonus_disc_scores_two() -> None:
    state = position(["brrr", "b...", "b...", "...."], to_move=0)
    state, events = push(state, 0, 0, bonus=True)
    assert lines_of(events) == {(ROW0, 0, 2)}
    assert state.scores == (2, 0)
    assert state.scored == (LineScored(ROW0, 0, 2, 1, 1),)


def test_one_push_scores_several_lines() -> None:
    # column 0 reads b, r, b, b; red pushes its bonus disc there: rows 0 and 2 and the diagonal.
    state = position(["brrr", "rrbb", "brrr", "b..r"], to_move=0)
    assert state.supply(0) == Supply(0, True)
    state, events = push(state, 0, 0, bonus=True)
    assert diagram(state) == ("Rrrr", "brbb", "rrrr", "b..r")
    assert lines_of(events) == {(ROW0, 0, 2), (ROW2, 0, 1), (DIAG, 0, 2)}
    assert state.scores == (5, 0)
    assert of_type(events, DiscFellOut) == [DiscFellOut(1, False, 1)]


def test_a_broken_line_that_forms_again_scores_again() -> None:
    state = position(["rrrr", "b...", "b...", "...."], to_move=1, scores=(1, 0))
    state, events = push(state, 1, 0)  # breaks red's row 0
    assert diagram(state)[0] == "brrr" and lines_of(events) == set()
    state, events = push(state, 0, 0)  # forms it again
    assert diagram(state)[0] == "rrrr"
    assert lines_of(events) == {(ROW0, 0, 1)} and state.scores == (2, 0)


def test_event_order() -> None:
    state = position(["brrr", "b...", "b...", "b..."], to_move=0)
    _, events = push(state, 0, 0)
    assert [type(e) for e in events] == [DiscPushed, DiscFellOut, LineScored]


# ---------------------------------------------------------------- points mode


def test_points_first_to_the_target_wins() -> None:
    state = position(["brrr", "b...", "....", "...."], to_move=0, scores=(10, 3))
    state, events = push(state, 0, 0)
    assert state.scores == (11, 3)
    assert state.result == Outcome((1, 2), "TARGET_REACHED", (11, 3))
    assert events[-1] == GameEnded(state.result)
    assert state.to_move is None and RULES.to_act(state) == frozenset()
    assert RULES.legal_moves(state, 0) == () and RULES.legal_moves(state, 1) == ()


def test_points_both_reach_the_target_with_one_push_higher_score_wins() -> None:
    # blue pushes; red's line holds red's bonus disc (2), blue's line is worth 1.
    state = position(["bbrb", "Rr.r", "....", "...."], to_move=1, scores=(10, 10))
    state, events = push(state, 1, 2)
    assert state.scores == (12, 11)
    assert state.result == Outcome((1, 2), "TARGET_REACHED", (12, 11))
    assert isinstance(events[-1], GameEnded)


def test_points_both_reach_the_target_with_equal_scores_is_a_draw() -> None:
    state = position(["bbrb", "rr.r", "....", "...."], to_move=1, scores=(10, 10))
    state, _ = push(state, 1, 2)
    assert state.result == Outcome((1, 1), "TARGET_REACHED", (11, 11))
    assert state.result.is_draw


def test_points_target_option() -> None:
    state = position(["brrr", "b...", "....", "...."], options=Plus4Options(Mode.POINTS, 1))
    state, _ = push(state, 0, 0)
    assert state.result == Outcome((1, 2), "TARGET_REACHED", (1, 0))


def test_points_the_game_goes_on_after_a_line() -> None:
    state = position(["brrr", "b...", "....", "...."], to_move=0)
    state, events = push(state, 0, 0)
    assert state.scores == (1, 0) and state.result is None and state.to_move == 1
    assert not of_type(events, GameEnded)


# ---------------------------------------------------------------- first_line mode


def test_first_line_the_pusher_wins() -> None:
    state = position(["bRrr", "b...", "....", "...."], options=FIRST_LINE)
    state, events = push(state, 0, 0)
    assert lines_of(events) == {(ROW0, 0, 1)}  # the bonus disc plays as an ordinary disc
    assert state.result == Outcome((1, 2), "LINE_COMPLETED", ())
    assert state.scores == (0, 0)
    assert events[-1] == GameEnded(state.result)


def test_first_line_only_the_opponents_line_the_opponent_wins() -> None:
    state = position(["brrb", "rr.r", "....", "...."], options=FIRST_LINE, to_move=1)
    state, events = push(state, 1, 2)
    assert diagram(state)[:2] == ("brbb", "rrrr")
    assert lines_of(events) == {(ROW1, 0, 1)}
    assert state.result == Outcome((1, 2), "LINE_COMPLETED", ())


def test_first_line_both_colours_is_a_draw() -> None:
    state = position(["bbrb", "rr.r", "....", "...."], options=FIRST_LINE, to_move=1)
    state, _ = push(state, 1, 2)
    assert state.result == Outcome((1, 1), "LINE_COMPLETED", ())


# ---------------------------------------------------------------- rounds mode


def test_rounds_a_line_wins_the_round_and_empties_the_frame() -> None:
    state = position(["bRrr", "b...", "b...", "...."], options=ROUNDS, moves_made=7)
    state, events = push(state, 0, 0)
    won = of_type(events, RoundWon)
    assert won == [RoundWon(1, (0,), (1, 0), won[0].frame, True)]  # type: ignore[union-attr]
    assert isinstance(won[0], RoundWon)
    assert won[0].frame[0] == (Disc(0, False), Disc(0, True), Disc(0, False), Disc(0, False))
    assert lines_of(events) == {(ROW0, 0, 2)}
    assert state.round_wins == (1, 0) and state.scores == (0, 0)
    assert diagram(state) == ("....",) * 4
    assert state.supply(0) == Supply(9, True) and state.supply(1) == Supply(9, True)
    assert state.round_no == 2 and state.moves_made == 8
    assert state.to_move == 1  # red started round 1, blue starts round 2
    assert state.result is None and not of_type(events, TurnSkipped)
    # the next round ends too: red starts round 3 whoever ended round 2
    state2 = position(["rbbb", "r...", "....", "...."], options=ROUNDS, to_move=1, round_no=2)
    state2, _ = push(state2, 1, 0)
    assert state2.round_no == 3 and state2.to_move == 0 and state2.round_wins == (0, 1)


def test_rounds_both_colours_win_the_round() -> None:
    state = position(["bbrb", "rr.r", "....", "...."], options=ROUNDS, to_move=1, round_wins=(2, 5))
    state, events = push(state, 1, 2)
    assert of_type(events, RoundWon)[0].winners == (0, 1)  # type: ignore[union-attr]
    assert state.round_wins == (3, 6) and state.result is None


def test_rounds_target_reached_ends_the_game_and_leaves_the_frame() -> None:
    opts = Plus4Options(Mode.ROUNDS, 3)
    state = position(["brrr", "b...", "....", "...."], options=opts, round_wins=(2, 1), round_no=4)
    state, events = push(state, 0, 0)
    assert state.result == Outcome((1, 2), "ROUNDS_TARGET_REACHED", (3, 1))
    assert diagram(state)[0] == "rrrr" and state.round_no == 4
    won = of_type(events, RoundWon)[0]
    assert isinstance(won, RoundWon) and not won.frame_emptied
    assert events[-1] == GameEnded(state.result)


def test_rounds_both_reach_the_target_at_once_is_a_draw() -> None:
    opts = Plus4Options(Mode.ROUNDS, 3)
    state = position(["bbrb", "rr.r", "....", "...."], options=opts, to_move=1, round_wins=(2, 2))
    state, _ = push(state, 1, 2)
    assert state.result == Outcome((1, 1), "ROUNDS_TARGET_REACHED", (3, 3))


# ---------------------------------------------------------------- the move limit


def test_move_limit_points_higher_score_wins() -> None:
    opts = Plus4Options(Mode.POINTS, 11, 10)
    state = position(["r...", "....", "....", "...."], options=opts, to_move=1, moves_made=9, scores=(2, 4))
    state, events = push(state, 1, 3)
    assert state.result == Outcome((2, 1), "MOVE_LIMIT", (2, 4))
    assert events[-1] == GameEnded(state.result)


def test_move_limit_points_equal_is_a_draw() -> None:
    opts = Plus4Options(Mode.POINTS, 11, 10)
    state = position(["r...", "....", "....", "...."], options=opts, to_move=1, moves_made=9, scores=(3, 3))
    state, _ = push(state, 1, 3)
    assert state.result == Outcome((1, 1), "MOVE_LIMIT", (3, 3))


def test_move_limit_first_line_is_a_draw() -> None:
    opts = Plus4Options(Mode.FIRST_LINE, 11, 2)
    state = new_game(opts)
    state, _ = push(state, 0, 0)
    assert state.result is None
    state, events = push(state, 1, 0)
    assert state.result == Outcome((1, 1), "MOVE_LIMIT", ())
    assert state.moves_made == 2 and isinstance(events[-1], GameEnded)


def test_move_limit_rounds_higher_round_count_wins_and_the_last_frame_stays() -> None:
    opts = Plus4Options(Mode.ROUNDS, 11, 20)
    state = position(["bbb.", "rr..", "....", "...."], options=opts, moves_made=19, round_wins=(3, 2))
    state, _ = push(state, 0, 3)
    assert state.result == Outcome((1, 2), "MOVE_LIMIT", (3, 2))
    # a round that ends on the last push counts, and its frame is left as it ended
    state = position(["brrr", "b...", "....", "...."], options=opts, moves_made=19, round_wins=(2, 3))
    state, events = push(state, 0, 0)
    assert state.result == Outcome((1, 1), "MOVE_LIMIT", (3, 3))
    assert diagram(state)[0] == "rrrr" and state.round_no == 1
    assert of_type(events, RoundWon)[0].frame_emptied is False  # type: ignore[union-attr]


def test_when_the_last_push_also_ends_the_game_by_its_mode_that_rule_decides() -> None:
    opts = Plus4Options(Mode.POINTS, 11, 10)
    state = position(["brrr", "b...", "....", "...."], options=opts, moves_made=9, scores=(10, 0))
    state, _ = push(state, 0, 0)
    assert state.result == Outcome((1, 2), "TARGET_REACHED", (11, 0))
    opts = Plus4Options(Mode.FIRST_LINE, 11, 10)
    state = position(["brrr", "b...", "....", "...."], options=opts, moves_made=9)
    state, _ = push(state, 0, 0)
    assert state.result == Outcome((1, 2), "LINE_COMPLETED", ())
    opts = Plus4Options(Mode.ROUNDS, 1, 10)
    state = position(["brrr", "b...", "....", "...."], options=opts, moves_made=9)
    state, _ = push(state, 0, 0)
    assert state.result == Outcome((1, 2), "ROUNDS_TARGET_REACHED", (1, 0))


def test_move_limit_counts_every_push_of_every_round() -> None:
    opts = Plus4Options(Mode.ROUNDS, 11, 400)
    state = position(["brrr", "b...", "....", "...."], options=opts, moves_made=41)
    state, _ = push(state, 0, 0)
    assert state.round_no == 2 and state.moves_made == 42


# ---------------------------------------------------------------- illegal moves


def _refused(state: Plus4State, seat: int, move: Move, reason: str) -> None:
    before = _fields(state)
    with pytest.raises(IllegalMove) as err:
        RULES.apply_move(state, seat, move)
    assert err.value.reason == reason
    assert err.value.message
    assert _fields(state) == before


def test_not_your_turn() -> None:
    _refused(new_game(), 1, Move(0), "NOT_YOUR_TURN")


@pytest.mark.parametrize("column", [-1, 4, 99])
def test_column_out_of_range(column: int) -> None:
    _refused(new_game(), 0, Move(column), "COLUMN_OUT_OF_RANGE")


def test_bonus_disc_not_in_supply() -> None:
    state = position(["R...", "....", "....", "...."], to_move=0)
    _refused(state, 0, Move(1, True), "NO_BONUS_DISC")


def test_no_ordinary_disc_left() -> None:
    state = position(["rrrb", "rrrb", "rrrb", "...."], to_move=0)
    assert state.supply(0) == Supply(0, True)
    _refused(state, 0, Move(3), "NO_ORDINARY_DISC")
    assert RULES.legal_moves(state, 0) == tuple(Move(c, True) for c in range(4))


def test_any_move_after_the_end() -> None:
    state, _ = RULES.resign(new_game(), 1)
    _refused(state, 0, Move(0), "GAME_OVER")
    _refused(state, 1, Move(0), "GAME_OVER")


@pytest.mark.parametrize("seat", [-1, 2, 7])
def test_bad_seat(seat: int) -> None:
    _refused(new_game(), seat, Move(0), "BAD_SEAT")


# ---------------------------------------------------------------- resign and timeout


@pytest.mark.parametrize("seat", [0, 1])
def test_resign_either_seat_any_time_the_other_wins(seat: int) -> None:
    state = position(["brrr", "b...", "....", "...."], to_move=0, scores=(3, 5))
    after, events = RULES.resign(state, seat)
    winner_ranks = (2, 1) if seat == 0 else (1, 2)
    assert after.result == Outcome(winner_ranks, "RESIGNED", (3, 5))
    assert list(events) == [Resigned(seat), GameEnded(after.result)]
    assert after.to_move is None and diagram(after) == diagram(state)
    with pytest.raises(IllegalMove) as err:
        RULES.resign(after, 1 - seat)
    assert err.value.reason == "GAME_OVER"


def test_resign_scores_per_mode() -> None:
    state = position(["....", "....", "....", "...."], options=ROUNDS, round_wins=(4, 2))
    assert RULES.resign(state, 0)[0].result == Outcome((2, 1), "RESIGNED", (4, 2))
    state = new_game(FIRST_LINE)
    assert RULES.resign(state, 1)[0].result == Outcome((1, 2), "RESIGNED", ())


def test_timeout_forfeits_for_the_seat_on_the_clock() -> None:
    state = new_game()
    after, events = RULES.timeout(state, 0)
    assert after.result == Outcome((2, 1), "TIMEOUT", (0, 0))
    assert list(events) == [TimedOut(0), GameEnded(after.result)]
    with pytest.raises(IllegalMove) as err:
        RULES.timeout(state, 1)
    assert err.value.reason == "NOT_YOUR_TURN"
    with pytest.raises(IllegalMove) as err:
        RULES.timeout(after, 0)
    assert err.value.reason == "GAME_OVER"
    with pytest.raises(IllegalMove) as err:
        RULES.resign(state, 2)
    assert err.value.reason == "BAD_SEAT"


# ---------------------------------------------------------------- options


def test_option_specs_and_defaults() -> None:
    specs = {s.name: s for s in RULES.option_specs()}
    # Listed as the tafel.plus4.v1.Mode names the field takes (the contract's option listings rule).
    assert specs["mode"].default == "MODE_POINTS"
    assert specs["mode"].choices == ("MODE_POINTS", "MODE_FIRST_LINE", "MODE_ROUNDS")
    assert (specs["target"].default, specs["target"].minimum, specs["target"].maximum) == (11, 1, 99)
    assert (specs["move_limit"].default, specs["move_limit"].minimum) == (400, 1)
    assert specs["move_limit"].maximum == 10000
    assert RULES.default_options() == Plus4Options(Mode.POINTS, 11, 400)


@pytest.mark.parametrize(
    ("options", "seats", "field"),
    [
        (Plus4Options(target=0), 2, "target"),
        (Plus4Options(target=100), 2, "target"),
        (Plus4Options(move_limit=0), 2, "move_limit"),
        (Plus4Options(move_limit=10001), 2, "move_limit"),
        (Plus4Options(mode="chess"), 2, "mode"),  # type: ignore[arg-type]
        (Plus4Options(), 1, "seats"),
        (Plus4Options(), 3, "seats"),
    ],
)
def test_invalid_options(options: Plus4Options, seats: int, field: str) -> None:
    with pytest.raises(InvalidOptions) as err:
        RULES.check_options(options, seats)
    assert err.value.field == field
    with pytest.raises(InvalidOptions):
        RULES.new_game(options, seats, 0)


def test_valid_option_edges() -> None:
    for opts in (Plus4Options(Mode.ROUNDS, 1, 1), Plus4Options(Mode.FIRST_LINE, 99, 10000)):
        RULES.check_options(opts, 2)
    state = RULES.new_game(Plus4Options("rounds", 5, 50), 2, 0)  # type: ignore[arg-type]
    assert state.options.mode is Mode.ROUNDS


# ---------------------------------------------------------------- the view


def test_view() -> None:
    state = position(["brrr", "b...", "....", "...."], to_move=0, scores=(2, 1), moves_made=6)
    state, _ = push(state, 0, 0)
    view = RULES.view(state, 1)
    assert view.seat == 1 and view.mode is Mode.POINTS and (view.target, view.move_limit) == (11, 400)
    assert view.frame[0] == (Disc(0, False),) * 4
    assert view.frame[1][0] == Disc(1, False) and view.frame[3] == (None,) * 4
    assert view.supplies == (Supply(5, True), Supply(7, True))
    assert view.scores == (3, 1) and view.round_wins == (0, 0)
    assert view.to_move == 1 and view.moves_made == 7 and view.round_no == 1
    assert view.scored_lines == (LineScored(ROW0, 0, 1, 7, 1),)
    assert len(view.legal_moves) == 8 and view.result is None
    assert RULES.view(state, 0).legal_moves == ()
    assert RULES.view(state, None).legal_moves == () and RULES.view(state, None).seat is None
    done, _ = RULES.resign(state, 1)
    assert RULES.view(done, 0).result == Outcome((1, 2), "RESIGNED", (3, 1))


def test_lines_table() -> None:
    assert len(LINES) == 10
    assert ROW0 in LINES and COL0 in LINES and DIAG in LINES and ((0, 3), (1, 2), (2, 1), (3, 0)) in LINES


def test_position_rejects_impossible_frames() -> None:
    for rows in (
        ["r...", "....", "r...", "...."],
        ["rrrr", "rrrr", "rrr.", "...."],
        ["RR..", "....", "....", "...."],
    ):
        with pytest.raises(ValueError):
            position(rows)
