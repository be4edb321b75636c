"""Connect Four as a pure state machine (rules: shared/rules/connect-four.md).

Bitboards: column c owns bits c*(rows+1) .. c*(rows+1)+rows-1 (bottom first) plus one sentinel bit
so lines never wrap between columns. A line of four is found with three shift-and-ands per
direction, which keeps `apply_move` well above 100,000 moves/s in CPython.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tafel_rules.game import (
    GameEnded,
    IllegalMove,
    InvalidOptions,
    OptionSpec,
    Outcome,
    PersonalBests,
    RatingPool,
    Resigned,
    Rules,
    TimedOut,
    platform_outcome,
)

MIN_SIZE = 4
MAX_SIZE = 10
WIN_LENGTH = 4

# Outcome reasons.
FOUR_IN_A_ROW = "FOUR_IN_A_ROW"
BOARD_FULL = "BOARD_FULL"
RESIGNED = "RESIGNED"
TIMEOUT = "TIMEOUT"

# Illegal-move reasons.
COLUMN_FULL = "COLUMN_FULL"
COLUMN_OUT_OF_RANGE = "COLUMN_OUT_OF_RANGE"
NOT_YOUR_TURN = "NOT_YOUR_TURN"
GAME_OVER = "GAME_OVER"
BAD_SEAT = "BAD_SEAT"


@dataclass(frozen=True)
class Options:
    rows: int = 6
    columns: int = 7


@dataclass(frozen=True)
class Move:
    column: int  # 0-based from the left


@dataclass(frozen=True)
class DiscDropped:
    seat: int
    column: int
    row: int  # 0 = bottom
    winning_cells: tuple[tuple[int, int], ...] = ()  # (row, column)


Event = DiscDropped | Resigned | TimedOut | GameEnded


@dataclass(frozen=True)
class State:
    options: Options
    discs: tuple[int, int]  # bitboard per seat
    heights: tuple[int, ...]  # discs per column
    moves: tuple[int, ...]  # columns played, 0-based
    outcome: Outcome | None = None
    winning_cells: tuple[tuple[int, int], ...] = ()

    @property
    def to_move(self) -> int:
        return len(self.moves) % 2


@dataclass(frozen=True)
class View:
    rows: int
    columns: int
    board: tuple[tuple[int, ...], ...]  # per column, seats bottom first
    to_move: int | None
    moves: str  # 1-based notation
    legal_columns: tuple[int, ...]
    winning_cells: tuple[tuple[int, int], ...]
    outcome: Outcome | None


def _line_bits(discs: int, step: int) -> int:
    """Bits that start a run of four in direction `step` (each such bit and the next three)."""
    pairs = discs & (discs >> step)
    return pairs & (pairs >> (2 * step))


def _winning_cells(discs: int, rows: int, columns: int, row: int, column: int) -> tuple[tuple[int, int], ...]:
    """Every cell of every line of four or more through the last disc at (row, column)."""
    stride = rows + 1

    def mine(r: int, c: int) -> bool:
        return 0 <= r < rows and 0 <= c < columns and bool(discs >> (c * stride + r) & 1)

    cells: set[tuple[int, int]] = set()
    for dr, dc in ((1, 0), (0, 1), (1, 1), (1, -1)):
        line = [(row, column)]
        for sign in (1, -1):
            r, c = row + sign * dr, column + sign * dc
            while mine(r, c):
                line.append((r, c))
                r, c = r + sign * dr, c + sign * dc
        if len(line) >= WIN_LENGTH:
            cells.update(line)
    return tuple(sorted(cells))


class Connect4Rules(Rules[State, Move, Options, Event, View]):
    name = "connect4"
    title = "Connect Four"
    min_seats = 2
    max_seats = 2
    rating_pools: Sequence[RatingPool] = (RatingPool("connect4", "Connect Four", 2, 2),)
    personal_bests: PersonalBests | None = None

    def option_specs(self) -> Sequence[OptionSpec]:
        return (
            OptionSpec("rows", "Rows of the board", 6, MIN_SIZE, MAX_SIZE),
            OptionSpec("columns", "Columns of the board", 7, MIN_SIZE, MAX_SIZE),
        )

    def default_options(self) -> Options:
        return Options()

    def check_options(self, options: Options, seats: int) -> None:
        if seats != 2:
            raise InvalidOptions("seats", f"Connect Four is for 2 players, not {seats}")
        for field, value in (("rows", options.rows), ("columns", options.columns)):
            if not MIN_SIZE <= value <= MAX_SIZE:
                raise InvalidOptions(field, f"{field} must be {MIN_SIZE}..{MAX_SIZE}, got {value}")

    def new_game(self, options: Options, seats: int, seed: int) -> State:
        self.check_options(options, seats)
        return State(options=options, discs=(0, 0), heights=(0,) * options.columns, moves=())

    def to_act(self, state: State) -> frozenset[int]:
        return frozenset() if state.outcome else frozenset((state.to_move,))

    def legal_moves(self, state: State, seat: int) -> Sequence[Move]:
        if state.outcome is not None or seat != state.to_move:
            return ()
        rows = state.options.rows
        return tuple(Move(c) for c, h in enumerate(state.heights) if h < rows)

    def _check_turn(self, state: State, seat: int) -> None:
        if state.outcome is not None:
            raise IllegalMove(GAME_OVER, "the game is over")
        if seat not in (0, 1):
            raise IllegalMove(BAD_SEAT, f"Connect Four has seats 0 and 1, not {seat}")

    def apply_move(self, state: State, seat: int, move: Move) -> tuple[State, Sequence[Event]]:
        self._check_turn(state, seat)
        if seat != state.to_move:
            raise IllegalMove(NOT_YOUR_TURN, "it is not your turn: wait for your opponent's move")
        options = state.options
        column = move.column
        if not 0 <= column < options.columns:
            raise IllegalMove(COLUMN_OUT_OF_RANGE, f"column must be 0..{options.columns - 1}, got {column}")
        row = state.heights[column]
        rows = options.rows
        if row >= rows:
            raise IllegalMove(COLUMN_FULL, f"column {column + 1} from the left is full: choose another")
        stride = rows + 1
        bit = 1 << (column * stride + row)
        mine = state.discs[seat] | bit
        discs = (mine, state.discs[1]) if seat == 0 else (state.discs[0], mine)
        heights = (*state.heights[:column], row + 1, *state.heights[column + 1 :])
        moves = (*state.moves, column)
        won = bool(
            _line_bits(mine, 1) | _line_bits(mine, stride) | _line_bits(mine, stride + 1) | _line_bits(mine, stride - 1)
        )
        if won:
            cells = _winning_cells(mine, rows, options.columns, row, column)
            outcome = Outcome(ranks=(1, 2) if seat == 0 else (2, 1), reason=FOUR_IN_A_ROW)
            new = State(options, discs, heights, moves, outcome, cells)
            return new, (DiscDropped(seat, column, row, cells), GameEnded(outcome))
        if len(moves) == rows * options.columns:
            outcome = Outcome(ranks=(1, 1), reason=BOARD_FULL)
            return State(options, discs, heights, moves, outcome), (
                DiscDropped(seat, column, row),
                GameEnded(outcome),
            )
        return State(options, discs, heights, moves), (DiscDropped(seat, column, row),)

    def _forfeit(self, state: State, seat: int, reason: str) -> State:
        self._check_turn(state, seat)
        outcome = Outcome(ranks=(2, 1) if seat == 0 else (1, 2), reason=reason)
        return State(state.options, state.discs, state.heights, state.moves, outcome)

    def resign(self, state: State, seat: int) -> tuple[State, Sequence[Event]]:
        new = self._forfeit(state, seat, RESIGNED)
        assert new.outcome is not None
        return new, (Resigned(seat), GameEnded(new.outcome))

    def timeout(self, state: State, seat: int) -> tuple[State, Sequence[Event]]:
        if state.outcome is None and seat != state.to_move:
            raise IllegalMove(NOT_YOUR_TURN, f"seat {seat} is not on the clock")
        new = self._forfeit(state, seat, TIMEOUT)
        assert new.outcome is not None
        return new, (TimedOut(seat), GameEnded(new.outcome))

    def end(self, state: State, reason: str) -> State:
        return State(state.options, state.discs, state.heights, state.moves, platform_outcome(2, reason))

    def outcome(self, state: State) -> Outcome | None:
        return state.outcome

    def view(self, state: State, seat: int | None) -> View:
        rows = state.options.rows
        stride = rows + 1
        board = tuple(
            tuple(0 if state.discs[0] >> (c * stride + r) & 1 else 1 for r in range(h))
            for c, h in enumerate(state.heights)
        )
        return View(
            rows=rows,
            columns=state.options.columns,
            board=board,
            to_move=None if state.outcome else state.to_move,
            moves=notation(state.moves),
            legal_columns=tuple(m.column for m in self.legal_moves(state, state.to_move)),
            winning_cells=state.winning_cells,
            outcome=state.outcome,
        )


def notation(moves: Sequence[int]) -> str:
    """Moves in the common 1-based notation ("4453"); columns past 9 would be ambiguous, so they
    are written in brackets ("[10]")."""
    return "".join(str(c + 1) if c < 9 else f"[{c + 1}]" for c in moves)


def replay(options: Options, moves: Sequence[int]) -> State:
    """The state after playing `moves` (0-based columns) from the start."""
    state = RULES.new_game(options, 2, 0)
    for column in moves:
        state, _ = RULES.apply_move(state, state.to_move, Move(column))
    return state


RULES = Connect4Rules()
