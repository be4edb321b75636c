"""Scores and ranks: pure functions of a sheet layout and a player's sheet."""

from __future__ import annotations

from collections.abc import Sequence

from services.coloursquare.model import Breakdown, Player, Status
from services.coloursquare.sheets import Kind, Sheet

BRIDGE_POINTS = 5
PURPLE_POINTS = 5
WRONG_POINTS = -10
OPEN_POINTS = -10


def square_sum(player: Player, square: int) -> int:
    return sum(v for v in player.cells[square * 4 : square * 4 + 4] if v is not None)


def coloured_bridges(sheet: Sheet, player: Player) -> tuple[tuple[int, int], ...]:
    """Bridges whose two squares are both correct and neither orange."""
    status = player.status
    squares = sheet.squares
    return tuple(
        (a, b)
        for a, b in sheet.bridges
        if status[a] is Status.CORRECT
        and status[b] is Status.CORRECT
        and squares[a].kind is not Kind.ORANGE
        and squares[b].kind is not Kind.ORANGE
    )


def breakdown(sheet: Sheet, player: Player, over: bool) -> Breakdown:
    """The score in parts. Open squares cost -10 only once the game is over."""
    status = player.status
    circled = sum(square_sum(player, i) for i, s in enumerate(status) if s is Status.CORRECT)
    bridges = coloured_bridges(sheet, player)
    bridged: set[int] = {i for pair in bridges for i in pair}
    purple = sum(
        PURPLE_POINTS
        for i, sq in enumerate(sheet.squares)
        if sq.kind is Kind.PURPLE and status[i] is Status.CORRECT and i in bridged
    )
    wrong = WRONG_POINTS * sum(1 for s in status if s is Status.WRONG)
    open_ = OPEN_POINTS * sum(1 for s in status if s is Status.OPEN) if over else 0
    jokers = -sum(v for v in player.jokers if v is not None)
    bridge_points = BRIDGE_POINTS * len(bridges)
    total = circled + bridge_points + purple + wrong + open_ + jokers
    return Breakdown(circled, bridge_points, purple, wrong, open_, jokers, total)


def competition_ranks(scores: Sequence[int], removed: Sequence[bool]) -> tuple[int, ...]:
    """Decision D13: seats not removed first by score, then removed seats by score; ties share."""
    keys = [(0 if gone else 1, score) for score, gone in zip(scores, removed, strict=True)]
    return tuple(1 + sum(1 for other in keys if other > key) for key in keys)


def ranking(ranks: Sequence[int]) -> tuple[int, ...]:
    """Seats best first, ties in seat order."""
    return tuple(sorted(range(len(ranks)), key=lambda seat: (ranks[seat], seat)))
