"""redis-py clients, configured once for every process."""

from __future__ import annotations

from redis.asyncio import BlockingConnectionPool, Redis

from kit.redis.cluster import cluster_client, is_cluster_url


def redis_client(url: str, max_connections: int = 256) -> Redis:
    """A client whose pool waits for a free connection instead of failing when all are busy
    (redis-py's default pool raises past its limit). A redis+cluster:// URL: redis-py's cluster client."""
    if is_cluster_url(url):
        return cluster_client(url, max_connections=max_connections)
    pool = BlockingConnectionPool.from_url(
        url,
        max_connections=max_connections,
        timeout=10,
        socket_connect_timeout=2,
        socket_timeout=5,
        health_check_interval=30,
    )
    return Redis(connection_pool=pool)
