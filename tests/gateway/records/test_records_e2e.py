"""A finished game always has a record: a game whose end reached the rules service but whose
record the ending process never wrote (it died between the two writes, or is a moment behind)
gets it written by the first GetGameRecord, once; a live game still has none."""

from __future__ import annotations

import grpc
import pytest
from tafel.play.v1 import play_pb2
from tafel.rules.v1 import rules_pb2

from tests.gateway.conftest import GatewaySystem
from tests.gateway.harness import Client, Seating, new_id


async def test_a_game_ended_behind_the_gateways_back_gets_its_record_on_request(
    gw_system: GatewaySystem, seats: Seating, clients: list[Client]
) -> None:
    a, b, _ = clients
    game_id = await seats.start([a.player, b.player])
    request = play_pb2.GetGameRecordRequest(game_id=game_id)
    with pytest.raises(grpc.aio.AioRpcError) as live:
        await a.games.GetGameRecord(request, metadata=a.md)
    assert live.value.code() == grpc.StatusCode.NOT_FOUND  # not over: no record yet

    # Seat 0 resigns on the rules service directly: the game is over there, and no gateway saw it.
    resign = rules_pb2.ApplyMoveRequest(
        game_id=game_id, seat=0, expected_version=0, request_id=new_id(), resignation=rules_pb2.Resignation()
    )
    applied = await seats.router.apply("connect4", resign)
    assert applied.status.over

    first = (await b.games.GetGameRecord(request, metadata=b.md)).record
    assert first.game_id == game_id and list(first.outcome.winners) == [1]
    again = (await a.games.GetGameRecord(request, metadata=a.md)).record
    assert again == first  # written once
    listed = await a.games.ListGameRecords(play_pb2.ListGameRecordsRequest(player_id=a.player.player_id), metadata=a.md)
    assert game_id in [r.game_id for r in listed.records]


async def test_a_players_records_list_across_slots(gw_system: GatewaySystem, seats: Seating, clients: list[Client]) -> None:
    """Records live one per slot on a cluster ({g:<id>}): a page of several must still be read."""
    a, b, _ = clients
    ended = []
    for _ in range(3):
        game_id = await seats.start([a.player, b.player])
        await a.games.Resign(play_pb2.ResignRequest(game_id=game_id, request_id=new_id()), metadata=a.md)
        ended.append(game_id)
    for game_id in ended:  # the records are written by the game's end (or the first read)
        await b.games.GetGameRecord(play_pb2.GetGameRecordRequest(game_id=game_id), metadata=b.md)
    listed = await a.games.ListGameRecords(play_pb2.ListGameRecordsRequest(player_id=a.player.player_id), metadata=a.md)
    assert set(ended) <= {r.game_id for r in listed.records}
