"""The SDK's challenges, offers and account event stream through the whole platform: a challenge
declined with a reason and one accepted (its game on both streams), a decline and an abort resent
after their first try did the work (answered as the first), the event stream cut mid-way and
resumed by itself with nothing lost or doubled, and a rematch accepted after a game. Bots (issue
36.5): a level-1 bot challenged sits down in its room and plays to the end, and a Colour Square
table of one person and three of the pool's bots plays to the end."""

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


def test_challenge_and_offer_calls_are_retried() -> None:
    """Each is safe to resend: creations carry request ids (MakeOffer's too: a resent offer is
    answered with the first), answers are counted once by the server."""
    from tafel.retry import retried_methods

    names = {(n["service"].rsplit(".", 1)[-1], n["method"]) for n in retried_methods()}
    assert {("ChallengeService", "CreateChallenge"), ("ChallengeService", "DeclineChallenge")} <= names
    assert {("GameService", "AnswerOffer"), ("GameService", "MakeOffer")} <= names


async def test_a_challenged_bot_sits_down_in_a_room_and_plays_to_the_end(platform: Platform) -> None:
    eve = await account(platform.gateway_addresses[0], "ev")
    try:
        async with eve.event_stream() as events:
            made = await eve.create_challenge("connect4", bot_level=1, seat="second", per_move_s=20, request_id="bot1")
            # A bot takes every challenge: accepted at once, with the room it joins.
            assert made.status == C.CHALLENGE_STATUS_ACCEPTED and made.room_code and made.bot_level == 1
            again = await eve.create_challenge("connect4", bot_level=1, request_id="bot1")  # a retry
            assert (again.challenge_id, again.room_code) == (made.challenge_id, made.room_code)
            told = await until(events, challenge_in(C.CHALLENGE_STATUS_ACCEPTED))
            assert told.challenge.room_code == made.room_code
            started = await until(events, lambda e: e.WhichOneof("kind") == "game_started")
        room = await eve.wait_room_started(made.room_code)
        assert started.game_started.game_id == room.game_id
        game = await eve.get_game(room.game_id)
        assert game.seat == 1  # the challenger asked to move second
        bot = next(p.player for p in game.summary.players if p.seat == 0)
        assert bot.bot and bot.bot_level == 1 and bot.display_name == "Bot (level 1)"
        outcome = await asyncio.wait_for(play_game(eve, room.game_id, 1, strategy_for("connect4", 1)), 120)
        assert outcome.reason
        record = await eve.get_record(room.game_id)
        assert not record.rated and [p.player.bot for p in record.players] == [True, False]
    finally:
        await eve.close()


async def test_a_colour_square_table_of_one_person_and_three_pool_bots(platform: Platform) -> None:
    """Each pool bot is a guest of its own (one account could take one seat only)."""
    from tafel.coloursquare.v1 import coloursquare_pb2

    host = await account(platform.gateway_addresses[0], "ho")
    try:
        room = await host.create_room("coloursquare", coloursquare_pb2.Options(max_rounds=6), seats=4, per_move_s=20)
        asked = [await host.request_bot(room.code, 1) for _ in range(3)]
        assert len(set(asked)) == 3  # three requests, not one answered thrice
        started = await host.wait_room_started(room.code)
        game = await host.get_game(started.game_id)
        bots = [p.player for p in game.summary.players if p.player.bot]
        assert len({b.player_id for b in bots}) == 3 and all(b.guest and b.bot_level == 1 for b in bots)
        outcome = await asyncio.wait_for(
            play_game(host, started.game_id, game.seat, strategy_for("coloursquare", 1)), 180
        )
        assert len(outcome.scores) == 4 and outcome.reason
    finally:
        await host.close()
