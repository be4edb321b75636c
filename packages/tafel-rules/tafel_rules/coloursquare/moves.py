"""Checking placement lists and listing the legal ones.

Reason codes and their precedence follow decision D11 of the reference games: the state-level
checks (GAME_OVER, BAD_SEAT, NOT_YOUR_TURN, NO_ROLL) live in rules.py; this module checks the list:
its shape for the whole list first (BAD_PLACEMENT, BAD_DIE, BAD_TARGET), then each placement in list
order on a scratch copy of the sheet (SAME_DIE_TWICE, WRONG_DIE_FOR_ROLE, JOKER_USED or WRONG_COLOUR,
SQUARE_NOT_OPEN, CELL_FILLED, then on a pre-printed cell WRONG_COLOUR for the white die or
FIXED_VALUE_MISMATCH), then TOO_MANY_DICE, then MUST_PLACE.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import overload

from tafel_rules.coloursquare.model import (
    COLOURS,
    DICE,
    DIE_INDEX,
    Cell,
    Die,
    Joker,
    Move,
    Placement,
    Player,
    Roll,
    Status,
    Target,
)
from tafel_rules.coloursquare.sheets import Sheet
from tafel_rules.game import IllegalMove

BAD_PLACEMENT = "BAD_PLACEMENT"
BAD_DIE = "BAD_DIE"
BAD_TARGET = "BAD_TARGET"
SAME_DIE_TWICE = "SAME_DIE_TWICE"
WRONG_DIE_FOR_ROLE = "WRONG_DIE_FOR_ROLE"
JOKER_USED = "JOKER_USED"
WRONG_COLOUR = "WRONG_COLOUR"
SQUARE_NOT_OPEN = "SQUARE_NOT_OPEN"
CELL_FILLED = "CELL_FILLED"
FIXED_VALUE_MISMATCH = "FIXED_VALUE_MISMATCH"
TOO_MANY_DICE = "TOO_MANY_DICE"
MUST_PLACE = "MUST_PLACE"


class Role(Enum):
    ACTIVE = "active"  # two different coloured dice, as many as can be placed (up to two)
    PASSIVE = "passive"  # the white die, if it can be placed
    FINAL = "final"  # any of the five dice, placing optional


MAX_DICE = {Role.ACTIVE: 2, Role.PASSIVE: 1, Role.FINAL: 5}


# -- where a die can go ----------------------------------------------------------------------------


def colour_cells(sheet: Sheet, player: Player, colour: int, value: int) -> list[Cell]:
    """Empty cells of `colour` in open squares that accept a coloured die showing `value`."""
    out: list[Cell] = []
    cells, status, die = player.cells, player.status, COLOURS[colour]
    for i, square in enumerate(sheet.squares):
        if status[i] is Status.OPEN and cells[i * 4 + colour] is None:
            fixed = square.fixed[colour]
            if fixed is None or fixed == value:
                out.append(Cell(square.row, square.col, die))
    return out


def white_cells(sheet: Sheet, player: Player) -> list[Cell]:
    """Empty cells of any colour, not pre-printed, in open squares (where the white die may go)."""
    out: list[Cell] = []
    cells, status = player.cells, player.status
    for i, square in enumerate(sheet.squares):
        if status[i] is Status.OPEN:
            for colour in range(4):
                if cells[i * 4 + colour] is None and square.fixed[colour] is None:
                    out.append(Cell(square.row, square.col, COLOURS[colour]))
    return out


def free_jokers(player: Player) -> list[Joker]:
    return [Joker(i) for i, v in enumerate(player.jokers) if v is None]


def most_placeable(sheet: Sheet, player: Player, roll: Roll, role: Role) -> int:
    """How many dice the seat must place (outside the final turn: as many as it can)."""
    jokers = sum(1 for v in player.jokers if v is None)
    if role is Role.PASSIVE:
        return 1 if jokers or _any_white_cell(sheet, player) else 0
    if role is Role.ACTIVE:
        colours = sum(1 for k in range(4) if _any_colour_cell(sheet, player, k, roll[k]))
        return min(2, colours + jokers)  # four coloured dice: a joker can always take one more
    return 0


def _any_colour_cell(sheet: Sheet, player: Player, colour: int, value: int) -> bool:
    cells, status = player.cells, player.status
    for i, square in enumerate(sheet.squares):
        if status[i] is Status.OPEN and cells[i * 4 + colour] is None:
            fixed = square.fixed[colour]
            if fixed is None or fixed == value:
                return True
    return False


def _any_white_cell(sheet: Sheet, player: Player) -> bool:
    cells, status = player.cells, player.status
    for i, square in enumerate(sheet.squares):
        if status[i] is Status.OPEN:
            for colour in range(4):
                if cells[i * 4 + colour] is None and square.fixed[colour] is None:
                    return True
    return False


# -- checking ---------------------------------------------------------------------------------------


# Dice and cell colours as people read them (refusal messages never show Python values).
DIE_NAMES = {Die.R: "red", Die.Y: "yellow", Die.G: "green", Die.B: "blue", Die.W: "white"}
_ALL_DICE = "red, yellow, green, blue and white"


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_shape(sheet: Sheet, move: object) -> tuple[Placement, ...]:
    """The placement list, or IllegalMove(BAD_PLACEMENT | BAD_DIE | BAD_TARGET)."""
    if not isinstance(move, Move) or not isinstance(move.placements, tuple | list):
        raise IllegalMove(BAD_PLACEMENT, "a move is a list of (die, target) placements")
    placements = tuple(move.placements)
    for n, p in enumerate(placements):
        if not isinstance(p, Placement):
            raise IllegalMove(BAD_PLACEMENT, f"placement {n} is not a (die, target) pair")
        if not isinstance(p.die, str) or p.die not in DIE_INDEX:
            raise IllegalMove(BAD_DIE, f"placement {n}: there is no such die; the dice are {_ALL_DICE}")
        target = p.target
        if isinstance(target, Cell):
            if not (
                _is_int(target.row)
                and _is_int(target.col)
                and 0 <= target.row < sheet.rows
                and 0 <= target.col < sheet.cols
                and isinstance(target.colour, str)
                and target.colour in DIE_INDEX
                and target.colour != Die.W
            ):
                raise IllegalMove(
                    BAD_TARGET,
                    f"placement {n}: this sheet has no such cell (rows 0 to {sheet.rows - 1}, columns 0 to "
                    f"{sheet.cols - 1}, colours red, yellow, green and blue)",
                )
        elif isinstance(target, Joker):
            if not (_is_int(target.index) and target.index in (0, 1)):
                raise IllegalMove(BAD_TARGET, f"placement {n}: joker fields are 0 and 1")
        else:
            raise IllegalMove(BAD_TARGET, f"placement {n}: a target is a cell or a joker field")
    return placements


def check_placements(sheet: Sheet, player: Player, roll: Roll, role: Role, placements: tuple[Placement, ...]) -> None:
    """Raise IllegalMove for the first problem (D11 order); the shape is already checked."""
    cells = list(player.cells)
    jokers = list(player.jokers)
    used: set[str] = set()
    for n, p in enumerate(placements):
        die = Die(p.die)
        if die in used:
            raise IllegalMove(SAME_DIE_TWICE, f"placement {n}: the {DIE_NAMES[die]} die is already placed")
        used.add(die)
        if role is Role.ACTIVE and die is Die.W:
            raise IllegalMove(WRONG_DIE_FOR_ROLE, "the active player places coloured dice, not the white die")
        if role is Role.PASSIVE and die is not Die.W:
            raise IllegalMove(WRONG_DIE_FOR_ROLE, "a passive player places the white die only")
        value = roll[DIE_INDEX[die]]
        target: Target = p.target
        if isinstance(target, Joker):
            if jokers[target.index] is not None:
                raise IllegalMove(JOKER_USED, f"joker field {target.index} is already used")
            jokers[target.index] = value
            continue
        colour = DIE_INDEX[target.colour]
        if die is not Die.W and colour != DIE_INDEX[die]:
            raise IllegalMove(
                WRONG_COLOUR,
                f"the {DIE_NAMES[die]} die goes into a {DIE_NAMES[die]} cell, "
                f"not a {DIE_NAMES[Die(target.colour)]} one",
            )
        square = sheet.index(target.row, target.col)
        if player.status[square] is not Status.OPEN:
            raise IllegalMove(
                SQUARE_NOT_OPEN,
                f"the square in row {target.row + 1}, column {target.col + 1} (from the top left) is "
                f"{player.status[square].value}, not open",
            )
        if cells[square * 4 + colour] is not None:
            raise IllegalMove(
                CELL_FILLED,
                f"the {DIE_NAMES[Die(target.colour)]} cell of the square in row {target.row + 1}, "
                f"column {target.col + 1} is already filled",
            )
        fixed = sheet.squares[square].fixed[colour]
        if fixed is not None:
            if die is Die.W:
                raise IllegalMove(WRONG_COLOUR, "a pre-printed cell takes only a die of its own colour")
            if value != fixed:
                raise IllegalMove(FIXED_VALUE_MISMATCH, f"this pre-printed cell takes only a {fixed}")
        cells[square * 4 + colour] = value
    if len(placements) > MAX_DICE[role]:
        raise IllegalMove(TOO_MANY_DICE, f"at most {MAX_DICE[role]} dice this turn")
    if role is not Role.FINAL:
        need = most_placeable(sheet, player, roll, role)
        if len(placements) < need:
            raise IllegalMove(MUST_PLACE, f"{need} dice can be placed: place {need}")


def write(sheet: Sheet, player: Player, roll: Roll, placements: Sequence[Placement]) -> Player:
    """The sheet with (checked) placements written in."""
    if not placements:
        return player
    cells = list(player.cells)
    jokers = list(player.jokers)
    for p in placements:
        value = roll[DIE_INDEX[p.die]]
        target = p.target
        if isinstance(target, Joker):
            jokers[target.index] = value
        else:
            cells[sheet.index(target.row, target.col) * 4 + DIE_INDEX[target.colour]] = value
    return Player(
        cells=tuple(cells),
        status=player.status,
        jokers=(jokers[0], jokers[1]),
        removed=player.removed,
        removal=player.removal,
        timeouts=player.timeouts,
    )


# -- listing ---------------------------------------------------------------------------------------


def legal_round_moves(sheet: Sheet, player: Player, roll: Roll, role: Role) -> list[Move]:
    """Every legal placement list of an active or passive seat, dice in R Y G B W order."""
    jokers = free_jokers(player)
    if role is Role.PASSIVE:
        options: list[Target] = [*white_cells(sheet, player), *jokers]
        return [Move((Placement(Die.W, t),)) for t in options] or [Move()]
    per_die: list[list[Target]] = [[*colour_cells(sheet, player, k, roll[k]), *jokers] for k in range(4)]
    need = min(2, sum(1 for k in range(4) if len(per_die[k]) > len(jokers)) + len(jokers))
    if need == 0:
        return [Move()]
    if need == 1:
        return [Move((Placement(COLOURS[k], t),)) for k in range(4) for t in per_die[k]]
    moves: list[Move] = []
    for a in range(4):
        for b in range(a + 1, 4):
            da, db = COLOURS[a], COLOURS[b]
            for ta in per_die[a]:
                pa = Placement(da, ta)
                for tb in per_die[b]:
                    if ta != tb:  # two dice cannot share a joker field
                        moves.append(Move((pa, Placement(db, tb))))
    return moves


@dataclass(frozen=True)
class _Choice:
    """One die choosing among targets (None = the die is not placed)."""

    die: Die
    options: tuple[Target | None, ...]

    @property
    def count(self) -> int:
        return len(self.options)


@dataclass(frozen=True)
class _Pair:
    """The white die in one of `white` (cells of colour k) and die k anywhere in `colour` (None or a
    cell) except the white die's cell. Every white cell is also in `colour`."""

    colour_die: Die
    white: tuple[Cell, ...]
    colour: tuple[Cell, ...]
    position: dict[Cell, int]

    @property
    def count(self) -> int:
        return len(self.white) * len(self.colour)  # die k: skip, or any of its cells but the white one

    def decode(self, index: int) -> tuple[Cell, Cell | None]:
        n = len(self.colour)
        w, j = divmod(index, n)
        cell = self.white[w]
        if j == 0:
            return cell, None
        at = self.position[cell]
        other = self.colour[j - 1] if j - 1 < at else self.colour[j]
        return cell, other


_Factor = _Choice | _Pair


class FinalMoves(Sequence[Move]):
    """Every legal final-turn placement list, computed lazily (there can be millions).

    Each of the five dice is left out, put into a cell it fits or into a free joker field; no two dice
    share a joker field, and the white die never shares a cell with the die of that cell's colour.
    Index order is fixed for a given sheet and roll; placements are in R Y G B W order.
    """

    def __init__(self, sheet: Sheet, player: Player, roll: Roll, contains: Callable[[Move], bool]) -> None:
        self._contains = contains
        colour = [tuple(colour_cells(sheet, player, k, roll[k])) for k in range(4)]
        white_all = white_cells(sheet, player)
        white_by = [tuple(c for c in white_all if c.colour is COLOURS[k]) for k in range(4)]
        jokers = free_jokers(player)
        patterns: list[dict[Die, Joker]] = [{}]
        for joker in jokers:
            patterns = [
                *patterns,
                *({**p, die: joker} for p in patterns for die in DICE if die not in p),
            ]
        blocks: list[tuple[_Factor, ...]] = []
        for pattern in patterns:
            fixed = [_Choice(d, (j,)) for d, j in pattern.items()]

            def free_colour(skip: int | None, p: dict[Die, Joker] = pattern) -> list[_Factor]:
                return [_Choice(COLOURS[k], (None, *colour[k])) for k in range(4) if COLOURS[k] not in p and k != skip]

            if Die.W in pattern:
                blocks.append((*fixed, *free_colour(None)))
                continue
            blocks.append((*fixed, _Choice(Die.W, (None,)), *free_colour(None)))
            for k in range(4):
                if not white_by[k]:
                    continue
                if COLOURS[k] in pattern:
                    blocks.append((*fixed, _Choice(Die.W, white_by[k]), *free_colour(None)))
                else:
                    pair = _Pair(COLOURS[k], white_by[k], colour[k], {c: i for i, c in enumerate(colour[k])})
                    blocks.append((*fixed, pair, *free_colour(k)))
        self._blocks = blocks
        self._starts: list[int] = []
        total = 0
        for block in blocks:
            self._starts.append(total)
            size = 1
            for factor in block:
                size *= factor.count
            total += size
        self._len = total

    def __len__(self) -> int:
        return self._len

    @overload
    def __getitem__(self, index: int) -> Move: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Move]: ...

    def __getitem__(self, index: int | slice) -> Move | Sequence[Move]:
        if isinstance(index, slice):
            return [self._at(i) for i in range(*index.indices(self._len))]
        if index < 0:
            index += self._len
        if not 0 <= index < self._len:
            raise IndexError("final move index out of range")
        return self._at(index)

    def _at(self, index: int) -> Move:
        b = bisect.bisect_right(self._starts, index) - 1
        rest = index - self._starts[b]
        chosen: dict[Die, Target] = {}
        for factor in self._blocks[b]:
            rest, sub = divmod(rest, factor.count)
            if isinstance(factor, _Choice):
                target = factor.options[sub]
                if target is not None:
                    chosen[factor.die] = target
            else:
                white, other = factor.decode(sub)
                chosen[Die.W] = white
                if other is not None:
                    chosen[factor.colour_die] = other
        return Move(tuple(Placement(d, chosen[d]) for d in DICE if d in chosen))

    def __iter__(self) -> Iterator[Move]:
        for i in range(self._len):
            yield self._at(i)

    def __contains__(self, move: object) -> bool:
        if not isinstance(move, Move):
            return False
        order = [DIE_INDEX.get(p.die, -1) if isinstance(p, Placement) else -1 for p in move.placements]
        if any(b <= a for a, b in itertools.pairwise(order)):
            return False  # listed in R Y G B W order only
        return self._contains(move)

    def __repr__(self) -> str:
        return f"FinalMoves(len={self._len})"
