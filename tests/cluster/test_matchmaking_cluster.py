"""Matchmaking on a real Redis Cluster: every bucket script runs in its bucket's slot and the
one-search-per-game claim in the player's, so two gateways pair, refuse a second search for the
game in another bucket, and free the claim when the match forms, with keys spread over masters."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import grpc
import pytest

from gateway.matchmaking.matchmaker import Matchmaker
from kit.errors import Refused
from kit.redis.layer import RedisLayer
from kit.redis.pubsub import PubSub
from tests.gateway.lobby_helpers import FAST, FixedRatings, RecordingStarter, player, run_to_match, spec
from tools.redis_cluster import RedisClusterProcess


@asynccontextmanager
async def gateway_on(cluster: RedisClusterProcess, starter: RecordingStarter) -> AsyncIterator[Matchmaker]:
    layer = RedisLayer.connect(cluster.url, max_connections=16)
    # Classic pub/sub is cluster-wide: a PUBLISH on any master reaches a subscriber on any node.
    pubsub = PubSub(f"redis://{cluster.nodes[0].address}/0")
    matchmaker = Matchmaker(layer, pubsub, starter, FixedRatings(), FAST)
    await matchmaker.listen()
    try:
        yield matchmaker
    finally:
        await matchmaker.close()
        await pubsub.close()
        await layer.close()


async def test_two_gateways_match_on_a_cluster_with_one_search_per_game(redis_cluster: RedisClusterProcess) -> None:
    starters = [RecordingStarter(), RecordingStarter()]
    async with gateway_on(redis_cluster, starters[0]) as one, gateway_on(redis_cluster, starters[1]) as two:
        players = [player() for _ in range(20)]
        buckets = [spec() for _ in range(3)]  # three buckets: most likely on different masters
        first = one.find(buckets[0], players[0])
        await anext(first)
        with pytest.raises(Refused) as refused:
            await anext(two.find(buckets[1], players[0]))
        assert (refused.value.code, refused.value.reason) == (grpc.StatusCode.ALREADY_EXISTS, "ALREADY_QUEUED")
        await first.aclose()
        results = await asyncio.wait_for(
            asyncio.gather(
                *(run_to_match((one, two)[i % 2], buckets[i % 3], who) for i, who in enumerate(players[:18]))
            ),
            60,
        )
        games = {found.game_id for _, found in results}
        assert len(games) == 9 and set(games) == {*starters[0].games, *starters[1].games}
        # Their claims went with the matches: the same players may search the game again at once.
        again = two.find(buckets[2], players[0])
        assert (await anext(again)).HasField("queued")
        await again.aclose()
