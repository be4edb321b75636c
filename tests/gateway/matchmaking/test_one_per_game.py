"""One matchmaking ticket per player per game: a second search for the same game in
another bucket (another clock, other options, another table size) is refused ALREADY_QUEUED, on
any gateway, until the first search ends; a search for another game is not. The claim behind it
lives only as long as the ticket's lease, so a dead gateway cannot block its player for longer."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import grpc
import pytest
from redis.asyncio import Redis
from tafel.play.v1 import play_pb2

from kit.errors import Refused, reason_of
from kit.redis.keys import match_claim_key
from tests.gateway.conftest import GatewaySystem
from tests.gateway.harness import spawn_gateway
from tests.gateway.lobby_e2e import guest_on, own_time_control, same_player_on
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


async def test_a_match_started_here_releases_each_claim_once(redis_url: str, redis: Redis) -> None:
    # The start releases both players' claims (on one Redis inside the script that marks the
    # match started, so no release call at all); the waiters on this process then leave them be
    # (releasing them again was two round trips a game for nothing).
    async with gateway_side(redis_url, RecordingStarter()) as mm:
        released: list[str] = []
        release = mm.claims.release

        async def counted(player_id: str, game: str, token: str) -> None:
            released.append(player_id)
            await release(player_id, game, token)

        mm.claims.release = counted  # type: ignore[method-assign]
        me, you = player(), player()
        bucket = spec()
        await asyncio.wait_for(asyncio.gather(run_to_match(mm, bucket, me), run_to_match(mm, bucket, you)), 30)
        one_redis = not mm.queue.layer.cluster
        assert sorted(released) == ([] if one_redis else sorted([me.player_id, you.player_id]))
        for who in (me, you):
            assert await redis.exists(match_claim_key(who.player_id, "connect4")) == 0


async def test_the_moment_a_match_is_found_the_player_may_search_the_game_again_anywhere(redis_url: str) -> None:
    async with gateway_side(redis_url, RecordingStarter()) as one, gateway_side(redis_url, RecordingStarter()) as two:
        me, you = player(), player()
        bucket = spec()
        mine, yours = one.find(bucket, me), two.find(bucket, you)
        await anext(mine)
        await anext(yours)

        async def found(search: object) -> None:
            while not (await anext(search)).HasField("matched"):  # type: ignore[call-overload]
                pass

        await asyncio.wait_for(asyncio.gather(found(mine), found(yours)), 30)
        # Both streams still open (their ends not yet run): the claims went with the pairing.
        again = two.find(spec(per_move_ms=90_000), me)
        assert (await anext(again)).HasField("queued")
        await again.aclose()
        await mine.aclose()
        await yours.aclose()


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


async def test_a_killed_gateways_claim_runs_out_with_its_lease(gw_system: GatewaySystem) -> None:
    lease_s = 6.0  # the claim's TTL is the killed gateway's lease
    doomed = spawn_gateway(gw_system.redis_url, gw_system.routes, name="gateway-doomed-claim", TAFEL_MM_LEASE_S="6")
    channels = [grpc.aio.insecure_channel(address) for address in (doomed.address, gw_system.gateways[0].address)]
    try:
        me = await guest_on(channels[0])
        lost = me.lobby.FindMatch(
            play_pb2.FindMatchRequest(game="connect4", time_control=own_time_control()), metadata=me.md, timeout=60
        )
        assert (await lost.read()).HasField("queued")
        doomed.kill()  # kill -9: nobody withdraws the ticket or releases the claim
        survivor = same_player_on(me, channels[1])
        elsewhere = play_pb2.FindMatchRequest(game="connect4", time_control=own_time_control())
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await survivor.lobby.FindMatch(elsewhere, metadata=me.md, timeout=10).read()
        assert refused.value.code() == grpc.StatusCode.ALREADY_EXISTS and reason_of(refused.value) == "ALREADY_QUEUED"
        # Nobody renews the claim: within its lease (and a margin for a busy machine) it is gone.
        loop = asyncio.get_running_loop()
        deadline = loop.time() + lease_s + 15
        while True:
            search = survivor.lobby.FindMatch(elsewhere, metadata=me.md, timeout=10)
            try:
                assert (await search.read()).HasField("queued")
                break
            except grpc.aio.AioRpcError as error:
                if reason_of(error) != "ALREADY_QUEUED" or loop.time() > deadline:
                    raise
            await asyncio.sleep(0.25)
        search.cancel()
    finally:
        doomed.kill()
        for channel in channels:
            await channel.close()


async def test_a_search_is_claimed_and_queued_in_one_script_on_one_redis(redis_url: str, redis: Redis) -> None:
    """On one Redis the claim, the enqueue and the claim's re-pointing are one script (a cluster
    keeps the three steps: the claim is another slot); what it leaves is what the steps did."""
    async with gateway_side(redis_url, RecordingStarter()) as mm:
        ran: list[str] = []
        run = mm.queue.layer.run

        async def counted(script: Any, keys: Any, args: Any = ()) -> Any:
            ran.append(script.name)
            return await run(script, keys, args)

        mm.queue.layer.run = counted  # type: ignore[method-assign]
        me, bucket = player(), spec()
        search = mm.find(bucket, me, "rq-one")
        ticket = (await anext(search)).queued.ticket_id
        one_redis = not mm.queue.layer.cluster
        taking = ran[: ran.index("matchmaking/claim_enqueue") + 1] if one_redis else ran
        assert taking == (["matchmaking/claim_enqueue"] if one_redis else ["matchmaking/claim", "matchmaking/enqueue"])
        claim = match_claim_key(me.player_id, "connect4")
        assert await redis.get(claim) == f"{bucket.bucket_id}|{ticket}".encode()
        assert 0 < await redis.pttl(claim) <= FAST.lease_ms
        # Resent with the same request id (another stream): the same ticket and claim.
        resent = mm.find(bucket, me, "rq-one")
        assert (await anext(resent)).queued.ticket_id == ticket
        assert await redis.get(claim) == f"{bucket.bucket_id}|{ticket}".encode()
        await search.aclose()
        await resent.aclose()
        assert await redis.exists(claim) == 0
