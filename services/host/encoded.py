"""What one committed action writes and answers, joined from its encoded events and status.

An action's events and status go to Redis (each event with the status), into the answer
(ApplyMoveResponse), into the wake-up (GameEventBatch) and into the stream's answer
(ApplyMovesResponse): each is encoded once and the messages around them are joined from the
bytes (kit/wire.py), instead of building every message around copies and encoding it all again.
The bytes parse to the same messages as building them would (tests/services/host/test_encoded.py).

Why not the generated classes: a Connect Four move's messages cost 1.34-2.14x as much built and
encoded by protobuf as joined here (median 1.38x; 8-23 µs a move joined, 15-31 µs built, on this
shared 2-core machine, `.venv/bin/python -m tools.bench_encoded --moves 100000 --rounds 5`),
against ~65 µs of server CPU (rules service + Redis) a batched action in tools/bench_rules_service.py:
5-15% of the rules tier's CPU a move. The price is the servicer's ApplyMove and ApplyMoves
answering bytes (`# type: ignore[override]` there; registered by kit/handlers.add_pre_encoded).
"""

from __future__ import annotations

from collections.abc import Sequence

from tafel.games.v1 import games_pb2
from tafel.rules.v1 import rules_pb2
from tafel_rules.game import Outcome

from kit.wire import embedded, key_of, string_field, timestamp, timestamp_ns, uint_field, varint
from services.host.codec import outcome_to_proto

_RESPONSE_VERSION = key_of(rules_pb2.ApplyMoveResponse, "version")
_RESPONSE_EVENTS = key_of(rules_pb2.ApplyMoveResponse, "events")
_RESPONSE_STATUS = key_of(rules_pb2.ApplyMoveResponse, "status")
_CLOCK_ARMED = key_of(rules_pb2.ApplyMoveResponse, "clock_armed") + varint(1)
_DEADLINE = key_of(rules_pb2.ApplyMoveResponse, "turn_deadline")
_BATCH_GAME_ID = key_of(games_pb2.GameEventBatch, "game_id")
_BATCH_EVENTS = key_of(games_pb2.GameEventBatch, "events")
_BATCH_STATUS = key_of(games_pb2.GameEventBatch, "status")
_STATUS_VERSION = key_of(games_pb2.GameStatus, "version")
_STATUS_TO_ACT = key_of(games_pb2.GameStatus, "to_act")  # packed
_STATUS_OVER = key_of(games_pb2.GameStatus, "over") + varint(1)
_STATUS_OUTCOME = key_of(games_pb2.GameStatus, "outcome")
_RECORD_SEAT = key_of(games_pb2.RecordedAction, "seat")
_RECORD_VERSION = key_of(games_pb2.RecordedAction, "version")
_RECORD_AT = key_of(games_pb2.RecordedAction, "at")
_RECORD_MOVE = key_of(games_pb2.RecordedAction, "move")
RECORDED_RESIGNATION = key_of(games_pb2.RecordedAction, "resigned") + varint(1)
RECORDED_TIMEOUT = key_of(games_pb2.RecordedAction, "timed_out") + varint(1)
RECORDED_DRAW_AGREED = key_of(games_pb2.RecordedAction, "draw_agreed") + varint(1)
RECORDED_ABORTED = key_of(games_pb2.RecordedAction, "aborted") + varint(1)
_RECORD_TAKEN_BACK_TO = key_of(games_pb2.RecordedAction, "taken_back_to")
_ANSWER_CORRELATION = key_of(rules_pb2.ApplyMovesResponse, "correlation_id")
_ANSWER_APPLIED = key_of(rules_pb2.ApplyMovesResponse, "applied")
_ANSWER_BATCH = key_of(rules_pb2.ApplyMovesResponse, "batch")
# ApplyMoveResponse and GameEventBatch number their events and status alike, so the two messages
# end with the same bytes, joined once (a proto's numbers never change: contracts are forever).
_SHARED_TAIL = (_RESPONSE_EVENTS, _RESPONSE_STATUS) == (_BATCH_EVENTS, _BATCH_STATUS)


def status(version: int, to_act: Sequence[int], outcome: Outcome | None) -> bytes:
    """A GameStatus: `to_act` sorted, over when there is an outcome."""
    data = uint_field(_STATUS_VERSION, version)
    if to_act:
        data += embedded(_STATUS_TO_ACT, b"".join([varint(seat) for seat in to_act]))
    if outcome is not None:
        data += _STATUS_OVER + embedded(_STATUS_OUTCOME, outcome_to_proto(outcome).SerializeToString())
    return data


def response_and_wake_up(game_id: str, version: int, events: Sequence[bytes], status: bytes) -> tuple[bytes, bytes]:
    """The action's ApplyMoveResponse (before its clock fields) and GameEventBatch, from its
    encoded GameEvents and GameStatus."""
    tail = b"".join([embedded(_RESPONSE_EVENTS, event) for event in events]) + embedded(_RESPONSE_STATUS, status)
    if _SHARED_TAIL:
        batch_tail = tail
    else:
        batch_tail = b"".join([embedded(_BATCH_EVENTS, event) for event in events]) + embedded(_BATCH_STATUS, status)
    return uint_field(_RESPONSE_VERSION, version) + tail, string_field(_BATCH_GAME_ID, game_id) + batch_tail


def deadline_field(deadline_ms: int) -> bytes:
    """ApplyMoveResponse.turn_deadline, encoded (deadline_ms > 0)."""
    return embedded(_DEADLINE, timestamp(deadline_ms))


def with_clock(response: bytes, deadline_ms: int | None, stamp: tuple[int, bytes] | None = None) -> bytes:
    """The response with clock_armed set and the turn deadline armed with it (none: 0 or None);
    `stamp`: a deadline and its deadline_field the caller made already, used when it is this one."""
    response += _CLOCK_ARMED
    if deadline_ms:
        response += stamp[1] if stamp is not None and stamp[0] == deadline_ms else deadline_field(deadline_ms)
    return response


def recorded_move(move: bytes) -> bytes:
    """RecordedAction's action for a move (`move`: the encoded GameMove)."""
    return embedded(_RECORD_MOVE, move)


def recorded_taken_back(to_version: int) -> bytes:
    """RecordedAction's action for a take-back (written for version 0 too: a oneof member is there
    when its field is, whatever its value)."""
    return _RECORD_TAKEN_BACK_TO + varint(to_version)


def recorded_action(seat: int, version: int, at_ns: int, action: bytes) -> bytes:
    """A RecordedAction; `action` is recorded_move(...), recorded_taken_back(...) or one of the
    RECORDED_ constants."""
    return (
        uint_field(_RECORD_SEAT, seat)
        + uint_field(_RECORD_VERSION, version)
        + embedded(_RECORD_AT, timestamp_ns(at_ns))
        + action
    )


def applied_answer(correlation_id: int, response: bytes) -> bytes:
    """The ApplyMovesResponse answering an action with its encoded ApplyMoveResponse."""
    return uint_field(_ANSWER_CORRELATION, correlation_id) + embedded(_ANSWER_APPLIED, response)


def answer_batch(answers: Sequence[bytes]) -> bytes:
    """An ApplyMovesResponse carrying encoded answers in its batch."""
    return b"".join([embedded(_ANSWER_BATCH, answer) for answer in answers])
