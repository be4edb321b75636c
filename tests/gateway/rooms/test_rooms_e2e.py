"""Private rooms end to end: real gateway processes, real rules services, a real Redis; clients
use only the public API."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import grpc
import pytest
from redis.asyncio import Redis
from tafel.coloursquare.v1 import coloursquare_pb2
from tafel.connect4.v1 import connect4_pb2
from tafel.games.v1 import games_pb2
from tafel.play.v1 import play_pb2

from kit.errors import reason_of
from tests.gateway.conftest import GatewaySystem
from tests.gateway.lobby_e2e import Guest, guest_on, lobby_keys, tables_system


@pytest.fixture
async def channels(gw_system: GatewaySystem) -> AsyncIterator[list[grpc.aio.Channel]]:
    made = [grpc.aio.insecure_channel(g.address) for g in gw_system.gateways]
    try:
        yield made
    finally:
        for channel in made:
            await channel.close()


async def failure(call: object) -> tuple[grpc.StatusCode, str | None]:
    try:
        await call  # type: ignore[misc]
    except grpc.aio.AioRpcError as error:
        return error.code(), reason_of(error)
    raise AssertionError("the call succeeded but was expected to fail")


async def watch(guest: Guest, code: str) -> list[play_pb2.Room]:
    return [
        r.room async for r in guest.lobby.WatchRoom(play_pb2.WatchRoomRequest(code=code), metadata=guest.md, timeout=30)
    ]


async def rest_of(call: grpc.aio.UnaryStreamCall, first: play_pb2.Room) -> list[play_pb2.Room]:  # type: ignore[type-arg]
    seen = [first]
    while (response := await call.read()) is not grpc.aio.EOF:
        seen.append(response.room)
    return seen


async def test_a_connect_four_room_across_two_gateways(channels: list[grpc.aio.Channel]) -> None:
    host, friend, stranger = await guest_on(channels[0]), await guest_on(channels[1]), await guest_on(channels[1])
    control = play_pb2.TimeControl()
    control.per_move.FromSeconds(20)
    created = (
        await host.lobby.CreateRoom(
            play_pb2.CreateRoomRequest(
                game="connect4",
                options=games_pb2.GameOptions(connect4=connect4_pb2.Options(columns=8)),
                time_control=control,
            ),
            metadata=host.md,
            timeout=10,
        )
    ).room
    assert created.state == play_pb2.ROOM_STATE_OPEN and created.seats == 2 and len(created.code) == 10
    assert created.options.connect4.rows == 6 and created.options.connect4.columns == 8  # defaults filled

    # The stranger's watch answers with the room as it is before anyone joins (read here rather
    # than after a fixed pause, which a busy machine outlasted: the first snapshot was STARTED).
    call = stranger.lobby.WatchRoom(play_pb2.WatchRoomRequest(code=created.code), metadata=stranger.md, timeout=30)
    first = await call.read()
    assert first is not grpc.aio.EOF and first.room.state == play_pb2.ROOM_STATE_OPEN
    watcher = asyncio.create_task(rest_of(call, first.room))
    # The friend types the code in lower case with a dash.
    typed = f"{created.code[:3].lower()}-{created.code[3:].lower()}"
    joined = (await friend.lobby.JoinRoom(play_pb2.JoinRoomRequest(code=typed), metadata=friend.md, timeout=10)).room
    assert joined.state == play_pb2.ROOM_STATE_STARTED and joined.game_id
    seen = await asyncio.wait_for(watcher, 10)
    assert seen[0].state == play_pb2.ROOM_STATE_OPEN and seen[-1].game_id == joined.game_id

    game = await friend.games.GetGame(play_pb2.GetGameRequest(game_id=joined.game_id), metadata=friend.md)
    assert game.seat == 1
    assert [p.player.player_id for p in game.summary.players] == [host.player.player_id, friend.player.player_id]
    assert game.view.connect4.columns == 8
    assert game.summary.time_control.per_move.seconds == 20

    assert await failure(
        stranger.lobby.JoinRoom(play_pb2.JoinRoomRequest(code=created.code), metadata=stranger.md)
    ) == (grpc.StatusCode.FAILED_PRECONDITION, "ROOM_STARTED")
    got = await stranger.lobby.GetRoom(play_pb2.GetRoomRequest(code=created.code), metadata=stranger.md)
    assert got.room.game_id == joined.game_id


async def test_the_last_seat_goes_to_exactly_one_of_many(channels: list[grpc.aio.Channel]) -> None:
    host = await guest_on(channels[0])
    racers = [await guest_on(channels[i % 2]) for i in range(10)]
    code = (
        await host.lobby.CreateRoom(play_pb2.CreateRoomRequest(game="connect4"), metadata=host.md, timeout=10)
    ).room.code
    outcomes = await asyncio.gather(
        *(r.lobby.JoinRoom(play_pb2.JoinRoomRequest(code=code), metadata=r.md, timeout=10) for r in racers),
        return_exceptions=True,
    )
    winners = [o for o in outcomes if not isinstance(o, BaseException)]
    assert len(winners) == 1
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            assert isinstance(outcome, grpc.aio.AioRpcError)
            assert reason_of(outcome) in ("ROOM_FULL", "ROOM_STARTED")


async def test_bad_room_requests_are_refused_and_write_nothing(channels: list[grpc.aio.Channel], redis: Redis) -> None:
    me = await guest_on(channels[0])
    before = await lobby_keys(redis)
    lobby = me.lobby
    md = me.md
    cases = [
        (lobby.CreateRoom(play_pb2.CreateRoomRequest(game="go"), metadata=md), "UNKNOWN_GAME"),
        (lobby.CreateRoom(play_pb2.CreateRoomRequest(game="connect4", seats=3), metadata=md), "BAD_SEATS"),
        (lobby.CreateRoom(play_pb2.CreateRoomRequest(game="connect4", seats=1), metadata=md), "BAD_SEATS"),
        (
            lobby.CreateRoom(
                play_pb2.CreateRoomRequest(
                    game="connect4", options=games_pb2.GameOptions(connect4=connect4_pb2.Options(rows=99))
                ),
                metadata=md,
            ),
            "OPTION_OUT_OF_RANGE",
        ),
        (
            lobby.CreateRoom(
                play_pb2.CreateRoomRequest(
                    game="connect4", options=games_pb2.GameOptions(coloursquare=coloursquare_pb2.Options())
                ),
                metadata=md,
            ),
            "OPTIONS_MISMATCH",
        ),
        (lobby.JoinRoom(play_pb2.JoinRoomRequest(code=""), metadata=md), "BAD_ROOM_CODE"),
        (lobby.JoinRoom(play_pb2.JoinRoomRequest(code="AB0DE1"), metadata=md), "BAD_ROOM_CODE"),
        (lobby.JoinRoom(play_pb2.JoinRoomRequest(code="x" * 10_000), metadata=md), "BAD_ROOM_CODE"),
        (lobby.LeaveRoom(play_pb2.LeaveRoomRequest(code="?"), metadata=md), "BAD_ROOM_CODE"),
        (lobby.StartRoom(play_pb2.StartRoomRequest(code="ABCDE"), metadata=md), "BAD_ROOM_CODE"),
        (lobby.GetRoom(play_pb2.GetRoomRequest(code="ABCDEFG"), metadata=md), "BAD_ROOM_CODE"),
    ]
    for call, reason in cases:
        assert await failure(call) == (grpc.StatusCode.INVALID_ARGUMENT, reason)
    for call in (
        lobby.JoinRoom(play_pb2.JoinRoomRequest(code="ZZZZZZZZZZ"), metadata=md),
        lobby.GetRoom(play_pb2.GetRoomRequest(code="ZZZZZZZZZZ"), metadata=md),
        lobby.StartRoom(play_pb2.StartRoomRequest(code="ZZZZZZZZZZ"), metadata=md),
        lobby.LeaveRoom(play_pb2.LeaveRoomRequest(code="ZZZZZZZZZZ"), metadata=md),
    ):
        assert await failure(call) == (grpc.StatusCode.NOT_FOUND, "ROOM_NOT_FOUND")
    code, reason = await failure(lobby.CreateRoom(play_pb2.CreateRoomRequest(game="connect4")))
    assert code == grpc.StatusCode.UNAUTHENTICATED
    with pytest.raises(grpc.aio.AioRpcError) as error:
        async for _ in lobby.WatchRoom(play_pb2.WatchRoomRequest(code="nope!"), metadata=md):
            pass
    assert reason_of(error.value) == "BAD_ROOM_CODE"
    assert await lobby_keys(redis) == before


async def test_a_colour_square_host_starts_early(gw_system: GatewaySystem, redis_url: str) -> None:
    with tables_system(redis_url, gw_system.rules.address) as (gateways, _):
        channel = grpc.aio.insecure_channel(gateways[0].address)
        try:
            host, second, third = [await guest_on(channel) for _ in range(3)]
            room = (
                await host.lobby.CreateRoom(
                    play_pb2.CreateRoomRequest(game="coloursquare", seats=5), metadata=host.md, timeout=10
                )
            ).room
            assert room.seats == 5
            await second.lobby.JoinRoom(play_pb2.JoinRoomRequest(code=room.code), metadata=second.md)
            assert await failure(
                second.lobby.StartRoom(play_pb2.StartRoomRequest(code=room.code), metadata=second.md)
            ) == (grpc.StatusCode.PERMISSION_DENIED, "NOT_HOST")
            await third.lobby.JoinRoom(play_pb2.JoinRoomRequest(code=room.code), metadata=third.md)
            # The host leaves and comes back: the host's role passes to the next in line.
            left = (await host.lobby.LeaveRoom(play_pb2.LeaveRoomRequest(code=room.code), metadata=host.md)).room
            assert left.host.player_id == second.player.player_id
            await host.lobby.JoinRoom(play_pb2.JoinRoomRequest(code=room.code), metadata=host.md)
            started = (await second.lobby.StartRoom(play_pb2.StartRoomRequest(code=room.code), metadata=second.md)).room
            assert started.state == play_pb2.ROOM_STATE_STARTED and started.seats == 3
            game = await host.games.GetGame(
                play_pb2.GetGameRequest(game_id=started.game_id), metadata=host.md, timeout=10
            )
            assert [p.player.player_id for p in game.summary.players] == [
                second.player.player_id,
                third.player.player_id,
                host.player.player_id,
            ]
            assert game.seat == 2

            # A one-seat (solo) room starts at once.
            solo = (
                await host.lobby.CreateRoom(
                    play_pb2.CreateRoomRequest(
                        game="coloursquare",
                        seats=1,
                        options=games_pb2.GameOptions(coloursquare=coloursquare_pb2.Options(target=40)),
                    ),
                    metadata=host.md,
                    timeout=10,
                )
            ).room
            assert solo.state == play_pb2.ROOM_STATE_STARTED and solo.game_id
        finally:
            await channel.close()
