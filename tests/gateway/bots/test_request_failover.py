"""A bot request is not lost until its bot has taken the seat: the gateway that handed
it to a bot pool is SIGKILLed right after, the pool's bot never comes, and the request goes back on
its queue when its lease runs out (a sweeper on the surviving gateway), so another pool's bot
joins and the game starts. Real gateway processes, a real pool (tafel/botplay.py run_pool)."""

from __future__ import annotations

import asyncio
import contextlib

import grpc
from redis.asyncio import Redis
from tafel.botplay import run_pool
from tafel.client import TafelClient
from tafel.play.v1 import bots_pb2, bots_pb2_grpc, play_pb2, play_pb2_grpc

from gateway.bot_requests import public_id
from kit.redis.keys import bot_queue_key
from tests.gateway.conftest import GatewaySystem
from tests.gateway.harness import spawn_gateway
from tests.gateway.lobby_e2e import guest_on

BOUND_S = 30.0  # lease (3 s) + a sweep of the survivor (15 s / 4) + a bot's join, with room to spare


async def test_a_request_handed_out_by_a_killed_gateway_still_gets_its_bot(
    gw_system: GatewaySystem, redis: Redis
) -> None:
    doomed = spawn_gateway(gw_system.redis_url, gw_system.routes, name="gateway-doomed", TAFEL_BOT_LEASE_S="3")
    survivor = gw_system.gateways[1].address
    channels = [grpc.aio.insecure_channel(address) for address in (doomed.address, survivor)]
    pool_task: asyncio.Task[int] | None = None
    try:
        # A pool on the doomed gateway: it is handed the request and never serves it.
        lost_pool = await guest_on(channels[0])
        lost = bots_pb2_grpc.BotServiceStub(channels[0]).ServeBotRequests(
            bots_pb2.ServeBotRequestsRequest(games=["connect4"]), metadata=lost_pool.md, timeout=60
        )
        await asyncio.sleep(0.5)  # its stream is waiting
        host = await guest_on(channels[1])
        lobby = play_pb2_grpc.LobbyServiceStub(channels[1])
        room = (await lobby.CreateRoom(play_pb2.CreateRoomRequest(game="connect4"), metadata=host.md, timeout=10)).room
        bots = bots_pb2_grpc.BotServiceStub(channels[1])
        asked = await bots.RequestBot(bots_pb2.RequestBotRequest(room_code=room.code, level=1), metadata=host.md)
        handed = await asyncio.wait_for(lost.read(), 10)
        assert public_id(handed.request.request_id) == asked.request_id  # the asker sees a digest
        doomed.kill()  # kill -9 right after the hand-out: no bot will come from that pool
        assert await redis.llen(bot_queue_key("connect4")) == 0
        # Asking again is safe: the pending request is the answer, no second bot is queued.
        again = await bots.RequestBot(bots_pb2.RequestBotRequest(room_code=room.code, level=1), metadata=host.md)
        assert again.request_id == asked.request_id
        # A healthy pool on the surviving gateway gets the re-queued request; its bot joins.
        pool = TafelClient(channels[1])
        await pool.sign_in_as_guest()
        pool_task = asyncio.ensure_future(run_pool(pool, ["connect4"]))
        started = await asyncio.wait_for(_started(lobby, host.md, room.code), BOUND_S)
        assert started.game_id and len(started.players) == 2
    finally:
        if pool_task is not None:
            pool_task.cancel()
            with contextlib.suppress(BaseException):
                await pool_task
        for channel in channels:
            await channel.close()
        doomed.stop()


async def _started(lobby: play_pb2_grpc.LobbyServiceStub, md: tuple[tuple[str, str], ...], code: str) -> play_pb2.Room:
    while True:
        room: play_pb2.Room = (await lobby.GetRoom(play_pb2.GetRoomRequest(code=code), metadata=md, timeout=5)).room
        if room.state == play_pb2.ROOM_STATE_STARTED:
            return room
        await asyncio.sleep(0.3)
