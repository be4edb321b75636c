"""Connect Four positions and the exact and heuristic searches for one board size (`Engine`).

The engine follows Pascal Pons' solver (http://blog.gamesolver.org): negamax with alpha-beta, a
transposition table holding upper and lower bounds, only non-losing moves searched (forced blocks
played at once, moves under an opponent's threat skipped), moves ordered by the threats they make
and then centre first, and an iterative null-window search over the score range. The search
itself is connect4_search.py (closures over the board's constants).

Scores follow the published convention: from the side to move, a win scores 22 minus the winner's
disc count at the winning move (on a w x h board: (w*h + 2) / 2 minus that count), a draw 0, a loss
the negative of the opponent's score.

Bitboards: column c owns bits c*(h+1) .. c*(h+1)+h-1, bottom first, plus one empty sentinel bit on top
so lines never wrap between columns. A position is `current` (the discs of the side to move) and
`mask` (all discs); after a move the opponent becomes `current`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from tafel.bots.connect4_search import WIN, SearchAborted, build_search

__all__ = [
    "STANDARD_HEIGHT",
    "STANDARD_WIDTH",
    "Analysis",
    "Engine",
    "SearchAborted",
    "best_move",
    "position_from_moves",
    "result_sign",
    "solve",
]

STANDARD_WIDTH = 7
STANDARD_HEIGHT = 6


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
        search = build_search(self, self._table, self._htable)
        self._winning = search.winning
        self._negamax = search.negamax
        self._solve = search.solve
        self._hsearch = search.hsearch
        self._evaluate = search.evaluate
        self._set_budget = search.set_budget
        self._used = search.used

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
            return Analysis(self.column_of(forced & -forced), score, True, remaining, self._used(), result_sign(score))
        if forced:
            return Analysis(self.column_of(forced), score, True, remaining, self._used(), result_sign(score))
        safe = possible & ~(threats >> 1)
        if not safe:  # every move lets the opponent win at once
            return Analysis(legal[0], score, True, remaining, self._used(), result_sign(score))
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
                return Analysis(c, score, True, remaining, self._used(), result_sign(score))
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
        proven = result_sign(best_score) if abs(best_score) >= WIN else None
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


def result_sign(score: int) -> int:
    """1, 0 or -1: the result (win, draw, loss) a score stands for."""
    return (score > 0) - (score < 0)


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
