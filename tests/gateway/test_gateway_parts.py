"""The gateway's parts in-process against a real Redis: settings, tokens, clocks, the event hub."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator

import grpc
import pytest
from redis.asyncio import Redis
from tafel.games.v1 import games_pb2

from gateway.actions import rules_request_id, timeout_request_id
from gateway.auth import Authenticator
from gateway.clocks import Clocks, Due
from gateway.paging import PageCursor, zpage_newest
from gateway.settings import GatewaySettings
from gateway.watch import watcher as watch_module
from gateway.watch.hub import EventHub
from gateway.watch.watcher import LIVE
from kit.errors import Refused
from kit.redis.client import redis_client
from kit.redis.game_reads import GameReads
from kit.redis.keys import clock_key, clocks_key, game_keys, game_shard
from kit.redis.layer import RedisLayer
from kit.redis.pubsub import PubSub
from kit.settings import ConfigError
from services.host.store import GameStore, NewEvent
from tests.gateway.harness import other_db
from tests.keyspace import on_cluster


@pytest.fixture
def clock_url(redis_url: str) -> str:
    """A database of their own: the session's gateways sweep the clocks of database 0 (on a cluster,
    database 0 itself: the gateway tests' processes there are per module, tests/keyspace.py)."""
    return other_db(redis_url, "gateway parts")


@pytest.fixture
async def clock_redis(clock_url: str) -> AsyncIterator[Redis]:
    client = redis_client(clock_url)
    try:
        yield client
    finally:
        await client.aclose()


BASE = {"REDIS_URL": "redis://127.0.0.1:1/0", "TAFEL_TOKEN_SECRET": "s" * 20}


def test_settings_read_once_and_fail_fast() -> None:
    settings = GatewaySettings.from_env({**BASE, "TAFEL_RULES_CONNECT4": "10.0.0.1:50061, 10.0.0.2:50061"})
    assert settings.rules["connect4"] == ("10.0.0.1:50061", "10.0.0.2:50061")
    assert settings.server.port == 50051 and settings.per_move_s == 60.0
    assert "plus4" not in GatewaySettings.from_env({**BASE, "TAFEL_RULES_PLUS4": "off"}).rules
    for bad in (
        {"TAFEL_TOKEN_SECRET": "s" * 20},
        {"REDIS_URL": "redis://x"},
        {**BASE, "TAFEL_TOKEN_SECRET": "short"},
        {**BASE, "TAFEL_RULES_CONNECT4": "no-port"},
        {**BASE, "TAFEL_RULES_CONNECT4": "a:1,a:1"},
        {**BASE, "TAFEL_PER_MOVE_S": "soon"},
        {**BASE, "TAFEL_MIN_PER_MOVE_S": "100", "TAFEL_MAX_PER_MOVE_S": "10"},
    ):
        with pytest.raises(ConfigError):
            GatewaySettings.from_env(bad)


async def test_tokens_are_signed_and_expire(layer: RedisLayer) -> None:
    auth = Authenticator(layer, secret=b"k" * 32, token_ttl_s=60)
    session = await auth.guest()
    assert auth.verify(session.token).player_id == session.player.player_id
    other = Authenticator(layer, secret=b"j" * 32, token_ttl_s=60)
    for verify, token in ((other.verify, session.token), (auth.verify, session.token + "x"), (auth.verify, "v1.a.b")):
        with pytest.raises(Refused) as caught:
            verify(token)
        assert caught.value.code == grpc.StatusCode.UNAUTHENTICATED
    old = auth.issue(session.player, now=time.time() - 120)
    with pytest.raises(Refused) as caught:
        auth.verify(old.token)
    assert caught.value.reason == "TOKEN_EXPIRED"
    with pytest.raises(Refused) as caught:
        auth.identity([("authorization", "Basic abc")])
    assert caught.value.code == grpc.StatusCode.UNAUTHENTICATED


def test_request_ids_are_scoped_by_seat() -> None:
    assert rules_request_id(0, "a") != rules_request_id(1, "a")
    long = rules_request_id(0, "x" * 64)
    assert len(long) <= 64 and long != rules_request_id(1, "x" * 64)
    assert not timeout_request_id(3, 0).startswith(("s", "h"))


async def test_newest_first_paging_survives_equal_scores(redis: Redis) -> None:
    key = f"test:page:{uuid.uuid4().hex}"
    await redis.zadd(key, {f"m{i:02d}": 100 if i < 7 else i for i in range(12)})
    seen: list[str] = []
    after = None
    while True:
        rows, more = await zpage_newest(RedisLayer.around(redis), key, 3, after)
        seen += [member for member, _ in rows]
        if not more:
            break
        after = (rows[-1][1], rows[-1][0])
        assert PageCursor.decode(PageCursor("x", *after).encode(), ("x",)) == PageCursor("x", *after)
    assert sorted(seen) == sorted(f"m{i:02d}" for i in range(12)) and len(seen) == 12
    await redis.delete(key)


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


# -- the event hub -----------------------------------------------------------------------------------


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
            game_id=self.game_id, request_id="create", game="connect4", seats=2, options=b"", state=b"s",
            created=NewEvent("0-1", created.SerializeToString()), response=b"", publish=batch.SerializeToString(),
        )

    async def move(self, publish: bool = True, events: int = 1) -> None:
        version = self.version + 1
        messages = [games_pb2.GameEvent(event_id=f"{version}-{i + 1}", version=version) for i in range(events)]
        for message in messages:
            message.connect4.disc_dropped.column = version % 7
        if publish:
            await self.store.commit(
                game_id=self.game_id, expected_version=self.version, request_id=f"m{version}", state=b"s",
                events=[NewEvent(m.event_id, m.SerializeToString()) for m in messages], response=b"", over=False,
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


@pytest.mark.skipif(on_cluster(), reason="kills the hub's one pub/sub connection by id on one server (a cluster's links: kit/redis/pubsub.py)")
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


@pytest.mark.skipif(on_cluster(), reason="RedisPipe is one server's connection (a cluster's: tests/cluster/test_cluster_pipe.py)")
async def test_the_lean_redis_pipe(redis: Redis, redis_url: str) -> None:
    from kit.redis.pipe import RedisPipe
    from kit.redis.scripts import script

    pipe = RedisPipe(other_db(redis_url, "gateway parts, pipe"), timeout_s=2.0)
    other = Redis.from_url(other_db(redis_url, "gateway parts, pipe"))
    layer = RedisLayer.around(other)
    try:
        key = f"pipe:{uuid.uuid4().hex}"
        # Pipelined calls answer in order, in the URL's database.
        replies = await asyncio.gather(*(pipe.call("INCR", key) for _ in range(50)))
        assert sorted(replies) == list(range(1, 51)) and int(await other.get(key)) == 50
        assert await redis.get(key) is None
        await other.script_flush()
        load = script("rules/load")  # a read: {answer, state fields, digest} of no game
        nothing = [f"{key}:state"]
        assert await layer.run(load, nothing, ["x"]) == [b"", [None] * 8, b""]  # NOSCRIPT, then EVAL
        assert await layer.run(load, nothing, ["y"]) == [b"", [None] * 8, b""]
        # The connection dies: what is in flight fails as a RedisError, the next call reconnects.
        await other.execute_command("CLIENT", "KILL", "ID", await pipe.call("CLIENT", "ID"))
        await asyncio.sleep(0.05)
        try:
            await pipe.call("PING")
        except Exception as error:
            from redis.exceptions import RedisError

            assert isinstance(error, RedisError)
        assert await pipe.call("PING") == b"PONG"
        await other.delete(key)
    finally:
        await pipe.close()
        await layer.close()
        await other.aclose()
