"""Connect Four's search as closures over one board size's constants and tables.

Negamax with alpha-beta for the exact solve and a depth-limited search with a threat/parity
evaluation, built once per board size (connect4_engine.Engine calls `build_search`): every
constant, shift and table method is a local of the enclosing function, which CPython reads
faster than attributes or globals in the hot loop (connect4_engine.py's docstring describes the
search; tools/bench_connect4_solver.py measures it).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

__all__ = ["WIN", "Geometry", "Search", "SearchAborted", "build_search"]

# Heuristic values are kept below WIN; a proven result r (in moves-to-go units) is r * WIN.
WIN = 1000
_LOWER = 1 << 10  # transposition-table code: value + _LOWER marks a lower bound, else an upper bound
_NO_LIMIT = 1 << 62


class SearchAborted(Exception):
    """The node or time budget of a search ran out before it finished."""


class Geometry(Protocol):
    """What the search reads of a board size (connect4_engine.Engine has it)."""

    width: int
    height: int
    size: int
    board: int
    bottom: int
    order: tuple[int, ...]
    column_masks: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Search:
    """The search functions of one board size, sharing their node budget and tables."""

    winning: Callable[[int, int], int]
    negamax: Callable[[int, int, int, int, int], int]
    solve: Callable[[int, int, int], int]
    hsearch: Callable[[int, int, int, int, int, int], int]
    evaluate: Callable[[int, int, int], int]
    set_budget: Callable[[int | None, float | None], None]
    used: Callable[[], int]


def _lines_through(width: int, height: int, column: int, row: int) -> int:
    count = 0
    for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
        for start in range(-3, 1):
            cells = [(column + (start + k) * dc, row + (start + k) * dr) for k in range(4)]
            if all(0 <= c < width and 0 <= r < height for c, r in cells):
                count += 1
    return count


# -- positions ------------------------------------------------------------------------------------


def build_search(geometry: Geometry, table: dict[int, int], htable: dict[int, tuple[int, int, int, int]]) -> Search:
    """The search for `geometry`'s board, on these transposition tables (kept by the caller)."""
    height = geometry.height
    size = geometry.size
    board = geometry.board
    bottom = geometry.bottom
    s1, s2, s3 = height + 1, 2 * (height + 1), 3 * (height + 1)
    d1, d2, d3 = height, 2 * height, 3 * height
    e1, e2, e3 = height + 2, 2 * (height + 2), 3 * (height + 2)
    order_masks = tuple(geometry.column_masks[c] for c in geometry.order)
    n_order = len(order_masks)
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
    for c in range(geometry.width):
        for row in range(0, height, 2):
            first_rows |= 1 << (c * (height + 1) + row)
    second_rows = board & ~first_rows
    # Cell weights: how many lines of four pass through the cell, grouped into masks per weight.
    weight_masks: dict[int, int] = {}
    for c in range(geometry.width):
        for row in range(height):
            w = _lines_through(geometry.width, height, c, row)
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

    return Search(winning, negamax, solve, hsearch, evaluate, set_budget, used)
