"""Health that means "can do its work" (docs/health.md), for the standard grpc.health.v1 service.

A server is SERVING only while every check of its tier passes; each check is an async callable
answering None (fine) or a readable reason. They run at start (before the server announces its
address) and then every ``TAFEL_HEALTH_CHECK_S`` (kit/settings.py). The status of the whole
server ("") and of each of its services changes together; a change is logged once (NOT_SERVING
with its reason as a warning, SERVING again as info), not on every check.

- ``redis_reachable``: a PING answered in time.
- ``scripts_loadable``: every Lua script the tier runs can be read from the installed package
  (an image without kit/redis/lua failed every search while saying SERVING) and is loaded in
  Redis (SCRIPT LOAD compiles it: a script Redis refuses is a reason too).
Tiers add their own (the gateway: each game's rules service reachable, gateway/rules/router.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any

from grpc_health.v1 import health_pb2
from redis.exceptions import RedisError

from kit.loops import Loop, is_outage
from kit.redis.layer import RedisLayer
from kit.redis.scripts import Script, script

Check = Callable[[], Awaitable[str | None]]
HEALTH_TIMEOUT_S = 2.0  # the longest one check may take (less when checks run more often)
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


def redis_reachable(layer: RedisLayer, timeout_s: float) -> Check:
    async def check() -> str | None:
        try:
            async with asyncio.timeout(timeout_s):
                await layer.call("PING")
        except (RedisError, OSError):
            return "redis is unreachable"
        return None

    return check


def scripts_loadable(layer: RedisLayer, names: Iterable[str], timeout_s: float) -> Check:
    """Every script in `names` ("<owner>/<name>") readable here and loaded in Redis."""
    wanted = tuple(names)

    async def check() -> str | None:
        scripts: list[Script] = []
        missing: list[str] = []
        for name in wanted:
            try:
                scripts.append(script(name))
            except (OSError, ValueError):
                missing.append(name)
        if missing:
            return f"Lua scripts missing from the installed package (or unreadable): {', '.join(missing)}"
        try:
            async with asyncio.timeout(timeout_s):
                known: Any = await layer.call("SCRIPT", "EXISTS", *(s.sha for s in scripts))
                for item, present in zip(scripts, known, strict=True):
                    if not present:
                        await layer.call("SCRIPT", "LOAD", item.source)
        except (RedisError, OSError) as error:
            if is_outage(error):
                return "redis is unreachable"
            return "redis refused to load a Lua script"
        return None

    return check


class HealthMonitor:
    """Runs a tier's checks and sets the health service's statuses from them."""

    def __init__(
        self,
        health: Any,  # grpc_health's aio HealthServicer
        names: Sequence[str],
        checks: Sequence[Check],
        *,
        every_s: float,
        log: logging.Logger,
    ) -> None:
        self.health = health
        self.names = tuple(names)
        self.checks = tuple(checks)
        self.log = log
        self.reason: str | None = None  # why it is NOT_SERVING; None while SERVING
        self._set = False  # the statuses were set from a check at least once
        self.loop = Loop("health checks", self._step, every_s=every_s, log=log)

    async def start(self) -> None:
        """Check now (so the first answer already means something), then every `every_s`."""
        await self.check()
        self.loop.start()

    async def stop(self) -> None:
        await self.loop.stop()

    async def _step(self) -> None:
        await self.check()

    async def check(self) -> str | None:
        """Run every check; set and return the reason (None: SERVING)."""
        reason = None
        for check in self.checks:
            try:
                reason = await check()
            except Exception:  # a check that breaks says so, rather than leaving the last status
                self.log.exception("a health check failed")
                reason = "a health check failed"
            if reason is not None:
                break
        if reason != self.reason:
            if reason is None:
                self.log.info("health: SERVING again")
            else:
                self.log.warning("health: NOT_SERVING: %s", reason, extra={"reason": reason})
        if reason != self.reason or not self._set:
            status = SERVING if reason is None else NOT_SERVING
            for name in (*self.names, ""):
                await self.health.set(name, status)
            self._set = True
        self.reason = reason
        return reason
