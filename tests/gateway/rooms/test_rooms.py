"""Private rooms against a real Redis: create, join, leave, start, get, watch, the race for the
last seat, expiry, and a start left half done by a crashed gateway."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import grpc
import pytest
from redis.asyncio import Redis
from tafel.play.v1 import play_pb2

from gateway.games import PRIVATE_ORIGIN
from gateway.rooms import CODE_ALPHABET, Rooms, normalize_code
from gateway.settings import RoomSettings
from kit.errors import Refused
from kit.redis.keys import room_keys
from tests.gateway.lobby_helpers import RecordingStarter, connect4_options, player, process_redis

FAST = RoomSettings(room_ttl_s=60.0, started_ttl_s=60.0, closed_ttl_s=5.0, poll_s=0.5)


@asynccontextmanager
async def rooms_on(redis_url: str, starter: RecordingStarter, settings: RoomSettings = FAST) -> AsyncIterator[Rooms]:
    async with process_redis(redis_url) as (layer, pubsub):
        rooms = Rooms(layer, pubsub, starter, settings)
        await rooms.listen()
        try:
            yield rooms
        finally:
            rooms.close()


async def table(rooms: Rooms, host: play_pb2.Player, seats: int = 2, min_seats: int = 2, game: str = "connect4"):  # type: ignore[no-untyped-def]
    return await rooms.create(
        game=game, options=connect4_options(), per_move_ms=30_000, seats=seats, min_seats=min_seats, host=host
    )


async def refused(call) -> Refused:  # type: ignore[no-untyped-def]
    with pytest.raises(Refused) as caught:
        await call
    return caught.value


def test_codes_are_normalised_and_checked() -> None:
    assert normalize_code(" abcde-fghjk ") == "ABCDEFGHJK"
    assert normalize_code("k7m 9pq rst2") == "K7M9PQRST2"
    bad_letters = ("ABCDEFGHJ0", "ABCDEFGHJO", "ABCDEFGHJ1", "ABCDEFGHJI", "ABCDEFGHJL", "ABCD$FGHJK")
    for bad in ("", "ABCDE", "ABCDEFG", "ABCDEF", "ABCDEFGHJKM", *bad_letters):
        with pytest.raises(Refused) as caught:
            normalize_code(bad)
        assert caught.value.code == grpc.StatusCode.INVALID_ARGUMENT and caught.value.reason == "BAD_ROOM_CODE"
    assert not set("01OIL") & set(CODE_ALPHABET)


async def test_a_two_seat_room_starts_when_the_second_player_joins(redis_url: str, redis: Redis) -> None:
    starter = RecordingStarter()
    async with rooms_on(redis_url, starter) as rooms:
        host, guest = player("host"), player("guest")
        created = await table(rooms, host)
        assert len(created.code) == 10 and all(c in CODE_ALPHABET for c in created.code)
        proto = created.to_proto()
        assert proto.state == play_pb2.ROOM_STATE_OPEN and proto.seats == 2 and proto.game_id == ""
        assert proto.host.player_id == host.player_id
        assert [p.player_id for p in proto.players] == [host.player_id]
        assert proto.time_control.per_move.ToMilliseconds() == 30_000
        assert abs(proto.expires_at.ToMilliseconds() / 1000 - (time.time() + 60)) < 5
        assert 0 < await redis.pttl(room_keys(created.code)[0]) <= 60_000

        joined = (await rooms.join(created.code, guest)).to_proto()
        assert joined.state == play_pb2.ROOM_STATE_STARTED and joined.game_id
        assert [p.player_id for p in joined.players] == [host.player_id, guest.player_id]
        (call,) = starter.calls
        assert call.game_id == joined.game_id and call.origin == PRIVATE_ORIGIN and not call.rated
        assert [p.player_id for p in call.players] == [host.player_id, guest.player_id]
        assert call.per_move_s == 30.0 and call.options == connect4_options()

        # Joining again is harmless for a seated player; anyone else is refused.
        again = (await rooms.join(created.code, guest)).to_proto()
        assert again.game_id == joined.game_id
        late = await refused(rooms.join(created.code, player()))
        assert late.code == grpc.StatusCode.FAILED_PRECONDITION and late.reason == "ROOM_STARTED"
        left = await refused(rooms.leave(created.code, guest))
        assert left.reason == "ROOM_STARTED"
        assert (await rooms.get(created.code)).to_proto() == joined
        assert len(starter.calls) == 1


async def test_two_joins_for_the_last_seat_exactly_one_wins(redis_url: str) -> None:
    starter = RecordingStarter()
    async with rooms_on(redis_url, starter) as one, rooms_on(redis_url, starter) as two:
        for _ in range(10):
            starter.calls.clear()
            room = await table(one, player(), seats=3, min_seats=2, game="coloursquare")
            await two.join(room.code, player())
            racers = [player() for _ in range(12)]
            results = await asyncio.gather(
                *((one, two)[i % 2].join(room.code, p) for i, p in enumerate(racers)), return_exceptions=True
            )
            winners = [r for r in results if not isinstance(r, BaseException)]
            losers = [r for r in results if isinstance(r, BaseException)]
            assert len(winners) == 1
            assert all(isinstance(e, Refused) and e.reason in ("ROOM_FULL", "ROOM_STARTED") for e in losers)
            final = await one.get(room.code)
            assert final.state == "started" and len(final.players) == 3
            assert len({c.game_id for c in starter.calls}) == 1


async def test_the_host_starts_a_table_once_the_minimum_is_seated(redis_url: str) -> None:
    starter = RecordingStarter()
    async with rooms_on(redis_url, starter) as rooms:
        host, second, third = player(), player(), player()
        room = await table(rooms, host, seats=6, min_seats=2, game="coloursquare")
        alone = await refused(rooms.start(room.code, host))
        assert alone.code == grpc.StatusCode.FAILED_PRECONDITION and alone.reason == "NOT_ENOUGH_PLAYERS"
        await rooms.join(room.code, second)
        await rooms.join(room.code, third)
        not_host = await refused(rooms.start(room.code, second))
        assert not_host.code == grpc.StatusCode.PERMISSION_DENIED and not_host.reason == "NOT_HOST"
        assert starter.calls == []
        started = (await rooms.start(room.code, host)).to_proto()
        assert started.state == play_pb2.ROOM_STATE_STARTED and started.seats == 3
        (call,) = starter.calls
        assert [p.player_id for p in call.players] == [host.player_id, second.player_id, third.player_id]
        # Starting again is harmless.
        assert (await rooms.start(room.code, host)).game_id == started.game_id
        assert len(starter.calls) == 1


async def test_leaving_passes_the_host_on_and_an_empty_room_closes(redis_url: str) -> None:
    async with rooms_on(redis_url, RecordingStarter()) as rooms:
        host, second = player(), player()
        room = await table(rooms, host, seats=4, min_seats=2, game="coloursquare")
        await rooms.join(room.code, second)
        stranger = await refused(rooms.leave(room.code, player()))
        assert stranger.reason == "NOT_IN_ROOM"
        after = await rooms.leave(room.code, host)
        assert after.host.player_id == second.player_id and [p.player_id for p in after.players] == [second.player_id]
        # The new host may start (when enough are seated); the old one may not.
        assert (await refused(rooms.start(room.code, host))).reason == "NOT_HOST"
        closed = await rooms.leave(room.code, second)
        assert closed.to_proto().state == play_pb2.ROOM_STATE_CLOSED
        late = await refused(rooms.join(room.code, player()))
        assert late.reason == "ROOM_CLOSED"


async def test_unknown_and_expired_rooms_are_not_found(redis_url: str) -> None:
    short = dataclasses.replace(FAST, room_ttl_s=1.0)
    async with rooms_on(redis_url, RecordingStarter(), short) as rooms:
        missing = await refused(rooms.get("ZZZZZZ"))
        assert missing.code == grpc.StatusCode.NOT_FOUND and missing.reason == "ROOM_NOT_FOUND"
        room = await table(rooms, player())
        await asyncio.sleep(1.3)
        gone = await refused(rooms.join(room.code, player()))
        assert gone.code == grpc.StatusCode.NOT_FOUND


async def test_a_start_left_half_done_is_finished_by_the_next_reader(redis_url: str) -> None:
    starter = RecordingStarter(fail_times=1)  # the joining gateway's start fails (as if it died)
    async with rooms_on(redis_url, starter) as rooms:
        room = await table(rooms, player())
        with pytest.raises(ConnectionError):
            await rooms.join(room.code, player())
        seen = await rooms.get(room.code)
        assert seen.state == "started"
        assert len({c.game_id for c in starter.calls}) == 1 and len(starter.calls) == 2


async def test_a_room_whose_game_is_refused_closes(redis_url: str) -> None:
    class Refusing(RecordingStarter):
        async def start_game(self, **kwargs):  # type: ignore[no-untyped-def, override]
            raise Refused(grpc.StatusCode.INVALID_ARGUMENT, "BAD_OPTIONS", "no")

    async with rooms_on(redis_url, Refusing()) as rooms:
        room = await table(rooms, player())
        closed = await refused(rooms.join(room.code, player()))
        assert closed.reason == "ROOM_CLOSED"
        assert (await rooms.get(room.code)).state == "closed"


async def test_watchers_see_every_change_and_the_game_id_last(redis_url: str) -> None:
    starter = RecordingStarter()
    async with rooms_on(redis_url, starter) as one, rooms_on(redis_url, starter) as two:
        host = player()
        room = await table(one, host, seats=3, min_seats=3, game="coloursquare")
        seen: list[play_pb2.Room] = []
        changed = asyncio.Event()

        async def watch() -> None:
            async for snapshot in two.watch(room.code):
                seen.append(snapshot.to_proto())
                changed.set()

        async def until_seen(count: int) -> None:
            # Each join waits for the watcher to have seen the room before it (a fixed pause
            # was not enough on a busy machine: the first snapshot already had two players).
            while len(seen) < count:
                changed.clear()
                await asyncio.wait_for(changed.wait(), 10)

        watcher = asyncio.create_task(watch())
        await until_seen(1)
        await one.join(room.code, player())
        await until_seen(2)
        await one.join(room.code, player())
        await asyncio.wait_for(watcher, 5)
    assert [len(r.players) for r in seen] == [1, 2, 3]
    assert [r.state for r in seen] == [play_pb2.ROOM_STATE_OPEN] * 2 + [play_pb2.ROOM_STATE_STARTED]
    assert seen[-1].game_id == starter.calls[0].game_id


async def test_a_watcher_of_a_room_that_empties_sees_it_close(redis_url: str) -> None:
    async with rooms_on(redis_url, RecordingStarter()) as rooms:
        host = player()
        room = await table(rooms, host)
        stream = rooms.watch(room.code)
        first = await anext(stream)
        assert first.state == "open"
        await rooms.leave(room.code, host)
        last = await asyncio.wait_for(anext(stream), 5)
        assert last.to_proto().state == play_pb2.ROOM_STATE_CLOSED
        with pytest.raises(StopAsyncIteration):
            await anext(stream)
