"""The tournament store's scripts and the event feed, against a real Redis (no gateway)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis
from tafel.play.v1 import play_pb2
from tafel.play.v1 import tournaments_pb2 as T

from gateway.tournaments import engine
from gateway.tournaments.feed import TournamentFeed
from gateway.tournaments.model import Entrant, Format
from gateway.tournaments.store import Spec, TournamentStore, now_ms
from kit.redis.client import redis_client
from kit.redis.keys import tournament_request_key
from kit.redis.layer import RedisLayer
from tests.keyspace import emptied, with_db

# The request's key as the gateway names it: in the tournaments' slot, as create.lua's other keys.
REQUEST_1 = tournament_request_key("org", "req-1")


@pytest.fixture
async def db(redis_url: str) -> AsyncIterator[Redis]:
    client = redis_client(emptied(redis_url, "tournament feed"))  # a cluster's too (tests/keyspace.py)
    try:
        yield client
    finally:
        await client.aclose()


@pytest.fixture
async def layer(db: Redis) -> AsyncIterator[RedisLayer]:
    opened = RedisLayer.around(db)
    try:
        yield opened
    finally:
        await opened.close()


def spec(tid: str, capacity: int = 4) -> Spec:
    return Spec(
        tournament_id=tid,
        name="unit",
        game="connect4",
        options=b"",
        format=Format.SWISS,
        rounds=2,
        table_size=0,
        largest_table=0,
        per_move_ms=5000,
        capacity=capacity,
        starts_at_ms=0,
        organiser=("org", "organiser", False),
        rated=False,
        created_ms=now_ms(),
    )


def joined(name: str) -> T.TournamentEvent:
    return T.TournamentEvent(player_joined=T.TournamentPlayerJoined(player=play_pb2.Player(player_id=name)))


async def test_create_join_start_save(db: Redis, layer: RedisLayer) -> None:
    store = TournamentStore(layer)
    assert await store.create(spec("t0000000000000001"), REQUEST_1) == "t0000000000000001"
    assert await store.create(spec("t0000000000000002"), REQUEST_1) == "t0000000000000001", "a retried request"
    for i in range(4):
        assert await store.join("t0000000000000001", (f"p{i}", f"n{i}", False), 4, joined(f"p{i}")) == 1
    assert await store.join("t0000000000000001", ("p0", "n0", False), 4, joined("p0")) == 0
    assert await store.join("t0000000000000001", ("p9", "n9", False), 4, joined("p9")) == -2
    assert await store.join("t00000000000000ff", ("p9", "n9", False), 4, joined("p9")) == -3
    loaded = await store.load("t0000000000000001")
    assert loaded is not None and [p[0] for p in loaded.players] == ["p0", "p1", "p2", "p3"]
    state = engine.start(loaded.spec.config(), [Entrant(p[0], p[1]) for p in loaded.players])
    # Registrations changed since the load: the start is refused, then made on a fresh read.
    assert await store.unregister("t0000000000000001", "p3", joined("p3")) == 1
    assert await store.start(loaded, state, []) == 0
    loaded = await store.load("t0000000000000001")
    assert loaded is not None
    state = engine.start(loaded.spec.config(), [Entrant(p[0], p[1]) for p in loaded.players])
    assert await store.start(loaded, state, []) == 1
    assert await store.join("t0000000000000001", ("p3", "n3", False), 4, joined("p3")) == -1
    running = await store.load("t0000000000000001")
    assert running is not None and running.status == "running" and running.state == state
    paired = engine.next_round(state)
    assert await store.save(running, paired, []) == 1
    assert await store.save(running, paired, []) == 0, "a stale revision never overwrites"
    assert await store.running() == ["t0000000000000001"]


async def test_feed_catch_up_then_live_without_gaps(db: Redis, redis_url: str, layer: RedisLayer) -> None:
    store = TournamentStore(layer)
    tid = "t00000000000000aa"
    await store.create(spec(tid, capacity=200), tournament_request_key("org", "req-feed"))
    for i in range(5):
        await store.join(tid, (f"a{i}", "", False), 200, joined(f"a{i}"))
    feed = TournamentFeed(layer, redis_client(with_db(redis_url, "tournament feed")), block_ms=100)
    seen: list[str] = []
    ids: list[str] = []

    async def watch(after: str = "") -> None:
        async for event in feed.watch(tid, after):
            seen.append(event.player_joined.player.player_id)
            ids.append(event.event_id)
            if len(seen) == 40:
                return

    async def write() -> None:
        for i in range(5, 40):
            await store.join(tid, (f"a{i}", "", False), 200, joined(f"a{i}"))
            if i % 7 == 0:
                await asyncio.sleep(0.02)

    await asyncio.wait_for(asyncio.gather(watch(), write()), 10)
    assert seen == [f"a{i}" for i in range(40)]
    # Resuming after an id gives exactly what followed it.
    resumed: list[str] = []
    async for event in feed.watch(tid, ids[29], live=False):
        resumed.append(event.player_joined.player.player_id)
    assert resumed == [f"a{i}" for i in range(30, 40)]
    assert feed.watchers == 0
    await feed.close()
