"""Plus 4 — the pure rules (see shared/rules/plus-4.md).

A 4 x 4 frame; each player pushes a disc of their own colour in at the top of a column, the column
moves down one cell and a fifth disc falls out at the bottom, back to its owner's supply. A line
(4 rows, 4 columns, 2 diagonals) scores when it becomes complete for a colour; a line that stays
complete does not score again. Three modes: ``points`` (first to the target), ``first_line`` (the
first completed line ends the game) and ``rounds`` (each completed line wins a round; the frame is
emptied).

Representation (kept lean for speed): the frame is three 16-bit masks (red discs, blue discs, bonus
discs), bit ``row * 4 + column`` with row 0 at the **top**. Lines are precomputed masks, so a push is
a handful of integer operations.

Choices beyond the rules page (also listed in services/plus4/README.md):
- ``move_limit`` ranges 1..10000 (default 400); every push of every round counts.
- in ``first_line`` mode no points are kept: ``Outcome.scores`` is empty; each scored line is
  reported with 1 point (bonus discs play as ordinary discs);
- in ``rounds`` mode each scored line still reports its points (2 with the owner's bonus disc) for
  information; only round wins count. ``Outcome.scores`` holds the round wins;
- resign is allowed to either seat at any time before the end; a timeout is only accepted for the
  seat the game waits on (NOT_YOUR_TURN otherwise, so a stale clock deadline cannot end a game);
- a new round starts with the seat that did not start the previous one (red starts round 1), with
  both supplies full; no turn is skipped at a round start.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Final, TypeAlias

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

ROWS: Final = 4
COLUMNS: Final = 4
SEATS: Final = 2
ORDINARY_PER_SEAT: Final = 9
DISCS_PER_SEAT: Final = ORDINARY_PER_SEAT + 1  # plus one bonus disc
TOTAL_DISCS: Final = SEATS * DISCS_PER_SEAT

TARGET_MIN: Final = 1
TARGET_MAX: Final = 99
TARGET_DEFAULT: Final = 11
MOVE_LIMIT_MIN: Final = 1
MOVE_LIMIT_MAX: Final = 10_000
MOVE_LIMIT_DEFAULT: Final = 400

# Outcome reasons.
TARGET_REACHED: Final = "TARGET_REACHED"
LINE_COMPLETED: Final = "LINE_COMPLETED"
ROUNDS_TARGET_REACHED: Final = "ROUNDS_TARGET_REACHED"
MOVE_LIMIT: Final = "MOVE_LIMIT"
RESIGNED: Final = "RESIGNED"
TIMEOUT: Final = "TIMEOUT"

# Illegal-move reasons.
NOT_YOUR_TURN: Final = "NOT_YOUR_TURN"
COLUMN_OUT_OF_RANGE: Final = "COLUMN_OUT_OF_RANGE"
NO_BONUS_DISC: Final = "NO_BONUS_DISC"
NO_ORDINARY_DISC: Final = "NO_ORDINARY_DISC"
GAME_OVER: Final = "GAME_OVER"
BAD_SEAT: Final = "BAD_SEAT"


class Mode(StrEnum):
    POINTS = "points"
    FIRST_LINE = "first_line"
    ROUNDS = "rounds"


def mode_choice(mode: Mode) -> str:
    """The mode as DescribeGame lists it: the name of the `tafel.plus4.v1.Mode` value the options
    field takes (MODE_POINTS, ...), so a client can send what it reads."""
    return f"MODE_{mode.name}"


@dataclass(frozen=True, slots=True)
class Plus4Options:
    mode: Mode = Mode.POINTS
    target: int = TARGET_DEFAULT  # points (points mode) or round wins (rounds mode); unused in first_line
    move_limit: int = MOVE_LIMIT_DEFAULT  # pushes in the whole game, all rounds together


@dataclass(frozen=True, slots=True)
class Move:
    column: int  # 0..3 from the left
    bonus: bool = False  # push the bonus disc instead of an ordinary one


@dataclass(frozen=True, slots=True)
class Disc:
    colour: int  # the owner's seat: 0 red, 1 blue
    bonus: bool


Cell: TypeAlias = tuple[int, int]  # (row from the top, column from the left)
Frame: TypeAlias = tuple[tuple[Disc | None, ...], ...]  # rows, top row first


@dataclass(frozen=True, slots=True)
class Supply:
    ordinary: int
    bonus: bool

    @property
    def empty(self) -> bool:
        return self.ordinary == 0 and not self.bonus


# ---- events of this game (the kit's Resigned / TimedOut / GameEnded are shared) ----


@dataclass(frozen=True, slots=True)
class DiscPushed:
    column: int
    colour: int  # == the pushing seat
    bonus: bool
    # The frame as the push left it (before a won round empties it), as Plus4State's masks: ints are
    # cheap to keep on every push; `frame` builds the rows when someone (the codec) asks.
    red: int
    blue: int
    bonus_cells: int

    @property
    def frame(self) -> Frame:
        return _frame(self.red, self.blue, self.bonus_cells)


@dataclass(frozen=True, slots=True)
class DiscFellOut:
    colour: int
    bonus: bool
    returned_to: int  # the owner's seat (== colour), whoever pushed


@dataclass(frozen=True, slots=True)
class LineScored:
    """A newly complete line. Also the entry kept in the state's history of scored lines."""

    cells: tuple[Cell, ...]
    colour: int
    points: int
    move_no: int  # the push (1-based, counting all rounds) that completed it
    round_no: int


@dataclass(frozen=True, slots=True)
class TurnSkipped:
    seat: int  # had no disc in supply; the other seat moves again


@dataclass(frozen=True, slots=True)
class RoundWon:
    """Rounds mode: the push completed a line and so ended the round."""

    round_no: int  # the round that ended
    winners: tuple[int, ...]  # seats with a newly complete line (both when both)
    round_wins: tuple[int, int]  # counts after this round
    frame: Frame  # the frame as the push left it
    frame_emptied: bool  # False when the game ended with this round (the frame is left as is)


Plus4Event: TypeAlias = (
    DiscPushed | DiscFellOut | LineScored | TurnSkipped | RoundWon | Resigned | TimedOut | GameEnded
)


@dataclass(frozen=True, slots=True)
class Plus4State:
    options: Plus4Options
    red: int  # bitmask of cells holding red discs (bit row*4+column, row 0 = top)
    blue: int
    bonus: int  # cells holding a bonus disc (its colour from red/blue)
    ordinary: tuple[int, int]  # ordinary discs in each seat's supply
    bonus_in_hand: tuple[bool, bool]
    scores: tuple[int, int]
    round_wins: tuple[int, int]
    to_move: int | None  # None once the game is over
    moves_made: int
    round_no: int
    scored: tuple[LineScored, ...]  # every line scored so far, oldest first
    result: Outcome | None

    def disc_at(self, row: int, column: int) -> Disc | None:
        bit = 1 << (row * COLUMNS + column)
        if self.red & bit:
            return _DISCS[0][1 if self.bonus & bit else 0]
        if self.blue & bit:
            return _DISCS[1][1 if self.bonus & bit else 0]
        return None

    def frame(self) -> Frame:
        return _frame(self.red, self.blue, self.bonus)

    def supply(self, seat: int) -> Supply:
        return Supply(self.ordinary[seat], self.bonus_in_hand[seat])


@dataclass(frozen=True, slots=True)
class Plus4View:
    seat: int | None  # the viewer (None = spectator)
    mode: Mode
    target: int
    move_limit: int
    frame: Frame  # 4 rows, top row first
    supplies: tuple[Supply, Supply]
    scores: tuple[int, int]
    round_wins: tuple[int, int]
    to_move: int | None
    scored_lines: tuple[LineScored, ...]
    moves_made: int
    round_no: int
    legal_moves: tuple[Move, ...]  # the viewer's, empty when not their turn
    result: Outcome | None


# ---- precomputed tables ----

_DISCS: Final = ((Disc(0, False), Disc(0, True)), (Disc(1, False), Disc(1, True)))


def _bit(row: int, column: int) -> int:
    return 1 << (row * COLUMNS + column)


def _mask(cells: Sequence[Cell]) -> int:
    m = 0
    for r, c in cells:
        m |= _bit(r, c)
    return m


_LINE_CELLS: Final[tuple[tuple[Cell, ...], ...]] = (
    *(tuple((r, c) for c in range(COLUMNS)) for r in range(ROWS)),  # rows 0..3
    *(tuple((r, c) for r in range(ROWS)) for c in range(COLUMNS)),  # columns 0..3
    tuple((i, i) for i in range(4)),  # diagonal from the top left
    tuple((i, 3 - i) for i in range(4)),  # diagonal from the top right
)
LINES: Final[tuple[tuple[Cell, ...], ...]] = _LINE_CELLS
_LINE_MASKS: Final = tuple(_mask(cells) for cells in _LINE_CELLS)
_COLUMN_MASKS: Final = tuple(_mask([(r, c) for r in range(ROWS)]) for c in range(COLUMNS))
# The lines a push into column c can change: every row, that column, both diagonals.
_LINES_THROUGH: Final = tuple(tuple(_LINE_MASKS[i] for i in (0, 1, 2, 3, 4 + c, 8, 9)) for c in range(COLUMNS))
_CELLS_OF: Final = dict(zip(_LINE_MASKS, _LINE_CELLS, strict=True))  # a line's cells by its mask
_TOP_BITS: Final = tuple(_bit(0, c) for c in range(COLUMNS))
_BOTTOM_BITS: Final = tuple(_bit(ROWS - 1, c) for c in range(COLUMNS))

_ALL_MOVES: Final = tuple(tuple(Move(c, b) for c in range(COLUMNS)) for b in (False, True))
# legal moves by (has an ordinary disc, has the bonus disc)
_LEGAL: Final[dict[tuple[bool, bool], tuple[Move, ...]]] = {
    (False, False): (),
    (True, False): _ALL_MOVES[0],
    (False, True): _ALL_MOVES[1],
    (True, True): _ALL_MOVES[0] + _ALL_MOVES[1],
}


def _frame(red: int, blue: int, bonus: int) -> Frame:
    rows: list[tuple[Disc | None, ...]] = []
    for r in range(ROWS):
        row: list[Disc | None] = []
        for c in range(COLUMNS):
            bit = _bit(r, c)
            if red & bit:
                row.append(_DISCS[0][1 if bonus & bit else 0])
            elif blue & bit:
                row.append(_DISCS[1][1 if bonus & bit else 0])
            else:
                row.append(None)
        rows.append(tuple(row))
    return tuple(rows)


def complete_lines(state: Plus4State, colour: int) -> tuple[int, ...]:
    """Indexes into LINES of the lines now complete for `colour`."""
    discs = state.red if colour == 0 else state.blue
    return tuple(i for i, m in enumerate(_LINE_MASKS) if discs & m == m)


def _ranks(a: int, b: int) -> tuple[int, int]:
    """Competition ranks of two seats from their counts (higher is better)."""
    if a > b:
        return (1, 2)
    if b > a:
        return (2, 1)
    return (1, 1)


def _winner_ranks(winner: int) -> tuple[int, int]:
    return (1, 2) if winner == 0 else (2, 1)


def _outcome_scores(state: Plus4State) -> tuple[int, ...]:
    mode = state.options.mode
    if mode is Mode.POINTS:
        return state.scores
    if mode is Mode.ROUNDS:
        return state.round_wins
    return ()


_DIAGRAM_DISCS: Final = {"r": (0, False), "R": (0, True), "b": (1, False), "B": (1, True)}


def position(
    rows: Sequence[str],
    *,
    options: Plus4Options | None = None,
    to_move: int | None = 0,
    scores: tuple[int, int] = (0, 0),
    round_wins: tuple[int, int] = (0, 0),
    moves_made: int = 0,
    round_no: int = 1,
) -> Plus4State:
    """A position from a diagram (for tests, puzzles and tools): four strings, top row first, of
    ``r``/``b`` (red/blue disc), ``R``/``B`` (red/blue bonus disc) and ``.`` (empty). Each supply
    holds the discs of that colour not in the frame. Raises ValueError for an impossible frame."""
    if len(rows) != ROWS or any(len(row) != COLUMNS for row in rows):
        raise ValueError("a diagram is 4 rows of 4 cells")
    red = blue = bonus = 0
    counts = [0, 0]
    bonuses = [0, 0]
    for r, row in enumerate(rows):
        for c, ch in enumerate(row):
            if ch == ".":
                if r + 1 < ROWS and rows[r + 1][c] != ".":
                    raise ValueError(f"column {c} has a gap: discs fill a column from the top")
                continue
            if ch not in _DIAGRAM_DISCS:
                raise ValueError(f"unknown cell {ch!r}")
            colour, is_bonus = _DIAGRAM_DISCS[ch]
            bit = _bit(r, c)
            if colour == 0:
                red |= bit
            else:
                blue |= bit
            if is_bonus:
                bonus |= bit
                bonuses[colour] += 1
            else:
                counts[colour] += 1
    if max(counts) > ORDINARY_PER_SEAT or max(bonuses) > 1:
        raise ValueError("more discs of a colour than a player owns")
    return Plus4State(
        options=options or Plus4Options(),
        red=red,
        blue=blue,
        bonus=bonus,
        ordinary=(ORDINARY_PER_SEAT - counts[0], ORDINARY_PER_SEAT - counts[1]),
        bonus_in_hand=(bonuses[0] == 0, bonuses[1] == 0),
        scores=scores,
        round_wins=round_wins,
        to_move=to_move,
        moves_made=moves_made,
        round_no=round_no,
        scored=(),
        result=None,
    )


def diagram(state: Plus4State) -> tuple[str, ...]:
    """The frame in `position`'s notation, top row first."""
    chars = {(0, False): "r", (0, True): "R", (1, False): "b", (1, True): "B"}
    return tuple(
        "".join("." if d is None else chars[(d.colour, d.bonus)] for d in row) for row in state.frame()
    )


class Plus4Rules(Rules[Plus4State, Move, Plus4Options, Plus4Event, Plus4View]):
    name: str = "plus4"
    title: str = "Plus 4"
    min_seats: int = SEATS
    max_seats: int = SEATS
    rating_pools: Sequence[RatingPool] = (RatingPool("plus4", "Plus 4", SEATS, SEATS),)
    personal_bests: PersonalBests | None = None

    # ---- options ----

    def option_specs(self) -> Sequence[OptionSpec]:
        return (
            OptionSpec(
                "mode",
                "points: first to the target in points; first line: the first completed line ends "
                "the game; rounds: each completed line wins a round, first to the target in rounds",
                mode_choice(Mode.POINTS),
                choices=tuple(mode_choice(m) for m in Mode),
            ),
            OptionSpec(
                "target",
                "points (points mode) or round wins (rounds mode) needed to win",
                TARGET_DEFAULT,
                TARGET_MIN,
                TARGET_MAX,
            ),
            OptionSpec(
                "move_limit",
                "pushes in the whole game (all rounds) after which it ends on the count",
                MOVE_LIMIT_DEFAULT,
                MOVE_LIMIT_MIN,
                MOVE_LIMIT_MAX,
            ),
        )

    def default_options(self) -> Plus4Options:
        return Plus4Options()

    def check_options(self, options: Plus4Options, seats: int) -> None:
        if seats != SEATS:
            raise InvalidOptions("seats", f"Plus 4 is for exactly {SEATS} players, not {seats}")
        if options.mode not in _MODE_VALUES:
            raise InvalidOptions("mode", f"mode must be one of {', '.join(m.value for m in Mode)}")
        for field, value, lo, hi in (
            ("target", options.target, TARGET_MIN, TARGET_MAX),
            ("move_limit", options.move_limit, MOVE_LIMIT_MIN, MOVE_LIMIT_MAX),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
                raise InvalidOptions(field, f"{field} must be an integer from {lo} to {hi}")

    # ---- playing ----

    def new_game(self, options: Plus4Options, seats: int, seed: int) -> Plus4State:
        """A fresh game. Plus 4 has no chance: `seed` is not used."""
        self.check_options(options, seats)
        if not isinstance(options.mode, Mode):
            options = Plus4Options(Mode(options.mode), options.target, options.move_limit)
        return Plus4State(
            options=options,
            red=0,
            blue=0,
            bonus=0,
            ordinary=(ORDINARY_PER_SEAT, ORDINARY_PER_SEAT),
            bonus_in_hand=(True, True),
            scores=(0, 0),
            round_wins=(0, 0),
            to_move=0,
            moves_made=0,
            round_no=1,
            scored=(),
            result=None,
        )

    def to_act(self, state: Plus4State) -> frozenset[int]:
        to_move = state.to_move
        return _TO_ACT[to_move] if to_move is not None else frozenset()

    def legal_moves(self, state: Plus4State, seat: int) -> Sequence[Move]:
        if seat != state.to_move:
            return ()
        return _LEGAL[(state.ordinary[seat] > 0, state.bonus_in_hand[seat])]

    def apply_move(self, state: Plus4State, seat: int, move: Move) -> tuple[Plus4State, Sequence[Plus4Event]]:
        events: list[Plus4Event] = []
        return _push(state, seat, move, events), events

    def resign(self, state: Plus4State, seat: int) -> tuple[Plus4State, Sequence[Plus4Event]]:
        return self._forfeit(state, seat, RESIGNED, Resigned(seat))

    def timeout(self, state: Plus4State, seat: int) -> tuple[Plus4State, Sequence[Plus4Event]]:
        if (seat == 0 or seat == 1) and state.result is None and seat != state.to_move:
            raise IllegalMove(NOT_YOUR_TURN, f"seat {seat} is not on the clock")
        return self._forfeit(state, seat, TIMEOUT, TimedOut(seat))

    def _forfeit(
        self, state: Plus4State, seat: int, reason: str, event: Resigned | TimedOut
    ) -> tuple[Plus4State, Sequence[Plus4Event]]:
        if seat != 0 and seat != 1:
            raise IllegalMove(BAD_SEAT, f"there is no seat {seat} in a two-player game")
        if state.result is not None:
            raise IllegalMove(GAME_OVER, "the game is over")
        result = Outcome(_winner_ranks(1 - seat), reason, _outcome_scores(state))
        new_state = Plus4State(
            options=state.options,
            red=state.red,
            blue=state.blue,
            bonus=state.bonus,
            ordinary=state.ordinary,
            bonus_in_hand=state.bonus_in_hand,
            scores=state.scores,
            round_wins=state.round_wins,
            to_move=None,
            moves_made=state.moves_made,
            round_no=state.round_no,
            scored=state.scored,
            result=result,
        )
        return new_state, (event, GameEnded(result))

    def end(self, state: Plus4State, reason: str) -> Plus4State:
        return replace(state, to_move=None, result=platform_outcome(SEATS, reason, _outcome_scores(state)))

    def outcome(self, state: Plus4State) -> Outcome | None:
        return state.result

    def view(self, state: Plus4State, seat: int | None) -> Plus4View:
        options = state.options
        legal: tuple[Move, ...] = ()
        if seat is not None and seat == state.to_move:
            legal = _LEGAL[(state.ordinary[seat] > 0, state.bonus_in_hand[seat])]
        return Plus4View(
            seat=seat,
            mode=options.mode,
            target=options.target,
            move_limit=options.move_limit,
            frame=state.frame(),
            supplies=(state.supply(0), state.supply(1)),
            scores=state.scores,
            round_wins=state.round_wins,
            to_move=state.to_move,
            scored_lines=state.scored,
            moves_made=state.moves_made,
            round_no=state.round_no,
            legal_moves=legal,
            result=state.result,
        )


def next_state(state: Plus4State, move: Move) -> Plus4State:
    """The position after the seat to move pushes `move`: `apply_move` without its events, for
    searches (the bots look ahead with it, so they and the service cannot disagree about a push).
    Raises IllegalMove as apply_move does."""
    seat = state.to_move
    if seat is None:
        raise IllegalMove(GAME_OVER, "the game is over")
    return _push(state, seat, move, None)


def _push(state: Plus4State, seat: int, move: Move, events: list[Plus4Event] | None) -> Plus4State:
    """apply_move's work; the events are appended to `events` unless it is None (a search)."""
    # -- checks (in this order; a refused move changes nothing) --
    if seat != 0 and seat != 1:
        raise IllegalMove(BAD_SEAT, f"there is no seat {seat} in a two-player game")
    if state.result is not None:
        raise IllegalMove(GAME_OVER, "the game is over")
    if seat != state.to_move:
        raise IllegalMove(NOT_YOUR_TURN, "it is not your turn: wait for your opponent's push")
    column = move.column
    if type(column) is not int or not 0 <= column < COLUMNS:
        raise IllegalMove(COLUMN_OUT_OF_RANGE, f"there is no column {column}: the columns are 0 to 3")
    bonus = move.bonus
    ordinary = state.ordinary
    bonus_in_hand = state.bonus_in_hand
    if bonus:
        if not bonus_in_hand[seat]:
            raise IllegalMove(NO_BONUS_DISC, "your bonus disc is not in your supply")
        bonus_in_hand = (False, bonus_in_hand[1]) if seat == 0 else (bonus_in_hand[0], False)
    else:
        if ordinary[seat] == 0:
            raise IllegalMove(NO_ORDINARY_DISC, "you have no ordinary disc in your supply")
        ordinary = (ordinary[0] - 1, ordinary[1]) if seat == 0 else (ordinary[0], ordinary[1] - 1)

    # -- the push --
    red0 = state.red
    blue0 = state.blue
    bonus0 = state.bonus
    colmask = _COLUMN_MASKS[column]
    keep = ~colmask
    bottom = _BOTTOM_BITS[column]
    top = _TOP_BITS[column]
    fell: DiscFellOut | None = None
    if (red0 | blue0) & bottom:
        fell_colour = 0 if red0 & bottom else 1
        fell_bonus = bool(bonus0 & bottom)
        fell = _FELL[fell_colour][1 if fell_bonus else 0]
        if fell_bonus:
            bonus_in_hand = (True, bonus_in_hand[1]) if fell_colour == 0 else (bonus_in_hand[0], True)
        elif fell_colour == 0:
            ordinary = (ordinary[0] + 1, ordinary[1])
        else:
            ordinary = (ordinary[0], ordinary[1] + 1)
    red = (red0 & keep) | (((red0 & colmask) << 4) & colmask)
    blue = (blue0 & keep) | (((blue0 & colmask) << 4) & colmask)
    new_bonus = (bonus0 & keep) | (((bonus0 & colmask) << 4) & colmask)
    if seat == 0:
        red |= top
    else:
        blue |= top
    if bonus:
        new_bonus |= top
    if events is not None:
        events.append(DiscPushed(column, seat, bonus, red, blue, new_bonus))
        if fell is not None:
            events.append(fell)

    moves_made = state.moves_made + 1
    options = state.options
    mode = options.mode
    round_no = state.round_no

    # -- newly complete lines --
    scored_now: list[LineScored] = []
    red_new = False
    blue_new = False
    for m in _LINES_THROUGH[column]:
        if red & m == m and red0 & m != m:
            red_new = True
            pts = 2 if (new_bonus & m and mode is not Mode.FIRST_LINE) else 1
            scored_now.append(LineScored(_CELLS_OF[m], 0, pts, moves_made, round_no))
        elif blue & m == m and blue0 & m != m:
            blue_new = True
            pts = 2 if (new_bonus & m and mode is not Mode.FIRST_LINE) else 1
            scored_now.append(LineScored(_CELLS_OF[m], 1, pts, moves_made, round_no))

    scores = state.scores
    round_wins = state.round_wins
    scored = state.scored
    result: Outcome | None = None
    to_move: int | None
    if scored_now:
        if events is not None:
            events.extend(scored_now)
        scored = scored + tuple(scored_now)
        if mode is Mode.POINTS:
            s0, s1 = scores
            for line in scored_now:
                if line.colour == 0:
                    s0 += line.points
                else:
                    s1 += line.points
            scores = (s0, s1)
            target = options.target
            if s0 >= target or s1 >= target:
                result = Outcome(_ranks(s0, s1), TARGET_REACHED, scores)
        elif mode is Mode.FIRST_LINE:
            if red_new and blue_new:
                ranks: tuple[int, int] = (1, 1)
            else:
                ranks = _winner_ranks(0 if red_new else 1)
            result = Outcome(ranks, LINE_COMPLETED, ())
        else:  # rounds
            w0, w1 = round_wins
            winners: tuple[int, ...] = ()
            if red_new:
                w0 += 1
                winners = (0,)
            if blue_new:
                w1 += 1
                winners = (*winners, 1)
            round_wins = (w0, w1)
            target = options.target
            if w0 >= target or w1 >= target:
                result = Outcome(_ranks(w0, w1), ROUNDS_TARGET_REACHED, round_wins)
            elif moves_made >= options.move_limit:
                result = Outcome(_ranks(w0, w1), MOVE_LIMIT, round_wins)
            emptied = result is None
            if events is not None:
                events.append(RoundWon(round_no, winners, round_wins, _frame(red, blue, new_bonus), emptied))
            if emptied:
                # A new round: empty frame, full supplies, the other seat starts.
                round_no += 1
                return Plus4State(
                    options=options,
                    red=0,
                    blue=0,
                    bonus=0,
                    ordinary=(ORDINARY_PER_SEAT, ORDINARY_PER_SEAT),
                    bonus_in_hand=(True, True),
                    scores=scores,
                    round_wins=round_wins,
                    to_move=(round_no - 1) % 2,
                    moves_made=moves_made,
                    round_no=round_no,
                    scored=scored,
                    result=None,
                )

    if result is None and moves_made >= options.move_limit:
        if mode is Mode.POINTS:
            result = Outcome(_ranks(scores[0], scores[1]), MOVE_LIMIT, scores)
        elif mode is Mode.ROUNDS:
            result = Outcome(_ranks(round_wins[0], round_wins[1]), MOVE_LIMIT, round_wins)
        else:
            result = Outcome((1, 1), MOVE_LIMIT, ())

    if result is not None:
        to_move = None
        if events is not None:
            events.append(GameEnded(result))
    else:
        other = 1 - seat
        if ordinary[other] == 0 and not bonus_in_hand[other]:
            if events is not None:
                events.append(_SKIPPED[other])
            to_move = seat
        else:
            to_move = other

    # positional: a search builds millions of these, and keywords cost a tenth of the push
    return Plus4State(
        options, red, blue, new_bonus, ordinary, bonus_in_hand, scores, round_wins, to_move, moves_made, round_no,
        scored, result,
    )


_MODE_VALUES: Final = frozenset(m.value for m in Mode)
_TO_ACT: Final = (frozenset({0}), frozenset({1}))
_FELL: Final = tuple((DiscFellOut(s, False, s), DiscFellOut(s, True, s)) for s in range(SEATS))
_SKIPPED: Final = (TurnSkipped(0), TurnSkipped(1))

RULES: Final = Plus4Rules()

if TYPE_CHECKING:  # the module satisfies the kit's contract
    _CONTRACT: Rules[Plus4State, Move, Plus4Options, Plus4Event, Plus4View] = RULES
