"""Challenges through two real gateways, on both players' event streams: made, accepted (the game
starts for both, seats as preferred), declined with a reason, cancelled, refused between a blocked
pair, an open challenge taken by exactly one of two, and expiry by the sweep."""

from __future__ import annotations

import asyncio

import grpc
from tafel.play.v1 import challenges_pb2, challenges_pb2_grpc, play_pb2, safety_pb2

from gateway.challenges.service import ChallengeSweeper
from gateway.challenges.store import ChallengeStore
from gateway.events.feed import AccountEvents
from kit.redis.layer import RedisLayer
from tests.gateway.conftest import GatewaySystem
from tests.gateway.harness import failure
from tests.gateway.social.streams import Events
from tests.gateway.standing.helpers import Person, register

C = challenges_pb2


def stub(person: Person) -> challenges_pb2_grpc.ChallengeServiceStub:
    return challenges_pb2_grpc.ChallengeServiceStub(person.channel)


async def challenge(by: Person, request_id: str = "c1", **fields: object) -> C.Challenge:
    request = C.CreateChallengeRequest(request_id=request_id, game="connect4", **fields)  # type: ignore[arg-type]
    return (await stub(by).CreateChallenge(request, metadata=by.md, timeout=10)).challenge


async def test_accepted_challenge_starts_the_game_on_both_streams(gw_system: GatewaySystem) -> None:
    alice = await register(gw_system.gateways[0].address, "alice")
    bob = await register(gw_system.gateways[1].address, "bob")
    alice_events, bob_events = await Events(alice).started(), await Events(bob).started()
    made = await challenge(alice, username=bob.name, seat_preference=C.SEAT_PREFERENCE_SECOND)
    assert (await challenge(alice, username=bob.name)).challenge_id == made.challenge_id  # the same request id
    await bob_events.until(lambda: bob_events.of("challenge"))
    incoming = bob_events.of("challenge")[0]
    assert incoming.challenge_id == made.challenge_id and incoming.status == C.CHALLENGE_STATUS_PENDING
    listed = await stub(bob).ListChallenges(C.ListChallengesRequest(), metadata=bob.md)
    assert [c.challenge_id for c in listed.incoming] == [made.challenge_id]

    code, reason = await failure(challenge(alice, "c2", username=bob.name))
    assert (code, reason) == (grpc.StatusCode.ALREADY_EXISTS, "CHALLENGE_PENDING")

    accepted = await stub(bob).AcceptChallenge(
        C.AcceptChallengeRequest(challenge_id=made.challenge_id), metadata=bob.md
    )
    game_id = accepted.challenge.game_id
    assert accepted.challenge.status == C.CHALLENGE_STATUS_ACCEPTED and game_id
    for events in (alice_events, bob_events):
        await events.until(lambda e=events: e.of("game_started"))  # type: ignore[misc]
        started = events.of("game_started")[0]
        assert started.game_id == game_id and started.origin == f"challenge:{made.challenge_id}"
        # Alice asked for the second seat.
        assert [p.player.username for p in started.players] == [bob.name, alice.name]
        await events.until(lambda e=events: [c for c in e.of("challenge") if c.status == C.CHALLENGE_STATUS_ACCEPTED])  # type: ignore[misc]
    view = await alice.games.GetGame(play_pb2.GetGameRequest(game_id=game_id), metadata=alice.md)
    assert view.seat == 1
    # Accepted twice (a retry) is the same answer; accepting an answered one is refused.
    again = await stub(bob).AcceptChallenge(C.AcceptChallengeRequest(challenge_id=made.challenge_id), metadata=bob.md)
    assert again.challenge.game_id == game_id
    await alice_events.close()
    await bob_events.close()


async def test_decline_cancel_and_who_may(gw_system: GatewaySystem) -> None:
    carol = await register(gw_system.gateways[0].address, "carol")
    dan = await register(gw_system.gateways[1].address, "dan")
    carol_events = await Events(carol).started()
    made = await challenge(carol, username=dan.name, rated=True)
    code, reason = await failure(
        stub(carol).AcceptChallenge(C.AcceptChallengeRequest(challenge_id=made.challenge_id), metadata=carol.md)
    )
    assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "NOT_CHALLENGED")
    code, reason = await failure(
        stub(dan).DeclineChallenge(C.DeclineChallengeRequest(challenge_id=made.challenge_id), metadata=dan.md)
    )
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_DECLINE_REASON")
    declined = await stub(dan).DeclineChallenge(
        C.DeclineChallengeRequest(challenge_id=made.challenge_id, reason=C.DECLINE_REASON_TOO_FAST), metadata=dan.md
    )
    assert declined.challenge.status == C.CHALLENGE_STATUS_DECLINED
    await carol_events.until(
        lambda: [c for c in carol_events.of("challenge") if c.status == C.CHALLENGE_STATUS_DECLINED]
    )
    assert carol_events.of("challenge")[-1].decline_reason == C.DECLINE_REASON_TOO_FAST
    code, reason = await failure(
        stub(dan).AcceptChallenge(C.AcceptChallengeRequest(challenge_id=made.challenge_id), metadata=dan.md)
    )
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "CHALLENGE_NOT_PENDING")

    second = await challenge(carol, "c2", username=dan.name)  # the pair is free again
    code, reason = await failure(
        stub(dan).CancelChallenge(C.CancelChallengeRequest(challenge_id=second.challenge_id), metadata=dan.md)
    )
    assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "NOT_CHALLENGER")
    cancelled = await stub(carol).CancelChallenge(
        C.CancelChallengeRequest(challenge_id=second.challenge_id), metadata=carol.md
    )
    assert cancelled.challenge.status == C.CHALLENGE_STATUS_CANCELLED
    await carol_events.close()


async def test_blocked_players_cannot_challenge_each_other(gw_system: GatewaySystem) -> None:
    erin = await register(gw_system.gateways[0].address, "erin")
    fred = await register(gw_system.gateways[0].address, "fred")
    await erin.safety.BlockPlayer(safety_pb2.BlockPlayerRequest(username=fred.name), metadata=erin.md)
    for by, to in ((fred, erin), (erin, fred)):
        code, reason = await failure(challenge(by, username=to.name))
        assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "CHALLENGE_NOT_ALLOWED")
    open_one = await challenge(erin, "open", open=True)
    listed = await stub(fred).ListOpenChallenges(C.ListOpenChallengesRequest(game="connect4"), metadata=fred.md)
    assert open_one.challenge_id not in [c.challenge_id for c in listed.challenges]


async def test_an_open_challenge_is_taken_once(gw_system: GatewaySystem) -> None:
    gina = await register(gw_system.gateways[0].address, "gina")
    takers = [await register(gw_system.gateways[i % 2].address, f"taker{i}") for i in range(2)]
    made = await challenge(gina, open=True)
    listed = await stub(takers[0]).ListOpenChallenges(C.ListOpenChallengesRequest(), metadata=takers[0].md)
    assert made.challenge_id in [c.challenge_id for c in listed.challenges]
    answers = await asyncio.gather(
        *(
            stub(t).AcceptChallenge(C.AcceptChallengeRequest(challenge_id=made.challenge_id), metadata=t.md)
            for t in takers
        ),
        return_exceptions=True,
    )
    won = [a for a in answers if not isinstance(a, BaseException)]
    lost = [a for a in answers if isinstance(a, grpc.aio.AioRpcError)]
    assert len(won) == 1 and len(lost) == 1
    assert lost[0].code() == grpc.StatusCode.FAILED_PRECONDITION
    assert won[0].challenge.challenged.username in {t.name for t in takers}


async def test_the_sweep_expires_a_pending_challenge_once(gw_system: GatewaySystem, redis_url: str) -> None:
    hank = await register(gw_system.gateways[0].address, "hank")
    ida = await register(gw_system.gateways[1].address, "ida")
    ida_events = await Events(ida).started()
    made = await challenge(hank, username=ida.name)
    layer = RedisLayer.connect(gw_system.redis_url, max_connections=4)
    try:
        sweeper = ChallengeSweeper(ChallengeStore(layer), AccountEvents(layer))
        later = made.expires_at.ToMilliseconds() + 1
        assert await sweeper.sweep_once(later) >= 1
        assert await sweeper.sweep_once(later) == 0  # once
    finally:
        await layer.close()
    await ida_events.until(lambda: [c for c in ida_events.of("challenge") if c.status == C.CHALLENGE_STATUS_EXPIRED])
    code, reason = await failure(
        stub(ida).AcceptChallenge(C.AcceptChallengeRequest(challenge_id=made.challenge_id), metadata=ida.md)
    )
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "CHALLENGE_NOT_PENDING")
    await ida_events.close()
