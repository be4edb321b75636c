"""Private rooms kept private, through the gateways: a private room's game is hidden from strangers (not listed,
NOT_FOUND on GetGame and WatchGame, its record neither given nor listed) unless its owner made it
watchable; room look-ups by code are
limited per session (RESOURCE_EXHAUSTED with RetryInfo) so codes cannot be enumerated."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
import pytest
from tafel.play.v1 import play_pb2

from kit.errors import reason_of, retry_delay_of
from tests.gateway.conftest import GatewaySystem
from tests.gateway.lobby_e2e import Guest, guest_on


@pytest.fixture
async def channel(gw_system: GatewaySystem) -> AsyncIterator[grpc.aio.Channel]:
    async with grpc.aio.insecure_channel(gw_system.gateways[0].address) as made:
        yield made


async def _room_game(host: Guest, friend: Guest, watchable: bool) -> str:
    created = await host.lobby.CreateRoom(
        play_pb2.CreateRoomRequest(game="connect4", seats=2, watchable=watchable), metadata=host.md, timeout=10
    )
    assert created.room.watchable == watchable
    joined = await friend.lobby.JoinRoom(play_pb2.JoinRoomRequest(code=created.room.code), metadata=friend.md, timeout=10)
    assert joined.room.state == play_pb2.ROOM_STATE_STARTED
    return str(joined.room.game_id)


async def _live_ids(guest: Guest) -> set[str]:
    listed = await guest.games.ListLiveGames(
        play_pb2.ListLiveGamesRequest(game="connect4", page_size=100), metadata=guest.md, timeout=10
    )
    return {summary.game_id for summary in listed.games}


async def _code(call: object) -> grpc.StatusCode:
    try:
        if hasattr(call, "__aiter__"):
            async for _ in call:  # type: ignore[attr-defined]
                pass
        else:
            await call  # type: ignore[misc]
    except grpc.aio.AioRpcError as error:
        return error.code()
    return grpc.StatusCode.OK


async def test_a_private_rooms_game_is_hidden_from_strangers(channel: grpc.aio.Channel) -> None:
    host, friend, stranger = await guest_on(channel), await guest_on(channel), await guest_on(channel)
    game_id = await _room_game(host, friend, watchable=False)
    assert game_id not in await _live_ids(stranger)
    get = stranger.games.GetGame(play_pb2.GetGameRequest(game_id=game_id), metadata=stranger.md, timeout=10)
    assert await _code(get) == grpc.StatusCode.NOT_FOUND
    watch = stranger.games.WatchGame(play_pb2.WatchGameRequest(game_id=game_id), metadata=stranger.md, timeout=10)
    assert await _code(watch) == grpc.StatusCode.NOT_FOUND
    # The players themselves see it.
    view = await friend.games.GetGame(play_pb2.GetGameRequest(game_id=game_id), metadata=friend.md, timeout=10)
    assert view.summary.game_id == game_id
    # Its record too, once it is over; strangers neither get it nor find it in a player's list.
    await host.games.Resign(play_pb2.ResignRequest(game_id=game_id, request_id="r1"), metadata=host.md, timeout=10)
    record = await friend.games.GetGameRecord(
        play_pb2.GetGameRecordRequest(game_id=game_id), metadata=friend.md, timeout=10
    )
    assert record.record.private and record.record.game_id == game_id
    get_record = stranger.games.GetGameRecord(
        play_pb2.GetGameRecordRequest(game_id=game_id), metadata=stranger.md, timeout=10
    )
    assert await _code(get_record) == grpc.StatusCode.NOT_FOUND
    for viewer, expected in ((friend, True), (stranger, False)):
        listed = await viewer.games.ListGameRecords(
            play_pb2.ListGameRecordsRequest(player_id=host.player.player_id, page_size=50), metadata=viewer.md, timeout=10
        )
        assert (game_id in {r.game_id for r in listed.records}) == expected


async def test_a_watchable_rooms_game_is_listed_and_open_to_spectators(channel: grpc.aio.Channel) -> None:
    host, friend, stranger = await guest_on(channel), await guest_on(channel), await guest_on(channel)
    game_id = await _room_game(host, friend, watchable=True)
    assert game_id in await _live_ids(stranger)
    view = await stranger.games.GetGame(play_pb2.GetGameRequest(game_id=game_id), metadata=stranger.md, timeout=10)
    assert view.summary.game_id == game_id


async def test_room_lookups_are_limited_per_session(channel: grpc.aio.Channel) -> None:
    prober = await guest_on(channel)
    refused = None
    for index in range(40):  # the burst is 20 per session; guesses never name an open room
        code = f"{index:010d}".translate(str.maketrans("0123456789", "ABCDEFGHJK"))
        try:
            await prober.lobby.GetRoom(play_pb2.GetRoomRequest(code=code), metadata=prober.md, timeout=10)
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                refused = error
                break
            assert error.code() == grpc.StatusCode.NOT_FOUND
    assert refused is not None, "40 room look-ups in a row were never limited"
    assert reason_of(refused) == "RATE_LIMITED" and (retry_delay_of(refused) or 0) > 0
