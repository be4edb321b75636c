"""The SDK plays whole games of every game through a real gateway (public API only)."""

from __future__ import annotations

import asyncio
import contextlib
import os

import pytest
from tafel.autoplay import play_game
from tafel.botplay import strategy_for
from tafel.client import TafelClient
from tafel.connect4.v1 import connect4_pb2
from tafel.errors import IllegalMove, InvalidArgument, NotFound, PermissionDenied, Unauthenticated, VersionConflict
from tafel.games.v1 import games_pb2

from tools.platform import Platform


async def clients(platform: Platform, count: int) -> list[TafelClient]:
    out = []
    for _ in range(count):
        client = await TafelClient.connect(platform.gateway_addresses)
        await client.sign_in_as_guest()
        out.append(client)
    return out


async def close_all(items: list[TafelClient]) -> None:
    for client in items:
        await client.close()


def check_outcome(outcome: games_pb2.Outcome, seats: int) -> None:
    assert len(outcome.ranks) == seats and outcome.reason
    assert outcome.draw or outcome.winners


@pytest.mark.parametrize("game", ["connect4", "plus4"])
async def test_two_sdk_players_matchmake_and_play_to_the_end(platform: Platform, game: str) -> None:
    players = await clients(platform, 2)
    try:
        matches = await asyncio.gather(*(c.find_match(game, per_move_s=30) for c in players))
        assert matches[0].game_id == matches[1].game_id
        assert {m.seat for m in matches} == {0, 1}
        outcomes = await asyncio.wait_for(
            asyncio.gather(
                *(
                    play_game(c, m.game_id, m.seat, strategy_for(game, 1, seed=i))
                    for i, (c, m) in enumerate(zip(players, matches, strict=True))
                )
            ),
            timeout=180,
        )
        assert outcomes[0] == outcomes[1]
        check_outcome(outcomes[0], 2)
        record = await players[0].get_record(matches[0].game_id)
        assert record.game == game and len(record.players) == 2 and record.actions
        assert record.outcome == outcomes[0]
        # The event stream replays the whole game, in order, and ends with the result.
        events = [e async for e in players[1].watch(matches[0].game_id)]
        assert events[0].WhichOneof("kind") == "created" and events[-1].WhichOneof("kind") == "ended"
        assert [e.event_id for e in events] == sorted(
            (e.event_id for e in events), key=lambda i: tuple(map(int, i.split("-")))
        )
    finally:
        await close_all(players)


async def test_three_players_play_colour_square_in_a_room(platform: Platform) -> None:
    host, *guests = await clients(platform, 3)
    try:
        room = await host.create_room("coloursquare", seats=3, per_move_s=30)
        for guest in guests:
            await guest.join_room(room.code)
        started = await host.wait_room_started(room.code)
        assert started.game_id
        seats = []
        for client in (host, *guests):
            seats.append((await client.get_game(started.game_id)).seat)
        assert sorted(seats) == [0, 1, 2]
        outcomes = await asyncio.wait_for(
            asyncio.gather(
                *(
                    play_game(c, started.game_id, seat, strategy_for("coloursquare", 1, seed=seat))
                    for c, seat in zip((host, *guests), seats, strict=True)
                )
            ),
            timeout=300,
        )
        check_outcome(outcomes[0], 3)
        assert len(outcomes[0].scores) == 3
    finally:
        await close_all([host, *guests])


async def test_errors_carry_the_servers_reason(platform: Platform) -> None:
    a, b = await clients(platform, 2)
    try:
        matches = await asyncio.gather(a.find_match("connect4"), b.find_match("connect4"))
        first = next(m for m in matches if m.seat == 0)
        mover, other = (a, b) if matches[0].seat == 0 else (b, a)
        with pytest.raises(PermissionDenied):
            await other.submit_move(first.game_id, connect4_pb2.Move(column=3), expected_version=0, seat=0)
        with pytest.raises(IllegalMove) as refused:
            await mover.submit_move(first.game_id, connect4_pb2.Move(column=9), expected_version=0)
        assert refused.value.reason == "COLUMN_OUT_OF_RANGE"
        request_id = "sdk-retry-1"
        answer = await mover.submit_move(
            first.game_id, connect4_pb2.Move(column=3), expected_version=0, request_id=request_id
        )
        again = await mover.submit_move(
            first.game_id, connect4_pb2.Move(column=3), expected_version=0, request_id=request_id
        )
        assert answer == again and answer.version == 1
        with pytest.raises(VersionConflict):
            await other.submit_move(first.game_id, connect4_pb2.Move(column=3), expected_version=0)
        with pytest.raises(InvalidArgument):
            await a.find_match("chess")
        stranger = await TafelClient.connect(platform.gateway_addresses)
        with pytest.raises(Unauthenticated):
            await stranger.list_my_games()
        await stranger.close()
        await mover.resign(first.game_id)
    finally:
        await close_all([a, b])


async def test_watch_resumes_after_a_dropped_stream_without_loss_or_repeat(platform: Platform) -> None:
    a, b, spectator = await clients(platform, 3)
    try:
        matches = await asyncio.gather(a.find_match("connect4"), b.find_match("connect4"))
        game_id = matches[0].game_id
        by_seat = {m.seat: c for c, m in zip((a, b), matches, strict=True)}
        for version, column in enumerate((3, 3, 2, 2)):
            await by_seat[version % 2].submit_move(game_id, connect4_pb2.Move(column=column), expected_version=version)
        first_part = []
        async for event in spectator.watch(game_id):
            first_part.append(event)
            if event.version == 2:
                break  # the spectator's connection "drops" here
        for version, column in enumerate((1, 1, 0), start=4):
            await by_seat[version % 2].submit_move(game_id, connect4_pb2.Move(column=column), expected_version=version)
        rest = [e async for e in spectator.watch(game_id, after_event_id=first_part[-1].event_id)]
        ids = [e.event_id for e in (*first_part, *rest)]
        assert ids == ["0-1", "1-1", "2-1", "3-1", "4-1", "5-1", "6-1", "7-1", "7-2"]
        assert len(set(ids)) == len(ids)
    finally:
        await close_all([a, b, spectator])


async def test_play_stream_events_say_whose_turn_it_is(platform: Platform) -> None:
    a, b = await clients(platform, 2)
    try:
        matches = await asyncio.gather(a.find_match("connect4"), b.find_match("connect4"))
        game_id = matches[0].game_id
        first, second = (a, b) if matches[0].seat == 0 else (b, a)
        async with second.play_stream() as stream:
            watching = await stream.watch(game_id)
            assert watching.summary.status.to_act == [0]
            await first.submit_move(game_id, connect4_pb2.Move(column=3), expected_version=0)
            delivery = await stream.next_event(timeout=10)
            while delivery.event.version < 1:
                delivery = await stream.next_event(timeout=10)
            assert delivery.event.connect4.disc_dropped.column == 3
            assert delivery.status.version == 1 and list(delivery.status.to_act) == [1]
            answer = await stream.submit_move(game_id, connect4_pb2.Move(column=3), expected_version=1)
            assert answer.version == 2 and list(answer.status.to_act) == [0]
        await first.resign(game_id)
    finally:
        await close_all([a, b])


async def test_bot_requests_are_validated(platform: Platform) -> None:
    host, stranger = await clients(platform, 2)
    try:
        room = await host.create_room("connect4", seats=2)
        with pytest.raises(InvalidArgument) as bad_level:
            await host.request_bot(room.code, 7)
        assert bad_level.value.reason == "BAD_LEVEL"
        with pytest.raises(PermissionDenied) as not_in_room:
            await stranger.request_bot(room.code, 1)
        assert not_in_room.value.reason == "NOT_IN_ROOM"
        with pytest.raises((NotFound, InvalidArgument)):
            await host.request_bot("ZZZZZZ", 1)
        assert await host.request_bot(room.code, 1)  # a valid request gets an id
    finally:
        await close_all([host, stranger])


async def test_play_stream_finds_matches_and_withdraws_a_search_left_early(platform: Platform) -> None:
    players = await clients(platform, 2)
    try:
        async with players[0].play_stream() as first, players[1].play_stream() as second:
            # Leaving a search early (here: after its first update) withdraws the ticket ...
            async with contextlib.aclosing(first.find_match_updates("connect4", per_move_s=41)) as updates:
                async for update in updates:
                    assert update.WhichOneof("status") == "queued"
                    break
            await first.ping()  # answered after the withdrawal, which the stream handles in order
            # ... so the same search can start again, and pairs with the other player's.
            matches = await asyncio.wait_for(
                asyncio.gather(
                    first.find_match("connect4", per_move_s=41), second.find_match("connect4", per_move_s=41)
                ),
                timeout=30,
            )
            assert matches[0].game_id == matches[1].game_id and {m.seat for m in matches} == {0, 1}
            watching = await first.watch(matches[0].game_id)
            assert watching.summary.status.version == 0
            with pytest.raises(InvalidArgument):
                await first.find_match("connect4", connect4_pb2.Options(rows=99))
    finally:
        await close_all(players)


def connections_to(port: int) -> int:
    """This process's established TCP connections to `port` (from /proc: the sockets it holds)."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/self/fd/{fd}")
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as lines:
            for line in list(lines)[1:]:
                fields = line.split()
                remote_port = int(fields[2].rsplit(":", 1)[1], 16)
                if remote_port == port and fields[3] == "01" and fields[9] in inodes:
                    count += 1
    return count


async def test_clients_share_a_connection_unless_each_asks_for_its_own(platform: Platform) -> None:
    """gRPC lets every channel of a process to one address share a connection; `own_connection`
    gives a client its own (the load generator's players: one each, as on their own machines)."""
    port = int(platform.gateway_addresses[0].rsplit(":", 1)[1])
    before = connections_to(port)
    shared = [await TafelClient.connect(platform.gateway_addresses) for _ in range(3)]
    own = [await TafelClient.connect(platform.gateway_addresses, own_connection=True) for _ in range(3)]
    try:
        for client in shared:
            await client.sign_in_as_guest()
        with_shared = connections_to(port)
        assert with_shared - before <= 1  # (none new when an earlier client's is still open)
        assert with_shared >= 1
        for client in own:
            await client.sign_in_as_guest()
        assert connections_to(port) - with_shared == 3
    finally:
        await close_all(shared + own)
