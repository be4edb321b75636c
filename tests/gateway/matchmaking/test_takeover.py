"""A search sent again with the same request id takes over its ticket: after its
gateway was killed, through another gateway, and a late withdrawal by the dead stream's owner
leaves the taken-over ticket alone. The player owns their search: another search of
theirs takes the ticket over with or without a request id, answers with the match the ticket was
paired into while nobody told them (their gateway died between the pairing and the answer), and
the search it took over ends ABORTED SEARCH_TAKEN_OVER on whichever gateway it runs. A matched
player who never arrives does not lose a rated game."""

from __future__ import annotations

import asyncio
import signal

import grpc
import pytest
from redis.asyncio import Redis
from tafel.games.v1 import games_pb2
from tafel.play.v1 import play_pb2, play_pb2_grpc

from gateway.matchmaking.model import new_ticket_id
from gateway.matchmaking.queue import MatchQueue
from kit.errors import reason_of
from kit.redis.keys import bucket_keys
from kit.redis.layer import RedisLayer
from tests.gateway.conftest import GatewaySystem
from tests.gateway.harness import Client, PlayStream, Seating, spawn_gateway
from tests.gateway.lobby_e2e import guest_on, own_time_control, same_player_on
from tests.gateway.lobby_helpers import FAST, player, spec

NOW = 1_700_000_000_000


async def test_a_resent_search_takes_over_its_ticket_and_the_old_owner_cannot_withdraw_it(redis: Redis, layer: RedisLayer) -> None:
    queue = MatchQueue(layer, FAST)
    bucket = spec()
    who = player("takeover")
    first = await queue.take(bucket.bucket_id, new_ticket_id(), who, 1500, NOW, request_id="rq-1", owner="o1")
    assert first.queued and not first.resumed
    again = await queue.take(bucket.bucket_id, new_ticket_id(), who, 1500, NOW + 50, request_id="rq-1", owner="o2")
    assert again.queued and again.resumed and again.ticket_id == first.ticket_id and again.enqueued_ms == NOW
    # Another search of the same player here (another request id, or none) takes it over too:
    # the player, not the request id, is the authority over their search.
    other = await queue.take(bucket.bucket_id, new_ticket_id(), who, 1500, NOW + 60, request_id="rq-2", owner="o3")
    assert other.queued and other.resumed and other.ticket_id == first.ticket_id and other.enqueued_ms == NOW
    bare = await queue.take(bucket.bucket_id, new_ticket_id(), who, 1500, NOW + 65, owner="o4")
    assert bare.queued and bare.resumed and bare.ticket_id == first.ticket_id
    # The dead streams' gateways withdraw late: the ticket is the newest stream's now.
    for late in ("o1", "o2", "o3"):
        assert await queue.cancel(bucket.bucket_id, first.ticket_id, late) is False
    assert [s.kind for s in await queue.renew(bucket.bucket_id, [first.ticket_id], NOW + 70)] == ["queued"]
    assert await queue.cancel(bucket.bucket_id, first.ticket_id, "o4") is True
    keys = bucket_keys(bucket.bucket_id)
    assert await redis.hlen(keys.requests) == 0  # nothing left behind for the request id


async def test_a_paired_ticket_its_player_was_not_told_of_answers_their_next_search(
    redis: Redis, layer: RedisLayer
) -> None:
    queue = MatchQueue(layer, FAST)
    bucket = spec()
    a, b = player("orphan"), player("opponent")
    orphan = await queue.take(bucket.bucket_id, new_ticket_id(), a, 1500, NOW, owner="dead")
    paired = await queue.take(bucket.bucket_id, new_ticket_id(), b, 1500, NOW + 10, owner="b", pairing=bucket)
    (match,) = paired.matches
    assert orphan.ticket_id in match.tickets
    await queue.mark_started(bucket.bucket_id, match.game_id, match.tickets, told=[paired.ticket_id])
    # A's stream died before it answered: A's next search, without a request id, is that match.
    again = await queue.take(bucket.bucket_id, new_ticket_id(), a, 1500, NOW + 20, owner="a2")
    assert again.resumed and again.ticket_id == orphan.ticket_id
    (status,) = await queue.renew(bucket.bucket_id, [again.ticket_id], NOW + 30, ["a2"])
    assert status.kind == "matched" and status.started and status.game_id == match.game_id
    # The dead stream's owner, renewing late, is told it was taken over.
    assert [s.kind for s in await queue.renew(bucket.bucket_id, [orphan.ticket_id], NOW + 30, ["dead"])] == [
        "taken_over"
    ]
    # B was told at the start, and A now: each one's next search is a new one.
    await queue.told(bucket.bucket_id, again.ticket_id)
    for who, t in ((a, NOW + 40), (b, NOW + 41)):
        fresh = await queue.take(bucket.bucket_id, new_ticket_id(), who, 1500, t, owner="n")
        assert fresh.queued and not fresh.resumed
    keys = bucket_keys(bucket.bucket_id)
    assert not [f for f in await redis.hkeys(keys.requests) if f.startswith(b"p|")]


async def test_a_refused_match_is_not_offered_again(redis: Redis, layer: RedisLayer) -> None:
    queue = MatchQueue(layer, FAST)
    bucket = spec()
    a, b = player("refused-a"), player("refused-b")
    await queue.take(bucket.bucket_id, new_ticket_id(), a, 1500, NOW, owner="dead")
    paired = await queue.take(bucket.bucket_id, new_ticket_id(), b, 1500, NOW + 10, owner="b", pairing=bucket)
    (match,) = paired.matches
    await queue.mark_started(bucket.bucket_id, match.game_id, match.tickets, refused=True)
    again = await queue.take(bucket.bucket_id, new_ticket_id(), a, 1500, NOW + 20, owner="a2")
    assert again.queued and not again.resumed


async def matched(call: grpc.aio.UnaryStreamCall) -> play_pb2.MatchFound:  # type: ignore[type-arg]
    while True:
        response = await call.read()
        assert response is not grpc.aio.EOF, "the search ended without a match"
        if response.HasField("matched"):
            return response.matched


async def test_a_search_resent_through_another_gateway_after_a_kill_takes_over_its_ticket(
    gw_system: GatewaySystem,
) -> None:
    doomed = spawn_gateway(gw_system.redis_url, gw_system.routes, name="gateway-doomed", TAFEL_MM_LEASE_S="20")
    channels = [grpc.aio.insecure_channel(address) for address in (doomed.address, *(g.address for g in gw_system.gateways))]
    try:
        a = await guest_on(channels[0])
        b = await guest_on(channels[2])
        request = play_pb2.FindMatchRequest(game="connect4", time_control=own_time_control(), request_id="search-1")
        lost = a.lobby.FindMatch(request, metadata=a.md, timeout=60)
        ticket = (await lost.read()).queued.ticket_id
        doomed.kill()  # kill -9: nobody withdraws the ticket, whose lease runs for 20 s more
        # The same player sends the same search through a surviving gateway: it takes the ticket over.
        resent = same_player_on(a, channels[1]).lobby.FindMatch(request, metadata=a.md, timeout=60)
        first = await resent.read()
        assert first.HasField("queued") and first.queued.ticket_id == ticket
        other = b.lobby.FindMatch(play_pb2.FindMatchRequest(game="connect4", time_control=request.time_control),
                                  metadata=b.md, timeout=60)
        found_a, found_b = await asyncio.wait_for(asyncio.gather(matched(resent), matched(other)), 30)
        assert found_a.game_id == found_b.game_id and found_a.ticket_id == ticket
        assert {found_a.seat, found_b.seat} == {0, 1}
    finally:
        doomed.kill()
        for channel in channels:
            await channel.close()


async def test_a_search_sent_again_without_a_request_id_after_a_kill_takes_over_its_ticket(
    gw_system: GatewaySystem,
) -> None:
    """The player owns the search: A searches on a gateway that is then killed, and searches again, without a
    request id, through another; B's search is matched with A's ticket, and A is told."""
    doomed = spawn_gateway(gw_system.redis_url, gw_system.routes, name="gateway-doomed", TAFEL_MM_LEASE_S="20")
    channels = [grpc.aio.insecure_channel(address) for address in (doomed.address, *(g.address for g in gw_system.gateways))]
    try:
        a = await guest_on(channels[0])
        b = await guest_on(channels[2])
        control = own_time_control()
        request = play_pb2.FindMatchRequest(game="connect4", time_control=control)  # no request id
        lost = a.lobby.FindMatch(request, metadata=a.md, timeout=60)
        ticket = (await lost.read()).queued.ticket_id
        doomed.kill()  # kill -9: nobody withdraws the ticket, whose lease runs for 20 s more
        again = same_player_on(a, channels[1]).lobby.FindMatch(request, metadata=a.md, timeout=60)
        first = await again.read()  # was ALREADY_EXISTS/ALREADY_QUEUED
        assert first.HasField("queued") and first.queued.ticket_id == ticket
        other = b.lobby.FindMatch(play_pb2.FindMatchRequest(game="connect4", time_control=control),
                                  metadata=b.md, timeout=60)
        found_a, found_b = await asyncio.wait_for(asyncio.gather(matched(again), matched(other)), 30)
        assert found_a.game_id == found_b.game_id and {found_a.seat, found_b.seat} == {0, 1}
        # A is a player of the game it was told of.
        survivor = same_player_on(a, channels[1])
        view = await survivor.games.GetGame(play_pb2.GetGameRequest(game_id=found_a.game_id), metadata=a.md, timeout=10)
        assert view.summary.game_id == found_a.game_id and view.HasField("seat") and view.seat == found_a.seat
    finally:
        doomed.kill()
        for channel in channels:
            await channel.close()


async def test_a_second_search_on_the_same_gateway_takes_over_and_the_first_is_told(
    gw_system: GatewaySystem,
) -> None:
    channel = grpc.aio.insecure_channel(gw_system.gateways[0].address)
    try:
        a = await guest_on(channel)
        request = play_pb2.FindMatchRequest(game="connect4", time_control=own_time_control())
        first = a.lobby.FindMatch(request, metadata=a.md, timeout=60)
        ticket = (await first.read()).queued.ticket_id
        second = a.lobby.FindMatch(request, metadata=a.md, timeout=60)
        assert (await second.read()).queued.ticket_id == ticket
        with pytest.raises(grpc.aio.AioRpcError) as ended:
            while True:
                assert (await first.read()) is not grpc.aio.EOF
        assert ended.value.code() == grpc.StatusCode.ABORTED and reason_of(ended.value) == "SEARCH_TAKEN_OVER"
        second.cancel()
    finally:
        await channel.close()


async def wait_for_record(client: Client, game_id: str, timeout_s: float = 20.0) -> play_pb2.GameRecord:
    """The record is written just after the game's last event: ask until it is there."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    async for response in client.games.WatchGame(play_pb2.WatchGameRequest(game_id=game_id), metadata=client.md,
                                                 timeout=timeout_s):
        if response.event.HasField("ended"):
            break
    while True:
        try:
            request = play_pb2.GetGameRecordRequest(game_id=game_id)
            return (await client.games.GetGameRecord(request, metadata=client.md, timeout=5)).record
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.NOT_FOUND or loop.time() > deadline:
                raise
            await asyncio.sleep(0.05)


async def test_a_seat_that_never_arrives_does_not_lose_a_rated_game(
    gw_system: GatewaySystem, seats: Seating, clients: list[Client]
) -> None:
    a, b, _ = clients

    async def rated_game() -> str:
        return await seats.directory.start_game(
            game="connect4", options=games_pb2.GameOptions(), players=[a.player, b.player], per_move_s=0.5,
            rated=True, origin="test",
        )

    # Seat 1 never moves: it times out on its first turn. Not a rated result.
    no_show = await rated_game()
    await a.move(no_show, 0, 3)
    record = await wait_for_record(a, no_show)
    assert record.actions[-1].timed_out and record.actions[-1].seat == 1
    assert not record.rated
    # Seat 1 played, then ran out of time: that counts.
    played = await rated_game()
    await a.move(played, 0, 3)
    await b.move(played, 1, 4)
    record = await wait_for_record(a, played)
    assert record.actions[-1].timed_out and record.actions[-1].seat == 0
    assert record.rated


async def orphaned_match(gw_system: GatewaySystem, a_request_id: str = "") -> tuple[Client, play_pb2.FindMatchRequest, str, play_pb2.MatchFound]:
    """A searches on a gateway that is frozen (SIGSTOP) and then killed (SIGKILL) between the
    pairing of A's ticket with B's search and A's answer: B is told, A never is. Returns A signed in
    on a surviving gateway, A's request, A's orphaned ticket and B's MatchFound."""
    doomed = spawn_gateway(gw_system.redis_url, gw_system.routes, name="gateway-doomed", TAFEL_MM_LEASE_S="20")
    channel = grpc.aio.insecure_channel(doomed.address)
    try:
        a = await guest_on(channel)
        control = own_time_control()
        request = play_pb2.FindMatchRequest(game="connect4", time_control=control, request_id=a_request_id)
        lost = a.lobby.FindMatch(request, metadata=a.md, timeout=60)
        ticket = (await lost.read()).queued.ticket_id
        doomed.process.send_signal(signal.SIGSTOP)  # it can no longer answer A
        b = await guest_on(grpc.aio.insecure_channel(gw_system.gateways[1].address))
        other = b.lobby.FindMatch(play_pb2.FindMatchRequest(game="connect4", time_control=control),
                                  metadata=b.md, timeout=60)
        found_b = await asyncio.wait_for(matched(other), 30)  # paired with A's ticket, started
        doomed.kill()  # SIGKILL: A's stream is gone unanswered
        survivor = Client(gw_system.gateways[0].address)
        survivor.session = a.session
        return survivor, request, ticket, found_b
    finally:
        doomed.kill()
        await channel.close()


@pytest.mark.parametrize("request_id", ["", "search-34"])
async def test_a_search_through_find_match_after_a_kill_between_pairing_and_answer_gets_the_match(
    gw_system: GatewaySystem, request_id: str
) -> None:
    """The player owns the search: A's ticket was paired while A's gateway could not answer, and the gateway died;
    A searches again (with the same request id, or with none) and is answered with that match."""
    a, request, ticket, found_b = await orphaned_match(gw_system, request_id)
    try:
        lobby = play_pb2_grpc.LobbyServiceStub(a.channel)
        again = lobby.FindMatch(request, metadata=a.md, timeout=30)
        found_a = await asyncio.wait_for(matched(again), 20)
        assert found_a.game_id == found_b.game_id and found_a.ticket_id == ticket
        assert {found_a.seat, found_b.seat} == {0, 1}
        view = await a.get(found_a.game_id)
        assert view.HasField("seat") and view.seat == found_a.seat
        # Told now: A's next search (without the old request id) is a new one.
        fresh = lobby.FindMatch(play_pb2.FindMatchRequest(game="connect4", time_control=request.time_control),
                                metadata=a.md, timeout=30)
        first = await fresh.read()
        assert first.HasField("queued") and first.queued.ticket_id != ticket
        fresh.cancel()
    finally:
        await a.close()


async def test_a_search_on_the_play_stream_after_a_kill_between_pairing_and_answer_gets_the_match(
    gw_system: GatewaySystem,
) -> None:
    a, request, ticket, found_b = await orphaned_match(gw_system)
    stream = PlayStream(a)
    try:
        find = await stream.send(find_match=request)

        def found() -> play_pb2.MatchFound | None:
            for r in stream.responses:
                if r.correlation_id == find and r.WhichOneof("kind") == "match_update" and r.match_update.HasField("matched"):
                    return r.match_update.matched
            return None

        await stream.wait_for(lambda: found() is not None, 20)
        found_a = found()
        assert found_a is not None and found_a.game_id == found_b.game_id and found_a.ticket_id == ticket
        assert {found_a.seat, found_b.seat} == {0, 1}
    finally:
        await stream.close()
        await a.close()


async def test_a_search_taken_over_through_another_gateway_ends_aborted(gw_system: GatewaySystem) -> None:
    """The player owns the search: the older search, still open on another gateway, is told it was taken over
    (it used to keep following the ticket, and the player heard of the match twice)."""
    channels = [grpc.aio.insecure_channel(g.address) for g in gw_system.gateways]
    try:
        a = await guest_on(channels[0])
        control = own_time_control()
        request = play_pb2.FindMatchRequest(game="connect4", time_control=control)
        first = a.lobby.FindMatch(request, metadata=a.md, timeout=60)
        ticket = (await first.read()).queued.ticket_id
        second = same_player_on(a, channels[1]).lobby.FindMatch(request, metadata=a.md, timeout=60)
        assert (await second.read()).queued.ticket_id == ticket
        with pytest.raises(grpc.aio.AioRpcError) as ended:
            async with asyncio.timeout(10):
                while True:
                    response = await first.read()
                    assert response is not grpc.aio.EOF and response.HasField("queued")
        assert ended.value.code() == grpc.StatusCode.ABORTED and reason_of(ended.value) == "SEARCH_TAKEN_OVER"
        # The newer search still holds the ticket and is matched; the older one is not.
        b = await guest_on(channels[1])
        other = b.lobby.FindMatch(play_pb2.FindMatchRequest(game="connect4", time_control=control),
                                  metadata=b.md, timeout=60)
        found_a, found_b = await asyncio.wait_for(asyncio.gather(matched(second), matched(other)), 30)
        assert found_a.game_id == found_b.game_id and found_a.ticket_id == ticket
    finally:
        for channel in channels:
            await channel.close()
