"""Health that means "can do its work", and no client left waiting on a failed background task
(docs/health.md): real gateway and rules processes, a real Redis, only public APIs.

A server is run from a copy of its packages that lacks some Lua scripts, as an installed package
without them once did (every container said SERVING and FindMatch never answered)."""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from tafel.play.v1 import play_pb2, play_pb2_grpc

from tests.gateway.conftest import GatewaySystem
from tests.gateway.harness import Proc, spawn, spawn_gateway
from tests.gateway.lobby_e2e import Guest, guest_on, own_time_control
from tools.platform import ROOT
from tools.redis_server import free_port, start_redis

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
FAST = {"TAFEL_HEALTH_CHECK_S": "0.2", "TAFEL_LOG_LEVEL": "INFO"}


def packages_without(folder: Path, scripts: list[str]) -> Path:
    """kit/, gateway/ and services/ copied into `folder` without the named Lua scripts."""
    for package in ("kit", "gateway", "services"):
        shutil.copytree(ROOT / package, folder / package, ignore=shutil.ignore_patterns("__pycache__"))
    for name in scripts:
        (folder / "kit" / "redis" / "lua" / f"{name}.lua").unlink()
    return folder


# Runs the copy's code: -P keeps the checkout (the working directory) off the path, so the copy
# on PYTHONPATH is what `-m` finds.
FROM_COPY = ("-P",)


async def health_of(address: str, service: str = "") -> int:
    async with grpc.aio.insecure_channel(address) as channel:
        answer = await health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=service), timeout=5
        )
        return int(answer.status)


async def health_becomes(address: str, status: int, within_s: float = 15.0) -> None:
    deadline = time.monotonic() + within_s
    while (last := await health_of(address)) != status:
        assert time.monotonic() < deadline, f"health stayed {last}, expected {status}"
        await asyncio.sleep(0.1)


def lines(proc: Proc, text: str) -> list[str]:
    return [line for line in proc.output if text in line]


@pytest.fixture
def broken_gateway(gw_system: GatewaySystem, tmp_path: Path) -> Iterator[Proc]:
    """A gateway whose package lacks queueing's script and the lease release (used by the rating
    sweeper, which sweeps every 0.2 s here)."""
    copy = packages_without(tmp_path, ["matchmaking/claim_enqueue", "leases/release"])
    proc = spawn_gateway(
        gw_system.redis_url,
        gw_system.routes,
        name="gateway-without-scripts",
        python_args=FROM_COPY,
        PYTHONPATH=str(copy),
        TAFEL_RATING_SWEEP_S="0.2",
        **FAST,
    )
    try:
        yield proc
    finally:
        proc.stop()


@pytest.fixture
async def guest(broken_gateway: Proc) -> AsyncIterator[Guest]:
    async with grpc.aio.insecure_channel(broken_gateway.address) as channel:
        yield await guest_on(channel)


async def test_a_gateway_without_its_scripts_says_not_serving_and_no_search_waits(
    broken_gateway: Proc, guest: Guest
) -> None:
    assert await health_of(broken_gateway.address) == NOT_SERVING
    assert await health_of(broken_gateway.address, "tafel.play.v1.LobbyService") == NOT_SERVING

    request = play_pb2.FindMatchRequest(game="connect4", time_control=own_time_control())
    started = time.monotonic()
    with pytest.raises(grpc.aio.AioRpcError) as failed:
        async for _ in guest.lobby.FindMatch(request, metadata=guest.md, timeout=30):
            pass
    assert failed.value.code() == grpc.StatusCode.INTERNAL
    assert time.monotonic() - started < 5
    text = failed.value.details() or ""
    assert ".lua" not in text and "Error" not in text  # readable, never the exception's text

    # The same search on the Play stream is answered with a refusal, not left waiting.
    play = play_pb2_grpc.GameServiceStub(grpc.aio.insecure_channel(broken_gateway.address))
    stream = play.Play(metadata=guest.md, timeout=30)
    await stream.write(play_pb2.PlayRequest(correlation_id=7, find_match=request))
    answer = await asyncio.wait_for(stream.read(), 5)
    assert answer.correlation_id == 7 and answer.WhichOneof("kind") == "refusal"
    assert answer.refusal.code == grpc.StatusCode.INTERNAL.value[0]
    assert ".lua" not in answer.refusal.message
    stream.cancel()

    await asyncio.sleep(1.0)  # some rating sweeps, each failing on the missing lease script
    reasons = lines(broken_gateway, "NOT_SERVING")
    assert len(reasons) == 1 and "matchmaking/claim_enqueue" in reasons[0]  # once, not every check
    # A script missing is our bug, not Redis being down (it logged both every minute).
    assert not lines(broken_gateway, "redis unavailable") and not lines(broken_gateway, "reachable again")
    assert len(lines(broken_gateway, "rating sweeper: a pass failed")) == 1


async def test_a_bucket_worker_that_cannot_renew_ends_its_searches(gw_system: GatewaySystem, tmp_path: Path) -> None:
    copy = packages_without(tmp_path, ["matchmaking/renew"])
    proc = spawn_gateway(
        gw_system.redis_url,
        gw_system.routes,
        name="gateway-without-renew",
        python_args=FROM_COPY,
        PYTHONPATH=str(copy),
        **FAST,
    )
    try:
        async with grpc.aio.insecure_channel(proc.address) as channel:
            guest = await guest_on(channel)
            request = play_pb2.FindMatchRequest(game="connect4", time_control=own_time_control())
            updates: list[play_pb2.FindMatchResponse] = []
            started = time.monotonic()
            with pytest.raises(grpc.aio.AioRpcError) as failed:
                async for update in guest.lobby.FindMatch(request, metadata=guest.md, timeout=30):
                    updates.append(update)
            assert failed.value.code() == grpc.StatusCode.INTERNAL
            assert time.monotonic() - started < 5
            assert updates and updates[0].HasField("queued")  # queued first: the worker failed later
    finally:
        proc.stop()


async def test_health_follows_redis_and_the_rules_service(tmp_path: Path) -> None:
    port = free_port()
    redis = start_redis(port)
    procs: list[Proc] = []
    try:
        rules = spawn("connect4-rules", "services.connect4", {"REDIS_URL": redis.url, **FAST})
        procs.append(rules)
        gateway = spawn_gateway(redis.url, {"connect4": rules.address}, name="gateway-health", **FAST)
        procs.append(gateway)
        assert await health_of(rules.address) == SERVING
        assert await health_of(gateway.address) == SERVING

        redis.stop()
        await health_becomes(rules.address, NOT_SERVING)
        await health_becomes(gateway.address, NOT_SERVING)
        redis = start_redis(port)
        await health_becomes(rules.address, SERVING)
        await health_becomes(gateway.address, SERVING)
        for proc in (rules, gateway):
            assert len(lines(proc, "NOT_SERVING: redis is unreachable")) == 1
            assert len(lines(proc, "SERVING again")) == 1

        # A rules service without its scripts is not serving, and neither is a gateway whose only
        # Connect Four service it is.
        copy = packages_without(tmp_path, ["rules/commit"])
        broken = spawn(
            "connect4-without-commit",
            "services.connect4",
            {"REDIS_URL": redis.url, "PYTHONPATH": str(copy), **FAST},
            python_args=FROM_COPY,
        )
        procs.append(broken)
        assert await health_of(broken.address, "tafel.rules.v1.RulesService") == NOT_SERVING
        assert "rules/commit" in lines(broken, "NOT_SERVING")[0]
        lonely = spawn_gateway(redis.url, {"connect4": broken.address}, name="gateway-lonely", **FAST)
        procs.append(lonely)
        assert await health_of(lonely.address) == NOT_SERVING
        assert "connect4" in lines(lonely, "NOT_SERVING")[0]
    finally:
        for proc in procs:
            proc.stop()
        redis.stop()
