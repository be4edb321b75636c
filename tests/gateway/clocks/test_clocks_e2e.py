"""Turn clocks through real processes: a player who stops moving loses on time, also when the
gateway that watched the game was killed and no gateway was running when the deadline passed."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from tafel.play.v1 import play_pb2

from gateway.games import new_game_id
from kit.redis.keys import clock_key, clocks_key, game_shard
from tests.gateway.conftest import GatewaySystem
from tests.gateway.harness import Client, Seating, seating, spawn_gateway, spawn_rules
from tests.keyspace import alone


async def until_over(client: Client, game_id: str, timeout_s: float = 10.0) -> play_pb2.GetGameResponse:
    deadline = time.monotonic() + timeout_s
    while True:
        view = await client.get(game_id)
        if view.summary.status.over:
            return view
        assert time.monotonic() < deadline, "the game never ended"
        await asyncio.sleep(0.1)


async def test_a_player_who_stops_moving_loses_on_time(
    gw_system: GatewaySystem, seats: Seating, clients: list[Client]
) -> None:
    a, b, spectator = clients
    game_id = await seats.start([a.player, b.player], per_move_s=1.0)
    started = time.time()
    moved = await a.move(game_id, 0, 3)
    deadline = moved.turn_deadline.ToMilliseconds() / 1000
    assert 0.8 <= deadline - started <= 1.5
    watched: list[play_pb2.WatchGameResponse] = []
    call = spectator.games.WatchGame(play_pb2.WatchGameRequest(game_id=game_id), metadata=spectator.md)
    async for response in call:
        watched.append(response)
    # B never moved: timed out, then the game ended, and the stream ended with it.
    kinds = [r.event.WhichOneof("kind") for r in watched]
    assert kinds == ["created", "connect4", "timed_out", "ended"]
    assert watched[2].event.timed_out.seat == 1
    assert list(watched[3].event.ended.outcome.winners) == [0]
    assert time.time() >= deadline - 0.05
    view = await until_over(b, game_id)
    assert view.summary.status.outcome.reason == "TIMEOUT"
    record = (await b.games.GetGameRecord(play_pb2.GetGameRecordRequest(game_id=game_id), metadata=b.md)).record
    assert record.actions[-1].timed_out and record.actions[-1].seat == 1


async def test_a_started_game_has_its_clock_even_when_the_listing_write_fails(
    gw_system: GatewaySystem, seats: Seating, clients: list[Client], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first clock is armed in the same script as the game's metadata (games/start.lua): a
    write refused after it (the live lists, e.g. during a Cluster failover) cannot leave a started
    game that never times out. Two separate writes did that (tools/cluster_failover.py --games).
    (On one Redis the live lists are in that script too: there is no write after it to refuse.)"""
    a, b, _ = clients
    game_id = new_game_id()

    async def refused(commands: object) -> list[object]:
        raise RedisConnectionError("redis connection lost")

    monkeypatch.setattr(seats.directory.layer, "many", refused)
    if seats.directory.layer.cluster:
        with pytest.raises(RedisConnectionError):
            await seats.start([a.player, b.player], per_move_s=1.0, game_id=game_id)
    else:
        await seats.start([a.player, b.player], per_move_s=1.0, game_id=game_id)
    monkeypatch.undo()
    clock: Any = await seats.redis.hmget(clock_key(game_id), "v", "d")
    assert clock[0] is not None and int(clock[1]) > 0, "the started game has no armed clock"
    due: Any = await seats.redis.zrange(clocks_key(game_shard(game_id)), 0, -1)
    assert any(member.decode().startswith(f"{game_id}|") for member in due)
    # And the clock fires: seat 0 never moves, so the game ends on time.
    over = await until_over(a, game_id)
    assert over.summary.status.over


@pytest.fixture
def own_url(redis_url: str) -> Iterator[str]:
    """A Redis of this test's own, so no other gateway sweeps its clocks."""
    with alone(redis_url, "clocks, alone") as url:
        yield url


async def test_the_timeout_applies_after_the_watching_gateway_was_killed(own_url: str) -> None:
    url = own_url
    rules = spawn_rules(url)
    first = spawn_gateway(url, {"connect4": rules.address}, name="doomed-gateway")
    second = None
    try:
        a = await Client(first.address).guest()
        b = await Client(first.address).guest()
        async with seating(url, {"connect4": rules.address}) as seats:
            game_id = await seats.start([a.player, b.player], per_move_s=1.5)
            await a.move(game_id, 0, 3)
            stream = b.games.WatchGame(play_pb2.WatchGameRequest(game_id=game_id), metadata=b.md)
            assert (await stream.read()).event.event_id == "0-1"
            first.kill()  # the gateway the players and the watch were on dies
            code = None
            try:
                while True:
                    await stream.read()
            except grpc.aio.AioRpcError as error:
                code = error.code()
            assert code == grpc.StatusCode.UNAVAILABLE
            await asyncio.sleep(2.0)  # the deadline passes with no gateway running at all
            view = await seats.router.get_view("connect4", _view_request(game_id))
            assert not view.status.over
            second = spawn_gateway(url, {"connect4": rules.address}, name="new-gateway")
            b_again = Client(second.address)
            b_again.session = b.session
            result = await until_over(b_again, game_id)
            assert result.summary.status.outcome.reason == "TIMEOUT"
            assert list(result.summary.status.outcome.winners) == [0]
            record = await b_again.games.GetGameRecord(
                play_pb2.GetGameRecordRequest(game_id=game_id), metadata=b_again.md
            )
            assert record.record.actions[-1].timed_out
            await b_again.close()
        await a.close()
        await b.close()
    finally:
        for proc in (first, second, rules):
            if proc is not None:
                proc.stop()


def _view_request(game_id: str):  # type: ignore[no-untyped-def]
    from tafel.rules.v1 import rules_pb2

    return rules_pb2.GetViewRequest(game_id=game_id)
