"""The refusals a player meets in a first game, as the rules services and the gateway word them:
no seat numbers, columns counted from 1 as boards show them, counts with their
plurals. Reason codes are the contract and stay as they were."""

from __future__ import annotations

import re

import pytest
from tafel_rules.coloursquare.model import Move as SquareMove
from tafel_rules.coloursquare.model import Options as SquareOptions
from tafel_rules.coloursquare.rules import RULES as SQUARE
from tafel_rules.connect4 import RULES as CONNECT4
from tafel_rules.connect4 import Move as DropMove
from tafel_rules.game import IllegalMove
from tafel_rules.plus4 import RULES as PLUS4
from tafel_rules.plus4 import Move as PushMove

from gateway.rooms import _not_enough, normalize_code
from kit.errors import Refused

PROGRAMMER = re.compile(r"\bseat \d|\(s\)|\b[A-Z]{3,}_[A-Z_]+\b")


def refused(rules: object, state: object, seat: int, move: object) -> IllegalMove:
    with pytest.raises(IllegalMove) as caught:
        rules.apply_move(state, seat, move)  # type: ignore[attr-defined]
    assert not PROGRAMMER.search(caught.value.message), caught.value.message
    return caught.value


def test_not_your_turn_names_no_seat() -> None:
    c4 = CONNECT4.new_game(CONNECT4.default_options(), 2, 0)
    assert refused(CONNECT4, c4, 1, DropMove(0)).reason == "NOT_YOUR_TURN"
    p4 = PLUS4.new_game(PLUS4.default_options(), 2, 0)
    assert refused(PLUS4, p4, 1, PushMove(0, False)).reason == "NOT_YOUR_TURN"
    square = SQUARE.new_game(SquareOptions(), 2, 1)
    square, _ = SQUARE.apply_move(square, 1, SQUARE.legal_moves(square, 1)[0])  # placed: not asked again
    assert refused(SQUARE, square, 1, SquareMove()).reason == "NOT_YOUR_TURN"


def test_a_full_column_is_counted_from_one() -> None:
    state = CONNECT4.new_game(CONNECT4.default_options(), 2, 0)
    for _ in range(state.options.rows):
        state, _ = CONNECT4.apply_move(state, state.to_move, DropMove(2))
    error = refused(CONNECT4, state, state.to_move, DropMove(2))
    assert error.reason == "COLUMN_FULL"
    assert "column 3 from the left" in error.message, error.message


def test_gateway_room_refusals_in_words() -> None:
    assert _not_enough(2, 1) == (
        "this game needs at least 2 players and 1 player is seated: wait for more, or add a bot"
    )
    assert "3 players are seated" in _not_enough(4, 3)
    with pytest.raises(Refused) as caught:
        normalize_code("nope")
    assert caught.value.reason == "BAD_ROOM_CODE"
    assert "23456789" not in caught.value.message, caught.value.message
