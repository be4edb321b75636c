"""Draw, takeback and abort between two players through real gateways: an offer reaches the other
player's stream and GetGame, a retried offer is one offer, a move makes a pending draw offer stale,
an accepted draw ends the game DRAW_AGREED, an accepted takeback undoes the asker's last move, and a
game is aborted only before both have moved."""

from __future__ import annotations

import grpc
from tafel.play.v1 import play_pb2

from tests.gateway.conftest import GatewaySystem
from tests.gateway.harness import Seating, c4_move, failure
from tests.gateway.social.streams import Events
from tests.gateway.standing.helpers import Person, register

P = play_pb2


async def move(person: Person, game_id: str, version: int, column: int) -> int:
    answer = await person.games.SubmitMove(
        P.SubmitMoveRequest(game_id=game_id, expected_version=version, request_id=f"m{version}", move=c4_move(column)),
        metadata=person.md,
    )
    return int(answer.status.version)


async def offer(person: Person, game_id: str, kind: int, request_id: str = "") -> P.Offer:
    answer = await person.games.MakeOffer(
        P.MakeOfferRequest(game_id=game_id, kind=kind, request_id=request_id),  # type: ignore[arg-type]
        metadata=person.md,
    )
    return answer.offer


async def answer(person: Person, game_id: str, kind: int, accept: bool) -> P.Offer:
    reply = await person.games.AnswerOffer(
        P.AnswerOfferRequest(game_id=game_id, kind=kind, accept=accept),  # type: ignore[arg-type]
        metadata=person.md,
    )
    return reply.offer


async def test_draw_offer_stale_then_accepted(gw_system: GatewaySystem, seats: Seating) -> None:
    ann, bo = await register(gw_system.gateways[0].address, "ann"), await register(gw_system.gateways[1].address, "bo")
    game_id = await seats.start([ann.session.player, bo.session.player])
    bo_events = await Events(bo).started()
    made = await offer(ann, game_id, P.OFFER_KIND_DRAW, request_id="d1")
    assert (await offer(ann, game_id, P.OFFER_KIND_DRAW, request_id="d1")).at == made.at  # the same offer
    code, reason = await failure(offer(ann, game_id, P.OFFER_KIND_DRAW))
    assert (code, reason) == (grpc.StatusCode.ALREADY_EXISTS, "OFFER_PENDING")
    await bo_events.until(lambda: bo_events.of("offer"))
    view = await bo.games.GetGame(P.GetGameRequest(game_id=game_id), metadata=bo.md)
    assert [o.kind for o in view.pending_offers] == [P.OFFER_KIND_DRAW]
    # A move makes the offer stale: answering it is NO_OFFER.
    version = await move(ann, game_id, 0, 3)
    code, reason = await failure(answer(bo, game_id, P.OFFER_KIND_DRAW, True))
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "NO_OFFER")
    await offer(bo, game_id, P.OFFER_KIND_DRAW)
    code, reason = await failure(answer(bo, game_id, P.OFFER_KIND_DRAW, True))
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "OWN_OFFER")
    accepted = await answer(ann, game_id, P.OFFER_KIND_DRAW, True)
    assert accepted.status == P.OFFER_STATUS_ACCEPTED
    view = await bo.games.GetGame(P.GetGameRequest(game_id=game_id), metadata=bo.md)
    assert view.summary.status.over and view.summary.status.outcome.reason == "DRAW_AGREED"
    assert view.summary.status.outcome.draw and version == 1
    await bo_events.until(lambda: [o for o in bo_events.of("offer") if o.status == P.OFFER_STATUS_ACCEPTED])
    record = await ann.games.GetGameRecord(P.GetGameRecordRequest(game_id=game_id), metadata=ann.md)
    # The first offer went stale unanswered (told WITHDRAWN when Bo tried to accept it).
    assert [o.status for o in record.record.offers] == [P.OFFER_STATUS_WITHDRAWN, P.OFFER_STATUS_ACCEPTED]
    await bo_events.close()


async def test_takeback_and_abort(gw_system: GatewaySystem, seats: Seating) -> None:
    cas, dirk = await register(gw_system.gateways[0].address, "cas"), await register(gw_system.gateways[1].address, "dirk")
    game_id = await seats.start([cas.session.player, dirk.session.player])
    code, reason = await failure(offer(cas, game_id, P.OFFER_KIND_TAKEBACK))
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "NOTHING_TO_TAKE_BACK")
    version = await move(cas, game_id, 0, 2)
    version = await move(dirk, game_id, version, 4)
    await offer(dirk, game_id, P.OFFER_KIND_TAKEBACK)
    declined = await answer(cas, game_id, P.OFFER_KIND_TAKEBACK, False)
    assert declined.status == P.OFFER_STATUS_DECLINED and declined.declined_by == 0
    await offer(dirk, game_id, P.OFFER_KIND_TAKEBACK)
    await answer(cas, game_id, P.OFFER_KIND_TAKEBACK, True)
    view = await dirk.games.GetGame(P.GetGameRequest(game_id=game_id), metadata=dirk.md)
    # Dirk's disc in column 4 is gone, Cas's in column 2 stays, and it is Dirk's turn again.
    assert list(view.summary.status.to_act) == [1] and view.summary.status.version == version + 1
    await move(dirk, game_id, version + 1, 5)  # both have moved again: too late to abort
    code, reason = await failure(cas.games.AbortGame(P.AbortGameRequest(game_id=game_id), metadata=cas.md))
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "TOO_LATE_TO_ABORT")
    stranger = await register(gw_system.gateways[0].address, "stranger")
    code, reason = await failure(stranger.games.AbortGame(P.AbortGameRequest(game_id=game_id), metadata=stranger.md))
    assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "NOT_A_PLAYER")
    fresh = await seats.start([cas.session.player, dirk.session.player])
    await move(cas, fresh, 0, 3)
    aborted = await dirk.games.AbortGame(P.AbortGameRequest(game_id=fresh), metadata=dirk.md)
    assert aborted.summary.status.over and aborted.summary.status.outcome.reason == "ABORTED"
