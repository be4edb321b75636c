"""Local matches for the bots: the pure rules modules referee, and each bot sees exactly the public
protobuf view the platform would send it (made by the service's codec), never the rules' state."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from tafel.coloursquare.v1 import coloursquare_pb2
from tafel.connect4.v1 import connect4_pb2
from tafel.plus4.v1 import plus4_pb2
from tafel_rules import connect4 as c4_rules
from tafel_rules import plus4 as p4_rules
from tafel_rules.coloursquare import rules as cs_rules
from tafel_rules.coloursquare.model import Options as CsOptions
from tafel_rules.coloursquare.model import Phase
from tafel_rules.game import Outcome

from services.coloursquare.codec import CODEC as CS_CODEC
from services.connect4.codec import CODEC as C4_CODEC
from services.plus4.codec import CODEC as P4_CODEC


class C4Player(Protocol):
    def choose(self, view: connect4_pb2.View) -> connect4_pb2.Move: ...


class P4Player(Protocol):
    def choose(self, view: plus4_pb2.View) -> plus4_pb2.Move: ...


class CsPlayer(Protocol):
    def choose(self, view: coloursquare_pb2.View) -> coloursquare_pb2.Move: ...


def connect4_match(
    players: Sequence[C4Player], options: c4_rules.Options | None = None
) -> tuple[Outcome, c4_rules.State]:
    rules = c4_rules.RULES
    state = rules.new_game(options or c4_rules.Options(), 2, 0)
    while state.outcome is None:
        seat = state.to_move
        view = C4_CODEC.view_to_proto(rules.view(state, seat))
        move = players[seat].choose(view)
        state, _ = rules.apply_move(state, seat, C4_CODEC.move_from_proto(move))
    return state.outcome, state


def plus4_match(
    players: Sequence[P4Player], options: p4_rules.Plus4Options | None = None
) -> tuple[Outcome, p4_rules.Plus4State]:
    rules = p4_rules.RULES
    state = rules.new_game(options or p4_rules.Plus4Options(), 2, 0)
    while state.result is None:
        seat = state.to_move
        assert seat is not None
        view = P4_CODEC.view_to_proto(rules.view(state, seat))
        move = players[seat].choose(view)
        state, _ = rules.apply_move(state, seat, P4_CODEC.move_from_proto(move))
    return state.result, state


def coloursquare_game(
    players: Sequence[CsPlayer], seed: int, options: CsOptions | None = None
) -> tuple[Outcome, cs_rules.State]:
    """A whole game, every seat placing each round from its own view (the rules check each list)."""
    rules = cs_rules.RULES
    state = rules.new_game(options or CsOptions(), len(players), seed)
    while state.phase is not Phase.OVER:
        for seat in sorted(rules.to_act(state)):
            if state.phase is Phase.OVER or seat not in rules.to_act(state):
                continue
            view = CS_CODEC.view_to_proto(rules.view(state, seat))
            move = players[seat].choose(view)
            state, _ = rules.apply_move(state, seat, CS_CODEC.move_from_proto(move))
    outcome = rules.outcome(state)
    assert outcome is not None
    return outcome, state
