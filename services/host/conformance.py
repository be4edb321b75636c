"""The generic conformance suite every game runs (written once, OpenSpiel style).

Seeded random playouts check that: the game waits on someone exactly while it is not over, and
every seat it waits on has legal moves while no other seat does; every legal move applies; the
input state is never changed; the protobuf codec round-trips states and moves and encodes every
view and event; a replay from the seed and the moves gives the same game (what a take-back
relies on: services/host/replay.py); and the platform's endings (Rules.end) end a game mid-way.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tafel_rules.game import PLATFORM_ENDINGS, IllegalMove, Rules

from services.host.codec import GameCodec, GameEnvelope


@dataclass
class Playout:
    seed: int
    seats: int
    options: Any
    steps: list[tuple[int, Any]]  # (seat, move)
    states: list[Any]  # states[0] initial, states[i + 1] after steps[i]


def play_random(
    rules: Rules[Any, Any, Any, Any, Any],
    options: Any,
    seats: int,
    seed: int,
    *,
    max_steps: int = 5_000,
    try_all_moves: int = 64,
    codec: GameCodec[Any, Any, Any, Any, Any] | None = None,
) -> Playout:
    """Play one seeded random game, checking every invariant at every step."""
    rng = random.Random(seed)
    state = rules.new_game(options, seats, seed)
    playout = Playout(seed, seats, options, [], [state])
    envelope = GameEnvelope(codec) if codec is not None else None
    for _ in range(max_steps):
        to_act = rules.to_act(state)
        over = rules.outcome(state) is not None
        assert over == (not to_act), f"over={over} but to_act={sorted(to_act)}"
        legal = {seat: rules.legal_moves(state, seat) for seat in range(seats)}
        for seat in range(seats):
            if seat in to_act:
                assert legal[seat], f"seat {seat} must act but has no legal move"
            else:
                assert not legal[seat], f"seat {seat} may not act but has legal moves"
        if envelope is not None:
            _check_codec(rules, envelope, state, seats, legal)
        if over:
            _check_refused_after_end(rules, state, seats)
            return playout
        seat = rng.choice(sorted(to_act))
        moves = legal[seat]
        snapshot = copy.deepcopy(state)
        # Every legal move applies (a bounded sample where the list is long).
        sample = moves if len(moves) <= try_all_moves else rng.sample(list(moves), try_all_moves)
        for move in sample:
            rules.apply_move(state, seat, move)
        move = rng.choice(list(moves))
        state, events = rules.apply_move(state, seat, move)
        assert snapshot == playout.states[-1], "apply_move changed its input state"
        assert events, "an applied move must report what happened"
        if envelope is not None:
            envelope.events_to_union(events, len(playout.steps) + 1)
        playout.steps.append((seat, move))
        playout.states.append(state)
    raise AssertionError(f"game from seed {seed} did not end within {max_steps} steps")


def _check_codec(
    rules: Rules[Any, Any, Any, Any, Any],
    envelope: GameEnvelope[Any, Any, Any, Any, Any],
    state: Any,
    seats: int,
    legal: dict[int, Sequence[Any]],
) -> None:
    codec = envelope.codec
    restored = codec.state_from_bytes(codec.state_to_bytes(state))
    assert restored == state, "state does not round-trip through the codec"
    for seat, moves in legal.items():
        for move in list(moves)[:8]:
            assert envelope.move_from_union(envelope.move_to_union(move)) == move, "move round-trip"
        envelope.view_to_union(rules.view(state, seat))
    envelope.view_to_union(rules.view(state, None))


def _check_refused_after_end(rules: Rules[Any, Any, Any, Any, Any], state: Any, seats: int) -> None:
    for seat in range(seats):
        for action in (rules.resign, rules.timeout):
            try:
                action(state, seat)
            except IllegalMove as illegal:
                assert illegal.reason == "GAME_OVER", illegal.reason
            else:
                raise AssertionError("an action after the end was accepted")


def _check_platform_endings(
    rules: Rules[Any, Any, Any, Any, Any], codec: GameCodec[Any, Any, Any, Any, Any], state: Any, seats: int
) -> None:
    """A draw agreed and an abort from a running position: over, nobody to act, every seat ranked
    first with the reason, kept through the codec, and nothing applies after."""
    if rules.outcome(state) is not None:
        return
    for reason in PLATFORM_ENDINGS:
        ended = rules.end(state, reason)
        outcome = rules.outcome(ended)
        assert outcome is not None and outcome.reason == reason, f"end({reason}) did not end the game with it"
        assert outcome.ranks == (1,) * seats, f"end({reason}) ranked {outcome.ranks}"
        assert not rules.to_act(ended) and not any(rules.legal_moves(ended, seat) for seat in range(seats))
        assert codec.state_from_bytes(codec.state_to_bytes(ended)) == ended, "an ended state does not round-trip"
        _check_refused_after_end(rules, ended, seats)


def replay(rules: Rules[Any, Any, Any, Any, Any], playout: Playout) -> list[Any]:
    """The states from replaying a playout's seed and moves."""
    state = rules.new_game(playout.options, playout.seats, playout.seed)
    states = [state]
    for seat, move in playout.steps:
        state, _ = rules.apply_move(state, seat, move)
        states.append(state)
    return states


def run_suite(
    rules: Rules[Any, Any, Any, Any, Any],
    codec: GameCodec[Any, Any, Any, Any, Any],
    options: Any,
    seats: int,
    seeds: Sequence[int],
) -> list[Playout]:
    """The whole suite for one configuration; returns the playouts for further game checks."""
    rules.check_options(options, seats)
    playouts = []
    for seed in seeds:
        playout = play_random(rules, options, seats, seed, codec=codec)
        assert replay(rules, playout) == playout.states, f"replay of seed {seed} diverged"
        again = play_random(rules, options, seats, seed)
        assert again.steps == playout.steps, f"seed {seed} is not deterministic"
        _check_platform_endings(rules, codec, playout.states[len(playout.states) // 2], seats)
        playouts.append(playout)
    return playouts
