"""The compiled 7 x 6 Connect Four solver (connect4_solver.c), loaded through ctypes.

`make` builds `_connect4_solver.so` next to this file with the machine's C compiler (`make native`,
run by `make test` and `make run`). Without it `load()` returns None and the bots use the
pure-Python engine in connect4.py, which searches the same way about 100 times slower.

The library keeps one transposition table per process (64 MiB, allocated on first use), shared
by every bot; its entries are single 64-bit words, so calls from several threads are safe (ctypes
releases the GIL during a call).
"""

from __future__ import annotations

import ctypes
import functools
from dataclasses import dataclass
from pathlib import Path

__all__ = ["LIBRARY", "Best", "NativeSolver", "load"]

LIBRARY = Path(__file__).resolve().with_name("_connect4_solver.so")
_ABORTED = -1000


@dataclass(frozen=True)
class Best:
    column: int
    score: int  # Pons' scale, or with `weak` only the sign: 1 win, 0 draw, -1 loss
    nodes: int


class NativeSolver:
    """Standard 7 x 6 board only; positions as in connect4.Engine (`current`, `mask`, discs played).
    Budgets: `max_nodes` and `max_seconds` (None: unbounded); past one a call returns None."""

    def __init__(self, lib: ctypes.CDLL) -> None:
        u64, c_int, c_ll, c_double = ctypes.c_uint64, ctypes.c_int, ctypes.c_longlong, ctypes.c_double
        self._solve = lib.c4_solve
        self._solve.argtypes = [u64, u64, c_int, c_int, c_ll, c_double, ctypes.POINTER(c_ll)]
        self._solve.restype = c_int
        self._best = lib.c4_best
        self._best.argtypes = [u64, u64, c_int, c_int, c_ll, c_double, ctypes.POINTER(c_int), ctypes.POINTER(c_ll)]
        self._best.restype = c_int
        self._clear = lib.c4_clear
        self._clear.argtypes = []
        self._clear.restype = None
        self.nodes = 0

    def solve(
        self,
        current: int,
        mask: int,
        nb: int,
        *,
        weak: bool = False,
        max_nodes: int | None = None,
        max_seconds: float | None = None,
    ) -> int | None:
        """The score of a position that is not over (with `weak`, its sign), or None past the budget."""
        nodes = ctypes.c_longlong()
        score = self._solve(current, mask, nb, int(weak), max_nodes or 0, max_seconds or 0.0, ctypes.byref(nodes))
        self.nodes = nodes.value
        return None if score == _ABORTED else int(score)

    def best(
        self,
        current: int,
        mask: int,
        nb: int,
        *,
        weak: bool = False,
        max_nodes: int | None = None,
        max_seconds: float | None = None,
    ) -> Best | None:
        """A best column (0-based) and the score it keeps, or None past the budget. With `weak` the
        column keeps the game's result (win, draw or loss) and the score is its sign."""
        score = ctypes.c_int()
        nodes = ctypes.c_longlong()
        column = self._best(
            current,
            mask,
            nb,
            int(weak),
            max_nodes or 0,
            max_seconds or 0.0,
            ctypes.byref(score),
            ctypes.byref(nodes),
        )
        self.nodes = nodes.value
        if column < 0:
            return None
        return Best(int(column), int(score.value), nodes.value)

    def clear(self) -> None:
        """Empty the process's transposition table (cold-start measurements)."""
        self._clear()


@functools.cache
def load() -> NativeSolver | None:
    """The compiled solver, or None when the library is not built (or cannot be loaded)."""
    if not LIBRARY.exists():
        return None
    try:
        return NativeSolver(ctypes.CDLL(str(LIBRARY)))
    except OSError:
        return None
