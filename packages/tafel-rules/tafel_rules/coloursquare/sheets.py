"""Sheet layouts, loaded once from the data files in ``sheets/`` (one ``<name>.json`` per sheet).

A sheet file (format ``coloursquare-sheet/1``)::

    {"format": "coloursquare-sheet/1", "name": "A", "label": "tafel sheet A", "description": "...",
     "squares": [[{"goal": 12, "kind": "plain"}, {"goal": [15, 18], "kind": "purple",
                   "fixed": {"Y": 1}}, ...], ...]}

``squares`` is a grid of rows (row 0 at the top), every row the same length. ``goal`` is an exact
target or an inclusive ``[low, high]`` range; ``kind`` is ``plain``, ``purple`` (bonus) or ``orange``
(never bridged); ``fixed`` maps a colour (R, Y, G, B) to its pre-printed value 1..6. A new sheet is a
new data file; the table option ``side`` names it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from tafel_rules.coloursquare.model import COLOURS, DIE_INDEX, Die

SHEET_FORMAT = "coloursquare-sheet/1"
SHEET_DIR = Path(__file__).resolve().parent / "sheets"


class Kind(StrEnum):
    PLAIN = "plain"
    PURPLE = "purple"
    ORANGE = "orange"


@dataclass(frozen=True)
class Square:
    row: int
    col: int
    low: int  # goal: low == high for an exact target
    high: int
    kind: Kind
    fixed: tuple[int | None, int | None, int | None, int | None]  # pre-printed value per colour

    @property
    def exact(self) -> bool:
        return self.low == self.high

    def corner_order(self) -> tuple[Die, ...]:
        """Cell colours clockwise from top-left (visual only): R Y G B rotated left by row + col."""
        shift = (self.row + self.col) % 4
        return COLOURS[shift:] + COLOURS[:shift]


@dataclass(frozen=True)
class Sheet:
    name: str
    label: str
    description: str
    rows: int
    cols: int
    squares: tuple[Square, ...]  # row-major
    bridges: tuple[tuple[int, int], ...]  # every pair of orthogonally adjacent squares (a < b)
    neighbours: tuple[tuple[int, ...], ...]  # per square, the adjacent squares
    colourable: tuple[tuple[int, int], ...] = ()  # the bridges that can ever be coloured: neither square orange

    @property
    def size(self) -> int:
        return self.rows * self.cols

    def index(self, row: int, col: int) -> int:
        return row * self.cols + col


class SheetError(ValueError):
    pass


def _int(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SheetError(f"{where}: expected an integer, got {value!r}")
    return value


def parse_sheet(data: Any, name: str | None = None) -> Sheet:
    """Validate and build a sheet from its decoded JSON."""
    if not isinstance(data, dict) or data.get("format") != SHEET_FORMAT:
        raise SheetError(f"not a {SHEET_FORMAT} sheet")
    sheet_name = data.get("name")
    if not isinstance(sheet_name, str) or not sheet_name or (name is not None and sheet_name != name):
        raise SheetError(f"bad sheet name {sheet_name!r}")
    grid = data.get("squares")
    if not isinstance(grid, list) or not grid or not all(isinstance(row, list) and row for row in grid):
        raise SheetError("squares must be a non-empty grid")
    rows, cols = len(grid), len(grid[0])
    if any(len(row) != cols for row in grid):
        raise SheetError("every row must have the same number of squares")
    squares: list[Square] = []
    for r, row in enumerate(grid):
        for c, raw in enumerate(row):
            where = f"{sheet_name} square ({r},{c})"
            if not isinstance(raw, dict):
                raise SheetError(f"{where}: not an object")
            goal = raw.get("goal")
            if isinstance(goal, list):
                if len(goal) != 2:
                    raise SheetError(f"{where}: a range goal is [low, high]")
                low, high = _int(goal[0], where), _int(goal[1], where)
            else:
                low = high = _int(goal, where)
            if not 4 <= low <= high <= 24:
                raise SheetError(f"{where}: goal outside 4..24")
            try:
                kind = Kind(raw.get("kind", "plain"))
            except ValueError as exc:
                raise SheetError(f"{where}: unknown kind {raw.get('kind')!r}") from exc
            fixed: list[int | None] = [None, None, None, None]
            raw_fixed = raw.get("fixed", {})
            if not isinstance(raw_fixed, dict):
                raise SheetError(f"{where}: fixed must map colours to values")
            for colour, value in raw_fixed.items():
                if colour not in DIE_INDEX or colour == Die.W:
                    raise SheetError(f"{where}: fixed colour {colour!r}")
                v = _int(value, where)
                if not 1 <= v <= 6:
                    raise SheetError(f"{where}: fixed value outside 1..6")
                fixed[DIE_INDEX[colour]] = v
            squares.append(Square(r, c, low, high, kind, (fixed[0], fixed[1], fixed[2], fixed[3])))
    bridges: list[tuple[int, int]] = []
    for r in range(rows):
        for c in range(cols):
            i = r * cols + c
            if c + 1 < cols:
                bridges.append((i, i + 1))
            if r + 1 < rows:
                bridges.append((i, i + cols))
    neighbours = tuple(
        tuple(sorted([b for a, b in bridges if a == i] + [a for a, b in bridges if b == i])) for i in range(rows * cols)
    )
    return Sheet(
        name=sheet_name,
        label=str(data.get("label", f"tafel sheet {sheet_name}")),
        description=str(data.get("description", "")),
        rows=rows,
        cols=cols,
        squares=tuple(squares),
        bridges=tuple(sorted(bridges)),
        neighbours=neighbours,
        colourable=tuple(
            (a, b) for a, b in sorted(bridges) if Kind.ORANGE not in (squares[a].kind, squares[b].kind)
        ),
    )


def load_sheets(directory: Path = SHEET_DIR) -> dict[str, Sheet]:
    sheets: dict[str, Sheet] = {}
    for path in sorted(directory.glob("*.json")):
        with path.open(encoding="utf-8") as handle:
            sheets[path.stem] = parse_sheet(json.load(handle), name=path.stem)
    return sheets


# Loaded once at import; no I/O at move time.
SHEETS: dict[str, Sheet] = load_sheets()
