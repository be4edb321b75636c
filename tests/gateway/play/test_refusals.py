"""What a Play stream's action answers when it fails (gateway/play/session.py PlaySession._act):
a refusal the client can act on, never an exception's text. A Refused keeps its code and reason;
a Redis failure is UNAVAILABLE STORE_UNAVAILABLE (retryable); anything unexpected is INTERNAL,
logged with its traceback on the gateway and answered with a fixed message."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import grpc
import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from tafel.play.v1 import play_pb2

from gateway.auth import Identity
from gateway.play.session import PlaySession
from kit.errors import Refused

SECRET = "password=hunter2 at /srv/gateway/internal.py:42"


class Counter:
    def __init__(self) -> None:
        self.count = 0

    def inc(self) -> None:
        self.count += 1

    def observe(self, _seconds: float) -> None:
        self.count += 1


class Counters:
    def __init__(self) -> None:
        self.applied, self.refused, self.latency = Counter(), Counter(), Counter()


class FailingSteps:
    """GameSteps whose move raises `error` (the session is all that is under test)."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    async def submit(self, *_: Any, **__: Any) -> play_pb2.SubmitMoveResponse:
        raise self.error


async def answer_to(error: Exception) -> tuple[play_pb2.PlayResponse, Counters]:
    counters = Counters()
    identity = Identity(player_id="p1", username="ann", guest=True, expires_at=time.time() + 60)
    session = PlaySession(
        FailingSteps(error),  # type: ignore[arg-type]
        identity,
        counters=counters,  # type: ignore[arg-type]
        stopping=asyncio.Event(),
        drain_s=1.0,
        lobby=None,
    )
    request = play_pb2.PlayRequest(
        correlation_id=7, submit_move=play_pb2.SubmitMoveRequest(game_id="g1", request_id="r1")
    )
    await session._act(request)
    response = session.out.get_nowait()
    assert isinstance(response, play_pb2.PlayResponse)
    return response, counters


async def test_an_unexpected_failure_is_internal_and_never_shows_its_text(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="tafel.gateway.play"):
        response, counters = await answer_to(RuntimeError(SECRET))
    assert response.correlation_id == 7 and response.WhichOneof("kind") == "refusal"
    refusal = response.refusal
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.INTERNAL.value[0], "INTERNAL")
    assert refusal.message == "the action failed; retry"
    assert SECRET not in str(response)
    # The gateway's log has it, with the traceback; it is not counted as a client's refusal.
    assert any(record.exc_info and SECRET in str(record.exc_info[1]) for record in caplog.records)
    assert (counters.applied.count, counters.refused.count) == (0, 0)


async def test_a_redis_failure_is_retryable_and_a_refusal_keeps_its_reason() -> None:
    response, counters = await answer_to(RedisConnectionError(SECRET))
    refusal = response.refusal
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.UNAVAILABLE.value[0], "STORE_UNAVAILABLE")
    assert SECRET not in str(response) and counters.refused.count == 0

    refused = Refused(grpc.StatusCode.ABORTED, "VERSION_MISMATCH", "the game kept moving", current_version=5)
    response, counters = await answer_to(refused)
    refusal = response.refusal
    assert (refusal.code, refusal.reason, refusal.current_version) == (
        grpc.StatusCode.ABORTED.value[0],
        "VERSION_MISMATCH",
        5,
    )
    assert counters.refused.count == 1
