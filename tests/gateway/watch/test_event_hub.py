"""The watch's event hub in-process against a real Redis (gateway/watch/hub.py): history then live
without a gap or a duplicate, a slow watcher caught up from the stream."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis
from tafel.games.v1 import games_pb2

from gateway.watch import watcher as watch_module
from gateway.watch.hub import EventHub
from gateway.watch.watcher import LIVE
from kit.errors import Refused
from kit.redis.game_reads import GameReads
from kit.redis.keys import game_keys
from kit.redis.layer import RedisLayer
from kit.redis.pubsub import PubSub
from services.host.store import GameStore, NewEvent
from tests.keyspace import on_cluster


class FakeGame:
    """Writes a game's events the way a rules service does (GameStore: stream + publish)."""

    def __init__(self, store: GameStore) -> None:
        self.store = store
        self.game_id = f"hub-{uuid.uuid4().hex[:10]}"
        self.version = 0

    async def create(self) -> None:
        created = games_pb2.GameEvent(event_id="0-1", version=0)
        created.created.game = "connect4"
        batch = games_pb2.GameEventBatch(game_id=self.game_id, events=[created])
        await self.store.create(
            game_id=self.game_id,
            request_id="create",
            game="connect4",
            seats=2,
            options=b"",
            state=b"s",
            created=NewEvent("0-1", created.SerializeToString()),
            response=b"",
            publish=batch.SerializeToString(),
        )

    async def move(self, publish: bool = True, events: int = 1) -> None:
        version = self.version + 1
        messages = [games_pb2.GameEvent(event_id=f"{version}-{i + 1}", version=version) for i in range(events)]
        for message in messages:
            message.connect4.disc_dropped.column = version % 7
        if publish:
            await self.store.commit(
                game_id=self.game_id,
                expected_version=self.version,
                request_id=f"m{version}",
                state=b"s",
                events=[NewEvent(m.event_id, m.SerializeToString()) for m in messages],
                response=b"",
                over=False,
                publish=games_pb2.GameEventBatch(game_id=self.game_id, events=messages).SerializeToString(),
                action=b"",
            )
        else:  # as if the wake-up was lost on the way
            keys = game_keys(self.game_id)
            for message in messages:
                # As commit.lua writes it: the event and the status after it ('t').
                status = games_pb2.GameStatus(version=version).SerializeToString()
                fields = {"e": message.SerializeToString(), "t": status}
                await self.store.layer.client.xadd(keys.events, fields, id=message.event_id)
            await self.store.layer.client.hset(keys.state, "v", version)
        self.version = version


@contextlib.asynccontextmanager
async def event_hub(redis: Redis, redis_url: str) -> AsyncIterator[EventHub]:
    """A started hub on its own pub/sub connection, closed with it."""
    pubsub, layer = PubSub(redis_url), RedisLayer.around(redis)
    hub = EventHub(pubsub, GameReads(layer))
    hub.start()
    try:
        yield hub
    finally:
        await hub.close()
        await pubsub.close()
        await layer.close()


async def take(iterator, count: int, timeout_s: float = 5.0) -> list[str]:  # type: ignore[no-untyped-def]
    out = []
    for _ in range(count):
        event, source = await asyncio.wait_for(iterator.__anext__(), timeout_s)
        out.append(event.event_id)
    return out


@pytest.mark.skipif(
    on_cluster(),
    reason="kills the hub's one pub/sub connection by id on one server (a cluster's links: kit/redis/pubsub.py)",
)
async def test_hub_history_then_live_without_gap_or_duplicate(redis: Redis, redis_url: str) -> None:
    store = GameStore(RedisLayer.around(redis), live_ttl_s=60, finished_ttl_s=60)
    game = FakeGame(store)
    await game.create()
    for _ in range(3):
        await game.move()
    async with event_hub(redis, redis_url) as hub:
        async with hub.watch(game.game_id, "1-1") as first, hub.watch(game.game_id) as second:
            a, b = first.events(), second.events()
            assert await take(a, 2) == ["2-1", "3-1"]
            assert await take(b, 4) == ["0-1", "1-1", "2-1", "3-1"]
            await game.move()
            await game.move(publish=False)  # a lost wake-up ...
            await game.move(events=2)  # ... noticed at the next one, and read from the stream
            assert await take(a, 4) == ["4-1", "5-1", "6-1", "6-2"]
            assert await take(b, 4) == ["4-1", "5-1", "6-1", "6-2"]
            assert hub.channels == 1 and hub.watchers == 2

            # The pub/sub connection dies: the hub reconnects, re-subscribes, and re-reads.
            assert hub.client_id is not None
            await redis.execute_command("CLIENT", "KILL", "ID", hub.client_id)
            await game.move()
            await asyncio.sleep(0.3)
            await game.move()
            assert await take(a, 2) == ["7-1", "8-1"]
            assert await take(b, 2) == ["7-1", "8-1"]


async def test_hub_slow_watcher_catches_up_from_the_stream(
    redis: Redis, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(watch_module, "QUEUE_LIMIT", 3)
    store = GameStore(RedisLayer.around(redis), live_ttl_s=60, finished_ttl_s=60)
    game = FakeGame(store)
    await game.create()
    async with event_hub(redis, redis_url) as hub:
        async with hub.watch(game.game_id) as slow:
            events = slow.events()
            assert await take(events, 1) == ["0-1"]
            for _ in range(10):
                await game.move()
            await asyncio.sleep(0.2)
            assert await take(events, 10) == [f"{v}-1" for v in range(1, 11)]
        with pytest.raises(Refused):
            async with hub.watch("never-created") as missing:
                await take(missing.events(), 1)
    assert LIVE == 2
