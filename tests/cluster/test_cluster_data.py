"""`make run REDIS_CLUSTER=1`'s data folder: the next start finds the formed cluster and its data."""

from __future__ import annotations

import asyncio
from pathlib import Path

from kit.redis.layer import RedisLayer
from tools.redis_cluster import cluster_ports, start_cluster


async def test_a_data_folder_keeps_the_cluster_and_its_data(tmp_path: Path) -> None:
    ports = cluster_ports()
    first = await asyncio.to_thread(start_cluster, ports, data_dir=tmp_path)
    try:
        layer = RedisLayer.connect(first.url)
        keys = [f"test:{{kept{i}}}" for i in range(30)]  # spread over the three masters
        assert await layer.many([("SET", key, key) for key in keys]) == [b"OK"] * 30
        await layer.close()
        layout = first.masters()
    finally:
        first.stop()
    assert all((tmp_path / str(port) / "nodes.conf").exists() for port in ports)
    again = await asyncio.to_thread(start_cluster, ports, data_dir=tmp_path)
    try:
        assert again.masters() == layout  # found formed, not formed anew
        layer = RedisLayer.connect(again.url)
        assert await layer.many([("GET", key) for key in keys]) == [key.encode() for key in keys]
        await layer.close()
    finally:
        again.stop()
