"""Matchmaking end to end: real gateway processes (started as `make run` starts them), a real
Connect Four rules service, a real Redis, and clients that use only the public API."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import AsyncIterator

import grpc
import pytest
from redis.asyncio import Redis
from tafel.coloursquare.v1 import coloursquare_pb2
from tafel.connect4.v1 import connect4_pb2
from tafel.games.v1 import games_pb2
from tafel.play.v1 import play_pb2, play_pb2_grpc, safety_pb2, safety_pb2_grpc

from gateway.matchmaking.model import BucketSpec
from kit.errors import reason_of
from kit.redis.keys import bucket_keys
from tests.gateway.conftest import GatewaySystem
from tests.gateway.lobby_e2e import Guest, guest_on, lobby_keys, own_time_control, tables_system


@pytest.fixture
async def channels(gw_system: GatewaySystem) -> AsyncIterator[list[grpc.aio.Channel]]:
    made = [grpc.aio.insecure_channel(g.address) for g in gw_system.gateways]
    try:
        yield made
    finally:
        for channel in made:
            await channel.close()


async def find(guest: Guest, request: play_pb2.FindMatchRequest) -> tuple[int, play_pb2.MatchFound]:
    queued = 0
    found: list[play_pb2.MatchFound] = []
    async for response in guest.lobby.FindMatch(request, metadata=guest.md, timeout=60):
        if response.HasField("queued"):
            queued += 1
        else:
            found.append(response.matched)
    assert len(found) == 1
    return queued, found[0]


async def test_200_tickets_through_two_gateways_are_each_paired_exactly_once(
    channels: list[grpc.aio.Channel], redis: Redis
) -> None:
    guests = await asyncio.gather(*(guest_on(channels[i % 2]) for i in range(200)))
    control = own_time_control()
    request = play_pb2.FindMatchRequest(game="connect4", time_control=control)
    results = await asyncio.wait_for(asyncio.gather(*(find(g, request) for g in guests)), 120)

    tickets = Counter(found.ticket_id for _, found in results)
    assert len(tickets) == 200 and set(tickets.values()) == {1}
    by_game: dict[str, list[tuple[Guest, play_pb2.MatchFound]]] = {}
    for guest, (queued, found) in zip(guests, results, strict=True):
        assert queued >= 1  # every stream was told it is queued before it was matched
        by_game.setdefault(found.game_id, []).append((guest, found))
    assert len(by_game) == 100
    for pair in by_game.values():
        assert sorted(found.seat for _, found in pair) == [0, 1]
        seated = {found.seat: guest.player.player_id for guest, found in pair}
        for _, found in pair:
            assert [p.player.player_id for p in found.players] == [seated[0], seated[1]]

    # Each pair sits in one real game: the gateway knows it, with these players in these seats.
    async def check(game_id: str, pair: list[tuple[Guest, play_pb2.MatchFound]]) -> None:
        for guest, found in pair:
            game = await guest.games.GetGame(play_pb2.GetGameRequest(game_id=game_id), metadata=guest.md, timeout=10)
            assert game.seat == found.seat
            assert game.summary.game == "connect4" and not game.summary.status.over
            assert [p.player.player_id for p in game.summary.players] == [p.player.player_id for p in found.players]
            assert game.summary.time_control.per_move == control.per_move

    await asyncio.gather(*(check(game_id, pair) for game_id, pair in by_game.items()))

    options = games_pb2.GameOptions(connect4=connect4_pb2.Options(rows=6, columns=7))
    keys = bucket_keys(BucketSpec("connect4", options, control.per_move.ToMilliseconds(), 2, 2).bucket_id)
    assert await redis.zcard(keys.queue) == 0 and await redis.hlen(keys.tickets) == 0


async def test_two_players_on_two_gateways_meet_and_play(channels: list[grpc.aio.Channel]) -> None:
    a, b = await guest_on(channels[0]), await guest_on(channels[1])
    request = play_pb2.FindMatchRequest(
        game="connect4",
        options=games_pb2.GameOptions(connect4=connect4_pb2.Options(rows=5)),
        time_control=own_time_control(),
    )
    (_, found_a), (_, found_b) = await asyncio.gather(find(a, request), find(b, request))
    assert found_a.game_id == found_b.game_id
    first = a if found_a.seat == 0 else b
    game = await first.games.GetGame(play_pb2.GetGameRequest(game_id=found_a.game_id), metadata=first.md)
    assert game.view.connect4.rows == 5 and game.view.connect4.columns == 7
    moved = await first.games.SubmitMove(
        play_pb2.SubmitMoveRequest(
            game_id=found_a.game_id,
            expected_version=0,
            request_id="first-move",
            move=games_pb2.GameMove(connect4=connect4_pb2.Move(column=3)),
        ),
        metadata=first.md,
        timeout=10,
    )
    assert moved.version == 1


async def test_cancelling_find_match_leaves_the_queue(channels: list[grpc.aio.Channel], redis: Redis) -> None:
    me = await guest_on(channels[0])
    control = own_time_control()
    call = me.lobby.FindMatch(
        play_pb2.FindMatchRequest(game="connect4", time_control=control), metadata=me.md, timeout=30
    )
    first = await call.read()
    assert first.queued.ticket_id and first.queued.rating_window >= 100
    options = games_pb2.GameOptions(connect4=connect4_pb2.Options(rows=6, columns=7))
    keys = bucket_keys(BucketSpec("connect4", options, control.per_move.ToMilliseconds(), 2, 2).bucket_id)
    assert await redis.zscore(keys.queue, first.queued.ticket_id) is not None
    call.cancel()
    for _ in range(100):
        if await redis.zcard(keys.queue) == 0:
            break
        await asyncio.sleep(0.05)
    assert await redis.zcard(keys.queue) == 0
    # The same player may queue again at once.
    again = me.lobby.FindMatch(
        play_pb2.FindMatchRequest(game="connect4", time_control=control), metadata=me.md, timeout=30
    )
    ticket = (await again.read()).queued.ticket_id
    assert ticket != first.queued.ticket_id
    # ... and once per bucket: a second search takes the first one's ticket over.
    twice = me.lobby.FindMatch(
        play_pb2.FindMatchRequest(game="connect4", time_control=control), metadata=me.md, timeout=30
    )
    assert (await twice.read()).queued.ticket_id == ticket
    with pytest.raises(grpc.aio.AioRpcError) as error:
        while True:
            await again.read()
    assert error.value.code() == grpc.StatusCode.ABORTED and reason_of(error.value) == "SEARCH_TAKEN_OVER"
    twice.cancel()


def bad_find_requests() -> list[tuple[play_pb2.FindMatchRequest, grpc.StatusCode, str]]:
    c4 = connect4_pb2.Options
    per_move = play_pb2.TimeControl()
    per_move.per_move.FromSeconds(10 * 24 * 3600)
    return [
        (play_pb2.FindMatchRequest(), grpc.StatusCode.INVALID_ARGUMENT, "GAME_MISSING"),
        (play_pb2.FindMatchRequest(game="chess"), grpc.StatusCode.INVALID_ARGUMENT, "UNKNOWN_GAME"),
        (play_pb2.FindMatchRequest(game="x" * 5000), grpc.StatusCode.INVALID_ARGUMENT, "UNKNOWN_GAME"),
        (
            play_pb2.FindMatchRequest(game="connect4", options=games_pb2.GameOptions(connect4=c4(rows=11))),
            grpc.StatusCode.INVALID_ARGUMENT,
            "OPTION_OUT_OF_RANGE",
        ),
        (
            play_pb2.FindMatchRequest(game="connect4", options=games_pb2.GameOptions(connect4=c4(columns=3))),
            grpc.StatusCode.INVALID_ARGUMENT,
            "OPTION_OUT_OF_RANGE",
        ),
        (
            play_pb2.FindMatchRequest(
                game="connect4", options=games_pb2.GameOptions(coloursquare=coloursquare_pb2.Options())
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            "OPTIONS_MISMATCH",
        ),
        (
            play_pb2.FindMatchRequest(game="connect4", time_control=per_move),
            grpc.StatusCode.INVALID_ARGUMENT,
            "BAD_TIME_CONTROL",
        ),
        (play_pb2.FindMatchRequest(game="connect4", max_seats=3), grpc.StatusCode.INVALID_ARGUMENT, "BAD_SEATS"),
        (play_pb2.FindMatchRequest(game="connect4", min_seats=1), grpc.StatusCode.INVALID_ARGUMENT, "BAD_SEATS"),
    ]


async def test_bad_find_match_requests_are_refused_and_write_nothing(
    channels: list[grpc.aio.Channel], redis: Redis
) -> None:
    me = await guest_on(channels[1])
    before = await lobby_keys(redis)
    for request, code, reason in bad_find_requests():
        with pytest.raises(grpc.aio.AioRpcError) as error:
            async for _ in me.lobby.FindMatch(request, metadata=me.md, timeout=10):
                pass
        assert (error.value.code(), reason_of(error.value)) == (code, reason), request
    with pytest.raises(grpc.aio.AioRpcError) as error:
        async for _ in me.lobby.FindMatch(play_pb2.FindMatchRequest(game="connect4"), timeout=10):
            pass
    assert error.value.code() == grpc.StatusCode.UNAUTHENTICATED
    with pytest.raises(grpc.aio.AioRpcError) as error:
        async for _ in me.lobby.FindMatch(
            play_pb2.FindMatchRequest(game="connect4"), metadata=(("authorization", "Bearer nope"),), timeout=10
        ):
            pass
    assert error.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert await lobby_keys(redis) == before


async def test_list_game_types(channels: list[grpc.aio.Channel]) -> None:
    me = await guest_on(channels[0])
    listed = await me.lobby.ListGameTypes(play_pb2.ListGameTypesRequest(), metadata=me.md, timeout=10)
    (connect4,) = [t for t in listed.game_types if t.game == "connect4"]
    assert (connect4.min_seats, connect4.max_seats) == (2, 2)
    rows = {o.name: o for o in connect4.options}["rows"]
    assert (rows.integer.minimum, rows.integer.maximum, rows.integer.default_value) == (4, 10, 6)


async def test_colour_square_tables_fill_through_the_gateway(gw_system: GatewaySystem, redis_url: str) -> None:
    with tables_system(redis_url, gw_system.rules.address) as (gateways, _):
        channel = grpc.aio.insecure_channel(gateways[0].address)
        try:
            listed = await (await guest_on(channel)).lobby.ListGameTypes(play_pb2.ListGameTypesRequest(), timeout=10)
            (square,) = [t for t in listed.game_types if t.game == "coloursquare"]
            assert (square.min_seats, square.max_seats) == (1, 6)

            # Four players who want tables of exactly four.
            guests = [await guest_on(channel) for _ in range(4)]
            control = own_time_control()
            request = play_pb2.FindMatchRequest(game="coloursquare", time_control=control, min_seats=4, max_seats=4)
            results = await asyncio.wait_for(asyncio.gather(*(find(g, request) for g in guests)), 30)
            assert len({found.game_id for _, found in results}) == 1
            assert sorted(found.seat for _, found in results) == [0, 1, 2, 3]
            game = await guests[0].games.GetGame(
                play_pb2.GetGameRequest(game_id=results[0][1].game_id), metadata=guests[0].md, timeout=10
            )
            assert len(game.summary.players) == 4

            # Three players who accept 2..6: no full table, so it starts at three after the fill
            # wait (1 s here).
            guests = [await guest_on(channel) for _ in range(3)]
            request = play_pb2.FindMatchRequest(game="coloursquare", time_control=control, max_seats=6)
            results = await asyncio.wait_for(asyncio.gather(*(find(g, request) for g in guests)), 30)
            assert len({found.game_id for _, found in results}) == 1
            assert sorted(found.seat for _, found in results) == [0, 1, 2]

            # Solo needs no queue.
            solo = await guest_on(channel)
            _, found = await find(solo, play_pb2.FindMatchRequest(game="coloursquare", min_seats=1, max_seats=1))
            assert found.seat == 0 and [p.player.player_id for p in found.players] == [solo.player.player_id]

            # Options the game cannot have at this table size are refused when the search is asked
            # for (options are checked when the request arrives: they used to end the match as MATCH_REFUSED once it formed).
            guests = [await guest_on(channel) for _ in range(2)]
            request = play_pb2.FindMatchRequest(
                game="coloursquare",
                time_control=own_time_control(),
                options=games_pb2.GameOptions(coloursquare=coloursquare_pb2.Options(target=50)),
                min_seats=2,
                max_seats=2,
            )
            outcomes = await asyncio.gather(*(find(g, request) for g in guests), return_exceptions=True)
            for outcome in outcomes:
                assert isinstance(outcome, grpc.aio.AioRpcError), outcome
                assert outcome.code() == grpc.StatusCode.INVALID_ARGUMENT
                assert reason_of(outcome) == "OPTION_NOT_FOR_SEATS"
        finally:
            await channel.close()


async def test_two_players_who_block_each_other_stay_apart_while_a_third_is_matched(
    channels: list[grpc.aio.Channel],
) -> None:
    # Accounts (a block names an account), on two gateways; one blocks the other through the API.
    async def account(channel: grpc.aio.Channel) -> Guest:
        accounts = play_pb2_grpc.AccountServiceStub(channel)
        name = f"mmb{random.randrange(16**8):08x}"
        registered = await accounts.Register(
            play_pb2.RegisterRequest(username=name, password="correct horse battery"), timeout=10
        )
        return Guest(
            registered.session, play_pb2_grpc.LobbyServiceStub(channel), play_pb2_grpc.GameServiceStub(channel)
        )

    a, b = await account(channels[0]), await account(channels[1])
    await safety_pb2_grpc.SafetyServiceStub(channels[1]).BlockPlayer(
        safety_pb2.BlockPlayerRequest(username=a.player.username), metadata=b.md, timeout=10
    )
    request = play_pb2.FindMatchRequest(game="connect4", time_control=own_time_control())
    calls = {g.player.player_id: g.lobby.FindMatch(request, metadata=g.md, timeout=60) for g in (a, b)}
    firsts = await asyncio.gather(*(call.read() for call in calls.values()))
    # Both queued: unblocked, the second's enqueue would have paired them at once.
    assert all(first.HasField("queued") for first in firsts)

    third = await guest_on(channels[0])
    _, found = await asyncio.wait_for(find(third, request), 15)
    (met,) = [p.player.player_id for p in found.players if p.player.player_id != third.player.player_id]
    assert met in calls
    answer = await calls[met].read()
    while answer.HasField("queued"):
        answer = await calls[met].read()
    assert answer.matched.game_id == found.game_id

    # The other still waits through several pairing ticks, never matched with the one who blocks.
    (left,) = [call for pid, call in calls.items() if pid != met]
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(2.5):
            while True:
                assert (await left.read()).HasField("queued")
    left.cancel()
