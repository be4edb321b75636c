"""The gateway's rules router sends game creations and views on its ApplyMoves streams, as it
does moves (gateway/rules/router.py): no unary call but DescribeGame, and the same answers and
refusals as the service's unary calls give."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
import pytest
from tafel.rules.v1 import rules_pb2
from tafel_rules.connect4 import RULES

from gateway.rules import RulesRouter
from kit.errors import Refused
from services.connect4.codec import CODEC
from tests.gateway.harness import c4_move
from tests.services.rules_harness import Service, apply_request, new_id, rules_service


class CountingStub:
    """A replica's stub that records the unary calls made through it."""

    def __init__(self, stub: Any) -> None:
        self.stub = stub
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self.stub, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(name)
            return method(*args, **kwargs)

        return call


@pytest.fixture
async def service(redis_url: str) -> AsyncIterator[Service]:
    async with rules_service(RULES, CODEC, redis_url) as svc:
        yield svc


async def started_router(service: Service) -> tuple[RulesRouter, CountingStub]:
    router = RulesRouter({"connect4": (service.running.address,)}, timeout_s=5)
    router.start()
    (replica,) = router._sets["connect4"].replicas
    for stream in replica.streams:
        assert await stream.wait_up(5)
    stub = CountingStub(replica.stub)
    replica.stub = stub  # type: ignore[assignment]  # the streams keep the real one
    return router, stub


async def play_a_game_start(router: RulesRouter, game_id: str) -> None:
    """What a game start costs the gateway: the creation, both seats' views, a move, a view after it."""
    created = await router.create_game(
        "connect4", rules_pb2.CreateGameRequest(game_id=game_id, seats=2, request_id=new_id())
    )
    assert created.status.to_act == [0]
    views = await asyncio.gather(
        *(router.get_view("connect4", rules_pb2.GetViewRequest(game_id=game_id, seat=seat)) for seat in (0, 1))
    )
    assert [(view.last_event_id, view.status.version, view.seats) for view in views] == [("0-1", 0, 2)] * 2
    moved = await router.apply("connect4", apply_request(game_id, 0, 0, move=c4_move(3)))
    after = await router.get_view("connect4", rules_pb2.GetViewRequest(game_id=game_id))
    assert after.status.version == moved.version == 1 and after.last_event_id == moved.events[-1].event_id


async def refusals(router: RulesRouter, game_id: str) -> list[tuple[grpc.StatusCode, str]]:
    """The refusals of a second creation of game_id, a view of no game and of a seat that is not there."""
    attempts = [
        router.create_game("connect4", rules_pb2.CreateGameRequest(game_id=game_id, seats=2, request_id=new_id())),
        router.get_view("connect4", rules_pb2.GetViewRequest(game_id=new_id("missing"))),
        router.get_view("connect4", rules_pb2.GetViewRequest(game_id=game_id, seat=7)),
    ]
    found = []
    for attempt in attempts:
        with pytest.raises(Refused) as refused:
            await attempt
        assert refused.value.message
        found.append((refused.value.code, refused.value.reason))
    return found


EXPECTED_REFUSALS = [
    (grpc.StatusCode.ALREADY_EXISTS, "GAME_EXISTS"),
    (grpc.StatusCode.NOT_FOUND, "GAME_NOT_FOUND"),
    (grpc.StatusCode.INVALID_ARGUMENT, "BAD_SEAT"),
]


async def test_creations_and_views_ride_the_streams(service: Service) -> None:
    router, stub = await started_router(service)
    try:
        games = [new_id("g") for _ in range(40)]
        # Many games at once: entries of every kind share the streams' batches.
        await asyncio.gather(*(play_a_game_start(router, game_id) for game_id in games))
        assert await refusals(router, games[0]) == EXPECTED_REFUSALS
        assert stub.calls == []  # not one unary call
    finally:
        await router.close()
