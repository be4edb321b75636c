"""Where a test module keeps its keys, on a single Redis and on a Redis Cluster alike: the one place
the tests' Redis isolation is chosen.

Which Redis: tests/conftest.py's `redis_server` (a cluster's `REDIS_URL`, `TAFEL_TEST_REDIS=cluster`,
`REDIS_URL`, or a `redis-server` it starts). Which database: DATABASES below, by name. A single Redis
gives a module a database of its own; a cluster has only database 0, and the key names are fixed
(kit/redis/keys.py), so there the modules share one keyspace: tests use unique ids and assert on
their own entities, and a module that needs an empty keyspace empties every master first (the
modules of a run go one after another)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal, cast
from urllib.parse import urlparse, urlunparse

import pytest
import redis as redis_sync

from kit.redis.cluster import ClusterAddress, is_cluster_url
from tools.redis_cluster import start_cluster

# Every database a test family keeps its keys in, on a single Redis. Database 0 (the URL's own) is
# the session's: the gateway tests' shared processes (tests/gateway/conftest.py) and every test on
# the plain `redis_url`. A number is shared only by families that never run at the same time
# (each a module of its own, whose processes stop with it) and that use unique ids or empty it
# first (`emptied`, `alone`).
DATABASES: dict[str, int] = {
    "migrations": 3,  # tests/kit/test_migrations.py, emptied
    "upgrade": 4,  # tests/test_upgrade_fixture.py, alone
    "mail, alone": 4,  # a mail test no other gateway may sweep
    "clock shards": 4,
    "clocks, alone": 5,  # a clock no other gateway may sweep
    "mail outbox, alone": 5,
    "arena at scale": 5,
    "platform": 6,  # tests/platforms.py's whole platforms (clients, web app, load generator)
    "clocks": 7,
    "pipe": 6,
    "graceful stop": 7,
    "typescript over TLS": 8,
    "web edge": 9,
    "edge streams": 10,
    "tournament directors": 10,
    "ratings": 11,
    "conformance": 12,
    "swiss": 12,
    "correspondence searches": 12,
    "listing": 13,
    "correspondence": 13,
    "tournament games": 13,
    "tournament feed": 14,
    "two gateways": 15,
    "arena": 15,
}


def sync_client(url: str) -> redis_sync.Redis:
    """redis-py's blocking client for a test's set-up; on a cluster, its cluster client."""
    if not is_cluster_url(url):
        return redis_sync.Redis.from_url(url)
    address = ClusterAddress.parse(url)
    cluster = redis_sync.RedisCluster(
        startup_nodes=[redis_sync.cluster.ClusterNode(host, port) for host, port in address.nodes],  # type: ignore[no-untyped-call]
        username=address.username or None,
        password=address.password or None,
        ssl=address.tls,
    )
    return cast(redis_sync.Redis, cluster)  # answers the same commands (CROSSSLOT where it cannot)


def with_db(url: str, name: str) -> str:
    """The same Redis, the database DATABASES names (pub/sub is shared, keys are not). On a cluster
    the path is ignored (kit/redis/cluster.py): the same keyspace."""
    return urlunparse(urlparse(url)._replace(path=f"/{DATABASES[name]}"))


def emptied(url: str, name: str) -> str:
    """`with_db(url, name)` after emptying it: FLUSHDB of that database, or on a cluster of every master
    (redis-py sends FLUSHDB to all primaries)."""
    own = with_db(url, name)
    client = sync_client(own)
    try:
        client.flushdb()
    finally:
        client.close()
    return own


def on_cluster() -> bool:
    """Whether this run's Redis (tests/conftest.py's `redis_server`) is a Redis Cluster."""
    return os.environ.get("TAFEL_TEST_REDIS") == "cluster" or is_cluster_url(os.environ.get("REDIS_URL", ""))


def shared_scope(fixture_name: str, config: pytest.Config) -> Literal["session", "module"]:
    """The scope of processes the tests share (the gateway tests' system): the whole run on a single
    Redis, where each module that starts processes of its own gives them a database of their own; a
    module on a cluster, where they would share one keyspace (a gateway sweeping the clocks and
    tournaments of another module's games, of game types it has no rules service for)."""
    return "module" if on_cluster() else "session"


@contextmanager
def alone(url: str, name: str) -> Iterator[str]:
    """A Redis no other process of the run reads (a test that needs no other gateway to sweep its
    clocks): database `name`, emptied, on a single Redis; on a cluster a fresh cluster of its own
    (~3 s to start), since every process there shares database 0."""
    if not is_cluster_url(url):
        yield emptied(url, name)
        return
    cluster = start_cluster()
    try:
        yield cluster.url
    finally:
        cluster.stop()
