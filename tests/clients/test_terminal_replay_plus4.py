"""The terminal replay's Plus 4 board at every step: rebuilt from the events alone (the frame each
push reports, the lines, the round wins) it matches the rules' own state after that push, in the
points and the rounds mode, and draws without the supplies the events do not carry."""

from __future__ import annotations

import random

import pytest
from tafel.by_game.base import Cursor, Seating
from tafel.by_game.plus4 import render as render_plus4
from tafel.by_game.plus4 import view_at as plus4_at
from tafel.games.v1 import games_pb2

from services.kit.codec import GameEnvelope
from services.plus4.codec import CODEC
from tafel_rules.plus4 import RULES, Mode, Plus4Options

ENVELOPE = GameEnvelope(CODEC)


@pytest.mark.parametrize("mode", [Mode.POINTS, Mode.ROUNDS])
def test_each_step_matches_the_rules_state(mode: Mode) -> None:
    rng = random.Random(7)
    state = RULES.new_game(Plus4Options(mode, 3), 2, 0)
    events: list[games_pb2.GameEvent] = []
    emptied_rounds = 0
    version = 0
    while state.result is None:
        seat = state.to_move
        assert seat is not None
        legal = RULES.legal_moves(state, seat)
        state, raw = RULES.apply_move(state, seat, legal[rng.randrange(len(legal))])
        version += 1
        events.extend(ENVELOPE.events_to_union(list(raw), version))
        final = CODEC.view_to_proto(RULES.view(state, None))
        at = plus4_at(final, events)
        won = [e.plus4.round_won for e in events if e.version == version and e.plus4.HasField("round_won")]
        if won and won[0].frame_emptied:
            emptied_rounds += 1
            assert list(at.frame) == list(won[0].frame)  # the line that won it, before the frame empties
        else:
            assert list(at.frame) == list(final.frame), f"push {version}"
            assert at.round == final.round
        assert list(at.round_wins) == list(final.round_wins)
        if mode is Mode.POINTS:
            assert list(at.scores) == list(final.scores)
        assert list(at.scored_lines) == list(final.scored_lines)
        assert at.moves_made == final.moves_made
    assert version > 4 and (mode is Mode.POINTS or emptied_rounds > 0)
    drawn = render_plus4(at, Cursor(), None, Seating(names=["ann", "bob"])).plain
    assert "ann" in drawn and "bob" in drawn and "discs" not in drawn  # no supplies at a replay step
