"""Shared helpers for the Colour Square tests: vector-format conversion and small builders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from services.coloursquare.model import Cell, Die, Joker, Move, Placement, State
from services.coloursquare.rules import RULES, sheet_of
from services.coloursquare.scoring import breakdown

DATA = Path(__file__).resolve().parents[2] / "data" / "coloursquare" / "coloursquare.json"


def load_vectors() -> dict[str, Any]:
    with DATA.open(encoding="utf-8") as handle:
        data: dict[str, Any] = json.load(handle)
    return data


def to_move(raw: list[Any]) -> Move:
    """A vector placement list, e.g. [["R", ["cell", 0, 1, "R"]], ["Y", ["joker", 0]]]."""
    placements = []
    for die, target in raw:
        if target[0] == "cell":
            placements.append(Placement(Die(die), Cell(target[1], target[2], Die(target[3]))))
        else:
            placements.append(Placement(Die(die), Joker(target[1])))
    return Move(tuple(placements))


def mv(*specs: str) -> Move:
    """Shorthand: mv("R@0,0", "Y@j0", "W@1,2,B") -> a Move. A cell without colour takes the die's."""
    placements = []
    for spec in specs:
        die, where = spec.split("@")
        if where.startswith("j"):
            placements.append(Placement(Die(die), Joker(int(where[1:]))))
        else:
            parts = where.split(",")
            colour = Die(parts[2]) if len(parts) > 2 else Die(die)
            placements.append(Placement(Die(die), Cell(int(parts[0]), int(parts[1]), colour)))
    return Move(tuple(placements))


def snapshot(state: State) -> dict[str, Any]:
    """The state in the vectors' AFTER format."""
    sheet = sheet_of(state)
    over = state.phase.value == "over"
    players = []
    for p in state.players:
        status = [[p.status[r * sheet.cols + c].value for c in range(sheet.cols)] for r in range(sheet.rows)]
        cells = [
            [list(p.cells[(r * sheet.cols + c) * 4 : (r * sheet.cols + c) * 4 + 4]) for c in range(sheet.cols)]
            for r in range(sheet.rows)
        ]
        b = breakdown(sheet, p, over)
        players.append(
            {
                "status": status,
                "cells": cells,
                "jokers": list(p.jokers),
                "removed": p.removed,
                "breakdown": {
                    "circled": b.circled,
                    "bridges": b.bridges,
                    "purple": b.purple,
                    "wrong_penalty": b.wrong_penalty,
                    "open_penalty": b.open_penalty,
                    "jokers": b.jokers,
                    "total": b.total,
                },
            }
        )
    return {"phase": state.phase.value, "players": players}


def total(state: State, seat: int) -> int:
    return RULES.scores(state)[seat]
