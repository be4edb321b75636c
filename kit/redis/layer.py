"""The process's one Redis client object.

Behind it: the pipelined connection (kit/redis/pipe.py) for scripts and hot commands, and a
redis-py client for everything else (blocking reads, scans, pub/sub management). Every feature
takes a RedisLayer; there is no "maybe a pipe" branch anywhere. Failures surface as redis-py's
exceptions (RedisError), which kit/errors.py maps to UNAVAILABLE.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import ResponseError

from kit.redis.client import redis_client
from kit.redis.cluster import ClusterPipe, cluster_url_of, is_cluster_url
from kit.redis.pipe import Command, RedisPipe, url_of
from kit.redis.scripts import Script


class RedisLayer:
    def __init__(
        self, client: Redis, *, url: str | None = None, timeout_s: float = 5.0, owns_client: bool = True
    ) -> None:
        self.client = client
        self.url = url or (cluster_url_of(client) if isinstance(client, RedisCluster) else url_of(client))
        # A Redis Cluster URL (redis+cluster://, kit/redis/cluster.py): one pipe per master, by slot.
        # Callers that would touch keys of many slots in one script ask (gateway/clocks.py's sweep).
        self.cluster = is_cluster_url(self.url)
        self.pipe = (ClusterPipe if self.cluster else RedisPipe)(self.url, timeout_s=timeout_s)
        self._owns_client = owns_client

    @classmethod
    def connect(cls, url: str, *, max_connections: int = 256, timeout_s: float = 5.0) -> RedisLayer:
        return cls(redis_client(url, max_connections=max_connections), url=url, timeout_s=timeout_s)

    @classmethod
    def around(cls, client: Redis) -> RedisLayer:
        """A layer over a client someone else owns and closes (tests, tools)."""
        return cls(client, owns_client=False)

    async def run(self, script: Script, keys: Sequence[str], args: Sequence[Any] = ()) -> Any:
        """Run a Lua script (EVALSHA; EVAL once when Redis does not know it yet). A script that
        publishes to its shard channel runs as SPUBLISH on a Redis 7 cluster (kit/redis/scripts.py)."""
        script.check(len(keys), len(args))
        if script.publishes_shard and isinstance(self.pipe, ClusterPipe):
            script = script.dialect(await self.pipe.sharded_pubsub())
        try:
            return await self.pipe.call("EVALSHA", script.sha, len(keys), *keys, *args)
        except ResponseError as error:
            if not str(error).startswith("NOSCRIPT"):
                raise
        return await self.pipe.call("EVAL", script.source, len(keys), *keys, *args)

    async def publish_verb(self) -> str:
        """How to publish to a hash-tagged channel: SPUBLISH on a Redis 7 cluster (where its
        subscribers SSUBSCRIBE: kit/redis/pubsub.py), else PUBLISH."""
        if isinstance(self.pipe, ClusterPipe) and await self.pipe.sharded_pubsub():
            return "SPUBLISH"
        return "PUBLISH"

    def start(self, script: Script, keys: Sequence[str], args: Sequence[Any] = ()) -> asyncio.Future[Any] | None:
        """run() without waiting, for a caller with several scripts in flight in one task: the
        future of the EVALSHA's raw reply (a RespError value for an error reply; NOSCRIPT when
        Redis lacks the script, which run() loads), or None where only run() will do (a cluster,
        no connection yet)."""
        if self.cluster:
            return None
        script.check(len(keys), len(args))
        return self.pipe.send("EVALSHA", script.sha, len(keys), *keys, *args)

    async def call(self, *parts: str | bytes | int | float) -> Any:
        """One command on the pipelined connection; its raw reply (bytes, int, None, lists)."""
        return await self.pipe.call(*parts)

    async def many(self, commands: Sequence[Command]) -> list[Any]:
        """Independent commands in one round trip; their replies in order."""
        if not commands:
            return []
        return await self.pipe.many(list(commands))

    async def close(self) -> None:
        await self.pipe.close()
        if self._owns_client:
            await self.client.aclose()
