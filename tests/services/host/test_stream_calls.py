"""Game creations and views on the ApplyMoves stream (rules.proto: ApplyMovesRequest.create and
.view): announced in the stream's initial metadata, answered with the same meaning as the unary
CreateGame and GetView, mixed with moves in one batch, each entry answered once under its own
correlation id, each refusal its own."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import grpc
import pytest
from tafel.rules.v1 import rules_pb2
from tafel_rules.connect4 import RULES

from services.connect4.codec import CODEC
from tests.gateway.harness import c4_move
from tests.services.rules_harness import Service, apply_request, new_id, rules_service
from tools.redis_server import start_redis

ABORTED = grpc.StatusCode.ABORTED.value[0]
NOT_FOUND = grpc.StatusCode.NOT_FOUND.value[0]
EXISTS = grpc.StatusCode.ALREADY_EXISTS.value[0]
INVALID = grpc.StatusCode.INVALID_ARGUMENT.value[0]
UNAVAILABLE = grpc.StatusCode.UNAVAILABLE.value[0]


@pytest.fixture
async def service(redis_url: str) -> AsyncIterator[Service]:
    async with rules_service(RULES, CODEC, redis_url) as svc:
        yield svc


def create_request(game_id: str, request_id: str | None = None) -> rules_pb2.CreateGameRequest:
    return rules_pb2.CreateGameRequest(game_id=game_id, seats=2, request_id=request_id or new_id("c"))


async def exchange(
    service: Service, entries: list[rules_pb2.ApplyMovesRequest]
) -> tuple[dict[int, rules_pb2.ApplyMovesResponse], tuple[tuple[str, str], ...]]:
    """Send `entries` as one batched message; every answer by correlation id (each exactly once)
    and the stream's initial metadata."""

    async def requests() -> AsyncIterator[rules_pb2.ApplyMovesRequest]:
        yield rules_pb2.ApplyMovesRequest(batch=entries)
        await asyncio.Event().wait()  # the stream stays open while the answers arrive

    call = service.stub.ApplyMoves(requests())
    answers: dict[int, rules_pb2.ApplyMovesResponse] = {}
    async with asyncio.timeout(10):
        async for message in call:
            for answer in message.batch or (message,):
                assert answer.correlation_id not in answers, "an entry was answered twice"
                answers[answer.correlation_id] = answer
            if len(answers) == len(entries):
                break
        metadata = tuple((key, str(value)) for key, value in await call.initial_metadata())
    call.cancel()
    return answers, metadata


async def test_creations_views_and_moves_in_one_batch_each_get_their_own_answer(service: Service) -> None:
    # Two games made the unary way (to view and move in them), then one batch of everything.
    played, seen = new_id("g"), new_id("g")
    for game_id in (played, seen):
        await service.stub.CreateGame(create_request(game_id))
    fresh, retried_id = new_id("g"), new_id("c")
    first = await service.stub.CreateGame(create_request(retried := new_id("g"), retried_id))
    entries = [
        rules_pb2.ApplyMovesRequest(correlation_id=1, create=create_request(fresh)),
        rules_pb2.ApplyMovesRequest(correlation_id=2, create=create_request(played)),  # exists already
        rules_pb2.ApplyMovesRequest(correlation_id=3, create=create_request(retried, retried_id)),  # a retry
        rules_pb2.ApplyMovesRequest(correlation_id=4, view=rules_pb2.GetViewRequest(game_id=seen, seat=1)),
        rules_pb2.ApplyMovesRequest(correlation_id=5, view=rules_pb2.GetViewRequest(game_id=new_id("missing"))),
        rules_pb2.ApplyMovesRequest(correlation_id=6, view=rules_pb2.GetViewRequest(game_id=seen, seat=5)),
        rules_pb2.ApplyMovesRequest(correlation_id=7, request=apply_request(played, 0, 0, move=c4_move(3))),
        rules_pb2.ApplyMovesRequest(correlation_id=8, request=apply_request(seen, 0, 4, move=c4_move(3))),
        rules_pb2.ApplyMovesRequest(correlation_id=9, view=rules_pb2.GetViewRequest(game_id="bad id!")),
    ]
    answers, _ = await exchange(service, entries)
    assert sorted(answers) == list(range(1, 10))
    kinds = {correlation: answer.WhichOneof("result") for correlation, answer in answers.items()}
    assert kinds == {
        1: "created",
        2: "refusal",
        3: "created",
        4: "viewed",
        5: "refusal",
        6: "refusal",
        7: "applied",
        8: "refusal",
        9: "refusal",
    }
    assert answers[1].created.game_id == fresh and answers[1].created.status.to_act == [0]
    assert answers[1].created.events[0].created.game == "connect4"
    assert (answers[2].refusal.code, answers[2].refusal.reason) == (EXISTS, "GAME_EXISTS")
    assert answers[3].created == first  # the first answer again, nothing created twice
    view = answers[4].viewed
    assert (view.game, view.seats, view.last_event_id, view.status.version) == ("connect4", 2, "0-1", 0)
    assert view == await service.stub.GetView(rules_pb2.GetViewRequest(game_id=seen, seat=1))
    assert (answers[5].refusal.code, answers[5].refusal.reason) == (NOT_FOUND, "GAME_NOT_FOUND")
    assert (answers[6].refusal.code, answers[6].refusal.reason) == (INVALID, "BAD_SEAT")
    assert answers[7].applied.version == 1
    assert (answers[8].refusal.code, answers[8].refusal.reason) == (ABORTED, "VERSION_MISMATCH")
    assert answers[9].refusal.code == INVALID and answers[9].refusal.message
    # The game created on the stream is a game like any other: it takes its first move.
    moved = await service.stub.ApplyMove(apply_request(fresh, 0, 0, move=c4_move(0)))
    assert moved.version == 1


async def test_storage_down_refuses_creations_and_views_as_retryable() -> None:
    redis_process = start_redis()
    try:
        async with rules_service(RULES, CODEC, redis_process.url) as service:
            game_id = new_id("g")
            await service.stub.CreateGame(create_request(game_id))
            redis_process.stop()
            entries = [
                rules_pb2.ApplyMovesRequest(correlation_id=1, create=create_request(new_id("g"))),
                rules_pb2.ApplyMovesRequest(correlation_id=2, view=rules_pb2.GetViewRequest(game_id=game_id)),
            ]
            answers, _ = await exchange(service, entries)
            for answer in answers.values():
                assert (answer.refusal.code, answer.refusal.reason) == (UNAVAILABLE, "STORE_UNAVAILABLE")
    finally:
        redis_process.stop()
