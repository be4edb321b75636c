"""Replay the reference games (tests/data/plus4/plus4.json, format plus4-trace/1) exactly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tafel_rules.game import GameEnded, Outcome
from tafel_rules.plus4 import (
    RULES,
    DiscFellOut,
    Frame,
    LineScored,
    Mode,
    Move,
    Plus4Event,
    Plus4Options,
    Plus4State,
    RoundWon,
    TurnSkipped,
)

DATA = Path(__file__).resolve().parents[2] / "data" / "plus4" / "plus4.json"
TRACE = json.loads(DATA.read_text())
GAMES = TRACE["games"]


def _frame_json(frame: Frame) -> list[list[Any]]:
    return [[None if d is None else [d.colour, d.bonus] for d in row] for row in frame]


def _lines_json(lines: list[LineScored]) -> set[tuple[Any, ...]]:
    return {(tuple(line.cells), line.colour, line.points) for line in lines}


def _result_json(outcome: Outcome | None) -> dict[str, Any] | None:
    if outcome is None:
        return None
    winners = outcome.winners
    return {"winner": None if outcome.is_draw else winners[0], "reason": outcome.reason}


def _after(state: Plus4State, events: list[Plus4Event]) -> dict[str, Any]:
    lines = [e for e in events if isinstance(e, LineScored)]
    fell = [e for e in events if isinstance(e, DiscFellOut)]
    skipped = [e for e in events if isinstance(e, TurnSkipped)]
    rounds = [e for e in events if isinstance(e, RoundWon)]
    after: dict[str, Any] = {
        "board": _frame_json(state.frame()),
        "supplies": [[state.ordinary[s], state.bonus_in_hand[s]] for s in (0, 1)],
        "scores": list(state.scores),
        "round_wins": list(state.round_wins),
        "to_move": state.to_move,
        "scored_lines": _lines_json(lines),
        "fell_out": [fell[0].colour, fell[0].bonus] if fell else None,
        "skipped": skipped[0].seat if skipped else None,
        "moves_made": state.moves_made,
        "round_no": state.round_no,
        "round_winners": list(rounds[0].winners) if rounds else [],
        "result": _result_json(state.result),
    }
    if rounds and rounds[0].frame_emptied:
        after["board_after_push"] = _frame_json(rounds[0].frame)
    return after


def _expected(raw: dict[str, Any]) -> dict[str, Any]:
    exp = dict(raw)
    exp["scored_lines"] = {
        (tuple(tuple(c) for c in line["cells"]), line["colour"], line["points"]) for line in raw["scored_lines"]
    }
    return exp


def test_trace_format() -> None:
    assert TRACE["format"] == "plus4-trace/1"
    assert len(GAMES) >= 9
    assert {g["options"]["mode"] for g in GAMES} == {"points", "first_line", "rounds"}


@pytest.mark.parametrize("game", GAMES, ids=[f"game{g['index']}-{g['options']['mode']}" for g in GAMES])
def test_replay_reference_game(game: dict[str, Any]) -> None:
    opts = game["options"]
    options = Plus4Options(Mode(opts["mode"]), opts["target"], opts["move_limit"])
    state = RULES.new_game(options, 2, game["game_seed"])
    for i, step in enumerate(game["steps"]):
        col, bonus = step["move"]
        move = Move(col, bonus)
        assert move in RULES.legal_moves(state, step["player"]), f"step {i}"
        state, events = RULES.apply_move(state, step["player"], move)
        events = list(events)
        got = _after(state, events)
        exp = _expected(step["after"])
        assert set(got) == set(exp), f"step {i}: fields differ"
        for key in exp:
            assert got[key] == exp[key], f"step {i}: {key}: got {got[key]!r}, expected {exp[key]!r}"
        if state.result is not None:
            assert isinstance(events[-1], GameEnded) and events[-1].outcome == state.result
            assert i == len(game["steps"]) - 1
    assert state.result is not None
    assert RULES.to_act(state) == frozenset()
