"""Connect Four: a bitboard solver and the three bot levels.

The engine follows Pascal Pons' solver (http://blog.gamesolver.org): negamax with alpha-beta, a
transposition table holding upper and lower bounds, only non-losing moves searched (forced blocks
played at once, moves under an opponent's threat skipped), moves ordered by the threats they make
and then centre first, and an iterative null-window search over the score range.

Scores follow the published convention: from the side to move, a win scores 22 minus the winner's
disc count at the winning move (on a w x h board: (w*h + 2) / 2 minus that count), a draw 0, a loss
the negative of the opponent's score.

Bitboards: column c owns bits c*(h+1) .. c*(h+1)+h-1, bottom first, plus one empty sentinel bit on top
so lines never wrap between columns. A position is `current` (the discs of the side to move) and
`mask` (all discs); after a move the opponent becomes `current`.

Level 3 (`Connect4Bot(3)`) on the standard 7 x 6 board: the opening book (connect4_book: its own
move in every position it can reach in the first plies), else the compiled solver
(connect4_native, the same search in C) within `PERFECT_SECONDS`: a move keeping the game's result,
then the exact best score if that fits; a result proof that has not finished goes on up to
`PROOF_SECONDS`. Only if those run out, or the library is not built, the
engine here: exact when at most `EXACT_REMAINING` (14) moves remain, an exact try within a small
node budget before that, else an iterative-deepening depth-limited search with a threat/parity
evaluation. Other board sizes use the depth-limited search only.

Pure decision code: no I/O, no network. The SDK feeds a `tafel.connect4.v1.View` and sends the move.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from tafel.bots.connect4_book import load_book
from tafel.bots.connect4_native import load as load_native
from tafel.connect4.v1 import connect4_pb2 as pb

__all__ = [
    "EXACT_REMAINING",
    "PERFECT_SECONDS",
    "PROOF_SECONDS",
    "Analysis",
    "Board",
    "Connect4Bot",
    "Engine",
    "SearchAborted",
    "best_move",
    "board_at",
    "position_from_moves",
    "solve",
]

STANDARD_WIDTH = 7
STANDARD_HEIGHT = 6
# Level 3 solves exactly whenever at most this many moves remain (standard board).
EXACT_REMAINING = 14
# Level 3's time for a move with the compiled solver (the target is 100 ms at the 99th percentile):
# a move that keeps the result (win/draw/loss) may use `_WEAK_SHARE` of it, the exact score then
# the time up to `_SOLVER_SHARE`; if the first runs out, the heuristic search gets what is left.
PERFECT_SECONDS = 0.09
_WEAK_SHARE = 0.85
_SOLVER_SHARE = 0.9
# When the result-keeping search has not finished in its share, it goes on, on the table it warmed,
# up to this long in all before the heuristic guesses: a position off the bot's own lines with 8-14
# discs can take the solver seconds (a median of 30 ms, a tail of 2-3 s at 8 discs), and a wrong
# guess there changes the result. 2 s is well under the shortest turn clock the gateway allows (5 s;
# 60 s by default), and the bot pool thinks in a thread while the C search runs without the GIL.
PROOF_SECONDS = 2.0
# Heuristic values are kept below WIN; a proven result r (in moves-to-go units) is r * WIN.
WIN = 1000
_LOWER = 1 << 10  # transposition-table code: value + _LOWER marks a lower bound, else an upper bound
_NO_LIMIT = 1 << 62


class SearchAborted(Exception):
    """The node or time budget of a search ran out before it finished."""


@dataclass(frozen=True)
class Analysis:
    """The engine's choice for the side to move.

    `score` is in Pons' scale exactly when `exact` is set; otherwise it is a heuristic value, with
    proven results as `score // WIN` moves-to-go scores (|score| >= WIN). `outcome` is the game's
    result under perfect play from the side to move (1 win, 0 draw, -1 loss) when known, with or
    without an exact score."""

    column: int
    score: int
    exact: bool
    depth: int  # the deepest completed depth (the remaining moves when exact)
    nodes: int
    outcome: int | None = None


def _centre_order(width: int) -> tuple[int, ...]:
    return tuple(sorted(range(width), key=lambda c: (abs(2 * c - (width - 1)), c)))


class Engine:
    """Search for one board size. Keeps its transposition tables between calls (each cleared when it
    grows past `table_limit` entries, about 100 bytes an entry); not thread-safe: one per thread."""

    def __init__(self, width: int = STANDARD_WIDTH, height: int = STANDARD_HEIGHT, *, table_limit: int = 250_000):
        if not (4 <= width <= 16 and 4 <= height <= 16):
            raise ValueError(f"board {width}x{height} is not supported")
        self.width = width
        self.height = height
        self.size = width * height
        self.table_limit = table_limit
        self.order = _centre_order(width)
        h1 = height + 1
        self.stride = h1
        bottom = sum(1 << (c * h1) for c in range(width))
        board = bottom * ((1 << height) - 1)
        self.bottom = bottom
        self.board = board
        self.column_masks = tuple(((1 << height) - 1) << (c * h1) for c in range(width))
        self.top_bits = tuple(1 << (height - 1 + c * h1) for c in range(width))
        self.bottom_bits = tuple(1 << (c * h1) for c in range(width))
        self._table: dict[int, int] = {}
        self._htable: dict[int, tuple[int, int, int, int]] = {}
        self.nodes = 0
        self._build()

    # -- helpers usable from outside ------------------------------------------------------------

    def reset(self) -> None:
        """Forget the transposition tables."""
        self._table.clear()
        self._htable.clear()

    def winning_cells(self, current: int, mask: int) -> int:
        """Empty cells where `current` would complete a line of four."""
        return self._winning(current, mask)

    def can_play(self, mask: int, column: int) -> bool:
        return not mask & self.top_bits[column]

    def play(self, current: int, mask: int, column: int) -> tuple[int, int]:
        """The position after the side to move plays `column` (seen from the new side to move)."""
        move = (mask + self.bottom_bits[column]) & self.column_masks[column]
        return current ^ mask, mask | move

    def is_win(self, current: int, mask: int, column: int) -> bool:
        """Whether the side to move wins by playing `column` now."""
        move = (mask + self.bottom_bits[column]) & self.column_masks[column]
        return bool(self._winning(current, mask) & move)

    def column_of(self, move: int) -> int:
        return (move.bit_length() - 1) // self.stride

    # -- the search, built as closures over this board's constants (fast local access) ------------

    def _build(self) -> None:
        height = self.height
        size = self.size
        board = self.board
        bottom = self.bottom
        s1, s2, s3 = height + 1, 2 * (height + 1), 3 * (height + 1)
        d1, d2, d3 = height, 2 * height, 3 * height
        e1, e2, e3 = height + 2, 2 * (height + 2), 3 * (height + 2)
        order_masks = tuple(self.column_masks[c] for c in self.order)
        n_order = len(order_masks)
        table = self._table
        htable = self._htable
        table_get = table.get
        htable_get = htable.get
        lower = _LOWER
        counter = 0
        limit = _NO_LIMIT
        deadline = float("inf")
        clock = time.perf_counter
        aborted = SearchAborted

        def winning(pos: int, mask: int) -> int:
            r = (pos << 1) & (pos << 2) & (pos << 3)
            p = (pos << s1) & (pos << s2)
            r |= p & (pos << s3)
            r |= p & (pos >> s1)
            p = (pos >> s1) & (pos >> s2)
            r |= p & (pos << s1)
            r |= p & (pos >> s3)
            p = (pos << d1) & (pos << d2)
            r |= p & (pos << d3)
            r |= p & (pos >> d1)
            p = (pos >> d1) & (pos >> d2)
            r |= p & (pos << d1)
            r |= p & (pos >> d3)
            p = (pos << e1) & (pos << e2)
            r |= p & (pos << e3)
            r |= p & (pos >> e1)
            p = (pos >> e1) & (pos >> e2)
            r |= p & (pos << e1)
            r |= p & (pos >> e3)
            return r & (board ^ mask)

        def negamax(cur: int, mask: int, nb: int, alpha: int, beta: int) -> int:
            """Exact score within (alpha, beta); the side to move cannot win at once."""
            nonlocal counter
            counter += 1
            if counter >= limit or (not counter & 255 and clock() > deadline):
                raise aborted
            opp = cur ^ mask
            possible = (mask + bottom) & board
            # the opponent's threats, inlined (this is the hot path)
            r = (opp << 1) & (opp << 2) & (opp << 3)
            p = (opp << s1) & (opp << s2)
            r |= p & (opp << s3)
            r |= p & (opp >> s1)
            p = (opp >> s1) & (opp >> s2)
            r |= p & (opp << s1)
            r |= p & (opp >> s3)
            p = (opp << d1) & (opp << d2)
            r |= p & (opp << d3)
            r |= p & (opp >> d1)
            p = (opp >> d1) & (opp >> d2)
            r |= p & (opp << d1)
            r |= p & (opp >> d3)
            p = (opp << e1) & (opp << e2)
            r |= p & (opp << e3)
            r |= p & (opp >> e1)
            p = (opp >> e1) & (opp >> e2)
            r |= p & (opp << e1)
            r |= p & (opp >> e3)
            threats = r & (board ^ mask)
            forced = possible & threats
            if forced:
                if forced & (forced - 1):
                    return -((size - nb) >> 1)  # two threats to block: lost
                possible = forced
            possible &= ~(threats >> 1)  # never play under an opponent's threat
            if not possible:
                return -((size - nb) >> 1)
            if nb >= size - 2:
                return 0
            lo = -((size - 2 - nb) >> 1)
            if alpha < lo:
                alpha = lo
                if alpha >= beta:
                    return alpha
            hi = (size - 1 - nb) >> 1
            if beta > hi:
                beta = hi
                if alpha >= beta:
                    return beta
            key = cur + mask
            v = table_get(key)
            if v is not None:
                if v >= lower // 2:
                    lo = v - lower
                    if alpha < lo:
                        alpha = lo
                        if alpha >= beta:
                            return alpha
                else:
                    if beta > v:
                        beta = v
                        if alpha >= beta:
                            return beta
            nb1 = nb + 1
            if not possible & (possible - 1):
                score = -negamax(opp, mask | possible, nb1, -beta, -alpha)
                if score >= beta:
                    table[key] = score + lower
                    return score
                if score > alpha:
                    alpha = score
                table[key] = alpha
                return alpha
            moves: list[tuple[int, int]] = []
            rank = n_order
            for cm in order_masks:
                mv = possible & cm
                if mv:
                    moves.append((winning(cur | mv, mask | mv).bit_count() * 16 + rank, mv))
                rank -= 1
            moves.sort(reverse=True)
            for _, mv in moves:
                score = -negamax(opp, mask | mv, nb1, -beta, -alpha)
                if score >= beta:
                    table[key] = score + lower
                    return score
                if score > alpha:
                    alpha = score
            table[key] = alpha
            return alpha

        def solve(cur: int, mask: int, nb: int) -> int:
            """The exact score of a position that is not over."""
            if winning(cur, mask) & (mask + bottom) & board:
                return (size + 1 - nb) >> 1
            lo = -((size - nb) >> 1)
            hi = (size + 1 - nb) >> 1
            while lo < hi:
                med = lo + (hi - lo) // 2
                if med <= 0 and int(lo / 2) < med:
                    med = int(lo / 2)
                elif med >= 0 and int(hi / 2) > med:
                    med = int(hi / 2)
                r = negamax(cur, mask, nb, med, med + 1)
                if r <= med:
                    hi = r
                else:
                    lo = r
            return lo

        # ---- depth-limited search with an evaluation (before the exact horizon) ----

        first_rows = 0  # cells in rows 0, 2, 4 ... (1-based odd rows): the first player's parity
        for c in range(self.width):
            for row in range(0, height, 2):
                first_rows |= 1 << (c * (height + 1) + row)
        second_rows = board & ~first_rows
        # Cell weights: how many lines of four pass through the cell, grouped into masks per weight.
        weight_masks: dict[int, int] = {}
        for c in range(self.width):
            for row in range(height):
                w = _lines_through(self.width, height, c, row)
                weight_masks[w] = weight_masks.get(w, 0) | 1 << (c * (height + 1) + row)
        weights = tuple(sorted(weight_masks.items()))

        def evaluate(cur: int, mask: int, nb: int) -> int:
            """A heuristic value for the side to move, |value| < WIN."""
            opp = cur ^ mask
            mine = winning(cur, mask)
            theirs = winning(opp, mask)
            if nb & 1:  # the side to move moved second
                good_mine, good_theirs = mine & second_rows, theirs & first_rows
            else:
                good_mine, good_theirs = mine & first_rows, theirs & second_rows
            # a threat directly above an own threat is decisive in practice
            stacked = (mine & (mine >> 1)).bit_count() - (theirs & (theirs >> 1)).bit_count()
            value = (
                40 * (good_mine.bit_count() - good_theirs.bit_count())
                + 15 * (mine.bit_count() - theirs.bit_count())
                + 60 * stacked
            )
            for w, m in weights:
                value += w * ((cur & m).bit_count() - (opp & m).bit_count())
            return max(-WIN + 1, min(WIN - 1, value))

        def hsearch(cur: int, mask: int, nb: int, depth: int, alpha: int, beta: int) -> int:
            """Depth-limited negamax; proven results are scaled by WIN. The side to move cannot win
            at once."""
            nonlocal counter
            counter += 1
            if counter >= limit or (not counter & 255 and clock() > deadline):
                raise aborted
            opp = cur ^ mask
            possible = (mask + bottom) & board
            threats = winning(opp, mask)
            forced = possible & threats
            if forced:
                if forced & (forced - 1):
                    return -WIN * ((size - nb) >> 1)
                possible = forced
            possible &= ~(threats >> 1)
            if not possible:
                return -WIN * ((size - nb) >> 1)
            if nb >= size - 2:
                return 0
            if depth <= 0:
                return evaluate(cur, mask, nb)
            key = cur + mask
            entry = htable_get(key)
            best_first = 0
            if entry is not None:
                e_depth, e_kind, e_value, best_first = entry
                if e_depth >= depth or abs(e_value) >= WIN:
                    if e_kind == 0:
                        return e_value
                    if e_kind > 0:
                        if e_value >= beta:
                            return e_value
                    elif e_value <= alpha:
                        return e_value
            alpha0 = alpha
            moves: list[tuple[int, int]] = []
            rank = n_order
            for cm in order_masks:
                mv = possible & cm
                if mv:
                    if mv == best_first:
                        moves.append((1 << 20, mv))
                    else:
                        moves.append((winning(cur | mv, mask | mv).bit_count() * 16 + rank, mv))
                rank -= 1
            moves.sort(reverse=True)
            best = -WIN * WIN
            best_move = 0
            for _, mv in moves:
                score = -hsearch(opp, mask | mv, nb + 1, depth - 1, -beta, -alpha)
                if score > best:
                    best = score
                    best_move = mv
                    if score > alpha:
                        alpha = score
                        if alpha >= beta:
                            break
            kind = 1 if best >= beta else (-1 if best <= alpha0 else 0)
            htable[key] = (depth, kind, best, best_move)
            return best

        def set_budget(nodes: int | None, seconds: float | None) -> None:
            nonlocal counter, limit, deadline
            counter = 0
            limit = _NO_LIMIT if nodes is None else nodes
            deadline = float("inf") if seconds is None else clock() + seconds

        def used() -> int:
            return counter

        self._winning: Callable[[int, int], int] = winning
        self._negamax: Callable[[int, int, int, int, int], int] = negamax
        self._solve: Callable[[int, int, int], int] = solve
        self._hsearch: Callable[[int, int, int, int, int, int], int] = hsearch
        self._evaluate: Callable[[int, int, int], int] = evaluate
        self._set_budget: Callable[[int | None, float | None], None] = set_budget
        self._used: Callable[[], int] = used

    def _trim(self) -> None:
        if len(self._table) > self.table_limit:
            self._table.clear()
        if len(self._htable) > self.table_limit:
            self._htable.clear()

    # -- public search entry points -----------------------------------------------------------------

    def solve(self, current: int, mask: int, nb: int, *, max_nodes: int | None = None) -> int:
        """The exact score of a position that is not over (raises SearchAborted past the budget)."""
        self._trim()
        self._set_budget(max_nodes, None)
        try:
            return self._solve(current, mask, nb)
        finally:
            self.nodes = self._used()

    def analyse_exact(
        self, current: int, mask: int, nb: int, *, max_nodes: int | None = None, max_seconds: float | None = None
    ) -> Analysis:
        """A best column and the exact score (raises SearchAborted past the budget)."""
        self._trim()
        self._set_budget(max_nodes, max_seconds)
        try:
            return self._analyse_exact(current, mask, nb)
        finally:
            self.nodes = self._used()

    def _analyse_exact(self, current: int, mask: int, nb: int) -> Analysis:
        remaining = self.size - nb
        legal = [c for c in self.order if self.can_play(mask, c)]
        if not legal:
            raise ValueError("the board is full")
        wins = self._winning(current, mask)
        for c in legal:
            if wins & self._move_bit(mask, c):
                return Analysis(c, (self.size + 1 - nb) >> 1, True, remaining, self._used(), 1)
        score = self._solve(current, mask, nb)
        opp = current ^ mask
        threats = self._winning(opp, mask)
        possible = (mask + self.bottom) & self.board
        forced = possible & threats
        if forced and forced & (forced - 1):
            return Analysis(self.column_of(forced & -forced), score, True, remaining, self._used(), _sign(score))
        if forced:
            return Analysis(self.column_of(forced), score, True, remaining, self._used(), _sign(score))
        safe = possible & ~(threats >> 1)
        if not safe:  # every move lets the opponent win at once
            return Analysis(legal[0], score, True, remaining, self._used(), _sign(score))
        candidates = []
        for c in legal:
            mv = safe & self.column_masks[c]
            if mv:
                candidates.append((self._winning(current | mv, mask | mv).bit_count(), c, mv))
        candidates.sort(key=lambda t: -t[0])  # stable: centre first among equals
        target = -score  # the child's score after a best move
        for _, c, mv in candidates:
            # the child is worth at least `target`; it is a best move when it is worth at most that
            if self._negamax(opp, mask | mv, nb + 1, target, target + 1) <= target:
                return Analysis(c, score, True, remaining, self._used(), _sign(score))
        raise AssertionError("no move reaches the solved score")  # pragma: no cover

    def analyse_heuristic(
        self,
        current: int,
        mask: int,
        nb: int,
        *,
        max_nodes: int | None = None,
        max_seconds: float | None = None,
        max_depth: int | None = None,
    ) -> Analysis:
        """Iterative deepening with the evaluation, until the budget runs out; the result of the last
        completed depth (depth 1 always completes). Its table lives for one call only (memory stays
        small with many bots in one process)."""
        self._trim()
        self._htable.clear()
        legal = [c for c in self.order if self.can_play(mask, c)]
        if not legal:
            raise ValueError("the board is full")
        wins = self._winning(current, mask)
        for c in legal:
            if wins & self._move_bit(mask, c):
                return Analysis(c, (self.size + 1 - nb) >> 1, True, 1, 0, 1)
        opp = current ^ mask
        threats = self._winning(opp, mask)
        possible = (mask + self.bottom) & self.board
        forced = possible & threats
        if forced:
            column = self.column_of(forced & -forced)
            lost = bool(forced & (forced - 1))
            if lost or not forced & ~(threats >> 1):
                return Analysis(column, -((self.size - nb) >> 1), True, 1, 0, -1)
        safe = possible & ~(threats >> 1)
        if forced:
            safe = forced
        if not safe:
            return Analysis(legal[0], -((self.size - nb) >> 1), True, 1, 0, -1)
        moves = [c for c in legal if safe & self.column_masks[c]]
        if len(moves) == 1:
            return Analysis(moves[0], 0, False, 0, 0)
        depth_cap = self.size - nb if max_depth is None else max_depth
        best_col = moves[0]
        best_score = 0
        completed = 0
        total_nodes = 0
        for depth in range(1, depth_cap + 1):
            # depth 1 never aborts: the budget starts after it
            self._set_budget(None if depth == 1 else max_nodes, None if depth == 1 else max_seconds)
            started = time.perf_counter()
            try:
                col, score = self._heuristic_root(current, mask, nb, moves, best_col, depth)
            except SearchAborted:
                total_nodes += self._used()
                break
            total_nodes += self._used()
            best_col, best_score, completed = col, score, depth
            if abs(score) >= WIN:
                break  # proven
            if depth >= 2 and max_nodes is not None:
                max_nodes -= self._used()
                if max_nodes <= 0:
                    break
            if depth >= 2 and max_seconds is not None:
                max_seconds -= time.perf_counter() - started
                if max_seconds <= 0:
                    break
        self.nodes = total_nodes
        # a proven result inside the horizon gives the outcome, not the exact score (a longer line may
        # do better): never `exact` here
        proven = _sign(best_score) if abs(best_score) >= WIN else None
        return Analysis(best_col, best_score, False, completed, total_nodes, proven)

    def _heuristic_root(
        self, current: int, mask: int, nb: int, moves: list[int], first: int, depth: int
    ) -> tuple[int, int]:
        opp = current ^ mask
        ordered = [first] + [c for c in moves if c != first]
        alpha = -WIN * WIN
        best_col = ordered[0]
        for c in ordered:
            mv = self._move_bit(mask, c)
            score = -self._hsearch(opp, mask | mv, nb + 1, depth - 1, -WIN * WIN, -alpha)
            if score > alpha:
                alpha = score
                best_col = c
        return best_col, alpha

    def _move_bit(self, mask: int, column: int) -> int:
        return (mask + self.bottom_bits[column]) & self.column_masks[column]


def _sign(score: int) -> int:
    return (score > 0) - (score < 0)


def _lines_through(width: int, height: int, column: int, row: int) -> int:
    count = 0
    for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
        for start in range(-3, 1):
            cells = [(column + (start + k) * dc, row + (start + k) * dr) for k in range(4)]
            if all(0 <= c < width and 0 <= r < height for c, r in cells):
                count += 1
    return count


# -- positions ------------------------------------------------------------------------------------


def position_from_moves(engine: Engine, moves: str) -> tuple[int, int, int]:
    """(current, mask, moves played) after a 1-based move string ("4453"; columns past 9 in
    brackets, "[10]"). Raises ValueError for a bad string, a full column or a finished game."""
    columns: list[int] = []
    i = 0
    while i < len(moves):
        ch = moves[i]
        if ch == "[":
            end = moves.index("]", i)
            columns.append(int(moves[i + 1 : end]) - 1)
            i = end + 1
        elif ch.isdigit():
            columns.append(int(ch) - 1)
            i += 1
        else:
            raise ValueError(f"bad move {ch!r} in {moves!r}")
    current = mask = 0
    for n, c in enumerate(columns):
        if not 0 <= c < engine.width or not engine.can_play(mask, c):
            raise ValueError(f"move {n + 1} ({c + 1}) is not playable in {moves!r}")
        if engine.is_win(current, mask, c):
            raise ValueError(f"move {n + 1} of {moves!r} ends the game")
        current, mask = engine.play(current, mask, c)
    if len(columns) >= engine.size:
        raise ValueError(f"{moves!r} fills the board")
    return current, mask, len(columns)


_STANDARD: Engine | None = None


def _standard() -> Engine:
    global _STANDARD
    if _STANDARD is None:
        _STANDARD = Engine()
    return _STANDARD


def solve(moves: str) -> int:
    """The exact score of the standard 7 x 6 position after `moves` (1-based columns, the published
    notation), from the side to move: 22 minus the winner's disc count at the win, 0 for a draw,
    negative when the side to move loses."""
    engine = _standard()
    current, mask, nb = position_from_moves(engine, moves)
    return engine.solve(current, mask, nb)


def best_move(moves: str, *, max_nodes: int | None = None, max_seconds: float | None = None) -> Analysis:
    """A perfect move (0-based column) and its exact score for the 7 x 6 position after `moves`.
    Unbounded by default; with a budget, raises SearchAborted when it runs out."""
    engine = _standard()
    current, mask, nb = position_from_moves(engine, moves)
    return engine.analyse_exact(current, mask, nb, max_nodes=max_nodes, max_seconds=max_seconds)


# -- the bot -------------------------------------------------------------------------------------


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


class Connect4Bot:
    """Chooses a column from a `tafel.connect4.v1.View`.

    level 1: a random legal column.
    level 2: one-move look-ahead: win now, else block the opponent's immediate win, else avoid a
      column that lets the opponent win on top of it, else prefer the centre.
    level 3 on 7 x 6: a perfect move. The opening book (connect4_book) where it has the position,
      else the compiled solver (connect4_native) within `perfect_seconds` (or `perfect_nodes`): a
      move that keeps the game's result (win, draw or loss) first, then the exact best score in what
      is left; a result proof unfinished in its share goes on up to `proof_seconds` in all (time
      budgets only; None: no extension); in a lost position whose exact score is unknown, the
      heuristic's move (all moves keep a loss). Only when both run out, or the library is not built, the
      pure-Python engine: exact within `EXACT_REMAINING` moves of the end (and earlier when an
      exact solve fits in `exact_nodes`), otherwise depth-limited search for `move_seconds` (or
      `move_nodes`). Other board sizes: the depth-limited search.
    """

    def __init__(
        self,
        level: int = 3,
        *,
        seed: int | None = None,
        move_seconds: float | None = 0.5,
        move_nodes: int | None = None,
        exact_nodes: int | None = 20_000,
        perfect_seconds: float | None = PERFECT_SECONDS,
        perfect_nodes: int | None = None,
        proof_seconds: float | None = PROOF_SECONDS,
        book: bool = True,
        native: bool = True,
    ) -> None:
        if level not in (1, 2, 3):
            raise ValueError(f"level must be 1, 2 or 3, not {level}")
        self.level = level
        self.rng = random.Random(seed)
        self.move_seconds = move_seconds
        self.move_nodes = move_nodes
        self.exact_nodes = exact_nodes
        self.perfect_seconds = perfect_seconds
        self.perfect_nodes = perfect_nodes
        self.proof_seconds = proof_seconds
        self.book = load_book() if book else None
        self.native = load_native() if native else None
        self._engine: Engine | None = None
        self.last: Analysis | None = None

    def choose(self, view: pb.View) -> pb.Move:
        """The move to send for this view (the bot's seat must be the one to move)."""
        return pb.Move(column=self.column(view))

    def column(self, view: pb.View) -> int:
        board = board_from_view(view, self._engine)
        self._engine = board.engine
        return self.move_for(board)

    def move_for(self, board: Board) -> int:
        """The column to play in `board` (a position from `board_from_view` or `board_at`)."""
        if self.level == 1:
            return self.rng.choice(board.legal)
        if self.level == 2:
            return self._look_ahead(board)
        return self._search(board)

    def _look_ahead(self, board: Board) -> int:
        e = board.engine
        legal = board.legal
        mine = e.winning_cells(board.current, board.mask)
        theirs = e.winning_cells(board.current ^ board.mask, board.mask)
        bits = {c: (board.mask + e.bottom_bits[c]) & e.column_masks[c] for c in legal}
        for c in legal:
            if mine & bits[c]:
                return c
        for c in legal:
            if theirs & bits[c]:
                return c
        safe = [c for c in legal if not theirs & (bits[c] << 1)] or list(legal)
        centre = (e.width - 1) / 2
        best = min(abs(c - centre) for c in safe)
        return self.rng.choice([c for c in safe if abs(c - centre) == best])

    def _search(self, board: Board) -> int:
        e = board.engine
        standard = (e.width, e.height) == (STANDARD_WIDTH, STANDARD_HEIGHT)
        remaining = e.size - board.nb
        analysis: Analysis | None = None
        started = time.perf_counter()
        if standard:
            analysis = self._perfect(board)
        if analysis is None and standard and self.native is None:
            if remaining <= EXACT_REMAINING:
                analysis = e.analyse_exact(board.current, board.mask, board.nb)
            elif self.exact_nodes:
                try:
                    analysis = e.analyse_exact(board.current, board.mask, board.nb, max_nodes=self.exact_nodes)
                except SearchAborted:
                    analysis = None
        if analysis is None:
            seconds = self.move_seconds
            if standard and self.native is not None and self.perfect_seconds is not None:
                # the compiled search used most of the move's time: the rest goes to the heuristic
                left = self.perfect_seconds - (time.perf_counter() - started)
                seconds = max(left, 0.001) if seconds is None else min(seconds, max(left, 0.001))
            analysis = e.analyse_heuristic(
                board.current, board.mask, board.nb, max_nodes=self.move_nodes, max_seconds=seconds
            )
        self.last = analysis
        if analysis.column not in board.legal:  # cannot happen with a consistent view
            return board.legal[0]
        return analysis.column

    def _perfect(self, board: Board) -> Analysis | None:
        """A perfect move on 7 x 6 from the book or the compiled solver, or None when neither has
        one in time."""
        e = board.engine
        remaining = e.size - board.nb
        wins = e.winning_cells(board.current, board.mask) & (board.mask + e.bottom) & e.board
        if wins:
            column = next(c for c in e.order if wins & e.column_masks[c])
            return Analysis(column, (e.size + 1 - board.nb) >> 1, True, remaining, 0, 1)
        started = time.perf_counter()
        known: Analysis | None = None  # a result-keeping move without its exact score
        if self.book is not None:
            entry = self.book.lookup(board.current, board.mask)
            if entry is not None:
                outcome = _sign(entry.score)
                # followed as it is, even without an exact score: another move would leave the
                # positions the book covers (its lost entries already hold the heuristic's move)
                if entry.exact:
                    return Analysis(entry.column, entry.score, True, remaining, 0, outcome)
                return Analysis(entry.column, WIN * outcome, False, 0, 0, outcome)
        native = self.native
        if native is not None:
            seconds, nodes = self.perfect_seconds, self.perfect_nodes
            spent = 0
            if known is None:
                # the result-keeping move first (the cheaper proof, and what must not be missed),
                # then the exact score in what is left, on the table the first search warmed
                weak = native.best(
                    board.current,
                    board.mask,
                    board.nb,
                    weak=True,
                    max_seconds=None if seconds is None else seconds * _WEAK_SHARE,
                    max_nodes=None if nodes is None else int(nodes * _WEAK_SHARE),
                )
                if weak is None and seconds is not None and self.proof_seconds is not None:
                    # the proof goes on (see PROOF_SECONDS); the exact score then has no time left
                    weak = native.best(
                        board.current,
                        board.mask,
                        board.nb,
                        weak=True,
                        max_seconds=max(self.proof_seconds - (time.perf_counter() - started), 0.001),
                        max_nodes=None if nodes is None else int(nodes * _WEAK_SHARE),
                    )
                if weak is None:
                    return None
                spent = native.nodes
                known = Analysis(weak.column, WIN * weak.score, False, 0, spent, weak.score)
            left_seconds = None if seconds is None else seconds * _SOLVER_SHARE - (time.perf_counter() - started)
            left_nodes = None if nodes is None else int(nodes * _SOLVER_SHARE) - spent
            if (left_seconds is None or left_seconds > 0.001) and (left_nodes is None or left_nodes > 0):
                found = native.best(board.current, board.mask, board.nb, max_seconds=left_seconds, max_nodes=left_nodes)
                if found is not None:
                    return Analysis(found.column, found.score, True, remaining, spent + found.nodes, _sign(found.score))
        if known is not None and known.outcome == -1:
            # lost whatever it plays (the weak solve says), the length of the loss unknown: every
            # move keeps the result, so take the heuristic's, which leaves a fallible opponent the
            # most ways to go wrong
            seconds = self.move_seconds
            if self.perfect_seconds is not None:
                left = max(self.perfect_seconds - (time.perf_counter() - started), 0.001)
                seconds = left if seconds is None else min(seconds, left)
            h = e.analyse_heuristic(board.current, board.mask, board.nb, max_nodes=self.move_nodes, max_seconds=seconds)
            return Analysis(h.column, known.score, False, h.depth, known.nodes + h.nodes, -1)
        return known
