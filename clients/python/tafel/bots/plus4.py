"""Plus 4: a compact simulator built from the public view, and the three bot levels.

The simulator follows the rules page (shared/rules/plus-4.md) and uses only what
`tafel.plus4.v1.View` shows: the 4 x 4 frame, both supplies, scores, round wins, whose turn, the move
count and the options. The frame is three 16-bit masks (red discs, blue discs, bonus discs), bit
``row * 4 + column`` with row 0 at the top, so a push is a handful of integer operations.

level 1: a random legal push.
level 2: one-move look-ahead: the push that gains the most points (or wins at once) minus the best
  gain the opponent has in reply; ties broken at random.
level 3: iterative-deepening minimax with alpha-beta over pushes (the game has no chance), with an
  evaluation of the score (points or rounds) and of the lines still open to each colour.

Pure decision code: no I/O, no network.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Final

from tafel.plus4.v1 import plus4_pb2 as pb

__all__ = ["Plus4Bot", "Plus4Sim", "Plus4State", "state_from_view"]

ROWS: Final = 4
COLUMNS: Final = 4
ORDINARY_PER_SEAT: Final = 9

MODE_POINTS: Final = pb.MODE_POINTS
MODE_FIRST_LINE: Final = pb.MODE_FIRST_LINE
MODE_ROUNDS: Final = pb.MODE_ROUNDS

DEFAULT_TARGET: Final = 11
DEFAULT_MOVE_LIMIT: Final = 400

_LINE_CELLS: Final = (
    *(tuple((r, c) for c in range(COLUMNS)) for r in range(ROWS)),
    *(tuple((r, c) for r in range(ROWS)) for c in range(COLUMNS)),
    tuple((i, i) for i in range(4)),
    tuple((i, 3 - i) for i in range(4)),
)
LINE_MASKS: Final = tuple(sum(1 << (r * COLUMNS + c) for r, c in cells) for cells in _LINE_CELLS)
COLUMN_MASKS: Final = tuple(sum(1 << (r * COLUMNS + c) for r in range(ROWS)) for c in range(COLUMNS))
# the lines a push into column c can change: every row, that column, both diagonals
_LINES_THROUGH: Final = tuple(tuple(LINE_MASKS[i] for i in (0, 1, 2, 3, 4 + c, 8, 9)) for c in range(COLUMNS))
_TOP: Final = tuple(1 << c for c in range(COLUMNS))
_BOTTOM: Final = tuple(1 << ((ROWS - 1) * COLUMNS + c) for c in range(COLUMNS))

Move = tuple[int, bool]  # (column, bonus)


@dataclass(frozen=True, slots=True)
class Plus4State:
    """A whole Plus 4 position. `result` once over: 0 or 1 = that seat won, -1 = a draw."""

    red: int
    blue: int
    bonus: int
    ordinary: tuple[int, int]
    in_hand: tuple[bool, bool]
    scores: tuple[int, int]
    round_wins: tuple[int, int]
    to_move: int | None
    moves_made: int
    round_no: int
    result: int | None = None


class Plus4Sim:
    """The rules of one table (mode, target, move limit) as a pure `apply`."""

    def __init__(self, mode: int = MODE_POINTS, target: int = DEFAULT_TARGET, move_limit: int = DEFAULT_MOVE_LIMIT):
        self.mode = mode or MODE_POINTS
        self.target = target or DEFAULT_TARGET
        self.move_limit = move_limit or DEFAULT_MOVE_LIMIT

    def new_game(self) -> Plus4State:
        return Plus4State(0, 0, 0, (ORDINARY_PER_SEAT, ORDINARY_PER_SEAT), (True, True), (0, 0), (0, 0), 0, 0, 1)

    @staticmethod
    def moves(state: Plus4State) -> list[Move]:
        seat = state.to_move
        if seat is None:
            return []
        out: list[Move] = []
        if state.ordinary[seat]:
            out.extend((c, False) for c in range(COLUMNS))
        if state.in_hand[seat]:
            out.extend((c, True) for c in range(COLUMNS))
        return out

    def gains(self, state: Plus4State, move: Move) -> tuple[int, int]:
        """Points (points mode; line counts otherwise) each seat would gain by this push."""
        after = self.apply(state, move)
        if self.mode == MODE_POINTS:
            return after.scores[0] - state.scores[0], after.scores[1] - state.scores[1]
        if self.mode == MODE_ROUNDS:
            return after.round_wins[0] - state.round_wins[0], after.round_wins[1] - state.round_wins[1]
        if after.result is None:
            return 0, 0
        return (1 if after.result in (0, -1) else 0), (1 if after.result in (1, -1) else 0)

    def apply(self, state: Plus4State, move: Move) -> Plus4State:
        """The position after the side to move pushes `move`; raises ValueError when illegal."""
        seat = state.to_move
        if seat is None:
            raise ValueError("the game is over")
        column, bonus = move
        if not 0 <= column < COLUMNS:
            raise ValueError(f"column {column} is outside the frame")
        ord0, ord1 = state.ordinary
        hand0, hand1 = state.in_hand
        if bonus:
            if not (hand0 if seat == 0 else hand1):
                raise ValueError("the bonus disc is not in the supply")
            if seat == 0:
                hand0 = False
            else:
                hand1 = False
        else:
            if not (ord0 if seat == 0 else ord1):
                raise ValueError("no ordinary disc in the supply")
            if seat == 0:
                ord0 -= 1
            else:
                ord1 -= 1
        red0, blue0, bonus0 = state.red, state.blue, state.bonus
        colmask = COLUMN_MASKS[column]
        bottom = _BOTTOM[column]
        if (red0 | blue0) & bottom:  # the bottom disc falls out, back to its owner
            if bonus0 & bottom:
                if red0 & bottom:
                    hand0 = True
                else:
                    hand1 = True
            elif red0 & bottom:
                ord0 += 1
            else:
                ord1 += 1
        keep = ~colmask
        red = (red0 & keep) | (((red0 & colmask) << 4) & colmask)
        blue = (blue0 & keep) | (((blue0 & colmask) << 4) & colmask)
        bon = (bonus0 & keep) | (((bonus0 & colmask) << 4) & colmask)
        top = _TOP[column]
        if seat == 0:
            red |= top
        else:
            blue |= top
        if bonus:
            bon |= top
        moves_made = state.moves_made + 1
        mode = self.mode
        red_pts = blue_pts = 0
        for m in _LINES_THROUGH[column]:
            if red & m == m and red0 & m != m:
                red_pts += 2 if bon & m and mode != MODE_FIRST_LINE else 1
            elif blue & m == m and blue0 & m != m:
                blue_pts += 2 if bon & m and mode != MODE_FIRST_LINE else 1
        scores = state.scores
        round_wins = state.round_wins
        round_no = state.round_no
        result: int | None = None
        if red_pts or blue_pts:
            if mode == MODE_POINTS:
                scores = (scores[0] + red_pts, scores[1] + blue_pts)
                if scores[0] >= self.target or scores[1] >= self.target:
                    result = _compare(scores)
            elif mode == MODE_FIRST_LINE:
                result = -1 if red_pts and blue_pts else (0 if red_pts else 1)
            else:
                round_wins = (round_wins[0] + (1 if red_pts else 0), round_wins[1] + (1 if blue_pts else 0))
                if round_wins[0] >= self.target or round_wins[1] >= self.target:
                    result = _compare(round_wins)
                elif moves_made >= self.move_limit:
                    result = _compare(round_wins)
                else:  # a new round: empty frame, full supplies, the other seat starts
                    round_no += 1
                    return Plus4State(
                        0,
                        0,
                        0,
                        (ORDINARY_PER_SEAT, ORDINARY_PER_SEAT),
                        (True, True),
                        scores,
                        round_wins,
                        (round_no - 1) % 2,
                        moves_made,
                        round_no,
                    )
        if result is None and moves_made >= self.move_limit:
            if mode == MODE_POINTS:
                result = _compare(scores)
            elif mode == MODE_ROUNDS:
                result = _compare(round_wins)
            else:
                result = -1
        to_move: int | None
        if result is not None:
            to_move = None
        else:
            other = 1 - seat
            empty = (ord1 == 0 and not hand1) if other == 1 else (ord0 == 0 and not hand0)
            to_move = seat if empty else other
        return Plus4State(
            red, blue, bon, (ord0, ord1), (hand0, hand1), scores, round_wins, to_move, moves_made, round_no, result
        )


def _compare(counts: tuple[int, int]) -> int:
    if counts[0] > counts[1]:
        return 0
    if counts[1] > counts[0]:
        return 1
    return -1


# -- from the public view ---------------------------------------------------------------------------


def state_from_view(view: pb.View) -> tuple[Plus4Sim, Plus4State]:
    """The table's rules and the position shown by a view."""
    options = view.options
    sim = Plus4Sim(options.mode, options.target, options.move_limit)
    red = blue = bonus = 0
    if len(view.frame) != ROWS:
        raise ValueError(f"the frame has {len(view.frame)} rows, not {ROWS}")
    for r, row in enumerate(view.frame):
        if len(row.squares) != COLUMNS:
            raise ValueError(f"row {r} has {len(row.squares)} squares, not {COLUMNS}")
        for c, square in enumerate(row.squares):
            if not square.HasField("disc"):
                continue
            bit = 1 << (r * COLUMNS + c)
            if square.disc.colour == 0:
                red |= bit
            else:
                blue |= bit
            if square.disc.bonus:
                bonus |= bit
    supplies = list(view.supplies) or [pb.Supply(), pb.Supply()]
    scores = tuple(view.scores) or (0, 0)
    round_wins = tuple(view.round_wins) or (0, 0)
    state = Plus4State(
        red=red,
        blue=blue,
        bonus=bonus,
        ordinary=(supplies[0].ordinary, supplies[1].ordinary),
        in_hand=(supplies[0].bonus, supplies[1].bonus),
        scores=(scores[0], scores[1]),
        round_wins=(round_wins[0], round_wins[1]),
        to_move=view.to_move if view.HasField("to_move") else None,
        moves_made=view.moves_made,
        round_no=view.round or 1,
    )
    return sim, state


# -- search ----------------------------------------------------------------------------------------

_INF: Final = 1_000_000
_LINE_WEIGHT: Final = (0, 2, 8, 30, 0)


class _Abort(Exception):
    pass


class Searcher:
    """Minimax with alpha-beta for one table, values from `me`'s side."""

    def __init__(self, sim: Plus4Sim, me: int, deadline: float, max_nodes: int | None) -> None:
        self.sim = sim
        self.me = me
        self.deadline = deadline
        self.max_nodes = max_nodes
        self.nodes = 0

    def evaluate(self, s: Plus4State) -> int:
        me = self.me
        if s.result is not None:
            return 0 if s.result == -1 else (_INF if s.result == me else -_INF)
        mode = self.sim.mode
        if me == 0:
            mine, theirs = s.red, s.blue
        else:
            mine, theirs = s.blue, s.red
        value = 0
        weight = _LINE_WEIGHT
        for m in LINE_MASKS:
            a = mine & m
            b = theirs & m
            if a and not b:
                value += weight[a.bit_count()]
            elif b and not a:
                value -= weight[b.bit_count()]
        if mode == MODE_POINTS:
            value += 400 * (s.scores[me] - s.scores[1 - me])
            value += 6 * (int(s.in_hand[me]) - int(s.in_hand[1 - me]))
        elif mode == MODE_ROUNDS:
            value += 400 * (s.round_wins[me] - s.round_wins[1 - me])
        return value

    def search(self, s: Plus4State, depth: int, alpha: int, beta: int, ply: int) -> int:
        self.nodes += 1
        if self.max_nodes is not None and self.nodes >= self.max_nodes:
            raise _Abort
        if not self.nodes & 255 and time.perf_counter() > self.deadline:
            raise _Abort
        if s.result is not None:
            v = self.evaluate(s)
            return v - ply if v >= _INF else (v + ply if v <= -_INF else v)
        if depth <= 0:
            return self.evaluate(s)
        sim = self.sim
        children = [sim.apply(s, m) for m in sim.moves(s)]
        maximizing = s.to_move == self.me
        if depth >= 2:
            children.sort(key=self.evaluate, reverse=maximizing)
        if maximizing:
            best = -_INF * 2
            for child in children:
                v = self.search(child, depth - 1, alpha, beta, ply + 1)
                if v > best:
                    best = v
                    if v > alpha:
                        alpha = v
                        if alpha >= beta:
                            break
            return best
        best = _INF * 2
        for child in children:
            v = self.search(child, depth - 1, alpha, beta, ply + 1)
            if v < best:
                best = v
                if v < beta:
                    beta = v
                    if alpha >= beta:
                        break
        return best


def search_move(
    sim: Plus4Sim,
    state: Plus4State,
    *,
    max_seconds: float | None = 0.3,
    max_nodes: int | None = None,
    max_depth: int = 8,
) -> tuple[Move, int, int]:
    """(move, value, completed depth) by iterative deepening; depth 1 always completes."""
    me = state.to_move
    if me is None:
        raise ValueError("the game is over")
    moves = sim.moves(state)
    if not moves:
        raise ValueError("no legal move")
    start = time.perf_counter()
    best_move = moves[0]
    best_value = 0
    completed = 0
    order = list(moves)
    nodes_left = max_nodes
    for depth in range(1, max_depth + 1):
        deadline = float("inf") if depth == 1 or max_seconds is None else start + max_seconds
        searcher = Searcher(sim, me, deadline, None if depth == 1 else nodes_left)
        scored: list[tuple[int, int, Move]] = []
        alpha = -_INF * 2
        try:
            for i, m in enumerate(order):
                v = searcher.search(sim.apply(state, m), depth - 1, alpha, _INF * 2, 1)
                scored.append((v, -i, m))
                alpha = max(alpha, v)
        except _Abort:
            break
        scored.sort(reverse=True)
        best_value, _, best_move = scored[0]
        completed = depth
        order = [m for _, _, m in scored]
        if abs(best_value) >= _INF - 1000:
            break  # a forced result
        if nodes_left is not None and depth > 1:
            nodes_left -= searcher.nodes
            if nodes_left <= 0:
                break
        if max_seconds is not None and time.perf_counter() - start > max_seconds / 2:
            break  # the next depth would not finish
    return best_move, best_value, completed


# -- the bot ---------------------------------------------------------------------------------------


class Plus4Bot:
    """Chooses a push from a `tafel.plus4.v1.View` (the bot's seat must be the one to move)."""

    def __init__(
        self,
        level: int = 3,
        *,
        seed: int | None = None,
        move_seconds: float | None = 0.3,
        move_nodes: int | None = None,
        max_depth: int = 8,
    ) -> None:
        if level not in (1, 2, 3):
            raise ValueError(f"level must be 1, 2 or 3, not {level}")
        self.level = level
        self.rng = random.Random(seed)
        self.move_seconds = move_seconds
        self.move_nodes = move_nodes
        self.max_depth = max_depth
        self.last_depth = 0

    def choose(self, view: pb.View) -> pb.Move:
        sim, state = state_from_view(view)
        column, bonus = self.choose_move(sim, state)
        return pb.Move(column=column, bonus=bonus)

    def choose_move(self, sim: Plus4Sim, state: Plus4State) -> Move:
        moves = sim.moves(state)
        if not moves:
            raise ValueError("no legal move: the game is over or the supply is empty")
        if self.level == 1:
            return self.rng.choice(moves)
        if self.level == 2:
            return self._look_ahead(sim, state, moves)
        move, _, depth = search_move(
            sim, state, max_seconds=self.move_seconds, max_nodes=self.move_nodes, max_depth=self.max_depth
        )
        self.last_depth = depth
        return move

    def _look_ahead(self, sim: Plus4Sim, state: Plus4State, moves: list[Move]) -> Move:
        me = state.to_move
        assert me is not None
        best: list[Move] = []
        best_value = -_INF
        for m in moves:
            after = sim.apply(state, m)
            if after.result is not None:
                value = _INF if after.result == me else (0 if after.result == -1 else -_INF)
            else:
                gained = sim.gains(state, m)
                value = gained[me] - gained[1 - me]
                if after.to_move is not None and after.to_move != me:
                    value -= max(
                        (_reply_gain(sim, after, r, 1 - me) for r in sim.moves(after)),
                        default=0,
                    )
            if value > best_value:
                best, best_value = [m], value
            elif value == best_value:
                best.append(m)
        # keep the bonus disc for a push that scores with it
        plain = [m for m in best if not m[1]]
        return self.rng.choice(plain or best)


def _reply_gain(sim: Plus4Sim, state: Plus4State, move: Move, seat: int) -> int:
    after = sim.apply(state, move)
    if after.result is not None:
        return _INF if after.result == seat else (0 if after.result == -1 else -_INF)
    gained = sim.gains(state, move)
    return gained[seat] - gained[1 - seat]
