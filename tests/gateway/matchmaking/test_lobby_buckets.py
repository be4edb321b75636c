"""The lobby's search buckets: a search's bucket (canonical options, table size, time control,
its id) is made once per request shape and description, and bad requests are still refused."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import grpc
import pytest
from tafel.connect4.v1 import connect4_pb2
from tafel.games.v1 import games_pb2
from tafel.play.v1 import play_pb2
from tafel.rules.v1 import rules_pb2

from gateway.lobby import LobbyServicer
from gateway.settings import RoomSettings
from kit.errors import Refused
from kit.redis.layer import RedisLayer
from kit.redis.pubsub import PubSub
from tests.gateway.lobby_helpers import FAST, RecordingStarter
from tests.gateway.local_games import local_catalogue


@dataclass(frozen=True)
class Times:
    per_move_s: float = 60.0
    min_per_move_s: float = 5.0
    max_per_move_s: float = 3600.0


@pytest.fixture
async def lobby(redis_url: str) -> AsyncIterator[LobbyServicer]:
    layer, pubsub = RedisLayer.connect(redis_url), PubSub(redis_url)
    try:
        yield LobbyServicer(
            layer, None, RecordingStarter(), local_catalogue(), Times(),  # type: ignore[arg-type]
            pubsub=pubsub, matchmaking=FAST, rooms=RoomSettings(),
        )
    finally:
        await pubsub.close()
        await layer.close()


def search(rows: int = 0) -> play_pb2.FindMatchRequest:
    request = play_pb2.FindMatchRequest(game="connect4")
    if rows:
        request.options.CopyFrom(games_pb2.GameOptions(connect4=connect4_pb2.Options(rows=rows)))
    return request


async def test_one_request_shape_gets_one_bucket_while_its_description_stands(lobby: LobbyServicer) -> None:
    description = await lobby._describe("connect4")
    first = lobby._bucket_of(search(), description)
    assert lobby._bucket_of(search(), description) is first
    assert first.options.connect4.rows > 0 and first.min_seats == first.max_seats == 2
    other = lobby._bucket_of(search(rows=first.options.connect4.rows + 1), description)
    assert other.bucket_id != first.bucket_id
    # A description read again (a new object) makes the bucket again, the same bucket by value.
    again = lobby._bucket_of(search(), rules_pb2.DescribeGameResponse.FromString(description.SerializeToString()))
    assert again is not first and again == first and again.bucket_id == first.bucket_id


async def test_a_bad_search_is_refused_every_time(lobby: LobbyServicer) -> None:
    description = await lobby._describe("connect4")
    for _ in range(2):
        with pytest.raises(Refused) as refused:
            lobby._bucket_of(search(rows=10_000), description)
        assert refused.value.code == grpc.StatusCode.INVALID_ARGUMENT
