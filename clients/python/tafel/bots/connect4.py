"""Connect Four's bot levels (`Connect4Bot`), and the solver's public names.

Level 3 (`Connect4Bot(3)`) on the standard 7 x 6 board: the opening book (connect4_book: its own
move in every position it can reach in the first plies), else the compiled solver
(connect4_native, the same search in C) within `PERFECT_SECONDS`: a move keeping the game's result,
then the exact best score if that fits; a result proof that has not finished goes on up to
`PROOF_SECONDS`. Only if those run out, or the library is not built, the
engine (connect4_engine): exact when at most `EXACT_REMAINING` (14) moves remain, an exact try
within a small node budget before that, else an iterative-deepening depth-limited search with a
threat/parity evaluation. Other board sizes use the depth-limited search only.

The parts: connect4_engine (positions, `Engine`, `solve`, `best_move`), connect4_search (the
search's closures), connect4_view (a `tafel.connect4.v1.View` as a `Board`), connect4_book and
connect4_native (level 3's book and compiled solver). Pure decision code: no I/O, no network.
The SDK feeds a `tafel.connect4.v1.View` and sends the move.
"""

from __future__ import annotations

import random
import time

from tafel.bots.connect4_book import load_book
from tafel.bots.connect4_engine import (
    STANDARD_HEIGHT,
    STANDARD_WIDTH,
    Analysis,
    Engine,
    SearchAborted,
    best_move,
    position_from_moves,
    result_sign,
    solve,
)
from tafel.bots.connect4_native import load as load_native
from tafel.bots.connect4_search import WIN
from tafel.bots.connect4_view import Board, board_at, board_from_view
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
                outcome = result_sign(entry.score)
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
                    return Analysis(
                        found.column, found.score, True, remaining, spent + found.nodes, result_sign(found.score)
                    )
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
