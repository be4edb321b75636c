"""Gateway test fixtures: one Connect Four rules service and two gateway processes for the session (for
each module on a Redis Cluster: tests/keyspace.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import pytest

from tests.gateway.harness import Client, Proc, Seating, seating, spawn_gateway, spawn_rules
from tests.keyspace import shared_scope


@dataclass
class GatewaySystem:
    redis_url: str
    rules: Proc
    gateways: list[Proc]

    @property
    def routes(self) -> dict[str, str]:
        return {"connect4": self.rules.address}


@pytest.fixture(scope=shared_scope)
def gw_system(redis_url: str) -> Iterator[GatewaySystem]:
    rules = spawn_rules(redis_url)
    gateways: list[Proc] = []
    try:
        for index in range(2):
            gateways.append(spawn_gateway(redis_url, {"connect4": rules.address}, name=f"gateway-{index}"))
        yield GatewaySystem(redis_url, rules, gateways)
    finally:
        for proc in (*gateways, rules):
            proc.stop()


@pytest.fixture(scope=shared_scope)
async def seats(gw_system: GatewaySystem) -> AsyncIterator[Seating]:
    async with seating(gw_system.redis_url, gw_system.routes) as value:
        yield value


@pytest.fixture
async def clients(gw_system: GatewaySystem) -> AsyncIterator[list[Client]]:
    """Three guests: two on gateway 0 and 1, a third (spectator) on gateway 1, own connections."""
    made = [
        await Client(gw_system.gateways[0].address).guest(),
        await Client(gw_system.gateways[1].address).guest(),
        await Client(gw_system.gateways[1].address).guest(),
    ]
    try:
        yield made
    finally:
        for client in made:
            await client.close()
