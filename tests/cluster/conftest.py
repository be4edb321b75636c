"""A real Redis Cluster on loopback (tools/redis_cluster.py: 3 masters, 3 replicas), started once
per session for the cluster tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tools.redis_cluster import RedisClusterProcess, start_cluster


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[RedisClusterProcess]:
    cluster = start_cluster()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def cluster_url(redis_cluster: RedisClusterProcess) -> str:
    return redis_cluster.url
