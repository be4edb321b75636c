"""The SDK's challenges, offers and account event stream through the whole platform: a challenge
declined with a reason and one accepted (its game on both streams), a decline and an abort resent
after their first try did the work (answered as the first), the event stream cut mid-way and
resumed by itself with nothing lost or doubled, and a rematch accepted after a game."""

from __future__ import annotations

import asyncio
import uuid

import grpc
import pytest
from tafel.autoplay import play_game
from tafel.botplay import strategy_for
from tafel.client import TafelClient
from tafel.conformance.proxy import Cut, Policy, Proxy, cut_status
from tafel.errors import AlreadyExists, IllegalMove
from tafel.events import AccountEventStream
from tafel.play.v1 import challenges_pb2 as C
from tafel.play.v1 import play_pb2

from tools.platform import Platform

EVENTS = "/tafel.play.v1.EventService/WatchMyEvents"


async def account(address: str, prefix: str) -> TafelClient:
    client = await TafelClient.connect(address)
    await client.register(f"{prefix}{uuid.uuid4().hex[:8]}", "correct horse battery")
    return client


class CutAfter(Policy):
    """Cuts the event stream (UNAVAILABLE) when its `at`-th response (ready included) comes, once."""

    def __init__(self, at: int) -> None:
        self.at = at
        self.seen = 0

    def response(self, method: str, raw: bytes) -> Cut | None:
        if method != EVENTS:
            return None
        self.seen += 1
        if self.seen == self.at:
            return Cut(cut_status(grpc.StatusCode.UNAVAILABLE, "cut by the test"))
        return None


async def until(
    events: AccountEventStream, test: object, seen: list[str] | None = None, timeout_s: float = 15.0
) -> C.AccountEvent:
    """The next event that passes `test`; the ids of all read on the way go to `seen`."""
    while True:
        event = await events.next_event(timeout_s)
        if seen is not None:
            seen.append(event.event_id)
        if test(event):  # type: ignore[operator]
            return event


def challenge_in(status: int):  # type: ignore[no-untyped-def]
    return lambda e: e.WhichOneof("kind") == "challenge" and e.challenge.status == status


async def test_challenges_declined_and_accepted_through_a_cut_stream(platform: Platform) -> None:
    address = platform.gateway_addresses[0]
    alice, bob = await account(address, "al"), await account(address, "bo")
    proxy = await Proxy(address, CutAfter(at=3)).start()  # ready, the first challenge, (cut)
    bob_via_proxy = TafelClient((await TafelClient.connect(proxy.address)).channel)
    bob_via_proxy.session = bob.session
    try:
        async with alice.event_stream() as alice_events, bob_via_proxy.event_stream() as bob_events:
            start, bob_saw = bob_events.last_event_id, []
            assert start == "0-0"  # a new account: resumed from the start of its stream
            first = await alice.create_challenge("connect4", username=bob.player.username, per_move_s=20)
            seen = await until(bob_events, challenge_in(C.CHALLENGE_STATUS_PENDING), bob_saw)
            assert seen.challenge.challenge_id == first.challenge_id
            assert [c.challenge_id for c in (await bob.list_challenges()).incoming] == [first.challenge_id]
            declined = await bob.decline_challenge(first.challenge_id, "too fast")
            assert declined.decline_reason == C.DECLINE_REASON_TOO_FAST
            # Sent again (as after a lost answer): the first answer, not CHALLENGE_NOT_PENDING.
            again = await bob.decline_challenge(first.challenge_id, "too fast")
            assert again.status == C.CHALLENGE_STATUS_DECLINED
            with pytest.raises(IllegalMove) as refused:
                await bob.accept_challenge(first.challenge_id)
            assert refused.value.reason == "CHALLENGE_NOT_PENDING"
            told = await until(alice_events, challenge_in(C.CHALLENGE_STATUS_DECLINED))
            assert told.challenge.decline_reason == C.DECLINE_REASON_TOO_FAST

            # The cut lost the decline's event on bob's stream: it comes after the resume, once.
            second = await alice.create_challenge("connect4", username=bob.player.username, seat="first")
            with pytest.raises(AlreadyExists):
                await alice.create_challenge("connect4", username=bob.player.username)
            await until(bob_events, lambda e: e.challenge.challenge_id == second.challenge_id, bob_saw)
            accepted = await bob.accept_challenge(second.challenge_id)
            assert accepted.game_id and (await bob.accept_challenge(second.challenge_id)).game_id == accepted.game_id
            for events, saw in ((alice_events, None), (bob_events, bob_saw)):
                started = await until(events, lambda e: e.WhichOneof("kind") == "game_started", saw)
                assert started.game_started.game_id == accepted.game_id
            assert bob_events.resumed_from, "the proxy's cut was never resumed"
            # Every event bob's account has, once and in order, though its stream was cut.
            async with bob.event_stream(start) as replay:
                expected = [(await replay.next_event(5)).event_id for _ in bob_saw]
            assert bob_saw == expected and len(bob_saw) >= 4
        assert (await alice.get_game(accepted.game_id)).seat == 0  # alice asked to move first

        # Nobody has moved: either may abort; resent after it worked, the same summary.
        aborted = await bob.abort_game(accepted.game_id)
        assert aborted.status.outcome.reason == "ABORTED"
        assert (await bob.abort_game(accepted.game_id)).status.outcome.reason == "ABORTED"
    finally:
        await proxy.stop()
        for client in (alice, bob, bob_via_proxy):
            await client.close()


async def test_a_rematch_accepted_starts_the_next_game_with_seats_rotated(platform: Platform) -> None:
    address = platform.gateway_addresses[0]
    carol, dan = await account(address, "ca"), await account(address, "da")
    try:
        async with carol.event_stream() as carol_events, dan.event_stream() as dan_events:
            made = await carol.create_challenge("connect4", username=dan.player.username, seat="first")
            game_id = (await dan.accept_challenge(made.challenge_id)).game_id
            await asyncio.gather(
                play_game(carol, game_id, 0, strategy_for("connect4", 1)),
                play_game(dan, game_id, 1, strategy_for("connect4", 1)),
            )
            offer = await carol.make_offer(game_id, "rematch")
            assert offer.status == play_pb2.OFFER_STATUS_PENDING and offer.by.seat == 0
            with pytest.raises(AlreadyExists):
                await dan.make_offer(game_id, "rematch")  # one waits: answer it instead
            told = await until(dan_events, lambda e: e.WhichOneof("kind") == "offer")
            assert told.offer.kind == play_pb2.OFFER_KIND_REMATCH
            answered = await dan.answer_offer(game_id, "rematch", True)
            assert answered.status == play_pb2.OFFER_STATUS_ACCEPTED and answered.new_game_id
            for events in (carol_events, dan_events):
                started = await until(
                    events,
                    lambda e: e.WhichOneof("kind") == "game_started" and e.game_started.origin.startswith("rematch"),
                )
                assert started.game_started.game_id == answered.new_game_id
            assert (await dan.get_game(answered.new_game_id)).seat == 0  # seats rotated
        record = await carol.get_record(game_id)
        assert [o.status for o in record.offers if o.kind == play_pb2.OFFER_KIND_REMATCH] == [
            play_pb2.OFFER_STATUS_ACCEPTED
        ]
    finally:
        await carol.close()
        await dan.close()


def test_challenge_calls_are_retried_and_an_offer_is_not() -> None:
    from tafel.retry import retried_methods

    names = {(n["service"].rsplit(".", 1)[-1], n["method"]) for n in retried_methods()}
    assert {("ChallengeService", "CreateChallenge"), ("ChallengeService", "DeclineChallenge")} <= names
    assert ("GameService", "AnswerOffer") in names and ("GameService", "MakeOffer") not in names
