"""Start a real rules service (in this process, port 0) against a real Redis, for service tests."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import grpc
from redis.asyncio import Redis
from tafel.rules.v1 import rules_pb2, rules_pb2_grpc
from tafel_rules.game import Rules

from kit.errors import reason_of
from kit.redis.layer import RedisLayer
from kit.server import RunningServer
from kit.settings import RulesSettings
from services.host.codec import GameCodec
from services.host.main import start_rules_service


@dataclass
class Service:
    running: RunningServer
    channel: grpc.aio.Channel
    stub: rules_pb2_grpc.RulesServiceStub
    redis: Redis  # the layer's redis-py client, for the tests' own reads
    layer: RedisLayer


@asynccontextmanager
async def rules_service(
    rules: Rules[Any, Any, Any, Any, Any],
    codec: GameCodec[Any, Any, Any, Any, Any],
    redis_url: str,
    **env: str,
) -> AsyncIterator[Service]:
    settings = RulesSettings.from_env({"REDIS_URL": redis_url, "TAFEL_PORT": "0", **env})
    running, _, layer = await start_rules_service(rules, codec, settings)
    channel = grpc.aio.insecure_channel(running.address)
    try:
        yield Service(running, channel, rules_pb2_grpc.RulesServiceStub(channel), layer.client, layer)
    finally:
        await channel.close()
        await running.server.stop(0)
        await layer.close()


def new_id(prefix: str = "t") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:16]}"


async def refusal(call: Any) -> tuple[grpc.StatusCode, str | None, str]:
    """Await a call expected to fail; return its code, ErrorInfo reason and message."""
    try:
        await call
    except grpc.aio.AioRpcError as error:
        return error.code(), reason_of(error), error.details() or ""
    raise AssertionError("the call succeeded but was expected to fail")


def apply_request(game_id: str, seat: int, version: int, **action: Any) -> rules_pb2.ApplyMoveRequest:
    return rules_pb2.ApplyMoveRequest(
        game_id=game_id, seat=seat, expected_version=version, request_id=new_id("r"), **action
    )
