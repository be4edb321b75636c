"""The turn clocks over the 256 game shards (kit/redis/keys.py, "Game shards"), on a single Redis
(every shard in one claim script) and on a real cluster (a claim per shard): every due deadline of
every shard is claimed exactly once, a batch cut short is finished by the next sweep, settled
claims leave their shard's claimed set, and the sweep answers the earliest deadline over all
shards."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator

import pytest
from tafel.games.v1 import games_pb2

from gateway.clocks import CLAIM_BATCH, Clocks, Due
from kit.redis.keys import claimed_key, game_shard
from kit.redis.layer import RedisLayer
from tests.gateway.harness import other_db


@pytest.fixture(params=["single", "cluster"])
async def clock_layer(request: pytest.FixtureRequest) -> AsyncIterator[RedisLayer]:
    # A database no other test sweeps (single Redis); the cluster tests sweep nothing meanwhile.
    if request.param == "single":
        url = other_db(request.getfixturevalue("redis_url"), "clock shards")
    else:
        url = request.getfixturevalue("cluster_url")
    opened = RedisLayer.connect(url)
    try:
        yield opened
    finally:
        await opened.close()


def waiting(seat: int = 0) -> games_pb2.GameStatus:
    return games_pb2.GameStatus(version=3, to_act=[seat])


async def test_every_shard_is_swept_and_each_deadline_claimed_once(clock_layer: RedisLayer) -> None:
    layer = clock_layer
    clocks = Clocks(layer, ttl_s=60, lease_s=30)
    games = [f"shard-{uuid.uuid4().hex[:10]}" for _ in range(CLAIM_BATCH + 60)]
    assert len({game_shard(g) for g in games}) > 100  # most shards hold one of them
    for game in games:
        await clocks.arm(game, waiting(), 0.001)
    await asyncio.sleep(0.01)  # every deadline (1 ms) has passed
    seen: list[Due] = []

    async def settle(due: Due) -> bool:
        seen.append(due)
        return True

    claimed, next_ms = await clocks.sweep_once(settle)
    if not layer.cluster:
        # One script for all shards, one batch: what it left is due, so the sweeper goes again at once.
        assert claimed == CLAIM_BATCH and next_ms is not None and next_ms <= time.time() * 1000
    for _ in range(3):
        if len({d.game_id for d in seen} & set(games)) == len(games):
            break
        await clocks.sweep_once(settle)
    await clocks.idle()  # the handlers drop settled claims
    ours = [d for d in seen if d.game_id in set(games)]
    assert sorted(d.game_id for d in ours) == sorted(games)  # every one, exactly once
    left = await layer.many([("ZSCORE", claimed_key(game_shard(d.game_id)), d.member) for d in ours])
    assert left == [None] * len(ours)
    # Nothing due: the answer is the earliest deadline over every shard.
    later = f"shard-{uuid.uuid4().hex[:10]}"
    deadline = await clocks.arm(later, waiting(1), 5)
    assert deadline is not None
    claimed, next_ms = await clocks.sweep_once(settle)
    assert claimed == 0 and next_ms == int(deadline * 1000)
    assert await clocks.arm(later, games_pb2.GameStatus(version=4, over=True), 5) is None  # leaves the set
