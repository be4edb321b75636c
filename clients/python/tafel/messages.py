"""Typed moves and options: wrap a game's own message into the tafel.games.v1 unions."""

from __future__ import annotations

from google.protobuf.message import Message

from tafel.games.v1 import games_pb2

# Package of a game's messages -> the game's field name in every games.v1 union, read from the
# union itself so that a new game needs nothing here.
_FIELD_BY_PACKAGE = {
    field.message_type.file.package: field.name
    for field in games_pb2.GameMove.DESCRIPTOR.oneofs_by_name["game"].fields
    if field.message_type is not None
}
GAMES = tuple(_FIELD_BY_PACKAGE.values())


def _field(message: Message) -> str:
    package = message.DESCRIPTOR.full_name.rsplit(".", 1)[0]
    try:
        return _FIELD_BY_PACKAGE[package]
    except KeyError:
        raise TypeError(f"{message.DESCRIPTOR.full_name} is not a tafel game message") from None


def game_move(move: Message) -> games_pb2.GameMove:
    """A game's own Move (e.g. `connect4_pb2.Move(column=3)`) -> GameMove; a GameMove passes through."""
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


__all__ = ["GAMES", "game_move", "game_options", "put_game_move"]
