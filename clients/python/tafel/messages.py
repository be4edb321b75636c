"""Typed moves and options: wrap a game's own message into the tafel.games.v1 unions."""

from __future__ import annotations

from google.protobuf.message import Message

from tafel.coloursquare.v1 import coloursquare_pb2
from tafel.connect4.v1 import connect4_pb2
from tafel.games.v1 import games_pb2
from tafel.plus4.v1 import plus4_pb2

# Package of a game's messages -> the game's field name in every games.v1 union.
_FIELD_BY_PACKAGE = {
    "tafel.connect4.v1": "connect4",
    "tafel.plus4.v1": "plus4",
    "tafel.coloursquare.v1": "coloursquare",
}
GAMES = tuple(_FIELD_BY_PACKAGE.values())


def _field(message: Message) -> str:
    package = message.DESCRIPTOR.full_name.rsplit(".", 1)[0]
    try:
        return _FIELD_BY_PACKAGE[package]
    except KeyError:
        raise TypeError(f"{message.DESCRIPTOR.full_name} is not a tafel game message") from None


def game_move(move: Message) -> games_pb2.GameMove:
    """`connect4_pb2.Move(column=3)` (or any game's Move) -> GameMove; a GameMove passes through."""
    if isinstance(move, games_pb2.GameMove):
        return move
    union = games_pb2.GameMove()
    put_game_move(union, move)
    return union


def put_game_move(union: games_pb2.GameMove, move: Message) -> None:
    """Set `union` (a GameMove inside a request being built) to `move`, a game's Move or a
    GameMove, copying it once."""
    if isinstance(move, games_pb2.GameMove):
        union.CopyFrom(move)
    else:
        getattr(union, _field(move)).CopyFrom(move)


def game_options(options: Message | None) -> games_pb2.GameOptions:
    if options is None:
        return games_pb2.GameOptions()
    if isinstance(options, games_pb2.GameOptions):
        return options
    union = games_pb2.GameOptions()
    getattr(union, _field(options)).CopyFrom(options)
    return union


def connect4_move(column: int) -> games_pb2.GameMove:
    return games_pb2.GameMove(connect4=connect4_pb2.Move(column=column))


__all__ = ["GAMES", "coloursquare_pb2", "connect4_move", "game_move", "game_options", "plus4_pb2", "put_game_move"]
