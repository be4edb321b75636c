"""The level-3 Connect Four bot's opening book: its own move in every 7 x 6 position it can reach in
the first plies, whatever the opponent plays.

The data (connect4_book.txt, made by tools/build_connect4_book.py with this project's solver) holds
one line per position: the position's key, a best column and its score. The key is the smaller of
the position's and its mirror image's `current + mask` bitboard sum (connect4.Engine's layout: it
identifies a position, the side to move following from the disc count); the column belongs to the
keyed orientation and is mirrored back on lookup. A score is either exact in Pons' scale ("s") or
only the game's result ("w": 1 win, 0 draw, -1 loss) where the exact score cost too much to prove.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

__all__ = ["BOOK_FILE", "Book", "Entry", "canonical", "load_book", "mirror"]

BOOK_FILE = Path(__file__).resolve().with_name("connect4_book.txt")
_WIDTH = 7
_STRIDE = 7  # 6 rows and a sentinel bit per column
_COLUMN = (1 << _STRIDE) - 1


def mirror(bits: int) -> int:
    """A 7 x 6 bitboard reflected left to right."""
    out = 0
    for c in range(_WIDTH):
        out |= ((bits >> (c * _STRIDE)) & _COLUMN) << ((_WIDTH - 1 - c) * _STRIDE)
    return out


def canonical(current: int, mask: int) -> tuple[int, bool]:
    """The book key of a position and whether it is the mirror image's."""
    key = current + mask
    flipped = mirror(current) + mirror(mask)
    return (flipped, True) if flipped < key else (key, False)


@dataclass(frozen=True)
class Entry:
    column: int  # 0-based, for the position as asked (already mirrored back)
    score: int
    exact: bool  # score in Pons' scale; otherwise only its sign is known (the outcome)


class Book:
    """`plies`: (moving first, moving second): the book has every position the bot can reach with
    fewer discs than that when it moves first, and when it moves second."""

    def __init__(self, entries: dict[int, tuple[int, int, bool]], plies: tuple[int, int] = (0, 0)) -> None:
        self._entries = entries
        self.plies = plies

    def __len__(self) -> int:
        return len(self._entries)

    def entries(self) -> dict[int, tuple[int, int, bool]]:
        """A copy of the raw entries: key -> (column for the keyed orientation, score, exact)."""
        return dict(self._entries)

    def lookup(self, current: int, mask: int) -> Entry | None:
        key, flipped = canonical(current, mask)
        found = self._entries.get(key)
        if found is None:
            return None
        column, score, exact = found
        return Entry(_WIDTH - 1 - column if flipped else column, score, exact)

    @staticmethod
    def parse(text: str) -> Book:
        """A line "plies FIRST SECOND" (or one number for both), then lines "key(hex) column(0-6)
        s|w score"; '#' starts a comment."""
        entries: dict[int, tuple[int, int, bool]] = {}
        plies = (0, 0)
        for n, line in enumerate(text.splitlines(), 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            fields = line.split()
            if fields[0] == "plies" and len(fields) in (2, 3):
                plies = (int(fields[1]), int(fields[-1]))
                continue
            if len(fields) != 4 or fields[2] not in ("s", "w") or not 0 <= int(fields[1]) < _WIDTH:
                raise ValueError(f"book line {n} is malformed: {line!r}")
            entries[int(fields[0], 16)] = (int(fields[1]), int(fields[3]), fields[2] == "s")
        return Book(entries, plies)

    def format(self) -> str:
        return f"plies {self.plies[0]} {self.plies[1]}\n" + "".join(
            f"{key:x} {column} {'s' if exact else 'w'} {score}\n"
            for key, (column, score, exact) in sorted(self._entries.items())
        )


@functools.cache
def load_book() -> Book:
    """The shipped book (empty when the data file is missing)."""
    if not BOOK_FILE.exists():
        return Book({})
    return Book.parse(BOOK_FILE.read_text())
