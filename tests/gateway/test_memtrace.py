"""TAFEL_TRACEMALLOC (gateway/memtrace.py): off unless asked for; on, a real gateway process
writes a loadable tracemalloc snapshot of its own allocations on each SIGUSR2."""

from __future__ import annotations

import os
import signal
import time
import tracemalloc
from pathlib import Path

import pytest

from gateway.settings import GatewaySettings
from kit.settings import ConfigError
from tools.platform import Platform

BASE = {"REDIS_URL": "redis://127.0.0.1:1/0", "TAFEL_TOKEN_SECRET": "s" * 20}


def test_off_by_default_and_a_file_when_on() -> None:
    assert GatewaySettings.from_env(BASE).tracemalloc_file == ""
    assert (
        GatewaySettings.from_env({**BASE, "TAFEL_TRACEMALLOC": "off", "TAFEL_TRACEMALLOC_FILE": "/x"}).tracemalloc_file
        == ""
    )
    on = GatewaySettings.from_env({**BASE, "TAFEL_TRACEMALLOC": "on"}).tracemalloc_file
    assert on.endswith(f"tafel-gateway-{os.getpid()}.tracemalloc")
    chosen = {**BASE, "TAFEL_TRACEMALLOC": "on", "TAFEL_TRACEMALLOC_FILE": "/tmp/g.tracemalloc"}
    assert GatewaySettings.from_env(chosen).tracemalloc_file == "/tmp/g.tracemalloc"
    with pytest.raises(ConfigError, match="TAFEL_TRACEMALLOC"):
        GatewaySettings.from_env({**BASE, "TAFEL_TRACEMALLOC": "yes"})


def _dumped(path: Path, before: int) -> tracemalloc.Snapshot:
    deadline = time.monotonic() + 60
    while not path.exists() or path.stat().st_mtime_ns == before:
        assert time.monotonic() < deadline, "no snapshot written"
        time.sleep(0.1)
    return tracemalloc.Snapshot.load(str(path))


def test_a_gateway_dumps_a_snapshot_on_sigusr2(tmp_path: Path) -> None:
    path = tmp_path / "gateway.tracemalloc"
    env = {"TAFEL_TRACEMALLOC": "on", "TAFEL_TRACEMALLOC_FILE": str(path)}
    platform = Platform(fixed_ports=False, games=("connect4",), bot_pool=False, extra_env=env).start()
    try:
        gateway = next(child for child in platform.children if child.name == "gateway-0")
        os.kill(gateway.process.pid, signal.SIGUSR2)
        first = _dumped(path, 0)
        files = {stat.traceback[0].filename for stat in first.statistics("filename")}
        assert any(name.endswith(os.path.join("gateway", "server.py")) for name in files)  # its own allocations
        os.kill(gateway.process.pid, signal.SIGUSR2)  # again: a fresh snapshot, the process still serving
        _dumped(path, path.stat().st_mtime_ns)
        assert gateway.process.poll() is None
        assert not path.with_name(path.name + ".partial").exists()
    finally:
        platform.stop()
