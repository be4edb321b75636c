"""Scores and ranks: pure functions of a sheet layout and a player's sheet."""

from __future__ import annotations

from collections.abc import Sequence

from tafel_rules.coloursquare.model import Breakdown, Player, Status
from tafel_rules.coloursquare.sheets import Kind, Sheet, Square

BRIDGE_POINTS = 5
PURPLE_POINTS = 5
WRONG_POINTS = -10
OPEN_POINTS = -10


def square_sum(player: Player, square: int) -> int:
    return sum(v for v in player.cells[square * 4 : square * 4 + 4] if v is not None)


def is_correct(square: Square, total: int) -> bool:
    """A closed square is correct when its four values sum into its goal."""
    return square.low <= total <= square.high


def coloured_bridges(sheet: Sheet, player: Player) -> tuple[tuple[int, int], ...]:
    """Bridges whose two squares are both correct and neither orange."""
    status = player.status
    return tuple((a, b) for a, b in sheet.colourable if status[a] is Status.CORRECT and status[b] is Status.CORRECT)


def score(sheet: Sheet, circled: Sequence[int | None], wrong: int, open_: int, jokers: int) -> Breakdown:
    """The score in parts from what decides it: per square its sum when it is correct (None when it
    is not), the number of wrong squares and of open ones to count (the open ones only once the game
    is over), the jokers' total. `breakdown` scores a player's sheet with it, and the bots the sheets
    they imagine, so both count alike."""
    bridges = [(a, b) for a, b in sheet.colourable if circled[a] is not None and circled[b] is not None]
    bridged: set[int] = {i for pair in bridges for i in pair}
    squares = sheet.squares
    purple = PURPLE_POINTS * sum(1 for i in bridged if squares[i].kind is Kind.PURPLE)
    sums = sum(v for v in circled if v is not None)
    bridge_points = BRIDGE_POINTS * len(bridges)
    total = sums + bridge_points + purple + WRONG_POINTS * wrong + OPEN_POINTS * open_ - jokers
    return Breakdown(sums, bridge_points, purple, WRONG_POINTS * wrong, OPEN_POINTS * open_, -jokers, total)


def breakdown(sheet: Sheet, player: Player, over: bool) -> Breakdown:
    """The score in parts. Open squares cost -10 only once the game is over."""
    status = player.status
    circled = [square_sum(player, i) if s is Status.CORRECT else None for i, s in enumerate(status)]
    wrong = sum(1 for s in status if s is Status.WRONG)
    open_ = sum(1 for s in status if s is Status.OPEN) if over else 0
    return score(sheet, circled, wrong, open_, sum(v for v in player.jokers if v is not None))


def competition_ranks(scores: Sequence[int], removed: Sequence[bool]) -> tuple[int, ...]:
    """Decision D13: seats not removed first by score, then removed seats by score; ties share."""
    keys = [(0 if gone else 1, score) for score, gone in zip(scores, removed, strict=True)]
    return tuple(1 + sum(1 for other in keys if other > key) for key in keys)


def ranking(ranks: Sequence[int]) -> tuple[int, ...]:
    """Seats best first, ties in seat order."""
    return tuple(sorted(range(len(ranks)), key=lambda seat: (ranks[seat], seat)))
