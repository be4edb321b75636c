"""ClusterPipe and RedisLayer on a real 3+3 Redis Cluster: routing by slot, scripts on every
master, ASK and MOVED during a manual slot migration, keyless commands, CROSSSLOT refused, and a
master killed under a caller that recovers by itself once its replica takes over."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from redis.asyncio.cluster import RedisCluster
from redis.crc import key_slot
from redis.exceptions import AskError, ResponseError

from kit.redis.cluster import ClusterPipe, cluster_client
from kit.redis.layer import RedisLayer
from tools.redis_cluster import RedisClusterProcess, start_cluster

INCR = "return redis.call('INCRBY', KEYS[1], ARGV[1])"
PAIR = "redis.call('SET', KEYS[1], 1)\nredis.call('SET', KEYS[2], 1)\nreturn 1"


def owner_of(cluster: RedisClusterProcess, key: str) -> int:
    slot = key_slot(key.encode())
    for port, ranges in cluster.masters().items():
        if any(start <= slot <= end for start, end in ranges):
            return port
    raise AssertionError(f"slot {slot} has no master")


def key_on(cluster: RedisClusterProcess, port: int, prefix: str) -> str:
    """A key (with its own hash tag) that lives on the master at `port`."""
    for index in range(10_000):
        key = f"test:{{{prefix}{index}}}:k"
        if owner_of(cluster, key) == port:
            return key
    raise AssertionError("no key found")


@pytest.fixture
async def layer(cluster_url: str) -> AsyncIterator[RedisLayer]:
    value = RedisLayer.connect(cluster_url, timeout_s=5.0)
    try:
        yield value
    finally:
        await value.close()


async def test_layer_on_a_cluster_url(layer: RedisLayer, redis_cluster: RedisClusterProcess) -> None:
    assert isinstance(layer.client, RedisCluster)
    assert isinstance(layer.pipe, ClusterPipe)
    masters = sorted(redis_cluster.masters())
    keys = [key_on(redis_cluster, port, f"layer{port}-") for port in masters]
    # One script, keys on each of the three masters, all at once (EVAL: RedisLayer.run's fallback).
    replies = await asyncio.gather(*(layer.call("EVAL", INCR, 1, key, 7) for key in keys))
    assert replies == [7, 7, 7]
    for port, key in zip(masters, keys, strict=True):
        with redis_cluster.node(port).client() as direct:
            assert direct.get(key) == b"7"  # really on that master, not proxied
    assert await layer.many([("GET", key) for key in keys]) == [b"7", b"7", b"7"]
    # redis-py's cluster client sees the same data.
    assert await layer.client.get(keys[0]) == b"7"
    assert await layer.call("PING") == b"PONG"


async def test_script_load_reaches_every_master(layer: RedisLayer, redis_cluster: RedisClusterProcess) -> None:
    sha = await layer.call("SCRIPT", "LOAD", INCR)
    for port in redis_cluster.masters():
        with redis_cluster.node(port).client() as direct:
            assert direct.script_exists(sha.decode()) == [True]
    # EVALSHA routed by its first key, on whichever master holds it.
    keys = [key_on(redis_cluster, port, f"sha{port}-") for port in sorted(redis_cluster.masters())]
    assert await layer.many([("EVALSHA", sha, 1, key, 2) for key in keys]) == [2, 2, 2]


async def test_keys_of_two_slots_are_refused(layer: RedisLayer, redis_cluster: RedisClusterProcess) -> None:
    masters = sorted(redis_cluster.masters())
    a, b = key_on(redis_cluster, masters[0], "x"), key_on(redis_cluster, masters[1], "y")
    with pytest.raises(ResponseError, match="CROSSSLOT"):
        await layer.call("EVAL", PAIR, 2, a, b)
    # One hash tag: one slot, accepted.
    assert await layer.call("EVAL", PAIR, 2, "test:{same}:a", "test:{same}:b") == 1


def _id(client: Any) -> str:
    value = client.execute_command("CLUSTER", "MYID")
    return value.decode() if isinstance(value, bytes) else str(value)


def _begin_migration(source: Any, target: Any, slot: int) -> None:
    target.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", _id(source))
    source.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", _id(target))


def _move_keys(source: Any, target_port: int, *keys: str) -> None:
    source.execute_command("MIGRATE", "127.0.0.1", target_port, "", 0, 5000, "KEYS", *keys)


def _finish_migration(cluster: RedisClusterProcess, slot: int, target: Any) -> None:
    owner = _id(target)
    for port in cluster.masters():
        with cluster.node(port).client() as client:
            client.execute_command("CLUSTER", "SETSLOT", slot, "NODE", owner)


def same_slot_key(key: str, prefix: str) -> str:
    slot = key_slot(key.encode())
    for index in range(1_000_000):
        other = f"test:{prefix}{index}"
        if key_slot(other.encode()) == slot:
            return other
    raise AssertionError("no key found")


async def test_ask_then_moved_during_a_slot_migration(layer: RedisLayer, redis_cluster: RedisClusterProcess) -> None:
    masters = sorted(redis_cluster.masters())
    source_port, target_port = masters[0], masters[1]
    moved = key_on(redis_cluster, source_port, "mig")
    stays = same_slot_key(moved, "other")
    slot = key_slot(moved.encode())
    pipe = layer.pipe
    assert isinstance(pipe, ClusterPipe)
    assert await pipe.call("SET", moved, "before") == b"OK"
    assert await pipe.call("SET", stays, "here") == b"OK"
    source, target = redis_cluster.node(source_port).client(), redis_cluster.node(target_port).client()
    try:
        _begin_migration(source, target, slot)
        _move_keys(source, target_port, moved)
        # Mid-migration: the moved key answers ASK from the old owner, the other key is still there.
        assert await pipe.call("GET", moved) == b"before"
        assert await pipe.call("GET", stays) == b"here"
        assert await pipe.call("SET", moved, "during") == b"OK"
        with pytest.raises(AskError):
            source.get(moved)  # it really was redirected
        _move_keys(source, target_port, stays)
        _finish_migration(redis_cluster, slot, target)
        # Done: the old owner answers MOVED; the pipe follows it and keeps the new owner.
        assert await pipe.call("GET", moved) == b"during"
        assert pipe._slots[slot] == f"127.0.0.1:{target_port}"
        assert await pipe.call("GET", stays) == b"here"
    finally:
        # Hand the slot back the same way, so the other tests see the original layout.
        if owner_of(redis_cluster, moved) != target_port:
            _finish_migration(redis_cluster, slot, target)
        _begin_migration(target, source, slot)
        _move_keys(target, source_port, moved, stays)
        _finish_migration(redis_cluster, slot, source)
        source.close()
        target.close()
    redis_cluster.wait_ok()
    assert await pipe.call("GET", moved) == b"during"


async def test_a_killed_master_is_replaced_and_callers_recover() -> None:
    # Its own cluster: the session's keeps its layout for the other tests.
    cluster = await asyncio.to_thread(start_cluster)
    layer = RedisLayer.connect(cluster.url, timeout_s=8.0)
    try:
        victim = sorted(cluster.masters())[0]
        replica = cluster.replica_of(victim)
        key = key_on(cluster, victim, "fo")
        assert await layer.call("SET", key, "kept") == b"OK"
        with cluster.node(victim).client() as direct:
            assert direct.execute_command("WAIT", 1, 2000) == 1  # the replica has the write
        cluster.kill(victim)
        # The caller's budget (8 s) covers node timeout + election: no error reaches it.
        started = asyncio.get_running_loop().time()
        assert await layer.call("GET", key) == b"kept"
        assert await layer.call("SET", key, "after") == b"OK"
        assert asyncio.get_running_loop().time() - started < 8
        # Every live node agrees: the replica is the master now.
        await asyncio.to_thread(cluster.wait_ok, 30.0, 3, 2)
        await asyncio.to_thread(cluster.wait_promoted, replica, victim, 20.0)
        cluster.restart(victim)  # comes back as its old replica's replica
        await asyncio.to_thread(cluster.wait_ok)
        assert await layer.call("GET", key) == b"after"
    finally:
        await layer.close()
        cluster.stop()


async def test_layer_around_a_cluster_client_before_its_first_command(cluster_url: str) -> None:
    client = cluster_client(cluster_url)  # knows only its startup nodes yet
    layer = RedisLayer.around(client)
    try:
        assert isinstance(layer.pipe, ClusterPipe)
        assert await layer.call("SET", "test:{around}", "1") == b"OK"
        assert await client.get("test:{around}") == b"1"
    finally:
        await layer.close()
        await client.aclose()
