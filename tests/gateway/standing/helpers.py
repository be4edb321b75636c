"""Accounts, staff and stubs for the standing tests, through the public API of real gateways."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

import grpc
from tafel.admin.v1 import admin_pb2_grpc
from tafel.play.v1 import play_pb2, play_pb2_grpc, safety_pb2_grpc

from gateway.standing.roles import ROLES_BY_NAME
from gateway.standing.store import StandingStore
from kit.redis.layer import RedisLayer

PASSWORD = "correct horse battery"


@dataclass
class Person:
    channel: grpc.aio.Channel
    session: play_pb2.Session

    @property
    def md(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.session.token}"),)

    @property
    def name(self) -> str:
        return self.session.player.username

    @property
    def accounts(self) -> play_pb2_grpc.AccountServiceStub:
        return play_pb2_grpc.AccountServiceStub(self.channel)

    @property
    def games(self) -> play_pb2_grpc.GameServiceStub:
        return play_pb2_grpc.GameServiceStub(self.channel)

    @property
    def safety(self) -> safety_pb2_grpc.SafetyServiceStub:
        return safety_pb2_grpc.SafetyServiceStub(self.channel)

    @property
    def moderation(self) -> admin_pb2_grpc.ModerationServiceStub:
        return admin_pb2_grpc.ModerationServiceStub(self.channel)

    @property
    def admin(self) -> admin_pb2_grpc.AdminServiceStub:
        return admin_pb2_grpc.AdminServiceStub(self.channel)


def unique(prefix: str) -> str:
    return f"{prefix}{secrets.token_hex(4)}"


async def register(address: str, prefix: str) -> Person:
    channel = grpc.aio.insecure_channel(address)
    stub = play_pb2_grpc.AccountServiceStub(channel)
    response = await stub.Register(play_pb2.RegisterRequest(username=unique(prefix), password=PASSWORD), timeout=10)
    return Person(channel, response.session)


async def sign_in(person: Person, address: str | None = None) -> Person:
    channel = grpc.aio.insecure_channel(address) if address else person.channel
    stub = play_pb2_grpc.AccountServiceStub(channel)
    response = await stub.SignIn(play_pb2.SignInRequest(username=person.name, password=PASSWORD), timeout=10)
    return Person(channel, response.session)


async def grant(redis_url: str, username: str, role: str) -> None:
    """As `tafel-admin grant` does: straight in Redis, the server as the actor."""
    layer = RedisLayer.connect(redis_url, max_connections=2)
    try:
        await StandingStore(layer).set_role(None, username, ROLES_BY_NAME[role], "made staff for a test")
    finally:
        await layer.close()
