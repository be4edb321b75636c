"""The process side of matchmaking: two Matchmakers (two gateway processes, each with its own Redis
client and pub/sub connection) serving waiting streams against one real Redis."""

from __future__ import annotations

import asyncio
import dataclasses
from collections import Counter
from collections.abc import AsyncIterator

import grpc
import pytest
from redis.asyncio import Redis
from tafel.play.v1 import play_pb2

from gateway.matchmaking.matchmaker import Matchmaker
from kit.errors import Refused
from kit.redis.keys import bucket_keys
from tests.gateway.lobby_helpers import FAST, RecordingStarter, gateway_side, player, process_redis, run_to_match, spec


async def test_200_waiting_streams_on_two_gateways_are_each_matched_exactly_once(redis_url: str) -> None:
    starters = [RecordingStarter(), RecordingStarter()]
    bucket = spec()
    async with gateway_side(redis_url, starters[0]) as one, gateway_side(redis_url, starters[1]) as two:
        players = [player(f"s{i}") for i in range(200)]
        results = await asyncio.wait_for(
            asyncio.gather(*(run_to_match((one, two)[i % 2], bucket, p) for i, p in enumerate(players))),
            60,
        )
    tickets = Counter(found.ticket_id for _, found in results)
    assert len(tickets) == 200 and set(tickets.values()) == {1}
    by_game: dict[str, list[tuple[play_pb2.Player, play_pb2.MatchFound]]] = {}
    for who, (_, found) in zip(players, results, strict=True):
        by_game.setdefault(found.game_id, []).append((who, found))
    assert len(by_game) == 100
    started = {**starters[0].games, **starters[1].games}
    assert set(started) == set(by_game)
    for game_id, seated in by_game.items():
        assert sorted(f.seat for _, f in seated) == [0, 1]
        call = started[game_id]
        # Each player's seat is their seat in the game that was started.
        for who, found in seated:
            assert call.players[found.seat].player_id == who.player_id
            assert [sp.player.player_id for sp in found.players] == [p.player_id for p in call.players]
        assert call.origin == "match" and call.game == "connect4"
        assert call.per_move_s == bucket.per_move_ms / 1000
    # Every game was created once (no retry was needed here).
    assert len(starters[0].calls) + len(starters[1].calls) == 100


async def test_queued_updates_report_the_wait_and_the_widening_window(redis_url: str) -> None:
    starter = RecordingStarter()
    settings = dataclasses.replace(FAST, update_s=0.1, widen_per_s=100.0)
    bucket = spec()
    async with gateway_side(redis_url, starter, settings) as mm:
        stream = mm.find(bucket, player())
        updates = [await anext(stream) for _ in range(6)]
        await stream.aclose()
    windows = [u.queued.rating_window for u in updates]
    waited = [u.queued.waited.ToMilliseconds() for u in updates]
    assert updates[0].queued.ticket_id and len({u.queued.ticket_id for u in updates}) == 1
    assert windows == sorted(windows) and windows[-1] > windows[0] >= 100
    assert waited == sorted(waited) and waited[-1] >= 400


async def test_closing_the_stream_removes_the_ticket(redis_url: str, redis: Redis) -> None:
    starter = RecordingStarter()
    bucket = spec()
    async with gateway_side(redis_url, starter) as mm:
        me = player()
        stream = mm.find(bucket, me)
        first = await anext(stream)
        keys = bucket_keys(bucket.bucket_id)
        assert await redis.zscore(keys.queue, first.queued.ticket_id) == 1500
        await stream.aclose()
        for _ in range(500):  # up to 10 s: the removal runs in a task of its own
            if await redis.zcard(keys.queue) == 0:
                break
            await asyncio.sleep(0.02)
        assert await redis.zcard(keys.queue) == 0
        assert await redis.hget(keys.owners, me.player_id) is None
        # A new player is not paired with the one who left.
        task = asyncio.create_task(run_to_match(mm, bucket, player()))
        await asyncio.sleep(0.5)
        assert not task.done()
        task.cancel()
    assert starter.calls == []


async def test_a_cancelled_task_removes_its_ticket(redis_url: str, redis: Redis) -> None:
    bucket = spec()
    async with gateway_side(redis_url, RecordingStarter()) as mm:
        task = asyncio.create_task(run_to_match(mm, bucket, player()))
        keys = bucket_keys(bucket.bucket_id)
        for _ in range(500):  # up to 10 s each: a busy machine is slow, not wrong
            if await redis.zcard(keys.queue) == 1:
                break
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        for _ in range(500):
            if await redis.zcard(keys.queue) == 0:
                break
            await asyncio.sleep(0.02)
        assert await redis.zcard(keys.queue) == 0


async def test_a_second_search_in_the_same_bucket_takes_the_ticket_over(redis_url: str) -> None:
    bucket = spec()
    async with gateway_side(redis_url, RecordingStarter()) as mm:
        me = player()
        first = mm.find(bucket, me)
        queued = (await anext(first)).queued
        second = mm.find(bucket, me)
        assert (await anext(second)).queued.ticket_id == queued.ticket_id
        with pytest.raises(Refused) as refused:
            while True:
                await anext(first)
        assert (refused.value.code, refused.value.reason) == (grpc.StatusCode.ABORTED, "SEARCH_TAKEN_OVER")
        await second.aclose()


async def test_a_ticket_that_waits_too_long_expires(redis_url: str) -> None:
    settings = dataclasses.replace(FAST, ticket_ttl_s=5.0, lease_s=3.0)
    async with gateway_side(redis_url, RecordingStarter(), settings) as mm:
        with pytest.raises(Refused) as refused:
            await asyncio.wait_for(run_to_match(mm, spec(), player()), 15)
    assert refused.value.code == grpc.StatusCode.DEADLINE_EXCEEDED
    assert refused.value.reason == "TICKET_EXPIRED"


async def test_a_match_whose_game_cannot_be_started_ends_the_streams(redis_url: str) -> None:
    broken = RecordingStarter(fail_times=1000)
    bucket = spec()
    async with gateway_side(redis_url, broken) as mm:
        outcomes = await asyncio.wait_for(
            asyncio.gather(
                run_to_match(mm, bucket, player()), run_to_match(mm, bucket, player()), return_exceptions=True
            ),
            30,
        )
    for outcome in outcomes:
        assert isinstance(outcome, Refused)
        assert outcome.code == grpc.StatusCode.UNAVAILABLE and outcome.reason == "MATCH_NOT_STARTED"
    assert broken.calls and len({c.game_id for c in broken.calls}) == 1


async def test_a_waiter_on_another_gateway_recovers_a_match_left_unstarted(redis_url: str) -> None:
    broken = RecordingStarter(fail_times=1000)
    healthy = RecordingStarter()
    bucket = spec()
    # `two` ticks slowly, so the pairing happens on `one` (at once, when the second ticket arrives).
    slow = dataclasses.replace(FAST, tick_s=1.0)
    async with gateway_side(redis_url, broken) as one, gateway_side(redis_url, healthy, slow) as two:
        a_search = two.find(bucket, player())
        # a's ticket is queued before b's arrives (seen, not hoped for after a pause: on a busy
        # machine b came first, `two` paired them itself, and the recovery went untested).
        assert (await asyncio.wait_for(anext(a_search), 10)).HasField("queued")

        async def matched(search: AsyncIterator[play_pb2.FindMatchResponse]) -> play_pb2.MatchFound:
            async for message in search:
                if message.HasField("matched"):
                    return message.matched
            raise AssertionError("the search ended without a match")

        a_task = asyncio.create_task(matched(a_search))
        # `one` pairs (its worker runs at once on the new ticket) but fails to start the game.
        b_task = asyncio.create_task(run_to_match(one, bucket, player()))
        found_a, (_, found_b) = await asyncio.wait_for(asyncio.gather(a_task, b_task), 30)
    assert found_a.game_id == found_b.game_id
    assert {found_a.seat, found_b.seat} == {0, 1}
    assert found_a.game_id in healthy.games
    assert broken.calls and {c.game_id for c in broken.calls} == {found_a.game_id}


async def test_a_match_the_rules_service_refuses_ends_the_streams_at_once(redis_url: str) -> None:
    class Refusing(RecordingStarter):
        async def start_game(self, **kwargs):  # type: ignore[no-untyped-def, override]
            self.calls.append(kwargs)  # type: ignore[arg-type]
            raise Refused(grpc.StatusCode.INVALID_ARGUMENT, "BAD_OPTIONS", "not for this table size")

    starter = Refusing()
    bucket = spec()
    async with gateway_side(redis_url, starter) as mm:
        outcomes = await asyncio.wait_for(
            asyncio.gather(
                run_to_match(mm, bucket, player()), run_to_match(mm, bucket, player()), return_exceptions=True
            ),
            3,
        )
    for outcome in outcomes:
        assert isinstance(outcome, Refused)
        assert outcome.code == grpc.StatusCode.FAILED_PRECONDITION and outcome.reason == "MATCH_REFUSED"
    assert len(starter.calls) == 1


async def test_the_second_search_is_paired_in_its_own_enqueue_without_a_pairing_pass(redis_url: str) -> None:
    # Ticks a minute apart: only the worker's first pass (when the first search makes the bucket)
    # pairs, and then there is one ticket. The second search's enqueue pairs the two itself and
    # this gateway starts the game at once; a pass after each enqueue was a round trip a ticket.
    settings = dataclasses.replace(FAST, tick_s=60.0, update_s=60.0)
    starter = RecordingStarter()
    async with gateway_side(redis_url, starter, settings) as mm:
        passes: list[int] = []
        first_pass = asyncio.Event()
        pair = mm.queue.pair

        async def counted(bucket_spec: object, now_ms: int) -> object:
            found = await pair(bucket_spec, now_ms)  # type: ignore[arg-type]
            passes.append(len(found))
            first_pass.set()
            return found

        mm.queue.pair = counted  # type: ignore[assignment,method-assign]
        bucket = spec()
        me, you = player(), player()
        mine = asyncio.ensure_future(run_to_match(mm, bucket, me))
        await asyncio.wait_for(first_pass.wait(), 10)
        (_, a), (_, b) = await asyncio.wait_for(asyncio.gather(mine, run_to_match(mm, bucket, you)), 10)
        assert a.game_id == b.game_id and {a.seat, b.seat} == {0, 1}
        assert set(starter.games) == {a.game_id}
        assert passes == [0]


async def test_a_guest_queues_at_the_default_rating_without_a_lookup(redis_url: str, redis: Redis) -> None:
    """A guest is never rated (its games are unrated), so its search asks the rating source
    nothing; a registered player's search asks and queues at its rating."""
    asked: list[str] = []

    class Ratings:
        async def rating(self, player_id: str, game: str) -> float:
            asked.append(player_id)
            return 1800.0

    bucket = spec()
    keys = bucket_keys(bucket.bucket_id)
    async with process_redis(redis_url) as (layer, pubsub):
        mm = Matchmaker(layer, pubsub, RecordingStarter(), Ratings(), FAST)
        try:
            guest, member = player(guest=True), player()
            guest_search, member_search = mm.find(bucket, guest), mm.find(bucket, member)
            guest_ticket = (await anext(guest_search)).queued.ticket_id
            member_ticket = (await anext(member_search)).queued.ticket_id
            assert await redis.zscore(keys.queue, guest_ticket) == 1500
            assert await redis.zscore(keys.queue, member_ticket) == 1800
            assert asked == [member.player_id]
            await guest_search.aclose()
            await member_search.aclose()
        finally:
            await mm.close()
