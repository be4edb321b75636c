"""An action's answer, wake-up, record and stream answers are joined from encoded parts
(services/host/encoded.py, kit/wire.py): they must be the bytes protobuf's own encoder makes for the
messages the service built before (so they parse to the same messages), for every game's events
(moves, resignations, timeouts, ends) at every seat count, and for any number in any field."""

from __future__ import annotations

import random
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tafel.games.v1 import games_pb2
from tafel.rules.v1 import rules_pb2
from tafel_rules.game import Outcome

from kit import wire
from kit.catalogue import GAMES
from services.host import encoded
from services.host.codec import GameEnvelope, outcome_to_proto
from services.host.describe import load_game
from services.host.metrics import RulesMetrics
from services.host.service import RulesServicer
from services.host.store import GameStore

CATALOGUE = sorted(GAMES.items())
UINT64 = st.integers(0, 2**64 - 1)


def built_status(version: int, to_act: list[int], outcome: Outcome | None) -> games_pb2.GameStatus:
    """How the service built a GameStatus before (RulesServicer._status)."""
    status = games_pb2.GameStatus(version=version, to_act=to_act, over=outcome is not None)
    if outcome is not None:
        status.outcome.CopyFrom(outcome_to_proto(outcome))
    return status


def check_action(game_id: str, version: int, events: list[games_pb2.GameEvent], status: games_pb2.GameStatus) -> None:
    response, wake_up = encoded.response_and_wake_up(
        game_id, version, [event.SerializeToString() for event in events], status.SerializeToString()
    )
    built = rules_pb2.ApplyMoveResponse(version=version, events=events, status=status)
    assert response == built.SerializeToString()
    batch = games_pb2.GameEventBatch(game_id=game_id, events=events, status=status)
    assert wake_up == batch.SerializeToString()
    assert games_pb2.GameEventBatch.FromString(wake_up) == batch


def actions_of(rules: Any, seats: int, seed: int) -> list[tuple[Any, int, list[Any]]]:
    """A seeded random game: (state after, version, events) per action, ending in a move, a
    resignation or a timeout."""
    rng = random.Random(seed)
    state = rules.new_game(rules.default_options(), seats, seed)
    out = []
    version = 0
    ending = rng.choice(("move", "resign", "timeout"))
    while rules.outcome(state) is None and version < 2_000:
        seat = rng.choice(sorted(rules.to_act(state)))
        version += 1
        if ending != "move" and rng.random() < 0.05:
            state, events = (rules.resign if ending == "resign" else rules.timeout)(state, seat)
        else:
            state, events = rules.apply_move(state, seat, rng.choice(list(rules.legal_moves(state, seat))))
        out.append((state, version, list(events)))
    return out


@pytest.mark.parametrize(("game", "package"), CATALOGUE)
def test_every_games_actions_encode_as_the_built_messages(game: str, package: str) -> None:
    rules, codec = load_game(package)
    envelope = GameEnvelope(codec)
    servicer = RulesServicer(rules, codec, cast(GameStore, None), RulesMetrics(game))
    kinds: set[str] = set()
    for seats in range(rules.min_seats, rules.max_seats + 1):
        for seed in range(6):
            for state, version, events in actions_of(rules, seats, seed):
                messages = envelope.events_to_union(events, version)
                joined = envelope.events_to_bytes(events, version)
                assert [event_id for event_id, _ in joined] == [message.event_id for message in messages]
                assert [data for _, data in joined] == [message.SerializeToString() for message in messages]
                kinds.update(message.WhichOneof("kind") or "" for message in messages)
                outcome = rules.outcome(state)
                status = encoded.status(version, sorted(rules.to_act(state)), outcome)
                assert status == servicer._status(state, version).SerializeToString()
                check_action(f"{game}-{seed}", version, messages, servicer._status(state, version))
    assert {"ended", "resigned", "timed_out", codec.field} <= kinds, kinds


@given(
    version=UINT64,
    to_act=st.lists(st.integers(0, 63), unique=True).map(sorted),
    outcome=st.none()
    | st.builds(
        Outcome,
        ranks=st.lists(st.integers(1, 6), min_size=1, max_size=6).map(tuple),
        reason=st.text(max_size=20),
        scores=st.lists(st.integers(-(2**31), 2**31 - 1), max_size=6).map(tuple),
    ),
    game_id=st.text(max_size=70),
    event_ids=st.lists(st.text(max_size=12), max_size=4),
)
@settings(max_examples=300, deadline=None)
def test_any_numbers_encode_as_the_built_messages(
    version: int, to_act: list[int], outcome: Outcome | None, game_id: str, event_ids: list[str]
) -> None:
    status = built_status(version, to_act, outcome)
    assert encoded.status(version, to_act, outcome) == status.SerializeToString()
    events = [games_pb2.GameEvent(event_id=event_id, version=version) for event_id in event_ids]
    for event in events[:1]:
        event.resigned.seat = 0  # an empty message set in the oneof is still sent
    check_action(game_id, version, events, status)


@given(response_version=UINT64, deadline_ms=st.none() | st.integers(0, 253_402_300_799_999))  # to 9999-12-31
@settings(max_examples=200, deadline=None)
def test_the_clock_fields_are_those_the_service_set(response_version: int, deadline_ms: int | None) -> None:
    response = rules_pb2.ApplyMoveResponse(version=response_version)
    joined = encoded.with_clock(response.SerializeToString(), deadline_ms)
    response.clock_armed = True
    if deadline_ms:
        response.turn_deadline.FromMilliseconds(deadline_ms)
    assert joined == response.SerializeToString()


@given(
    seat=st.integers(0, 63),
    version=UINT64,
    at_ns=st.integers(0, 2**62),
    action=st.sampled_from(("move", "resigned", "timed_out")),
    column=st.integers(0, 2**32 - 1),
)
@settings(max_examples=200, deadline=None)
def test_the_record_is_the_built_recorded_action(seat: int, version: int, at_ns: int, action: str, column: int) -> None:
    move = games_pb2.GameMove()
    move.connect4.column = column
    record = games_pb2.RecordedAction(seat=seat, version=version)
    record.at.FromNanoseconds(at_ns)
    if action == "move":
        record.move.CopyFrom(move)
        part = encoded.recorded_move(move.SerializeToString(deterministic=True))
    elif action == "resigned":
        record.resigned = True
        part = encoded.RECORDED_RESIGNATION
    else:
        record.timed_out = True
        part = encoded.RECORDED_TIMEOUT
    assert encoded.recorded_action(seat, version, at_ns, part) == record.SerializeToString()


@given(correlations=st.lists(UINT64, min_size=1, max_size=12), version=UINT64)
@settings(max_examples=200, deadline=None)
def test_stream_answers_and_batches_are_the_built_messages(correlations: list[int], version: int) -> None:
    applied = rules_pb2.ApplyMoveResponse(version=version, clock_armed=True)
    answers = [encoded.applied_answer(correlation, applied.SerializeToString()) for correlation in correlations]
    built = [rules_pb2.ApplyMovesResponse(correlation_id=correlation, applied=applied) for correlation in correlations]
    assert answers == [answer.SerializeToString() for answer in built]
    assert encoded.answer_batch(answers) == rules_pb2.ApplyMovesResponse(batch=built).SerializeToString()


@given(st.integers(0, 2**64 - 1))
def test_varints_are_protobufs(value: int) -> None:
    key = wire.key_of(games_pb2.GameStatus, "version")
    assert wire.uint_field(key, value) == games_pb2.GameStatus(version=value).SerializeToString()


def test_varints_at_every_length_boundary_are_protobufs() -> None:
    # The encoder is unrolled up to five bytes: each byte length's first and last value, both sides.
    key = wire.key_of(games_pb2.GameStatus, "version")
    for bits in range(1, 65):
        for value in (2 ** (bits - 1) - 1, 2 ** (bits - 1), 2**bits - 1):
            assert wire.uint_field(key, value) == games_pb2.GameStatus(version=value).SerializeToString()
