"""Every refused placement with its reason code, and the precedence of decision D11."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from tafel_rules.coloursquare.model import Cell, Die, Joker, Move, Options, Placement, State
from tafel_rules.coloursquare.rules import RULES, with_roll
from tafel_rules.game import IllegalMove

from tests.services.coloursquare.helpers import full, mv, play_round, player, table


def reason(state: State, seat: Any, move: Any) -> str:
    before = state
    with pytest.raises(IllegalMove) as err:
        RULES.apply_move(state, seat, move)
    assert state == before  # a refused move changes nothing
    assert err.value.message
    return err.value.reason


def _two(side: str = "A", **kw: Any) -> State:
    """Two seats on side `side`, seat 0 active. Seat 0 and 1 sheets set by kw (p0=, p1=)."""
    players = {s: kw.pop(f"p{s}") for s in (0, 1) if f"p{s}" in kw}
    return table(2, players, side=side, roll=kw.pop("roll", (1, 2, 3, 4, 5)), **kw)


def test_game_over() -> None:
    state, _ = RULES.resign(RULES.new_game(Options(), 1, 1), 0)
    assert reason(state, 0, Move()) == "GAME_OVER"
    assert reason(state, 7, "junk") == "GAME_OVER"  # before anything else


@pytest.mark.parametrize("seat", [-1, 2, 99, "0", None, True])
def test_bad_seat(seat: Any) -> None:
    assert reason(_two(), seat, "junk") == "BAD_SEAT"


def test_not_your_turn() -> None:
    state = _two()
    state, _ = RULES.apply_move(state, 0, mv("R@0,0", "Y@0,0"))
    assert reason(state, 0, mv("R@1,1", "Y@1,1")) == "NOT_YOUR_TURN"  # already placed this round
    assert reason(state, 0, "junk") == "NOT_YOUR_TURN"
    removed, _ = RULES.resign(_two(), 1)
    assert reason(removed, 1, Move()) == "NOT_YOUR_TURN"


def test_not_your_turn_in_the_final_phase() -> None:
    almost = player(cells={(0, 0): (None, 1, 6, 4)}, status=full("A", {(0, 0)}), jokers=(3, 3))
    state = table(3, {0: almost}, roll=(1, 2, 3, 4, 5))
    state, _ = play_round(state, {0: mv("R@0,0"), 1: mv("W@1,1,R"), 2: mv("W@1,1,R")})
    assert RULES.to_act(state) == {1}
    assert reason(state, 0, Move()) == "NOT_YOUR_TURN"
    assert reason(state, 2, Move()) == "NOT_YOUR_TURN"


def test_no_roll() -> None:
    state = replace(_two(), roll=None)
    assert reason(state, 0, "junk") == "NO_ROLL"
    assert RULES.legal_moves(state, 0) == ()


@pytest.mark.parametrize(
    ("move", "code"),
    [
        ("junk", "BAD_PLACEMENT"),
        (Move(("R", Cell(0, 0, Die.R))), "BAD_PLACEMENT"),  # type: ignore[arg-type]
        (Move((Placement("X", Cell(0, 0, Die.R)),)), "BAD_DIE"),  # type: ignore[arg-type]
        (Move((Placement(None, Joker(0)),)), "BAD_DIE"),  # type: ignore[arg-type]
        (Move((Placement(Die.R, Cell(4, 0, Die.R)),)), "BAD_TARGET"),
        (Move((Placement(Die.R, Cell(0, -1, Die.R)),)), "BAD_TARGET"),
        (Move((Placement(Die.W, Cell(0, 0, Die.W)),)), "BAD_TARGET"),  # no white cells
        (Move((Placement(Die.R, Cell(0, 0, "P")),)), "BAD_TARGET"),  # type: ignore[arg-type]
        (Move((Placement(Die.R, Joker(2)),)), "BAD_TARGET"),
        (Move((Placement(Die.R, None),)), "BAD_TARGET"),  # type: ignore[arg-type]
        (Move((Placement(Die.R, Cell(True, 0, Die.R)),)), "BAD_TARGET"),
    ],
)
def test_malformed(move: Any, code: str) -> None:
    assert reason(_two(), 0, move) == code


def test_shape_of_the_whole_list_first() -> None:
    # An error on a later placement's shape wins over a rule error on an earlier one.
    move = Move((Placement(Die.W, Cell(0, 0, Die.R)), Placement("Q", Joker(0))))  # type: ignore[arg-type]
    assert reason(_two(), 0, move) == "BAD_DIE"
    move = Move((Placement(Die.R, Cell(0, 0, Die.R)), Placement(Die.R, Joker(5))))
    assert reason(_two(), 0, move) == "BAD_TARGET"


def test_same_die_twice() -> None:
    assert reason(_two(), 0, mv("R@0,0", "R@1,1")) == "SAME_DIE_TWICE"
    assert reason(_two(), 1, mv("W@0,0,R", "W@1,1,R")) == "SAME_DIE_TWICE"


def test_wrong_die_for_role() -> None:
    assert reason(_two(), 0, mv("W@0,0,R")) == "WRONG_DIE_FOR_ROLE"  # the active player
    assert reason(_two(), 0, mv("R@0,0", "W@0,0,Y")) == "WRONG_DIE_FOR_ROLE"
    assert reason(_two(), 1, mv("R@0,0")) == "WRONG_DIE_FOR_ROLE"  # a passive player
    assert reason(_two(), 1, mv("G@j0")) == "WRONG_DIE_FOR_ROLE"


def test_joker_used() -> None:
    state = _two(p0=player(jokers=(2, None)), p1=player(jokers=(None, 4)))
    assert reason(state, 0, mv("R@j0", "Y@0,0")) == "JOKER_USED"
    assert reason(state, 1, mv("W@j1")) == "JOKER_USED"
    assert reason(_two(), 0, mv("R@j0", "Y@j0")) == "JOKER_USED"  # two dice, one field


def test_wrong_colour() -> None:
    assert reason(_two(), 0, mv("R@0,0,Y", "Y@0,0")) == "WRONG_COLOUR"
    assert reason(_two(), 0, mv("R@0,0", "B@0,0,G")) == "WRONG_COLOUR"


def test_square_not_open() -> None:
    sheet = player(
        cells={(0, 0): (6, 6, 6, 6), (1, 1): (1, None, None, None)},
        status={(0, 0): "wrong", (1, 1): "crossed", (2, 2): "correct"},
    )
    state = _two(p0=sheet, p1=sheet)
    assert reason(state, 0, mv("R@1,1", "Y@0,0")) == "SQUARE_NOT_OPEN"
    assert reason(state, 0, mv("R@2,2", "Y@3,3")) == "SQUARE_NOT_OPEN"
    assert reason(state, 1, mv("W@1,1,Y")) == "SQUARE_NOT_OPEN"


def test_cell_filled() -> None:
    state = _two(p0=player(cells={(0, 0): (3, None, None, None)}), p1=player(cells={(0, 0): (3, None, None, None)}))
    assert reason(state, 0, mv("R@0,0", "Y@0,0")) == "CELL_FILLED"
    assert reason(state, 1, mv("W@0,0,R")) == "CELL_FILLED"
    # Two dice aimed at the same cell: the second finds it filled (the white die only in final turns).
    almost = player(cells={(0, 0): (None, 1, 6, 4)}, status=full("A", {(0, 0)}), jokers=(3, 3))
    final = table(2, {0: almost}, roll=(1, 2, 3, 4, 5))
    final, _ = play_round(final, {0: mv("R@0,0"), 1: mv("W@1,1,G")})
    assert reason(final, 1, mv("R@2,2", "W@2,2,R")) == "CELL_FILLED"


def test_fixed_cells_side_b() -> None:
    # (0,2) pre-printed Y1; (1,0) pre-printed B2.
    state = _two("B", roll=(2, 3, 3, 2, 1))
    assert reason(state, 0, mv("R@0,0", "Y@0,2")) == "FIXED_VALUE_MISMATCH"
    assert reason(state, 1, mv("W@0,2,Y")) == "WRONG_COLOUR"  # white shows 1, still refused
    assert reason(state, 1, mv("W@1,0,B")) == "WRONG_COLOUR"
    state, _ = play_round(state, {0: mv("R@0,0", "B@1,0"), 1: mv("W@0,0,G")})
    assert state.players[0].cells[4 * 4 + 3] == 2


def test_precedence_within_a_placement() -> None:
    sheet = player("B", cells={(0, 2): (None, 1, None, None)}, status={(1, 1): "wrong"})
    state = _two("B", p0=sheet, p1=sheet, roll=(2, 3, 3, 2, 1))
    # WRONG_COLOUR (die vs cell colour) comes before SQUARE_NOT_OPEN.
    assert reason(state, 0, mv("R@1,1,Y", "Y@0,0")) == "WRONG_COLOUR"
    # SQUARE_NOT_OPEN before CELL_FILLED.
    closed = player(cells={(0, 0): (6, 6, 6, 6)}, status={(0, 0): "wrong"})
    assert reason(_two(p0=closed), 0, mv("R@0,0", "Y@1,1")) == "SQUARE_NOT_OPEN"
    # CELL_FILLED before the pre-printed checks (a filled pre-printed cell).
    assert reason(state, 0, mv("Y@0,2", "R@0,0")) == "CELL_FILLED"
    assert reason(state, 1, mv("W@0,2,Y")) == "CELL_FILLED"


def test_precedence_in_list_order() -> None:
    # The first bad placement decides, whatever comes after it.
    assert reason(_two(), 0, mv("R@0,0,Y", "R@0,0")) == "WRONG_COLOUR"
    assert reason(_two(), 0, mv("R@0,0", "R@0,0,Y")) == "SAME_DIE_TWICE"
    assert reason(_two(), 0, mv("R@j0", "W@j0")) == "WRONG_DIE_FOR_ROLE"


def test_too_many_dice() -> None:
    assert reason(_two(), 0, mv("R@0,0", "Y@0,0", "G@0,0")) == "TOO_MANY_DICE"
    solo = table(1, roll=(1, 2, 3, 4, 5))
    assert reason(solo, 0, mv("R@0,0", "Y@0,0", "G@0,0", "B@0,0")) == "TOO_MANY_DICE"


def test_too_many_dice_comes_before_must_place_and_after_the_placements() -> None:
    assert reason(_two(), 0, mv("R@0,0", "Y@0,0", "G@0,0", "B@0,0", "W@j0")) == "WRONG_DIE_FOR_ROLE"


def test_must_place() -> None:
    assert reason(_two(), 0, Move()) == "MUST_PLACE"
    assert reason(_two(), 0, mv("R@0,0")) == "MUST_PLACE"  # two can be placed
    assert reason(_two(), 1, Move()) == "MUST_PLACE"
    # A passive player whose only option is a joker field must still place.
    only_joker = player(cells={(0, 0): (1, 1, 1, 1)}, status=full("A", {(0, 0)}), jokers=(None, 3))
    assert reason(_two(p1=only_joker), 1, Move()) == "MUST_PLACE"


def test_final_turn_is_optional_but_checked() -> None:
    almost = player(cells={(0, 0): (None, 1, 6, 4)}, status=full("A", {(0, 0)}), jokers=(3, 3))
    state = table(2, {0: almost}, roll=(1, 2, 3, 4, 5))
    state, _ = play_round(state, {0: mv("R@0,0"), 1: mv("W@1,1,G")})
    state = with_roll(state, (1, 2, 3, 4, 5))
    assert reason(state, 1, mv("R@1,1,G")) == "WRONG_COLOUR"
    assert reason(state, 1, mv("W@j0", "R@j0")) == "JOKER_USED"
    assert reason(state, 1, mv("R@0,0")) == "SQUARE_NOT_OPEN"  # crossed by seat 0's close
    RULES.apply_move(state, 1, Move())  # a pass is fine
