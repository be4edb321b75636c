"""An ApplyMoveRequest checked and decoded (the move path's first step, services/host/moves.py):
what every try of it shares. Nothing here reads the game: only what the request alone says."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from tafel.rules.v1 import rules_pb2

from kit.errors import invalid
from kit.ids import check_id
from services.host import encoded
from services.host.codec import GameEnvelope
from services.host.store import CommitKeys, commit_keys

MAX_SEAT = 63
# The longest turn: correspondence's 14 days a move (the gateway checks which lengths it offers).
MAX_PER_MOVE_MS = 14 * 86_400_000


def request_digest(request: rules_pb2.ApplyMoveRequest, move: bytes | None = None) -> bytes:
    """What a request asks for: its seat and action. Not its expected version (a retry made after
    learning a newer version is the same request) nor its turn clock (the caller's bookkeeping).
    `move`: the request's move encoded deterministically, when the caller has it already."""
    action = request.WhichOneof("action") or ""
    if action == "move":
        body = move if move is not None else request.move.SerializeToString(deterministic=True)
    elif action == "take_back":
        body = request.take_back.SerializeToString(deterministic=True)
    else:  # resignation, timeout, draw_agreed, abort: empty messages
        body = b""
    return hashlib.blake2b(f"{request.seat}:{action}:".encode() + body, digest_size=12).digest()


@dataclass(slots=True)
class Action:
    """An ApplyMoveRequest checked and decoded: what every try of it shares."""

    request: rules_pb2.ApplyMoveRequest
    game_id: str
    kind: str  # the request's action field: move, resignation, timeout, draw_agreed, abort, take_back
    move: Any  # the game's move (None for the others)
    recorded: bytes  # RecordedAction's action field, encoded
    clock: rules_pb2.TurnClock | None
    keys: CommitKeys
    digest: bytes


def checked(
    request: rules_pb2.ApplyMoveRequest, envelope: GameEnvelope[Any, Any, Any, Any, Any], keys: CommitKeys | None
) -> Action:
    """The request checked and decoded, or Refused (INVALID_ARGUMENT); MalformedMessage for a move
    the game's codec cannot read. `keys`: the game's commit keys when the caller has them."""
    game_id = request.game_id
    check_id("game_id", game_id)
    check_id("request_id", request.request_id)
    kind = request.WhichOneof("action")
    if kind is None:
        raise invalid("ACTION_MISSING", "set one of move, resignation, timeout, draw_agreed, abort, take_back")
    if request.seat > MAX_SEAT:
        raise invalid("BAD_SEAT", f"seat {request.seat} does not exist")
    move, move_bytes = None, b""
    if kind == "move":
        move = envelope.move_from_union(request.move)
        move_bytes = request.move.SerializeToString(deterministic=True)
        recorded = encoded.recorded_move(move_bytes)
    elif kind == "take_back":
        recorded = encoded.recorded_taken_back(request.take_back.to_version)
    else:
        recorded = _RECORDED[kind]
    if keys is None:
        keys = commit_keys(game_id)
    clock = request.turn_clock if request.HasField("turn_clock") else None
    if clock is not None:
        _check_turn_clock(clock, keys.meta)
    return Action(request, game_id, kind, move, recorded, clock, keys, request_digest(request, move_bytes))


# RecordedAction's action for the actions that carry no value (a move and a take-back do).
_RECORDED = {
    "resignation": encoded.RECORDED_RESIGNATION,
    "timeout": encoded.RECORDED_TIMEOUT,
    "draw_agreed": encoded.RECORDED_DRAW_AGREED,
    "abort": encoded.RECORDED_ABORTED,
}


def _check_turn_clock(clock: rules_pb2.TurnClock, meta: str) -> None:
    """`meta`: the game's metadata key (kit/redis/keys.py meta_key)."""
    if not 1 <= clock.per_move_ms <= MAX_PER_MOVE_MS:
        field = "turn_clock.per_move_ms"
        raise invalid("BAD_TURN_CLOCK", f"{field} must be 1 to {MAX_PER_MOVE_MS:,}", field=field)
    if not 60 <= clock.ttl_s <= 31_536_000:
        raise invalid("BAD_TURN_CLOCK", "turn_clock.ttl_s must be 60 to 31,536,000", field="turn_clock.ttl_s")
    # The commit refreshes named keys only (lua/rules/commit.lua): the one key a caller may keep
    # alive with the clock is the game's metadata key, the gateway's (kit/redis/keys.py meta_key).
    for key in clock.keep_alive:
        if key != meta:
            raise invalid(
                "BAD_TURN_CLOCK", f"turn_clock.keep_alive may name only {meta}", field="turn_clock.keep_alive"
            )
