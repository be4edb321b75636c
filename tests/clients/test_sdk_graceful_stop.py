"""A graceful stop (SIGTERM, as in a rolling deploy) looks to SDK clients like a kill:
their Play streams and watches move to the other gateway and resume — every move answered, a move
in flight during the stop answered once, and a spectator's watch() sees the whole game, once each,
through both gateways being stopped and started again."""

from __future__ import annotations

import asyncio

import pytest
from tafel.client import TafelClient
from tafel.connect4.v1 import connect4_pb2
from tafel.errors import Unauthenticated, Unavailable

from tests.platforms import platform_fixture
from tools.platform import Platform
from tools.redis_server import free_port

# Seat 0 and seat 1 fill the board column by column: nobody has four in a row for the first 20 moves.
COLUMNS = [0, 1, 2, 3, 4, 5, 6] * 3


two_gateways = platform_fixture("graceful stop", gateways=2, bot_pool=False)


async def signed_in(platform: Platform) -> TafelClient:
    client = await TafelClient.connect(platform.gateway_addresses)
    await client.sign_in_as_guest()
    return client


async def test_play_streams_and_watches_move_to_the_other_gateway_on_sigterm(two_gateways: Platform) -> None:
    a, b, spectator = [await signed_in(two_gateways) for _ in range(3)]
    try:
        found = await asyncio.wait_for(
            asyncio.gather(a.find_match("connect4", per_move_s=60), b.find_match("connect4", per_move_s=60)), 30
        )
        game_id = found[0].game_id
        by_seat = {found[0].seat: a, found[1].seat: b}
        watched = asyncio.ensure_future(collect(spectator, game_id))
        async with by_seat[0].play_stream() as zero, by_seat[1].play_stream() as one:
            streams = {0: zero, 1: one}
            for stream in streams.values():
                await asyncio.wait_for(stream.watch(game_id), 10)

            async def move(version: int) -> None:
                stream = streams[version % 2]
                answer = await asyncio.wait_for(
                    stream.submit_move(game_id, connect4_pb2.Move(column=COLUMNS[version]), expected_version=version),
                    30,
                )
                assert answer.version == version + 1

            version = 0
            for gateway in ("gateway-0", "gateway-1"):
                for _ in range(3):
                    await move(version)
                    version += 1
                # A move sent as the gateway begins to stop: answered once, wherever it lands.
                stopping = asyncio.ensure_future(asyncio.to_thread(two_gateways.terminate, gateway))
                await move(version)
                version += 1
                await stopping
                await asyncio.to_thread(two_gateways.restart, gateway)
            await move(version)
            version += 1
            await asyncio.wait_for(streams[version % 2].resign(game_id), 30)
            # Both gateways stopped in turn: every stream moved at least once.
            assert zero.reconnects >= 1 and one.reconnects >= 1
        events = await asyncio.wait_for(watched, 30)
        replay = [e async for e in spectator.watch(game_id)]
        assert [e.event_id for e in events] == [e.event_id for e in replay]
        assert events[-1].WhichOneof("kind") == "ended" and events[-1].version == version + 1
    finally:
        for client in (a, b, spectator):
            await client.close()


async def collect(client: TafelClient, game_id: str) -> list:  # type: ignore[type-arg]
    return [event async for event in client.watch(game_id)]


async def test_a_play_stream_that_gave_up_fails_pending_and_later_requests_at_once(two_gateways: Platform) -> None:
    client = await signed_in(two_gateways)
    try:
        assert client.session is not None
        client.session.token = "not-a-token"  # the stream is refused for good: UNAUTHENTICATED
        async with client.play_stream() as stream:
            with pytest.raises(Unauthenticated):
                await asyncio.wait_for(stream.ping(1), 10)
            # Before, a request after the stream had ended waited forever.
            with pytest.raises(Unauthenticated):
                await asyncio.wait_for(stream.ping(2), 5)
            with pytest.raises(Unauthenticated):
                await asyncio.wait_for(stream.find_match("connect4"), 5)
    finally:
        await client.close()


async def test_a_watch_from_now_resumes_after_its_view_when_the_gateway_stops(two_gateways: Platform) -> None:
    a, b = [await signed_in(two_gateways) for _ in range(2)]
    only_first = await TafelClient.connect(two_gateways.gateway_addresses[0])  # b, on gateway-0 alone
    only_first.session = b.session
    try:
        found = await asyncio.wait_for(
            asyncio.gather(a.find_match("connect4", per_move_s=60), b.find_match("connect4", per_move_s=60)), 30
        )
        game_id = found[0].game_id
        mover = {found[0].seat: a, found[1].seat: b}[0]
        async with only_first.play_stream() as watcher:
            await asyncio.wait_for(watcher.watch(game_id), 10)  # from now: no event delivered yet
            await asyncio.to_thread(two_gateways.terminate, "gateway-0")
            # A move while the watcher has no gateway: after the restart it must still see it, once.
            await asyncio.wait_for(mover.submit_move(game_id, connect4_pb2.Move(column=3), expected_version=0), 30)
            await asyncio.to_thread(two_gateways.restart, "gateway-0")
            delivery = await watcher.next_event(timeout=30)
            assert delivery.event.version == 1 and delivery.event.WhichOneof("kind") == "connect4"
    finally:
        for client in (a, b, only_first):
            await client.close()


async def test_a_search_survives_its_gateway_stopping(two_gateways: Platform) -> None:
    only_first = await TafelClient.connect(two_gateways.gateway_addresses[0])
    await only_first.sign_in_as_guest()
    b = await signed_in(two_gateways)
    try:
        updates = only_first.find_match_updates("connect4", per_move_s=61)
        first = await asyncio.wait_for(anext(updates), 10)
        assert first.HasField("queued")

        async def rest() -> str:
            async for update in updates:
                if update.HasField("matched"):
                    return update.matched.game_id
            raise AssertionError("the search ended without a match")

        searching = asyncio.ensure_future(rest())
        # The search's gateway stops (it ends the search UNAVAILABLE GATEWAY_STOPPING) and comes
        # back: the SDK sends the search again rather than give up.
        await asyncio.to_thread(two_gateways.terminate, "gateway-0")
        await asyncio.to_thread(two_gateways.restart, "gateway-0")
        other = await asyncio.wait_for(b.find_match("connect4", per_move_s=61), 30)
        assert await asyncio.wait_for(searching, 30) == other.game_id
    finally:
        await only_first.close()
        await b.close()


async def test_a_search_that_starts_its_watch_survives_its_gateway_stopping(two_gateways: Platform) -> None:
    """find_and_watch (FindMatchRequest.watch) is resent like any search: after the restart the
    match comes with its view, and the game's events follow on the stream."""
    only_first = await TafelClient.connect(two_gateways.gateway_addresses[0])
    await only_first.sign_in_as_guest()
    b = await signed_in(two_gateways)
    try:
        async with only_first.play_stream() as stream:
            searching = asyncio.ensure_future(stream.find_and_watch("connect4", per_move_s=63))
            await stream.ping()  # the search was read before this answer
            await asyncio.to_thread(two_gateways.terminate, "gateway-0")
            await asyncio.to_thread(two_gateways.restart, "gateway-0")
            other = await asyncio.wait_for(b.find_match("connect4", per_move_s=63), 30)
            matched, watching = await asyncio.wait_for(searching, 30)
            assert matched.game_id == other.game_id and watching.summary.game_id == other.game_id
            assert stream.reconnects >= 1
            if other.seat == 0:
                await b.submit_move(other.game_id, connect4_pb2.Move(column=3), expected_version=0)
            else:
                await stream.submit_move(other.game_id, connect4_pb2.Move(column=3), expected_version=0)
            delivery = await stream.next_event(timeout=30)
            assert delivery.game_id == other.game_id and delivery.event.event_id == "1-1"
    finally:
        await only_first.close()
        await b.close()


async def test_a_unary_call_waits_out_a_moment_with_no_gateway_up(two_gateways: Platform) -> None:
    """Both gateways stopped (the end of a rolling restart seen from a client whose reconnects are
    still backing off): a call made meanwhile is answered once one is back, not failed at once."""
    client = await signed_in(two_gateways)
    try:
        me = await client.me()
        for gateway in ("gateway-0", "gateway-1"):
            await asyncio.to_thread(two_gateways.terminate, gateway)

        async def back_later() -> None:
            await asyncio.sleep(1.0)  # the call below has failed its channel retries by then
            await asyncio.to_thread(two_gateways.restart, "gateway-1")
            await asyncio.to_thread(two_gateways.restart, "gateway-0")

        restarting = asyncio.ensure_future(back_later())
        try:
            assert (await asyncio.wait_for(client.me(), 30)).player_id == me.player_id
        finally:
            await restarting
    finally:
        await client.close()


async def test_a_client_that_never_reached_a_gateway_fails_at_once() -> None:
    """No server at all (`make run` not started): the clear error comes without the wait above."""
    client = await TafelClient.connect(f"127.0.0.1:{free_port()}")
    try:
        started = asyncio.get_running_loop().time()
        with pytest.raises(Unavailable):
            await client.sign_in_as_guest()
        assert asyncio.get_running_loop().time() - started < 5
    finally:
        await client.close()
