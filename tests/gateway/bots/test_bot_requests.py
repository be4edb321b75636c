"""BotService in-process over a real grpc.aio server and a real Redis: a request goes on its game's
queue with an expiry (lua/bots/request.lua) and reaches exactly one serving bot pool; bad input
and a Redis outage get their statuses with readable reasons."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from redis.asyncio import Redis
from tafel.play.v1 import bots_pb2, bots_pb2_grpc, play_pb2

from gateway.bot_requests import REQUEST_TTL_S, BotServicer, public_id
from kit.errors import Refused, reason_of
from kit.redis.keys import bot_pending_key, bot_queue_key, bot_signal_key
from kit.redis.layer import RedisLayer

HOST = play_pb2.Player(player_id="p-host", username="host")


class Caller:
    async def player(self, context: grpc.aio.ServicerContext[Any, Any]) -> play_pb2.Player:
        return HOST


@dataclass
class Rooms:
    game: str
    state: play_pb2.RoomState.ValueType = play_pb2.ROOM_STATE_OPEN
    seats: int = 2

    async def room(self, code: str) -> play_pb2.Room:
        if code != "ROOM1":
            raise Refused(grpc.StatusCode.NOT_FOUND, "ROOM_NOT_FOUND", "no such room")
        return play_pb2.Room(code=code, game=self.game, state=self.state, players=[HOST], seats=self.seats)


@dataclass
class Bots:
    stub: bots_pb2_grpc.BotServiceStub
    rooms: Rooms
    game: str


async def serve(layer: RedisLayer, rooms: Rooms, game: str) -> tuple[grpc.aio.Server, grpc.aio.Channel]:
    server = grpc.aio.server()
    bots_pb2_grpc.add_BotServiceServicer_to_server(BotServicer(layer, Caller(), rooms, [game]), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    return server, grpc.aio.insecure_channel(f"127.0.0.1:{port}")


@pytest.fixture
async def bots(redis: Redis) -> AsyncIterator[Bots]:
    game = f"botgame{uuid.uuid4().hex[:8]}"  # a queue of its own
    layer = RedisLayer.around(redis)
    rooms = Rooms(game)
    server, channel = await serve(layer, rooms, game)
    try:
        yield Bots(bots_pb2_grpc.BotServiceStub(channel), rooms, game)
    finally:
        await channel.close()
        await server.stop(0)
        await layer.close()
        await redis.delete(bot_queue_key(game), bot_pending_key("ROOM1"), bot_signal_key(game))


async def refusal(call: Any) -> tuple[grpc.StatusCode, str | None, str]:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    return caught.value.code(), reason_of(caught.value), caught.value.details() or ""


async def test_a_request_is_queued_with_an_expiry_and_served_once(bots: Bots, redis: Redis) -> None:
    answer = await bots.stub.RequestBot(bots_pb2.RequestBotRequest(room_code="ROOM1", level=2))
    key = bot_queue_key(bots.game)
    assert await redis.llen(key) == 1 and 0 < await redis.ttl(key) <= REQUEST_TTL_S
    pools = [bots.stub.ServeBotRequests(bots_pb2.ServeBotRequestsRequest(games=[bots.game])) for _ in range(2)]
    first = await asyncio.wait_for(_first_of(pools), 10)
    assert first.request == bots_pb2.BotRequest(
        request_id=first.request.request_id, game=bots.game, room_code="ROOM1", level=2
    )
    # Only the pool learns the request's id; the asker holds a digest of it (no self-made bots).
    assert public_id(first.request.request_id) == answer.request_id != first.request.request_id
    assert await redis.llen(key) == 0  # popped by one pool: the other has nothing to take
    for pool in pools:
        pool.cancel()


async def _first_of(calls: list[Any]) -> bots_pb2.ServeBotRequestsResponse:
    reads = [asyncio.ensure_future(call.read()) for call in calls]
    done, pending = await asyncio.wait(reads, return_when=asyncio.FIRST_COMPLETED)
    for read in pending:
        read.cancel()
    assert len(done) == 1
    response: bots_pb2.ServeBotRequestsResponse = done.pop().result()
    return response


@pytest.mark.parametrize(
    ("request_", "code", "reason"),
    [
        (bots_pb2.RequestBotRequest(room_code="ROOM1", level=7), grpc.StatusCode.INVALID_ARGUMENT, "BAD_LEVEL"),
        (bots_pb2.RequestBotRequest(level=1), grpc.StatusCode.INVALID_ARGUMENT, "BAD_ROOM_CODE"),
        (bots_pb2.RequestBotRequest(room_code="NOPE", level=1), grpc.StatusCode.NOT_FOUND, "ROOM_NOT_FOUND"),
    ],
)
async def test_bad_requests_are_refused_and_queue_nothing(
    bots: Bots, redis: Redis, request_: bots_pb2.RequestBotRequest, code: grpc.StatusCode, reason: str
) -> None:
    assert (await refusal(bots.stub.RequestBot(request_)))[:2] == (code, reason)
    assert await redis.llen(bot_queue_key(bots.game)) == 0


async def test_a_started_room_gets_no_bot(bots: Bots, redis: Redis) -> None:
    bots.rooms.state = play_pb2.ROOM_STATE_STARTED
    got = await refusal(bots.stub.RequestBot(bots_pb2.RequestBotRequest(room_code="ROOM1", level=1)))
    assert got[:2] == (grpc.StatusCode.FAILED_PRECONDITION, "ROOM_NOT_OPEN")
    assert await redis.llen(bot_queue_key(bots.game)) == 0


async def test_serving_an_unknown_game_is_refused(bots: Bots) -> None:
    call = bots.stub.ServeBotRequests(bots_pb2.ServeBotRequestsRequest(games=["chess"]))
    code, reason, message = await refusal(call.read())
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "UNKNOWN_GAME") and "chess" in message


async def test_redis_away_is_unavailable_with_a_readable_reason(redis: Redis) -> None:
    # The layer's pipelined connection points at a port nothing listens on.
    layer = RedisLayer(redis, url="redis://127.0.0.1:1/0", timeout_s=1.0, owns_client=False)
    server, channel = await serve(layer, Rooms("g"), "g")
    try:
        stub = bots_pb2_grpc.BotServiceStub(channel)
        code, reason, message = await refusal(stub.RequestBot(bots_pb2.RequestBotRequest(room_code="ROOM1", level=1)))
        assert (code, reason, message) == (grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE", "retry later")
    finally:
        await channel.close()
        await server.stop(0)
        await layer.close()


async def test_asking_again_answers_the_pending_request_until_the_empty_seats_are_covered(
    bots: Bots, redis: Redis
) -> None:
    ask = bots_pb2.RequestBotRequest(room_code="ROOM1", level=1)
    first = await bots.stub.RequestBot(ask)
    assert (await bots.stub.RequestBot(ask)).request_id == first.request_id  # one empty seat: one bot
    assert await redis.llen(bot_queue_key(bots.game)) == 1
    # Colour Square with three empty seats: three bots, then the pending ones answer.
    await redis.delete(bot_queue_key(bots.game), bot_pending_key("ROOM1"))
    bots.rooms.seats = 4
    ids = [(await bots.stub.RequestBot(ask)).request_id for _ in range(4)]
    assert len(set(ids[:3])) == 3 and ids[3] in ids[:3]
    assert await redis.llen(bot_queue_key(bots.game)) == 3
