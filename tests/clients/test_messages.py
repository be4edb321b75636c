"""tafel.messages: a game's own move wrapped into the GameMove union, in a new message or in place."""

from __future__ import annotations

import pytest
from tafel.coloursquare.v1 import coloursquare_pb2
from tafel.connect4.v1 import connect4_pb2
from tafel.games.v1 import games_pb2
from tafel.messages import game_move, put_game_move
from tafel.play.v1 import play_pb2


def test_each_game_s_move_lands_in_its_own_field() -> None:
    assert game_move(connect4_pb2.Move(column=3)) == games_pb2.GameMove(connect4=connect4_pb2.Move(column=3))
    wrapped = game_move(coloursquare_pb2.Move())
    assert wrapped.WhichOneof("game") == "coloursquare"
    union = games_pb2.GameMove(connect4=connect4_pb2.Move(column=1))
    assert game_move(union) is union  # a GameMove passes through


def test_put_game_move_fills_a_request_being_built_and_copies_the_move() -> None:
    request = play_pb2.PlayRequest(correlation_id=7)
    move = connect4_pb2.Move(column=5)
    put_game_move(request.submit_move.move, move)
    move.column = 0  # the request holds a copy
    assert request.WhichOneof("action") == "submit_move"
    assert request.submit_move.move == games_pb2.GameMove(connect4=connect4_pb2.Move(column=5))
    put_game_move(request.submit_move.move, games_pb2.GameMove(connect4=connect4_pb2.Move(column=2)))
    assert request.submit_move.move.connect4.column == 2


def test_a_message_that_is_no_game_s_move_is_refused() -> None:
    with pytest.raises(TypeError, match="not a tafel game message"):
        put_game_move(games_pb2.GameMove(), play_pb2.Ping())
