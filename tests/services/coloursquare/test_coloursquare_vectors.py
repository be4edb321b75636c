"""Replays the reference games (tests/data/coloursquare/coloursquare.json) step by step."""

from __future__ import annotations

from typing import Any

import pytest
from tafel_rules.coloursquare.model import Options, Phase, State
from tafel_rules.coloursquare.rules import RULES, with_roll

from tests.services.coloursquare.helpers import load_vectors, snapshot, to_move

VECTORS = load_vectors()
GAMES = VECTORS["games"]


def _options(raw: dict[str, Any]) -> tuple[Options, int]:
    return Options(side=raw["side"], target=raw.get("target", 0)), raw["players"]


def _place(state: State, seat: int, raw: list[Any] | None) -> State:
    if raw is None:
        state, _ = RULES.timeout(state, seat)
    else:
        state, _ = RULES.apply_move(state, seat, to_move(raw))
    return state


def test_format_and_count() -> None:
    assert VECTORS["format"] == "coloursquare-trace/2"
    assert len(GAMES) == 12


@pytest.mark.parametrize("index", range(len(GAMES)), ids=lambda i: f"game{i}")
def test_replay(index: int) -> None:
    game = GAMES[index]
    options, seats = _options(game["options"])
    state = RULES.new_game(options, seats, seed=index)
    for rnd in game["rounds"]:
        assert state.phase is Phase.ROUND
        assert state.round == rnd["round"]
        assert state.active == rnd["active"]
        state = with_roll(state, rnd["roll"])
        expected_to_act = {int(s) for s in rnd["placements"]}
        assert RULES.to_act(state) == frozenset(expected_to_act)
        for seat, raw in rnd["placements"].items():
            assert RULES.outcome(state) is None
            state = _place(state, int(seat), raw)
        assert snapshot(state) == rnd["after"], f"round {rnd['round']}"
    for turn in game["final_turns"]:
        assert state.phase is Phase.FINAL
        assert RULES.to_act(state) == frozenset({turn["seat"]})
        state = with_roll(state, turn["roll"])
        state = _place(state, turn["seat"], turn["placements"])
        assert snapshot(state) == turn["after"], f"final turn of seat {turn['seat']}"
    assert state.phase is Phase.OVER
    result = game["result"]
    outcome = RULES.outcome(state)
    assert outcome is not None
    assert list(outcome.scores) == result["scores"]
    assert list(outcome.ranks) == result["ranks"]
    assert list(outcome.winners) == result["winners"]
    view = RULES.result(state)
    assert view is not None
    assert list(view.ranking) == result["ranking"]
    assert list(view.removed) == result["removed"]
    assert view.caller == result["caller"] == game["caller"]
    assert view.rounds == result["rounds"]
    if "target" in result:
        assert view.target == result["target"]
        assert view.reached == result["reached"]


@pytest.mark.parametrize("index", range(len(GAMES)), ids=lambda i: f"game{i}")
def test_every_vector_move_is_listed_as_legal(index: int) -> None:
    """The lists the reference games play are among legal_moves (in die order) and the view's
    must_place agrees with how many dice each played (outside final turns)."""
    game = GAMES[index]
    options, seats = _options(game["options"])
    state = RULES.new_game(options, seats, seed=index)
    order = "RYGBW"
    for rnd in game["rounds"]:
        state = with_roll(state, rnd["roll"])
        for seat, raw in rnd["placements"].items():
            if raw is not None:
                move = to_move(sorted(raw, key=lambda p: order.index(p[0])))
                assert move in RULES.legal_moves(state, int(seat))
                assert RULES.view(state, int(seat)).must_place == len(raw)
            state = _place(state, int(seat), raw)
    for turn in game["final_turns"]:
        state = with_roll(state, turn["roll"])
        raw = turn["placements"]
        if raw is not None:
            move = to_move(sorted(raw, key=lambda p: order.index(p[0])))
            assert move in RULES.legal_moves(state, turn["seat"])
        state = _place(state, turn["seat"], raw)
