"""kit/health.py and kit/loops.py's failure classification, on a real Redis."""

from __future__ import annotations

import ast
import asyncio
import logging
from pathlib import Path

import pytest
from grpc_health.v1 import health, health_pb2
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from kit.health import HealthMonitor, redis_reachable, scripts_loadable
from kit.loops import Loop, is_outage
from kit.redis.layer import RedisLayer
from kit.redis.scripts import GATEWAY_SCRIPTS, RULES_SCRIPTS
from kit.retry import Backoff

ROOT = Path(__file__).resolve().parents[2]


def scripts_called(folder: str) -> set[str]:
    """Every script("...") literal in a tier's code."""
    names: set[str] = set()
    for path in (ROOT / folder).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "script"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                names.add(str(node.args[0].value))
    return names


def test_each_tier_checks_the_scripts_its_code_runs() -> None:
    assert scripts_called("services") == set(RULES_SCRIPTS)
    assert scripts_called("gateway") == set(GATEWAY_SCRIPTS)


def test_a_bug_or_a_refused_command_is_not_an_outage() -> None:
    assert is_outage(RedisConnectionError("down")) and is_outage(ConnectionRefusedError())
    assert not is_outage(FileNotFoundError("kit/redis/lua/leases/release.lua"))
    assert not is_outage(ResponseError("WRONGTYPE Operation against a key holding the wrong kind of value"))


async def test_a_pass_that_keeps_failing_is_logged_once_not_as_an_outage(caplog: pytest.LogCaptureFixture) -> None:
    failures = 5
    recovered = asyncio.Event()

    async def step() -> float | None:
        nonlocal failures
        if failures:
            failures -= 1
            raise FileNotFoundError("lua/leases/release.lua")
        recovered.set()
        return None

    loop = Loop("sweeper", step, every_s=0.001, log=logging.getLogger("tafel.test.health"))
    loop.broken.backoff = Backoff(first_s=0.001, cap_s=0.002)
    with caplog.at_level(logging.INFO, logger="tafel.test.health"):
        loop.start()
        await asyncio.wait_for(recovered.wait(), 5)
        await loop.stop()
    messages = [r.getMessage() for r in caplog.records]
    assert not any("redis unavailable" in m or "reachable again" in m for m in messages)
    failed = [r for r in caplog.records if "a pass failed" in r.getMessage()]
    assert len(failed) == 1 and failed[0].exc_info
    assert any("passes succeed again" in m for m in messages)


async def test_the_monitor_sets_every_status_and_logs_changes_once(
    layer: RedisLayer, caplog: pytest.LogCaptureFixture
) -> None:
    servicer = health.aio.HealthServicer()
    broken = False

    async def flaky() -> str | None:
        return "the test says so" if broken else None

    checks = [redis_reachable(layer, 2.0), scripts_loadable(layer, RULES_SCRIPTS, 2.0), flaky]
    monitor = HealthMonitor(servicer, ["a.Service"], checks, every_s=60, log=logging.getLogger("tafel.test.health"))

    async def status(name: str) -> int:
        answer = await servicer.Check(health_pb2.HealthCheckRequest(service=name), None)
        return int(answer.status)

    with caplog.at_level(logging.INFO, logger="tafel.test.health"):
        assert await monitor.check() is None
        broken = True
        for _ in range(3):
            assert await monitor.check() == "the test says so"
        assert await status("") == await status("a.Service") == health_pb2.HealthCheckResponse.NOT_SERVING
        broken = False
        assert await monitor.check() is None
        assert await status("a.Service") == health_pb2.HealthCheckResponse.SERVING
    messages = [r.getMessage() for r in caplog.records]
    assert sum("NOT_SERVING" in m for m in messages) == 1 and sum("SERVING again" in m for m in messages) == 1
    assert await scripts_loadable(layer, ["rules/none-such"], 2.0)() is not None
