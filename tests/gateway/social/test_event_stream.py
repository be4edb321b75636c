"""The account event stream resumes by id on any gateway with nothing lost or doubled: after a
client closes it, after its gateway is killed (-9) and after a graceful stop; a rematch accepted
by both starts the new game on both streams with the seats rotated, and the first game's record
keeps the offer."""

from __future__ import annotations

import grpc
from tafel.play.v1 import challenges_pb2, challenges_pb2_grpc, play_pb2

from gateway.events.feed import AccountEvents
from kit.redis.layer import RedisLayer
from tests.gateway.conftest import GatewaySystem
from tests.gateway.harness import Seating, failure, spawn_gateway
from tests.gateway.social.streams import Events
from tests.gateway.standing.helpers import register, sign_in
from tests.gateway.standing.test_erasure import play_out

C = challenges_pb2


async def notices(redis_url: str, player_id: str, count: int, start: int = 0) -> None:
    """`count` events on the player's stream (game announcements for made-up games), numbered."""
    layer = RedisLayer.connect(redis_url, max_connections=2)
    try:
        feed = AccountEvents(layer)
        for n in range(start, start + count):
            await feed.append([player_id], C.AccountEvent(game_started=C.GameStarted(game_id=f"g{n}", game="connect4")))
    finally:
        await layer.close()


def numbers(events: Events) -> list[int]:
    return [int(e.game_started.game_id[1:]) for e in events.events if e.WhichOneof("kind") == "game_started"]


async def test_resume_by_id_on_another_gateway_and_after_a_kill(gw_system: GatewaySystem) -> None:
    jan = await register(gw_system.gateways[0].address, "jan")
    pid = jan.session.player.player_id
    first = await Events(jan).started()
    await notices(gw_system.redis_url, pid, 5)
    await first.until(lambda: len(numbers(first)) == 5)
    await first.close()
    resume_at = first.last_id
    await notices(gw_system.redis_url, pid, 5, start=5)  # while nobody watches

    other = await sign_in(jan, gw_system.gateways[1].address)
    second = await Events(other, after=resume_at).started()
    await second.until(lambda: len(numbers(second)) == 5)
    assert numbers(second) == [5, 6, 7, 8, 9]

    # A gateway of its own, killed -9 mid-stream: the rest comes once, in order, from gateway 0.
    doomed = spawn_gateway(gw_system.redis_url, gw_system.routes, name="doomed")
    try:
        channel = grpc.aio.insecure_channel(doomed.address)
        third = await Events(jan, after=second.last_id, channel=channel).started()
        await notices(gw_system.redis_url, pid, 3, start=10)
        await third.until(lambda: len(numbers(third)) == 3)
        doomed.kill()
        await third.until(lambda: third.error is not None)
        await notices(gw_system.redis_url, pid, 3, start=13)
        fourth = await Events(jan, after=third.last_id).started()
        await fourth.until(lambda: len(numbers(fourth)) == 3)
        assert numbers(third) + numbers(fourth) == list(range(10, 16))
        await fourth.close()
        await channel.close()
    finally:
        doomed.kill()
    await second.close()


async def test_a_graceful_stop_ends_the_stream_to_resume_elsewhere(gw_system: GatewaySystem) -> None:
    kim = await register(gw_system.gateways[0].address, "kim")
    leaving = spawn_gateway(gw_system.redis_url, gw_system.routes, name="leaving")
    try:
        channel = grpc.aio.insecure_channel(leaving.address)
        events = await Events(kim, channel=channel).started()
        await notices(gw_system.redis_url, kim.session.player.player_id, 2)
        await events.until(lambda: len(numbers(events)) == 2)
        leaving.stop()
        await events.until(lambda: events.error is not None)
        assert events.error is not None and events.error.code() == grpc.StatusCode.UNAVAILABLE
        await notices(gw_system.redis_url, kim.session.player.player_id, 2, start=2)
        resumed = await Events(kim, after=events.last_id).started()
        await resumed.until(lambda: len(numbers(resumed)) == 2)
        assert numbers(events) + numbers(resumed) == [0, 1, 2, 3]
        await resumed.close()
        await channel.close()
    finally:
        leaving.kill()


async def test_bad_and_old_event_ids(gw_system: GatewaySystem) -> None:
    lea = await register(gw_system.gateways[0].address, "lea")
    stub = challenges_pb2_grpc.EventServiceStub(lea.channel)

    async def first(after: str) -> None:
        async for _ in stub.WatchMyEvents(C.WatchMyEventsRequest(after_event_id=after), metadata=lea.md):
            return

    code, reason = await failure(first("twelve"))
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_EVENT_ID")
    await notices(gw_system.redis_url, lea.session.player.player_id, 1)
    code, reason = await failure(first("99999999999999-0"))
    assert (code, reason) == (grpc.StatusCode.OUT_OF_RANGE, "EVENT_ID_OUT_OF_RANGE")


async def test_rematch_accepted_starts_the_next_game_on_both_streams(gw_system: GatewaySystem, seats: Seating) -> None:
    max_, nel = (
        await register(gw_system.gateways[0].address, "max"),
        await register(gw_system.gateways[1].address, "nel"),
    )
    game_id = await seats.start([max_.session.player, nel.session.player])
    streams = [await Events(max_).started(), await Events(nel).started()]
    code, reason = await failure(
        max_.games.MakeOffer(
            play_pb2.MakeOfferRequest(game_id=game_id, kind=play_pb2.OFFER_KIND_REMATCH), metadata=max_.md
        )
    )
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "OFFER_NOT_ALLOWED")
    await play_out(game_id, max_, nel)
    offer = await max_.games.MakeOffer(
        play_pb2.MakeOfferRequest(game_id=game_id, kind=play_pb2.OFFER_KIND_REMATCH), metadata=max_.md
    )
    assert offer.offer.status == play_pb2.OFFER_STATUS_PENDING
    await streams[1].until(lambda: streams[1].of("offer"))
    code, reason = await failure(
        max_.games.AnswerOffer(
            play_pb2.AnswerOfferRequest(game_id=game_id, kind=play_pb2.OFFER_KIND_REMATCH, accept=True),
            metadata=max_.md,
        )
    )
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "OWN_OFFER")
    accepted = await nel.games.AnswerOffer(
        play_pb2.AnswerOfferRequest(game_id=game_id, kind=play_pb2.OFFER_KIND_REMATCH, accept=True), metadata=nel.md
    )
    new_game = accepted.offer.new_game_id
    assert accepted.offer.status == play_pb2.OFFER_STATUS_ACCEPTED and new_game
    for events in streams:
        await events.until(lambda e=events: [s for s in e.of("game_started") if s.game_id == new_game])  # type: ignore[misc]
        started = next(s for s in events.of("game_started") if s.game_id == new_game)
        assert [p.player.username for p in started.players] == [nel.name, max_.name]  # rotated
        assert started.origin == f"rematch:{game_id}"
    record = await max_.games.GetGameRecord(play_pb2.GetGameRecordRequest(game_id=game_id), metadata=max_.md)
    assert [(o.kind, o.status) for o in record.record.offers] == [
        (play_pb2.OFFER_KIND_REMATCH, play_pb2.OFFER_STATUS_ACCEPTED)
    ]
    for events in streams:
        await events.close()
