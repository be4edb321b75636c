"""Shared helpers for the Colour Square tests: vector-format conversion and small builders."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from tafel_rules.coloursquare.model import Cell, Die, Joker, Move, Options, Placement, Player, State, Status
from tafel_rules.coloursquare.rules import RULES, sheet_of, with_roll
from tafel_rules.coloursquare.scoring import breakdown
from tafel_rules.coloursquare.sheets import SHEETS

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


Square4 = tuple[int | None, int | None, int | None, int | None]


def player(
    side: str = "A",
    cells: dict[tuple[int, int], Square4] | None = None,
    status: dict[tuple[int, int], str] | None = None,
    jokers: tuple[int | None, int | None] = (None, None),
    **extra: Any,
) -> Player:
    """A sheet with the given squares filled (values in R Y G B order) and statuses set."""
    sheet = SHEETS[side]
    values: list[int | None] = [None] * (sheet.size * 4)
    states = [Status.OPEN] * sheet.size
    for (r, c), four in (cells or {}).items():
        values[sheet.index(r, c) * 4 : sheet.index(r, c) * 4 + 4] = list(four)
    for (r, c), st in (status or {}).items():
        states[sheet.index(r, c)] = Status(st)
    return Player(cells=tuple(values), status=tuple(states), jokers=jokers, **extra)


def full(
    side: str, except_: frozenset[tuple[int, int]] | set[tuple[int, int]] = frozenset(), st: str = "wrong"
) -> dict[tuple[int, int], str]:
    """Status map: every square `st` except the listed ones (left open)."""
    sheet = SHEETS[side]
    return {(r, c): st for r in range(sheet.rows) for c in range(sheet.cols) if (r, c) not in except_}


def table(
    seats: int,
    players: dict[int, Player] | None = None,
    roll: tuple[int, int, int, int, int] = (1, 2, 3, 4, 5),
    side: str = "A",
    seed: int = 7,
    **options: Any,
) -> State:
    """A round-phase state of `seats` seats in round 1 (active seat 0) with the given sheets."""
    state = RULES.new_game(Options(side=side, **options), seats, seed)
    sheets = list(state.players)
    for seat, p in (players or {}).items():
        sheets[seat] = p
    return with_roll(replace(state, players=tuple(sheets)), roll)


def cell_value(state: State, seat: int, r: int, c: int, colour: str) -> int | None:
    sheet = sheet_of(state)
    return state.players[seat].cells[sheet.index(r, c) * 4 + "RYGB".index(colour)]


def square_status(state: State, seat: int, r: int, c: int) -> str:
    return state.players[seat].status[sheet_of(state).index(r, c)].value


def play_round(state: State, moves: dict[int, Move | None]) -> tuple[State, list[Any]]:
    """Apply each seat's move (None = timeout) in seat order; returns the state and all events."""
    events: list[Any] = []
    for seat, move in sorted(moves.items()):
        if move is None:
            state, ev = RULES.timeout(state, seat)
        else:
            state, ev = RULES.apply_move(state, seat, move)
        events.extend(ev)
    return state, events
