"""Helpers for the lobby's end-to-end tests: guests talking to real gateway processes through the
public LobbyService / GameService only."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import grpc
from redis.asyncio import Redis
from tafel.play.v1 import play_pb2, play_pb2_grpc

from kit.redis.keys import meta_pattern
from tests.gateway.harness import Proc, spawn_gateway, spawn_rules


@dataclass
class Guest:
    session: play_pb2.Session
    lobby: play_pb2_grpc.LobbyServiceStub
    games: play_pb2_grpc.GameServiceStub

    @property
    def md(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.session.token}"),)

    @property
    def player(self) -> play_pb2.Player:
        return self.session.player


async def guest_on(channel: grpc.aio.Channel) -> Guest:
    accounts = play_pb2_grpc.AccountServiceStub(channel)
    session = (await accounts.SignInAsGuest(play_pb2.SignInAsGuestRequest(), timeout=10)).session
    return Guest(session, play_pb2_grpc.LobbyServiceStub(channel), play_pb2_grpc.GameServiceStub(channel))


def same_player_on(guest: Guest, channel: grpc.aio.Channel) -> Guest:
    """The guest's session, through another gateway."""
    return Guest(guest.session, play_pb2_grpc.LobbyServiceStub(channel), play_pb2_grpc.GameServiceStub(channel))


def own_time_control() -> play_pb2.TimeControl:
    """A per-move time no other test uses, so a test's tickets meet only each other."""
    control = play_pb2.TimeControl()
    control.per_move.FromMilliseconds(60_000 + random.randrange(1, 10_000_000))
    return control


async def lobby_keys(redis: Redis) -> set[bytes]:
    keys: set[bytes] = set()
    for pattern in ("tafel:{mm:*", "tafel:{room:*", meta_pattern()):
        keys.update(await redis.keys(pattern))
    return keys


@contextmanager
def tables_system(redis_url: str, connect4_address: str) -> Iterator[tuple[list[Proc], Proc]]:
    """A Colour Square rules service and a gateway routing it and Connect Four (seat ranges)."""
    rules = spawn_rules(redis_url, "coloursquare")
    gateway: Proc | None = None
    try:
        gateway = spawn_gateway(
            redis_url,
            {"connect4": connect4_address, "coloursquare": rules.address},
            name="gateway-tables",
            TAFEL_MM_FILL_WAIT_S="1",
        )
        yield [gateway], rules
    finally:
        if gateway is not None:
            gateway.stop()
        rules.stop()
