"""Colour Square values: dice, placements, moves, options, state, events and views.

Everything is a frozen dataclass holding tuples, so a state is a compact, hashable, comparable value.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Die(StrEnum):
    """The five dice. R, Y, G, B are the coloured dice (and the four cell colours); W is white."""

    R = "R"
    Y = "Y"
    G = "G"
    B = "B"
    W = "W"


COLOURS: tuple[Die, ...] = (Die.R, Die.Y, Die.G, Die.B)
DICE: tuple[Die, ...] = (Die.R, Die.Y, Die.G, Die.B, Die.W)
# Index of a die in a roll tuple (R, Y, G, B, W) and of a colour within a square's four cells.
DIE_INDEX: dict[str, int] = {die.value: i for i, die in enumerate(DICE)}


class Status(StrEnum):
    OPEN = "open"
    CORRECT = "correct"  # closed on target (or in range): the circle is drawn
    WRONG = "wrong"  # closed off target: the circle is filled in (-10)
    CROSSED = "crossed"  # someone else closed it correctly first: takes nothing, scores nothing


class Phase(StrEnum):
    ROUND = "round"  # everyone places at the same time
    FINAL = "final"  # "colour square" was called: one seat at a time takes a final turn
    OVER = "over"


class Removal(StrEnum):
    TIMEOUTS = "TIMEOUTS"
    RESIGNED = "RESIGNED"


# Outcome reasons (Outcome.reason).
COLOUR_SQUARE = "COLOUR_SQUARE"  # someone ran out of open squares; final turns were played
SOLO_FINISHED = "SOLO_FINISHED"  # the solo player has no open square left
ALL_REMOVED = "ALL_REMOVED"  # every seat was removed (timeouts or resignation)
ROUND_LIMIT = "ROUND_LIMIT"  # the max_rounds safety limit


# -- moves ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    """A cell of the player's own sheet: square (row, col), the cell of colour `colour`."""

    row: int
    col: int
    colour: Die


@dataclass(frozen=True)
class Joker:
    """Joker field 0 or 1."""

    index: int


Target = Cell | Joker


@dataclass(frozen=True)
class Placement:
    die: Die
    target: Target


@dataclass(frozen=True)
class Move:
    """A seat's whole placement list for this round (or its final turn). Empty = pass."""

    placements: tuple[Placement, ...] = ()


# -- options -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Options:
    side: str = "A"  # a sheet name: a data file under sheets/
    target: int = 0  # solo only: a target score (0 = none); the result says whether it was reached
    timeouts_to_remove: int = 3  # consecutive timeouts that remove a seat
    max_rounds: int = 200  # safety limit


# -- state ---------------------------------------------------------------------------------------

Roll = tuple[int, int, int, int, int]  # R, Y, G, B, W


@dataclass(frozen=True)
class Player:
    """One seat's sheet. `cells[(row * cols + col) * 4 + colour]`, colour in R Y G B order."""

    cells: tuple[int | None, ...]
    status: tuple[Status, ...]  # per square, row-major
    jokers: tuple[int | None, int | None] = (None, None)
    removed: bool = False
    removal: Removal | None = None
    timeouts: int = 0  # consecutive timeouts so far


@dataclass(frozen=True)
class State:
    options: Options
    seats: int
    rng: int  # the PRNG state (splitmix64); never shown to anyone
    phase: Phase
    round: int  # 1-based
    active: int  # the active seat of the round (last round's once over)
    roll: Roll | None  # the dice in play: this round's, or the current final turn's; None when over
    players: tuple[Player, ...]
    # Round phase: per seat the placements submitted this round (None = nothing submitted). They are
    # written onto the sheets when the round resolves and shown to nobody else before then.
    pending: tuple[tuple[Placement, ...] | None, ...]
    waiting: tuple[int, ...]  # seats still to place (round) or the seat taking its final turn
    caller: int | None = None
    final_queue: tuple[int, ...] = ()  # seats still due a final turn after the current one
    end_reason: str | None = None


# -- events --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DiceRolled:
    """A new roll: a round's (seat = its active seat) or a final turn's (seat = who takes it)."""

    round: int
    seat: int
    roll: Roll
    final: bool = False


@dataclass(frozen=True)
class PlacementSubmitted:
    """`seat` has placed (or passed) this round; what it placed is revealed when the round resolves."""

    round: int
    seat: int


@dataclass(frozen=True)
class PlacementsMade:
    """What `seat` placed, revealed at resolution (empty = passed)."""

    round: int
    seat: int
    placements: tuple[Placement, ...]
    final: bool = False


@dataclass(frozen=True)
class SquareClosed:
    seat: int
    row: int
    col: int
    correct: bool
    total: int  # the sum of its four cells


@dataclass(frozen=True)
class SquareCrossed:
    seat: int
    row: int
    col: int


@dataclass(frozen=True)
class RoundResolved:
    round: int


@dataclass(frozen=True)
class ColourSquareCalled:
    seat: int
    round: int


@dataclass(frozen=True)
class FinalTurnResolved:
    seat: int


@dataclass(frozen=True)
class PlayerRemoved:
    seat: int
    reason: Removal


Event = (
    DiceRolled
    | PlacementSubmitted
    | PlacementsMade
    | SquareClosed
    | SquareCrossed
    | RoundResolved
    | ColourSquareCalled
    | FinalTurnResolved
    | PlayerRemoved
)


# -- views ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Breakdown:
    circled: int = 0
    bridges: int = 0
    purple: int = 0
    wrong_penalty: int = 0  # <= 0
    open_penalty: int = 0  # <= 0; counted once the game is over
    jokers: int = 0  # <= 0
    total: int = 0


@dataclass(frozen=True)
class PlayerView:
    seat: int
    status: tuple[Status, ...]  # per square, row-major
    cells: tuple[int | None, ...]  # as Player.cells
    jokers: tuple[int | None, int | None]
    removed: bool
    removal: Removal | None
    timeouts: int
    placed: bool  # has submitted this round (round phase)
    bridges: tuple[tuple[int, int], ...]  # coloured bridges as (square a, square b) indices
    breakdown: Breakdown


@dataclass(frozen=True)
class ResultView:
    reason: str
    scores: tuple[int, ...]
    ranks: tuple[int, ...]
    winners: tuple[int, ...]
    ranking: tuple[int, ...]  # seats best first (ties by seat)
    removed: tuple[int, ...]
    caller: int | None
    rounds: int
    target: int  # solo target, 0 = none
    reached: bool | None  # solo with a target: score >= target


@dataclass(frozen=True)
class View:
    seat: int | None  # the viewer (None = spectator)
    side: str
    phase: Phase
    round: int
    max_rounds: int
    active: int
    roll: Roll | None
    to_place: tuple[int, ...]  # seats the game waits on
    final_turn: int | None  # the seat taking its final turn
    caller: int | None
    players: tuple[PlayerView, ...]
    # The viewer's own placements submitted this round (hidden from the others until it resolves).
    own_pending: tuple[Placement, ...] | None
    max_dice: int  # how many dice the viewer may place now (0 = not asked)
    must_place: int  # how many it must place (the most it can, outside the final turn)
    target: int
    result: ResultView | None
