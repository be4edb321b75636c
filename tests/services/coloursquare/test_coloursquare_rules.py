"""The rules page, rule by rule: rounds, closing, crossing out, final turns, solo, timeouts, limits."""

from __future__ import annotations

from dataclasses import replace

import pytest
from tafel_rules.coloursquare.model import (
    ALL_REMOVED,
    COLOUR_SQUARE,
    ROUND_LIMIT,
    SOLO_FINISHED,
    ColourSquareCalled,
    DiceRolled,
    FinalTurnResolved,
    Move,
    Options,
    Phase,
    PlacementsMade,
    PlacementSubmitted,
    Player,
    PlayerRemoved,
    Removal,
    RoundResolved,
    SquareClosed,
    SquareCrossed,
)
from tafel_rules.coloursquare.rules import RULES, with_roll
from tafel_rules.game import GameEnded, IllegalMove, Resigned, TimedOut

from tests.services.coloursquare.helpers import (
    cell_value,
    full,
    mv,
    play_round,
    player,
    square_status,
    table,
    total,
)

# -- a round ------------------------------------------------------------------------------------------


def test_worked_example_round_one() -> None:
    state = with_roll(RULES.new_game(Options(), 2, seed=1), (5, 2, 6, 1, 4))
    assert state.active == 0 and state.round == 1
    assert RULES.to_act(state) == {0, 1}
    state, events = RULES.apply_move(state, 0, mv("R@0,0", "G@0,0"))
    assert events == [PlacementSubmitted(1, 0)]
    # Placements wait for the round to resolve: nothing on the sheet yet, nothing shown to seat 1.
    assert cell_value(state, 0, 0, 0, "R") is None
    assert RULES.to_act(state) == {1}
    assert RULES.view(state, 1).own_pending is None
    assert RULES.view(state, 0).own_pending == mv("R@0,0", "G@0,0").placements
    assert RULES.view(state, 1).players[0].placed
    state, events = RULES.apply_move(state, 1, mv("W@0,0,B"))
    assert [cell_value(state, 0, 0, 0, c) for c in "RYGB"] == [5, None, 6, None]
    assert [cell_value(state, 1, 0, 0, c) for c in "RYGB"] == [None, None, None, 4]
    assert events[:4] == [
        PlacementSubmitted(1, 1),
        PlacementsMade(1, 0, mv("R@0,0", "G@0,0").placements),
        PlacementsMade(1, 1, mv("W@0,0,B").placements),
        RoundResolved(1),
    ]
    assert isinstance(events[4], DiceRolled) and events[4].round == 2 and events[4].seat == 1
    assert state.round == 2 and state.active == 1 and RULES.to_act(state) == {0, 1}


def test_active_seat_rotates() -> None:
    state = RULES.new_game(Options(), 3, seed=3)
    actives = []
    for _ in range(5):
        actives.append(state.active)
        state, _ = play_round(state, {s: RULES.legal_moves(state, s)[0] for s in range(3)})
    assert actives == [0, 1, 2, 0, 1]


def test_planning_sums_r5_g6_can_only_close_wrong() -> None:
    # Seat 0's (0,0) (target 12) holds R5 + G6 = 11: any two more values make at least 13.
    state = table(1, {0: player(cells={(0, 0): (5, None, 6, None)}, jokers=(1, 1))}, roll=(1, 1, 1, 1, 1))
    state, events = RULES.apply_move(state, 0, mv("Y@0,0", "B@0,0"))
    assert square_status(state, 0, 0, 0) == "wrong"
    assert SquareClosed(0, 0, 0, False, 13) in events
    assert RULES.view(state, 0).players[0].breakdown.wrong_penalty == -10


def test_both_dice_may_go_into_the_same_square_and_close_it() -> None:
    state = table(1, {0: player(cells={(0, 0): (None, None, 6, 1)})}, roll=(3, 2, 1, 1, 1))
    state, events = RULES.apply_move(state, 0, mv("R@0,0", "Y@0,0"))
    assert square_status(state, 0, 0, 0) == "correct"
    assert SquareClosed(0, 0, 0, True, 12) in events
    assert total(state, 0) == 12


def test_same_round_closes_are_all_scored_and_the_rest_crossed_out() -> None:
    # Worked example: seats 0 and 1 both close (0,0) correctly; seat 2 had two values there.
    players = {
        0: player(cells={(0, 0): (None, None, 5, 4)}),
        1: player(cells={(0, 0): (2, 1, 4, None)}),
        2: player(cells={(0, 0): (2, None, 3, None)}),
    }
    state = table(3, players, roll=(2, 1, 3, 3, 5))
    state, events = play_round(state, {0: mv("R@0,0", "Y@0,0"), 1: mv("W@0,0,B"), 2: mv("W@1,1,B")})
    assert [square_status(state, s, 0, 0) for s in range(3)] == ["correct", "correct", "crossed"]
    assert [total(state, s) for s in range(3)] == [12, 12, 0]
    assert SquareCrossed(2, 0, 0) in events
    assert not any(isinstance(e, SquareCrossed) and e.seat in (0, 1) for e in events)
    # The crossed square keeps what was written, but takes nothing more.
    assert cell_value(state, 2, 0, 0, "R") == 2
    state = with_roll(state, (1, 1, 1, 1, 1))
    with pytest.raises(IllegalMove) as err:
        RULES.apply_move(state, 2, mv("W@0,0,Y"))
    assert err.value.reason == "SQUARE_NOT_OPEN"


def test_same_round_wrong_close_is_scored_not_crossed() -> None:
    players = {
        0: player(cells={(0, 0): (None, None, 5, 4)}),
        1: player(cells={(0, 0): (2, 1, 4, None)}),
        2: player(),
    }
    state = table(3, players, roll=(2, 1, 3, 3, 6))  # seat 1 closes with W6: 13, wrong
    state, events = play_round(state, {0: mv("R@0,0", "Y@0,0"), 1: mv("W@0,0,B"), 2: mv("W@1,1,B")})
    assert [square_status(state, s, 0, 0) for s in range(3)] == ["correct", "wrong", "crossed"]
    assert [total(state, s) for s in range(3)] == [12, -10, 0]
    assert SquareClosed(1, 0, 0, False, 13) in events


def test_wrong_close_crosses_nothing_out() -> None:
    players = {
        0: player(cells={(0, 0): (None, None, 6, 6)}),
        1: player(cells={(0, 0): (1, None, None, None)}),
    }
    state = table(2, players, roll=(2, 1, 3, 3, 6))
    state, events = play_round(state, {0: mv("R@0,0", "Y@0,0"), 1: mv("W@0,0,Y")})
    assert square_status(state, 0, 0, 0) == "wrong"
    assert square_status(state, 1, 0, 0) == "open"
    assert not any(isinstance(e, SquareCrossed) for e in events)


def test_crossing_out_hits_empty_squares_too() -> None:
    players = {0: player(cells={(1, 1): (None, None, 1, 2)}), 1: player()}
    state = table(2, players, roll=(1, 2, 3, 3, 6))
    state, events = play_round(state, {0: mv("R@1,1", "Y@1,1"), 1: mv("W@0,0,Y")})
    assert square_status(state, 1, 1, 1) == "crossed"
    assert events.count(SquareCrossed(1, 1, 1)) == 1


def test_square_closes_only_when_the_round_resolves() -> None:
    players = {0: player(cells={(0, 0): (None, None, 5, 4)}), 1: player()}
    state = table(2, players, roll=(2, 1, 3, 3, 5))
    state, _ = RULES.apply_move(state, 0, mv("R@0,0", "Y@0,0"))
    assert square_status(state, 0, 0, 0) == "open"
    with pytest.raises(IllegalMove) as err:
        RULES.apply_move(state, 1, Move())  # seat 1 can place: no pass
    assert err.value.reason == "MUST_PLACE"
    state, events = RULES.apply_move(state, 1, mv("W@2,2,G"))
    assert square_status(state, 0, 0, 0) == "correct"
    assert SquareClosed(0, 0, 0, True, 12) in events


# -- dice that can go nowhere, jokers --------------------------------------------------------------


def _all_wrong_but(side: str, *open_squares: tuple[int, int]) -> dict[tuple[int, int], str]:
    return full(side, set(open_squares))


def test_active_places_only_the_one_die_that_fits() -> None:
    p = player(cells={(0, 0): (None, 1, 1, 1)}, status=_all_wrong_but("A", (0, 0)), jokers=(2, 2))
    state = table(1, {0: p}, roll=(4, 2, 3, 1, 6))
    assert list(RULES.legal_moves(state, 0)) == [mv("R@0,0")]
    for bad, reason in [(Move(), "MUST_PLACE"), (mv("R@0,0", "Y@j0"), "JOKER_USED")]:
        with pytest.raises(IllegalMove) as err:
            RULES.apply_move(state, 0, bad)
        assert err.value.reason == reason
    state, _ = RULES.apply_move(state, 0, mv("R@0,0"))
    assert square_status(state, 0, 0, 0) == "wrong"  # 4+1+1+1 = 7, not 12


def test_two_dice_cannot_share_the_last_joker_field() -> None:
    # One open square with no empty cell for these dice; one free joker field.
    p = player(cells={(0, 0): (1, 1, 1, 1)}, status=_all_wrong_but("A", (0, 0)), jokers=(3, None))
    state = table(1, {0: p}, roll=(4, 2, 3, 1, 6))
    moves = list(RULES.legal_moves(state, 0))
    assert moves == [mv("R@j1"), mv("Y@j1"), mv("G@j1"), mv("B@j1")]
    with pytest.raises(IllegalMove) as err:
        RULES.apply_move(state, 0, mv("R@j1", "G@j1"))
    assert err.value.reason == "JOKER_USED"
    with pytest.raises(IllegalMove) as err:
        RULES.apply_move(state, 0, mv("R@j0"))
    assert err.value.reason == "JOKER_USED"


def test_nothing_fits_so_the_player_passes() -> None:
    p = player(cells={(0, 0): (1, 1, 1, 1)}, status=_all_wrong_but("A", (0, 0)), jokers=(3, 5))
    state = table(2, {0: p, 1: p}, roll=(4, 2, 3, 1, 6))
    assert list(RULES.legal_moves(state, 0)) == [Move()]
    assert list(RULES.legal_moves(state, 1)) == [Move()]
    assert RULES.view(state, 0).must_place == 0
    state, _ = play_round(state, {0: Move(), 1: Move()})
    assert state.round == 2


def test_one_die_and_one_joker_make_two() -> None:
    p = player(cells={(0, 0): (None, 1, 1, 1)}, status=_all_wrong_but("A", (0, 0)), jokers=(None, 2))
    state = table(1, {0: p}, roll=(4, 2, 3, 1, 6))
    assert RULES.view(state, 0).must_place == 2
    moves = set(RULES.legal_moves(state, 0))
    assert mv("R@0,0", "Y@j0") in moves and mv("Y@j0", "G@j0") not in moves
    with pytest.raises(IllegalMove) as err:
        RULES.apply_move(state, 0, mv("R@0,0"))
    assert err.value.reason == "MUST_PLACE"


def test_both_jokers_used_values_must_go_into_squares() -> None:
    p = player(jokers=(1, 6))
    state = table(2, {0: p, 1: p}, roll=(4, 2, 3, 1, 6))
    assert all(
        not isinstance(pl.target, type(mv("R@j0").placements[0].target))
        for m in RULES.legal_moves(state, 0)
        for pl in m.placements
    )
    with pytest.raises(IllegalMove) as err:
        RULES.apply_move(state, 1, mv("W@j1"))
    assert err.value.reason == "JOKER_USED"
    state, _ = play_round(state, {0: mv("R@0,0", "Y@0,0"), 1: mv("W@3,3,G")})
    assert RULES.view(state, None).players[1].breakdown.jokers == -7


def test_jokers_take_the_die_value_and_cost_it() -> None:
    state = table(2, roll=(4, 2, 3, 1, 6))
    state, _ = play_round(state, {0: mv("R@j1", "B@j0"), 1: mv("W@j0")})
    assert state.players[0].jokers == (1, 4)
    assert state.players[1].jokers == (6, None)
    assert [total(state, s) for s in (0, 1)] == [-5, -6]


# -- side B: pre-printed cells and ranges -------------------------------------------------------------


def test_fixed_cell_takes_only_its_die_showing_its_value() -> None:
    # Side B (0,2) goal 9 with a pre-printed Y1.
    p = player("B", cells={(0, 2): (3, None, 3, 2)})
    state = table(2, {0: p, 1: p}, side="B", roll=(2, 2, 3, 4, 1))
    for seat, move, reason in [
        (0, mv("Y@0,2", "R@0,0"), "FIXED_VALUE_MISMATCH"),
        (1, mv("W@0,2,Y"), "WRONG_COLOUR"),  # the white die never, even showing 1
    ]:
        with pytest.raises(IllegalMove) as err:
            RULES.apply_move(state, seat, move)
        assert err.value.reason == reason
    assert not any(
        pl.target == mv("Y@0,2").placements[0].target for m in RULES.legal_moves(state, 0) for pl in m.placements
    )
    state = with_roll(state, (2, 1, 3, 4, 1))
    state, events = play_round(state, {0: mv("R@0,0", "Y@0,2"), 1: mv("W@0,0,Y")})
    assert SquareClosed(0, 0, 2, True, 9) in events
    assert square_status(state, 1, 0, 2) == "crossed"


def test_fixed_cell_that_cannot_take_the_roll_does_not_force_a_placement() -> None:
    p = player("B", cells={(0, 2): (3, None, 3, 2)}, status=_all_wrong_but("B", (0, 2)), jokers=(1, 1))
    state = table(1, {0: p}, side="B", roll=(2, 2, 3, 4, 1))
    assert list(RULES.legal_moves(state, 0)) == [Move()]
    state = with_roll(state, (2, 1, 3, 4, 1))
    assert list(RULES.legal_moves(state, 0)) == [mv("Y@0,2")]


@pytest.mark.parametrize(
    ("last", "status", "score"),
    [(1, "wrong", -10), (2, "correct", 15), (5, "correct", 18), (6, "wrong", -10)],
)
def test_range_goal_both_ends_included(last: int, status: str, score: int) -> None:
    # Side B (0,1) goal 15..18 holding R6 Y6 G1: B decides.
    state = table(1, {0: player("B", cells={(0, 1): (6, 6, 1, None)})}, side="B", roll=(1, 1, 1, last, 1))
    state, _ = RULES.apply_move(state, 0, mv("B@0,1", "R@j0"))
    assert square_status(state, 0, 0, 1) == status
    assert total(state, 0) == score - 1


# -- the end: colour square and final turns --------------------------------------------------------


def _about_to_finish(side: str = "A") -> Player:
    """A sheet whose only open square (0,0) needs R1 to close correctly (12)."""
    return player(side, cells={(0, 0): (None, 1, 6, 4)}, status=_all_wrong_but(side, (0, 0)), jokers=(3, 3))


def test_colour_square_call_and_final_turn_placing_optional() -> None:
    state = table(2, {0: _about_to_finish()}, roll=(1, 2, 3, 4, 5))
    state, events = play_round(state, {0: mv("R@0,0"), 1: mv("W@1,1,R")})
    assert square_status(state, 1, 0, 0) == "crossed"
    assert ColourSquareCalled(0, 1) in events
    assert state.phase is Phase.FINAL and state.caller == 0
    assert RULES.to_act(state) == {1}
    assert RULES.legal_moves(state, 0) == ()
    final_roll = [e for e in events if isinstance(e, DiceRolled)][-1]
    assert final_roll.final and final_roll.seat == 1 and final_roll.roll == state.roll
    assert Move() in RULES.legal_moves(state, 1)
    state, events = RULES.apply_move(state, 1, Move())  # placing is optional
    assert events[-2] == FinalTurnResolved(1)
    assert isinstance(events[-1], GameEnded)
    outcome = RULES.outcome(state)
    assert outcome is not None and outcome.reason == COLOUR_SQUARE
    # Seat 1: R1 in (1,1) scores nothing; 15 open squares cost 10 each.
    assert outcome.scores == (12 - 150 - 6, -150)
    assert outcome.ranks == (1, 2)


def test_final_turn_uses_any_dice_and_its_closes_cross_nothing_out() -> None:
    players = {
        0: _about_to_finish(),
        1: player(cells={(1, 1): (1, 1, None, None), (2, 2): (None, None, None, None)}),
        2: player(cells={(1, 1): (1, 1, 1, None)}),
    }
    state = table(3, players, roll=(1, 2, 3, 4, 5))
    state, _ = play_round(state, {0: mv("R@0,0"), 1: mv("W@3,3,R"), 2: mv("W@3,3,R")})
    assert state.phase is Phase.FINAL and RULES.to_act(state) == {1}
    state = with_roll(state, (6, 5, 2, 2, 4))
    move = mv("R@2,2", "Y@j0", "G@1,1", "B@1,1", "W@2,2,Y")
    assert move in RULES.legal_moves(state, 1)
    state, events = RULES.apply_move(state, 1, move)
    assert SquareClosed(1, 1, 1, True, 6) in events
    assert not any(isinstance(e, SquareCrossed) for e in events)
    assert square_status(state, 2, 1, 1) == "open"
    assert state.players[1].jokers == (5, None)
    assert RULES.to_act(state) == {2}
    state = with_roll(state, (1, 1, 1, 3, 1))
    state, events = RULES.apply_move(state, 2, mv("B@1,1"))
    assert SquareClosed(2, 1, 1, True, 6) in events  # both keep it: final closes cross nothing out
    assert state.phase is Phase.OVER


def test_final_turn_white_die_never_on_a_fixed_cell() -> None:
    p = player("B", cells={(0, 0): (None, 1, 6, 4)}, status=_all_wrong_but("B", (0, 0)), jokers=(3, 3))
    state = table(2, {0: p}, side="B", roll=(3, 2, 3, 4, 5))
    state, _ = play_round(state, {0: mv("R@0,0"), 1: mv("W@3,3,R")})
    state = with_roll(state, (6, 1, 5, 2, 1))
    with pytest.raises(IllegalMove) as err:
        RULES.apply_move(state, 1, mv("W@0,2,Y"))
    assert err.value.reason == "WRONG_COLOUR"
    state, _ = RULES.apply_move(state, 1, mv("R@1,3", "Y@0,2", "G@2,2", "B@1,0", "W@3,2,R"))
    assert [cell_value(state, 1, 1, 3, "R"), cell_value(state, 1, 0, 2, "Y")] == [6, 1]


def test_several_run_out_the_lowest_seat_calls_and_final_turns_follow_seat_order() -> None:
    almost = player(cells={(0, 0): (1, 1, 6, None)}, status=_all_wrong_but("A", (0, 0)), jokers=(3, 3))
    players = {0: player(), 1: almost, 2: player(), 3: almost}
    state = table(4, players, roll=(1, 2, 3, 4, 4))
    state, events = play_round(state, {0: mv("R@1,1", "Y@1,1"), 1: mv("W@0,0,B"), 2: mv("W@1,1,R"), 3: mv("W@0,0,B")})
    assert ColourSquareCalled(1, 1) in events and state.caller == 1
    order = []
    while state.phase is Phase.FINAL:
        (seat,) = RULES.to_act(state)
        order.append(seat)
        state, _ = RULES.apply_move(state, seat, Move())
    assert order == [2, 0]  # seat 3 has no open square left: no final turn


def test_removed_players_take_no_final_turn() -> None:
    state = table(3, {0: _about_to_finish()}, roll=(1, 2, 3, 4, 5), timeouts_to_remove=1)
    state, events = play_round(state, {0: mv("R@0,0"), 1: None, 2: mv("W@3,3,R")})
    assert TimedOut(1, True) in events and PlayerRemoved(1, Removal.TIMEOUTS) in events
    assert state.phase is Phase.FINAL and RULES.to_act(state) == {2}
    assert square_status(state, 1, 0, 0) == "open"  # removed at the third timeout: not crossed out
    assert square_status(state, 2, 0, 0) == "crossed"
    state, _ = RULES.apply_move(state, 2, Move())
    outcome = RULES.outcome(state)
    assert outcome is not None and outcome.ranks[1] == 3


def test_final_turn_timeout_counts_towards_removal() -> None:
    state = table(2, {0: _about_to_finish()}, roll=(1, 2, 3, 4, 5))
    state = replace(state, players=(state.players[0], replace(state.players[1], timeouts=1)))
    state, _ = play_round(state, {0: mv("R@0,0"), 1: None})
    state, events = RULES.timeout(state, 1)
    # Every phase change has its event (a contract rule): the final turn that timed out resolves.
    assert events[:3] == [TimedOut(1, True), PlayerRemoved(1, Removal.TIMEOUTS), FinalTurnResolved(1)]
    assert state.phase is Phase.OVER
    outcome = RULES.outcome(state)
    assert outcome is not None and outcome.reason == COLOUR_SQUARE and outcome.winners == (0,)


def test_a_final_turn_timed_out_or_resigned_still_resolves_and_the_next_follows() -> None:
    state = table(3, {0: _about_to_finish()}, roll=(1, 2, 3, 4, 5))
    state, _ = play_round(state, {0: mv("R@0,0"), 1: mv("W@3,3,R"), 2: mv("W@3,3,R")})
    assert state.phase is Phase.FINAL and RULES.to_act(state) == {1}
    state, events = RULES.timeout(state, 1)
    assert events[:2] == [TimedOut(1, False), FinalTurnResolved(1)]
    assert isinstance(events[2], DiceRolled) and events[2].final and events[2].seat == 2
    state, events = RULES.resign(state, 2)
    assert events[:3] == [Resigned(2), PlayerRemoved(2, Removal.RESIGNED), FinalTurnResolved(2)]
    assert state.phase is Phase.OVER


def test_a_round_every_seat_left_still_resolves_before_the_end() -> None:
    state = RULES.new_game(Options(), 2, seed=3)
    state, _ = RULES.resign(state, 0)
    state, events = RULES.resign(state, 1)
    assert events[-2] == RoundResolved(1) and isinstance(events[-1], GameEnded)
    assert events[-1].outcome.reason == ALL_REMOVED


def test_the_opening_roll_is_an_event() -> None:
    state = RULES.new_game(Options(), 3, seed=4)
    assert state.roll is not None
    assert list(RULES.opening_events(state)) == [DiceRolled(1, 0, state.roll)]


# -- solo -------------------------------------------------------------------------------------------


def test_solo_is_active_every_round_and_never_uses_white() -> None:
    state = RULES.new_game(Options(), 1, seed=5)
    for _ in range(3):
        assert state.active == 0 and RULES.to_act(state) == {0}
        with pytest.raises(IllegalMove) as err:
            RULES.apply_move(state, 0, mv("W@0,0,R"))
        assert err.value.reason == "WRONG_DIE_FOR_ROLE"
        state, _ = RULES.apply_move(state, 0, RULES.legal_moves(state, 0)[0])


@pytest.mark.parametrize(("target", "reached"), [(0, None), (10, True), (11, False)])
def test_solo_ends_when_no_square_is_open(target: int, reached: bool | None) -> None:
    p = player(cells={(0, 0): (None, 1, 6, 4)}, status=full("A", {(0, 0)}, "crossed"))
    state = table(1, {0: p}, roll=(1, 2, 3, 4, 5), target=target)
    state, events = RULES.apply_move(state, 0, mv("R@0,0", "Y@j0"))
    assert ColourSquareCalled(0, 1) in events
    assert state.phase is Phase.OVER
    assert isinstance(events[-1], GameEnded)
    assert events[-1].outcome.reason == SOLO_FINISHED
    result = RULES.result(state)
    assert result is not None
    assert result.scores == (10,) and result.caller == 0 and result.target == target
    assert result.reached is reached


# -- timeouts and resignation ---------------------------------------------------------------------------


def test_timed_out_player_places_nothing_and_three_in_a_row_remove() -> None:
    state = RULES.new_game(Options(), 3, seed=11)
    removals = []
    for rnd in range(3):
        moves = {s: RULES.legal_moves(state, s)[0] for s in (0, 1)}
        state, events = play_round(state, {**moves, 2: None})
        removals.append([e for e in events if isinstance(e, TimedOut)])
        assert state.players[2].cells == (None,) * 64
        assert state.players[2].timeouts == rnd + 1
    assert removals == [[TimedOut(2, False)], [TimedOut(2, False)], [TimedOut(2, True)]]
    assert state.players[2].removed and state.players[2].removal is Removal.TIMEOUTS
    assert RULES.to_act(state) == {0, 1}
    assert RULES.legal_moves(state, 2) == ()
    with pytest.raises(IllegalMove) as err:
        RULES.apply_move(state, 2, Move())
    assert err.value.reason == "NOT_YOUR_TURN"
    # Rounds 1-3 had actives 0, 1, 2; seat 2 is skipped from now on.
    actives = []
    for _ in range(3):
        actives.append(state.active)
        state, _ = play_round(state, {s: RULES.legal_moves(state, s)[0] for s in (0, 1)})
    assert actives == [0, 1, 0]


def test_any_placement_resets_the_timeout_count() -> None:
    state = RULES.new_game(Options(), 2, seed=12)
    for plan in (None, None, "pass-or-place", None, None):
        move = None if plan is None else RULES.legal_moves(state, 1)[0]
        state, _ = play_round(state, {0: RULES.legal_moves(state, 0)[0], 1: move})
    assert not state.players[1].removed and state.players[1].timeouts == 2


def test_removed_player_is_not_crossed_out_and_ranks_last() -> None:
    rich = player(cells={(0, 1): (5, 5, 5, 2), (1, 1): (1, 2, 1, 2)}, status={(0, 1): "correct", (1, 1): "correct"})
    players = {0: player(cells={(1, 2): (None, None, 6, 1)}), 1: rich}
    state = table(2, players, roll=(6, 6, 1, 1, 1))
    state, events = RULES.resign(state, 1)
    assert events[:2] == [Resigned(1), PlayerRemoved(1, Removal.RESIGNED)]
    assert RULES.to_act(state) == {0}
    state, events = RULES.apply_move(state, 0, mv("R@1,2", "Y@1,2"))
    assert square_status(state, 0, 1, 2) == "correct"
    assert square_status(state, 1, 1, 2) == "open"  # nothing of a removed seat is crossed out
    assert state.active == 0  # seat 1 is skipped
    result = None
    for _ in range(200):
        if state.phase is Phase.OVER:
            break
        state, _ = RULES.apply_move(state, 0, RULES.legal_moves(state, 0)[0])
    result = RULES.result(state)
    assert result is not None
    assert result.removed == (1,)
    assert result.ranks == (1, 2)


def test_resign_drops_unrevealed_placements_and_resolves_the_round() -> None:
    state = table(3, roll=(1, 2, 3, 4, 5))
    state, _ = RULES.apply_move(state, 0, mv("R@0,0", "Y@0,0"))
    state, _ = RULES.apply_move(state, 1, mv("W@0,0,G"))
    state, events = RULES.resign(state, 1)
    assert state.pending[1] is None
    state, events = RULES.resign(state, 2)
    assert RoundResolved(1) in events
    assert cell_value(state, 1, 0, 0, "G") is None  # dropped
    assert cell_value(state, 0, 0, 0, "R") == 1
    assert state.round == 2 and state.active == 0 and RULES.to_act(state) == {0}
    with pytest.raises(IllegalMove) as err:
        RULES.resign(state, 1)
    assert err.value.reason == "NOT_YOUR_TURN"


def test_everyone_removed_ends_the_game() -> None:
    state = table(2, roll=(1, 2, 3, 4, 5), timeouts_to_remove=1)
    state, _ = RULES.resign(state, 0)
    state, events = RULES.timeout(state, 1)
    assert isinstance(events[-1], GameEnded)
    assert events[-1].outcome.reason == ALL_REMOVED
    result = RULES.result(state)
    assert result is not None and result.caller is None and result.ranks == (1, 1)
    for call in (lambda: RULES.resign(state, 0), lambda: RULES.timeout(state, 0)):
        with pytest.raises(IllegalMove) as err:
            call()
        assert err.value.reason == "GAME_OVER"


def test_solo_resign_ends_the_game() -> None:
    state, events = RULES.resign(RULES.new_game(Options(), 1, 3), 0)
    assert state.phase is Phase.OVER and isinstance(events[-1], GameEnded)
    assert events[-1].outcome.reason == ALL_REMOVED and events[-1].outcome.scores == (-160,)


# -- the safety limit ------------------------------------------------------------------------------------


def test_round_limit_ends_the_game() -> None:
    state = RULES.new_game(Options(max_rounds=2), 2, seed=4)
    for _ in range(2):
        state, events = play_round(state, {s: RULES.legal_moves(state, s)[0] for s in (0, 1)})
    assert state.phase is Phase.OVER
    assert isinstance(events[-1], GameEnded) and events[-1].outcome.reason == ROUND_LIMIT
    result = RULES.result(state)
    assert result is not None and result.caller is None and result.rounds == 2
    assert all(p.breakdown.open_penalty < 0 for p in RULES.view(state, None).players)


def test_round_limit_round_that_triggers_the_end_still_has_final_turns() -> None:
    state = table(2, {0: _about_to_finish()}, roll=(1, 2, 3, 4, 5), max_rounds=1)
    state, _ = play_round(state, {0: mv("R@0,0"), 1: mv("W@1,1,R")})
    assert state.phase is Phase.FINAL and RULES.to_act(state) == {1}


def test_default_limit_is_200_rounds() -> None:
    assert RULES.default_options().max_rounds == 200


# -- events --------------------------------------------------------------------------------------------


def test_game_ended_is_the_last_event_and_only_once() -> None:
    state = table(1, {0: player(cells={(0, 0): (None, 1, 6, 4)}, status=full("A", {(0, 0)}, "crossed"))})
    state = with_roll(state, (1, 1, 1, 1, 1))
    state, events = RULES.apply_move(state, 0, mv("R@0,0", "Y@j0"))
    assert [type(e) for e in events] == [
        PlacementSubmitted,
        PlacementsMade,
        SquareClosed,
        RoundResolved,
        ColourSquareCalled,
        GameEnded,
    ]
