"""One matchmaking ticket per player per game (issue 18.6): a second search for the same game in
another bucket (another clock, other options, another table size) is refused ALREADY_QUEUED, on
any gateway, until the first search ends; a search for another game is not. The claim behind it
lives only as long as the ticket's lease, so a dead gateway cannot block its player for longer."""

from __future__ import annotations

import asyncio
import dataclasses

import grpc
import pytest
from redis.asyncio import Redis

from kit.errors import Refused
from kit.redis.keys import match_claim_key
from tests.gateway.lobby_helpers import FAST, RecordingStarter, gateway_side, player, run_to_match, spec


async def refused_search(search: object) -> Refused:
    with pytest.raises(Refused) as refused:
        await anext(search)  # type: ignore[call-overload]
    return refused.value


async def test_a_second_search_for_the_same_game_in_another_bucket_is_refused_on_any_gateway(redis_url: str) -> None:
    async with gateway_side(redis_url, RecordingStarter()) as one, gateway_side(redis_url, RecordingStarter()) as two:
        me = player()
        first = one.find(spec(per_move_ms=30_000), me)
        ticket = (await anext(first)).queued.ticket_id
        for other_bucket in (spec(per_move_ms=90_000), spec(min_seats=2, max_seats=4)):
            refusal = await refused_search(two.find(other_bucket, me))
            assert (refusal.code, refusal.reason) == (grpc.StatusCode.ALREADY_EXISTS, "ALREADY_QUEUED")
            assert refusal.metadata == {"ticket_id": ticket}
        # Another game is another matter.
        plus4 = two.find(spec(game="plus4"), me)
        assert (await anext(plus4)).HasField("queued")
        await plus4.aclose()
        # Once the first search has ended, the other bucket takes the player.
        await first.aclose()
        later = two.find(spec(per_move_ms=90_000), me)
        assert (await anext(later)).HasField("queued")
        await later.aclose()


async def test_after_a_match_the_player_may_search_the_same_game_again(redis_url: str) -> None:
    async with gateway_side(redis_url, RecordingStarter()) as mm:
        me, you = player(), player()
        bucket = spec()
        await asyncio.wait_for(asyncio.gather(run_to_match(mm, bucket, me), run_to_match(mm, bucket, you)), 30)
        again = mm.find(spec(per_move_ms=90_000), me)
        assert (await anext(again)).HasField("queued")
        await again.aclose()


async def test_a_taken_over_search_keeps_the_claim_when_its_old_stream_ends(redis_url: str) -> None:
    async with gateway_side(redis_url, RecordingStarter()) as one, gateway_side(redis_url, RecordingStarter()) as two:
        me = player()
        bucket = spec()
        old = one.find(bucket, me, "rq-1")
        ticket = (await anext(old)).queued.ticket_id
        resent = two.find(bucket, me, "rq-1")
        assert (await anext(resent)).queued.ticket_id == ticket
        # The old stream ends late (its gateway noticed the lost connection): the ticket and the
        # claim are the resent search's now, so another bucket of the game is still refused.
        await old.aclose()
        refusal = await refused_search(one.find(spec(per_move_ms=90_000), me))
        assert refusal.reason == "ALREADY_QUEUED"
        await resent.aclose()
        later = one.find(spec(per_move_ms=90_000), me)
        assert (await anext(later)).HasField("queued")
        await later.aclose()


async def test_the_claim_lives_as_long_as_the_ticket_lease_and_is_renewed_with_it(
    redis_url: str, redis: Redis
) -> None:
    settings = dataclasses.replace(FAST, lease_s=2.0)
    async with gateway_side(redis_url, RecordingStarter(), settings) as mm:
        me = player()
        first = mm.find(spec(), me)
        await anext(first)
        claim = match_claim_key(me.player_id, "connect4")
        assert 0 < await redis.pttl(claim) <= 2_000
        # Past one lease the waiting search still holds it (renewed with the ticket's lease).
        await asyncio.sleep(2.5)
        assert 0 < await redis.pttl(claim) <= 2_000
        assert (await refused_search(mm.find(spec(per_move_ms=90_000), me))).reason == "ALREADY_QUEUED"
        await first.aclose()
        assert await redis.exists(claim) == 0
