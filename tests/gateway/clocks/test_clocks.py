"""Turn clocks in-process against a real Redis (gateway/clocks.py): arming, claiming each due
deadline once, a dead sweeper's claim taken again."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis
from tafel.games.v1 import games_pb2

from gateway.clocks import Clocks, Due
from kit.redis.client import redis_client
from kit.redis.keys import clock_key, clocks_key, game_shard
from kit.redis.layer import RedisLayer
from tests.gateway.harness import other_db


@pytest.fixture
def clock_url(redis_url: str) -> str:
    """A database of their own: the session's gateways sweep the clocks of database 0 (on a cluster,
    database 0 itself: the gateway tests' processes there are per module, tests/keyspace.py)."""
    return other_db(redis_url, "clocks")


@pytest.fixture
async def clock_redis(clock_url: str) -> AsyncIterator[Redis]:
    client = redis_client(clock_url)
    try:
        yield client
    finally:
        await client.aclose()


def status(version: int, *to_act: int, over: bool = False) -> games_pb2.GameStatus:
    return games_pb2.GameStatus(version=version, to_act=to_act, over=over)


async def test_clock_arming(clock_redis: Redis) -> None:
    redis = clock_redis
    clocks = Clocks(RedisLayer.around(redis), ttl_s=60)
    game = f"clk-{uuid.uuid4().hex[:10]}"
    before = time.time()
    first = await clocks.arm(game, status(0, 0), 10)
    after = time.time()
    # Ten seconds from the moment of arming, however long the call took on a busy machine.
    assert first is not None and before + 10 - 0.01 <= first <= after + 10 + 0.01
    assert await clocks.deadline(game, 0) == first
    # An older version never overwrites a newer one; the same version answers the stored deadline.
    second = await clocks.arm(game, status(1, 1), 20)
    assert second is not None and second > first
    assert await clocks.arm(game, status(0, 0), 10) is None
    assert await clocks.arm(game, status(1, 1), 99) == second
    assert await redis.zscore(clocks_key(game_shard(game)), f"{game}|0|0") is None
    assert await redis.zscore(clocks_key(game_shard(game)), f"{game}|1|1") is not None
    # A simultaneous round still being filled in keeps its deadline; a new round gets a new one.
    round_start = await clocks.arm(game, status(2, 0, 1, 2), 30)
    assert await clocks.arm(game, status(3, 0, 2), 30) == round_start
    assert await clocks.arm(game, status(4, 2), 30) == round_start
    assert await clocks.arm(game, status(5, 0, 1, 2), 40) != round_start
    # The end removes it.
    assert await clocks.arm(game, status(6, over=True), 30) is None
    assert await redis.zscore(clocks_key(game_shard(game)), f"{game}|5|0,1,2") is None
    assert await clocks.deadline(game, 6) is None
    await redis.delete(clock_key(game))
    await clocks.layer.close()


async def test_due_deadlines_are_claimed_exactly_once(clock_url: str) -> None:
    clients = [redis_client(clock_url) for _ in range(3)]
    sweepers = [Clocks(RedisLayer.around(client), ttl_s=60, lease_s=30) for client in clients]
    games = [f"due-{uuid.uuid4().hex[:10]}" for _ in range(150)]
    for game in games:
        await sweepers[0].arm(game, status(4, 1), 0.001)
    await asyncio.sleep(0.01)
    seen: list[Due] = []
    finished = asyncio.Event()

    async def handler(due: Due) -> bool:
        seen.append(due)
        if len({d.game_id for d in seen} & set(games)) == len(games):
            finished.set()
        return True

    for sweeper in sweepers:
        sweeper.start(handler)
    await asyncio.wait_for(finished.wait(), 10)
    await asyncio.sleep(0.2)
    ours = [d for d in seen if d.game_id in set(games)]
    assert len(ours) == len(games) and {d.game_id for d in ours} == set(games)  # each exactly once
    assert all(d.version == 4 and d.seats == (1,) for d in ours)
    for sweeper in sweepers:
        await sweeper.stop()
        await sweeper.layer.close()
    for client in clients:
        await client.delete(*[clock_key(g) for g in games])
        await client.aclose()


async def test_a_claim_left_by_a_dead_sweeper_is_taken_again(clock_redis: Redis) -> None:
    redis = clock_redis
    game = f"lease-{uuid.uuid4().hex[:10]}"
    dying = Clocks(RedisLayer.around(redis), ttl_s=60, lease_s=0.3)
    await dying.arm(game, status(2, 0), 0.001)
    await asyncio.sleep(0.01)

    async def crash(due: Due) -> bool:
        return False  # as if it died before settling

    claimed, _ = await dying.sweep_once(crash)
    assert claimed >= 1
    await asyncio.sleep(0.05)
    survivor = Clocks(RedisLayer.around(redis), ttl_s=60, lease_s=0.3)
    got: list[Due] = []

    async def handle(due: Due) -> bool:
        got.append(due)
        return True

    await asyncio.sleep(0.4)
    await survivor.sweep_once(handle)
    await asyncio.sleep(0.05)
    assert [d.game_id for d in got if d.game_id == game] == [game]
    await redis.delete(clock_key(game))
    await dying.layer.close()
    await survivor.layer.close()
