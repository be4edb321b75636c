"""Plus 4: the three bot levels, searching with the platform's own rules.

The position comes from what `tafel.plus4.v1.View` shows (the frame, both supplies, scores, round
wins, whose turn, the move count and the options), read into the rules module's `Plus4State`; every
push the bots look ahead with is `tafel_rules.plus4.next_state`, the service's own push (its
`apply_move` without the events), so a bot and the game cannot disagree about a rule.

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
from collections.abc import Sequence
from typing import Final

from tafel_rules.game import Outcome
from tafel_rules.plus4 import (
    COLUMNS,
    LINES,
    ROWS,
    RULES,
    Mode,
    Move,
    Plus4Options,
    Plus4State,
    next_state,
)

from tafel.plus4.v1 import plus4_pb2 as pb

__all__ = ["Plus4Bot", "search_move", "state_from_view"]

_MODES: Final = {pb.MODE_POINTS: Mode.POINTS, pb.MODE_FIRST_LINE: Mode.FIRST_LINE, pb.MODE_ROUNDS: Mode.ROUNDS}
_DEFAULTS: Final = Plus4Options()
LINE_MASKS: Final = tuple(sum(1 << (r * COLUMNS + c) for r, c in cells) for cells in LINES)


def winner(result: Outcome) -> int:
    """The seat that won a finished game, or -1 for a draw."""
    ranks = result.ranks
    if ranks[0] == ranks[1]:
        return -1
    return 0 if ranks[0] < ranks[1] else 1


def legal(state: Plus4State) -> Sequence[Move]:
    seat = state.to_move
    return () if seat is None else RULES.legal_moves(state, seat)


def gains(state: Plus4State, after: Plus4State) -> tuple[int, int]:
    """Points (points mode; line counts otherwise) each seat gained from `state` to `after`."""
    mode = state.options.mode
    if mode is Mode.POINTS:
        return after.scores[0] - state.scores[0], after.scores[1] - state.scores[1]
    if mode is Mode.ROUNDS:
        return after.round_wins[0] - state.round_wins[0], after.round_wins[1] - state.round_wins[1]
    if after.result is None:
        return 0, 0
    won = winner(after.result)
    return (1 if won in (0, -1) else 0), (1 if won in (1, -1) else 0)


# -- from the public view ---------------------------------------------------------------------------


def state_from_view(view: pb.View) -> Plus4State:
    """The position a view shows, as the rules module's state (without the history of scored lines,
    which no rule reads)."""
    options = view.options
    table = Plus4Options(
        _MODES.get(options.mode, _DEFAULTS.mode),
        options.target or _DEFAULTS.target,
        options.move_limit or _DEFAULTS.move_limit,
    )
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
    return Plus4State(
        options=table,
        red=red,
        blue=blue,
        bonus=bonus,
        ordinary=(supplies[0].ordinary, supplies[1].ordinary),
        bonus_in_hand=(supplies[0].bonus, supplies[1].bonus),
        scores=(scores[0], scores[1]),
        round_wins=(round_wins[0], round_wins[1]),
        to_move=view.to_move if view.HasField("to_move") else None,
        moves_made=view.moves_made,
        round_no=view.round or 1,
        scored=(),
        result=None,
    )


# -- search ----------------------------------------------------------------------------------------

_INF: Final = 1_000_000
_LINE_WEIGHT: Final = (0, 2, 8, 30, 0)


class _Abort(Exception):
    pass


def _value(result: Outcome, me: int) -> int:
    won = winner(result)
    return 0 if won == -1 else (_INF if won == me else -_INF)


class Searcher:
    """Minimax with alpha-beta for one table, values from `me`'s side."""

    def __init__(self, me: int, mode: Mode, deadline: float, max_nodes: int | None) -> None:
        self.me = me
        # the enum members looked up once: evaluate runs at every leaf
        self.points = mode is Mode.POINTS
        self.rounds = mode is Mode.ROUNDS
        self.deadline = deadline
        self.max_nodes = max_nodes
        self.nodes = 0

    def evaluate(self, s: Plus4State) -> int:
        me = self.me
        if s.result is not None:
            return _value(s.result, me)
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
        if self.points:
            value += 400 * (s.scores[me] - s.scores[1 - me])
            value += 6 * (int(s.bonus_in_hand[me]) - int(s.bonus_in_hand[1 - me]))
        elif self.rounds:
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
        children = [next_state(s, m) for m in legal(s)]
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
    moves = legal(state)
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
        searcher = Searcher(me, state.options.mode, deadline, None if depth == 1 else nodes_left)
        scored: list[tuple[int, int, Move]] = []
        alpha = -_INF * 2
        try:
            for i, m in enumerate(order):
                v = searcher.search(next_state(state, m), depth - 1, alpha, _INF * 2, 1)
                scored.append((v, -i, m))
                alpha = max(alpha, v)
        except _Abort:
            break
        scored.sort(key=lambda entry: entry[:2], reverse=True)  # (value, -index): Move has no order
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
        move = self.choose_move(state_from_view(view))
        return pb.Move(column=move.column, bonus=move.bonus)

    def choose_move(self, state: Plus4State) -> Move:
        moves = legal(state)
        if not moves:
            raise ValueError("no legal move: the game is over or the supply is empty")
        if self.level == 1:
            return self.rng.choice(moves)
        if self.level == 2:
            return self._look_ahead(state, moves)
        move, _, depth = search_move(
            state, max_seconds=self.move_seconds, max_nodes=self.move_nodes, max_depth=self.max_depth
        )
        self.last_depth = depth
        return move

    def _look_ahead(self, state: Plus4State, moves: Sequence[Move]) -> Move:
        me = state.to_move
        assert me is not None
        best: list[Move] = []
        best_value = -_INF
        for m in moves:
            after = next_state(state, m)
            if after.result is not None:
                value = _value(after.result, me)
            else:
                gained = gains(state, after)
                value = gained[me] - gained[1 - me]
                if after.to_move is not None and after.to_move != me:
                    value -= max((_reply_gain(after, r, 1 - me) for r in legal(after)), default=0)
            if value > best_value:
                best, best_value = [m], value
            elif value == best_value:
                best.append(m)
        # keep the bonus disc for a push that scores with it
        plain = [m for m in best if not m.bonus]
        return self.rng.choice(plain or best)


def _reply_gain(state: Plus4State, move: Move, seat: int) -> int:
    after = next_state(state, move)
    if after.result is not None:
        return _value(after.result, seat)
    gained = gains(state, after)
    return gained[seat] - gained[1 - seat]
