"""The pipelined Redis connection (kit/redis/pipe.py) on a database of its own: calls answer in order in
the URL's database, a script is loaded on NOSCRIPT, a killed connection fails what is in flight and
the next call reconnects."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from redis.asyncio import Redis

from kit.redis.layer import RedisLayer
from tests.gateway.harness import other_db
from tests.keyspace import on_cluster


@pytest.mark.skipif(
    on_cluster(), reason="RedisPipe is one server's connection (a cluster's: tests/cluster/test_cluster_pipe.py)"
)
async def test_the_lean_redis_pipe(redis: Redis, redis_url: str) -> None:
    from kit.redis.pipe import RedisPipe
    from kit.redis.scripts import script

    pipe = RedisPipe(other_db(redis_url, "pipe"), timeout_s=2.0)
    other = Redis.from_url(other_db(redis_url, "pipe"))
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
