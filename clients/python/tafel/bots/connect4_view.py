"""Connect Four's positions from the API's view (`tafel.connect4.v1.View`): the bots' proto adapter,
the one module of the bot that reads generated code."""

from __future__ import annotations

from dataclasses import dataclass

from tafel.bots.connect4_engine import STANDARD_HEIGHT, STANDARD_WIDTH, Engine
from tafel.connect4.v1 import connect4_pb2 as pb

__all__ = ["Board", "board_at", "board_from_view"]


@dataclass(frozen=True)
class Board:
    """A position taken from a view: bitboards for `engine`'s board size."""

    engine: Engine
    current: int
    mask: int
    nb: int
    legal: tuple[int, ...]


def board_at(engine: Engine, current: int, mask: int, nb: int) -> Board:
    """A Board for a position given as bitboards (the side to move's discs, all discs, their count)."""
    legal = tuple(c for c in range(engine.width) if engine.can_play(mask, c))
    if not legal:
        raise ValueError("no legal column")
    return Board(engine, current, mask, nb, legal)


def board_from_view(view: pb.View, engine: Engine | None = None) -> Board:
    """The position of a view, for the side to move. Raises ValueError when the game is over or the
    view is inconsistent."""
    if not view.HasField("to_move"):
        raise ValueError("the game is over: nobody is to move")
    width, height = view.columns or STANDARD_WIDTH, view.rows or STANDARD_HEIGHT
    if engine is None or (engine.width, engine.height) != (width, height):
        engine = Engine(width, height)
    if len(view.board) != width:
        raise ValueError(f"the view has {len(view.board)} columns, not {width}")
    to_move = view.to_move
    current = mask = 0
    nb = 0
    for c, column in enumerate(view.board):
        if len(column.seats) > height:
            raise ValueError(f"column {c} holds more than {height} discs")
        for row, seat in enumerate(column.seats):
            bit = 1 << (c * engine.stride + row)
            mask |= bit
            if seat == to_move:
                current |= bit
            nb += 1
    legal = tuple(c for c in range(width) if engine.can_play(mask, c))
    if view.legal_columns:
        legal = tuple(c for c in view.legal_columns if 0 <= c < width and engine.can_play(mask, c))
    if not legal:
        raise ValueError("no legal column")
    return Board(engine, current, mask, nb, legal)
