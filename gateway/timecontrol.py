"""Time controls as answered, and which games are correspondence games (a leaf module: rooms,
games, challenges, tournaments and the lobby all use it; gateway/lobby.py per_move_ms reads them).

Correspondence: 1, 2, 3, 5, 7, 10 or 14 days a move (TimeControl.days_per_move). Only these go past
the real-time range (TAFEL_MAX_PER_MOVE_S). A game of a day or more a move is a correspondence game:
its players get notices (gateway/correspondence.py), their vacations stop its clock
(gateway/vacation/).
"""

from __future__ import annotations

from tafel.play.v1 import play_pb2

DAYS_PER_MOVE = (1, 2, 3, 5, 7, 10, 14)
DAY_MS = 86_400_000


def time_control_of(per_move_ms: int) -> play_pb2.TimeControl:
    """A TimeControl as answered: per_move always, days_per_move too for a correspondence length
    (so a client that knows only per_move still shows the right time)."""
    control = play_pb2.TimeControl()
    control.per_move.FromMilliseconds(per_move_ms)
    days, rest = divmod(per_move_ms, DAY_MS)
    if rest == 0 and days in DAYS_PER_MOVE:
        control.days_per_move = days
    return control


def is_correspondence(per_move_ms: int) -> bool:
    """A game of a day or more a move: notices, vacations, warnings before its deadlines."""
    return per_move_ms >= DAY_MS
