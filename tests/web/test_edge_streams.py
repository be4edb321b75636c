"""Browsers come and go: a watch stream whose client went away ends on the server too (the
gateway's watcher gauge, from its metrics endpoint, goes back to zero), and one process holds
many streams at once."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest
from tafel.play.v1 import play_pb2, play_pb2_grpc

from tests.gateway.harness import Proc, other_db, spawn_gateway, spawn_rules
from tools.connect_channel import ConnectChannel
from tools.redis_server import free_port

STREAMS = 200


@pytest.fixture(scope="module")
def gateway(redis_url: str) -> Iterator[tuple[Proc, str, int]]:
    url = other_db(redis_url, "edge streams")
    rules = spawn_rules(url)
    metrics = free_port()
    # One session opens every stream here: raise the per-session stream cap (the edge enforces it too).
    proc = spawn_gateway(
        url,
        {"connect4": rules.address},
        TAFEL_WEB_PORT="0",
        TAFEL_METRICS_PORT=str(metrics),
        TAFEL_MAX_STREAMS_PER_PLAYER=str(STREAMS + 10),
    )
    try:
        yield proc, next(line.split()[-1] for line in proc.output if line.startswith("WEB ")), metrics
    finally:
        proc.stop()
        rules.stop()


async def watchers(metrics: int) -> float:
    async with httpx.AsyncClient() as client:
        text = (await client.get(f"http://127.0.0.1:{metrics}/metrics")).text
    return next(float(line.split()[-1]) for line in text.splitlines() if line.startswith("tafel_gateway_watchers "))


async def test_streams_of_clients_that_went_away_end_on_the_server(gateway: tuple[Proc, str, int]) -> None:
    proc, url, metrics = gateway
    async with ConnectChannel(url, max_connections=STREAMS + 10) as channel:
        accounts = play_pb2_grpc.AccountServiceStub(channel)
        lobby, games = play_pb2_grpc.LobbyServiceStub(channel), play_pb2_grpc.GameServiceStub(channel)
        tokens = [(await accounts.SignInAsGuest(play_pb2.SignInAsGuestRequest())).session.token for _ in range(2)]
        host, guest = ((("authorization", f"Bearer {t}"),) for t in tokens)
        code = (await lobby.CreateRoom(play_pb2.CreateRoomRequest(game="connect4", watchable=True), metadata=host)).room.code
        await lobby.JoinRoom(play_pb2.JoinRoomRequest(code=code), metadata=guest)
        started = lobby.WatchRoom(play_pb2.WatchRoomRequest(code=code), metadata=host)
        async for update in started:
            if update.room.game_id:
                game_id = update.room.game_id
                break
        started.cancel()
        seat = (await games.GetGame(play_pb2.GetGameRequest(game_id=game_id), metadata=host)).seat
        move = play_pb2.SubmitMoveRequest(game_id=game_id, expected_version=0, request_id="web-stream-1")
        move.move.connect4.column = 3
        await games.SubmitMove(move, metadata=host if seat == 0 else guest)

        calls = [games.WatchGame(play_pb2.WatchGameRequest(game_id=game_id), metadata=host) for _ in range(STREAMS)]
        firsts = await asyncio.wait_for(asyncio.gather(*(call.read() for call in calls)), 60)
        assert len({f.event.event_id for f in firsts}) == 1  # every stream replayed the same first event
        assert await watchers(metrics) == STREAMS
        for call in calls:
            call.cancel()
        deadline = asyncio.get_running_loop().time() + 20
        while await watchers(metrics) > 0:
            assert asyncio.get_running_loop().time() < deadline, "streams of closed connections stayed open"
            await asyncio.sleep(0.1)  # the gauge has no change notification
    assert proc.process.poll() is None
