"""MakeOffer, AnswerOffer and AbortGame (GameService calls, served by gateway/play/service.py).

An offer of each kind per game is kept in one hash under the game's {g:<id>} tag, changed only by
offers/set (a compare-and-set on its revision), so two answers at once cannot both count. A draw
or takeback offer belongs to the position it was made in: once a move is made it is stale, and an
answer to it is NO_OFFER (it reads WITHDRAWN). A rematch offer lasts REMATCH_TTL_S. Every change
goes to every player's event stream; every settled offer goes to the game's offer log, which the
record shows."""

from __future__ import annotations

import asyncio
import hashlib
import time
from typing import Any

import grpc
from tafel.games.v1 import games_pb2
from tafel.play.v1 import challenges_pb2, play_pb2
from tafel.rules.v1 import rules_pb2

from gateway.actions import Actions
from gateway.events.feed import AccountEvents
from gateway.games import GameDirectory, GameMeta
from gateway.play.steps import resolve_seat
from gateway.records import Records, current_line
from kit.errors import Refused
from kit.ids import check_id
from kit.redis.game_reads import GameReads
from kit.redis.keys import offers_key, offers_log_key, offers_request_key
from kit.redis.layer import RedisLayer
from kit.redis.scripts import script

REMATCH_TTL_S = 120
PENDING = play_pb2.OFFER_STATUS_PENDING
KIND_NAMES = {
    play_pb2.OFFER_KIND_DRAW: "draw",
    play_pb2.OFFER_KIND_TAKEBACK: "takeback",
    play_pb2.OFFER_KIND_REMATCH: "rematch",
}


def not_allowed(message: str) -> Refused:
    return Refused(grpc.StatusCode.FAILED_PRECONDITION, "OFFER_NOT_ALLOWED", message)


def no_offer(kind: str) -> Refused:
    return Refused(grpc.StatusCode.FAILED_PRECONDITION, "NO_OFFER", f"there is no {kind} offer to answer")


def rematch_id(game_id: str) -> str:
    """The rematch's game id: derived from the game's, so a retried acceptance starts it once."""
    return "rm-" + hashlib.sha256(game_id.encode()).hexdigest()[:24]


class Offers:
    def __init__(
        self,
        redis: RedisLayer,
        directory: GameDirectory,
        actions: Actions,
        records: Records,
        reads: GameReads,
        events: AccountEvents,
    ) -> None:
        self.redis = redis
        self.directory = directory
        self.actions = actions
        self.records = records
        self.reads = reads
        self.events = events

    # -- storage ------------------------------------------------------------------------------------

    async def _load(self, game_id: str, kind: str) -> tuple[play_pb2.Offer | None, int]:
        raw, rev = await self.redis.call("HMGET", offers_key(game_id), kind, f"{kind}:r")
        return (play_pb2.Offer.FromString(raw) if raw is not None else None), int(rev or 0)

    async def _store(self, offer: play_pb2.Offer, kind: str, rev: int, settled: bool) -> bool:
        status = play_pb2.OfferStatus.Name(offer.status)
        done = await self.redis.run(
            script("offers/set"),
            [offers_key(offer.game_id), offers_log_key(offer.game_id)],
            [kind, rev, status, offer.SerializeToString(), "1" if settled else "0"],
        )
        return int(done) > 0

    async def log(self, game_id: str) -> list[play_pb2.Offer]:
        raw: Any = await self.redis.call("LRANGE", offers_log_key(game_id), 0, -1)
        return [play_pb2.Offer.FromString(item) for item in raw]

    async def _tell(self, meta: GameMeta, offer: play_pb2.Offer) -> None:
        await self.events.append([p[0] for p in meta.players], challenges_pb2.AccountEvent(offer=offer))

    # -- the game as it is --------------------------------------------------------------------------

    async def _status(self, meta: GameMeta) -> games_pb2.GameStatus:
        view = await self.actions.router.get_view(meta.game, rules_pb2.GetViewRequest(game_id=meta.game_id))
        return view.status

    async def _recorded(self, game_id: str) -> list[games_pb2.RecordedAction]:
        """The actions that made the position now (moves a takeback undid are not among them)."""
        return current_line(
            [games_pb2.RecordedAction.FromString(raw) for raw in await self.reads.read_actions(game_id)]
        )

    async def _take_back_to(self, meta: GameMeta, seat: int) -> int:
        """The version before the seat's last move (what a takeback returns to)."""
        for action in reversed(await self._recorded(meta.game_id)):
            if action.seat == seat and action.WhichOneof("action") == "move":
                return int(action.version) - 1
        raise Refused(
            grpc.StatusCode.FAILED_PRECONDITION, "NOTHING_TO_TAKE_BACK", "you have made no move that can be taken back"
        )

    @staticmethod
    def _seated(meta: GameMeta, seat: int) -> play_pb2.SeatedPlayer:
        pid, name, guest = meta.players[seat]
        return play_pb2.SeatedPlayer(seat=seat, player=play_pb2.Player(player_id=pid, username=name, guest=guest))

    # -- the calls ----------------------------------------------------------------------------------

    async def _game_and_seat(
        self, player_id: str, request: play_pb2.MakeOfferRequest | play_pb2.AnswerOfferRequest
    ) -> tuple[str, GameMeta, int]:
        """The offer kind's name, the game and the caller's seat in it (or the refusal)."""
        check_id("game_id", request.game_id)
        kind = KIND_NAMES.get(request.kind)
        if kind is None:
            raise Refused(grpc.StatusCode.INVALID_ARGUMENT, "OFFER_NOT_ALLOWED", "choose draw, takeback or rematch")
        meta = await self.directory.meta(request.game_id)
        return kind, meta, resolve_seat(meta, player_id, request.seat if request.HasField("seat") else None)

    async def make(self, player_id: str, request: play_pb2.MakeOfferRequest) -> play_pb2.Offer:
        kind, meta, seat = await self._game_and_seat(player_id, request)
        remember = ""
        if request.request_id:
            check_id("request_id", request.request_id)
            remember = offers_request_key(meta.game_id, player_id, request.request_id)
            earlier = await self.redis.call("GET", remember)
            if earlier is not None:
                return play_pb2.Offer.FromString(earlier)
        status = await self._status(meta)
        if request.kind == play_pb2.OFFER_KIND_REMATCH:
            if not status.over:
                raise not_allowed("a rematch is offered after the game")
            if meta.origin.startswith("tournament:"):
                raise not_allowed("a tournament game has no rematch")
        else:
            if status.over:
                raise not_allowed(f"the game is over: no {kind} now")
            if meta.origin.startswith("tournament:") and request.kind == play_pb2.OFFER_KIND_TAKEBACK:
                raise not_allowed("a tournament game has no takebacks")
            if meta.seats != 2:
                raise not_allowed(f"a {kind} is agreed between two players")
            if request.kind == play_pb2.OFFER_KIND_TAKEBACK:
                if meta.rated:
                    raise not_allowed("takebacks are for casual games")
                await self._take_back_to(meta, seat)
        current, rev = await self._load(meta.game_id, kind)
        if current is not None and current.status == PENDING and not self._stale(current, status):
            raise Refused(grpc.StatusCode.ALREADY_EXISTS, "OFFER_PENDING", f"a {kind} offer waits for an answer")
        offer = play_pb2.Offer(
            game_id=meta.game_id,
            kind=request.kind,
            by=self._seated(meta, seat),
            status=PENDING,
            version=status.version,
            accepted_seats=[seat],
        )
        offer.at.GetCurrentTime()
        if not await self._store(offer, kind, rev, settled=False):
            raise Refused(grpc.StatusCode.ALREADY_EXISTS, "OFFER_PENDING", f"a {kind} offer waits for an answer")
        if remember:
            await self.redis.call("SET", remember, offer.SerializeToString(), "EX", 86_400)
        await self._tell(meta, offer)
        return offer

    async def pending(self, meta: GameMeta, status: games_pb2.GameStatus) -> list[play_pb2.Offer]:
        """The game's offers waiting for an answer now (stale ones left out)."""
        raw = await self.redis.many(
            [("HMGET", offers_key(meta.game_id), kind, f"{kind}:s") for kind in KIND_NAMES.values()]
        )
        out = []
        for offer_raw, state in raw:
            if offer_raw is None or state != b"OFFER_STATUS_PENDING":
                continue
            offer = play_pb2.Offer.FromString(offer_raw)
            if not self._stale(offer, status):
                out.append(offer)
        return out

    @staticmethod
    def _stale(offer: play_pb2.Offer, status: games_pb2.GameStatus) -> bool:
        if offer.kind == play_pb2.OFFER_KIND_REMATCH:
            return time.time() - offer.at.ToMilliseconds() / 1000 > REMATCH_TTL_S
        return offer.version != status.version or status.over

    async def answer(self, player_id: str, request: play_pb2.AnswerOfferRequest) -> play_pb2.Offer:
        kind, meta, seat = await self._game_and_seat(player_id, request)
        offer, rev = await self._load(meta.game_id, kind)
        if offer is None or offer.status != PENDING:
            raise no_offer(kind)
        status = await self._status(meta)
        settled = play_pb2.Offer()
        settled.CopyFrom(offer)
        if self._stale(offer, status):
            expired = offer.kind == play_pb2.OFFER_KIND_REMATCH
            settled.status = play_pb2.OFFER_STATUS_EXPIRED if expired else play_pb2.OFFER_STATUS_WITHDRAWN
            if await self._store(settled, kind, rev, settled=True):
                await self._tell(meta, settled)
            raise no_offer(kind)
        if seat in offer.accepted_seats:
            if request.accept:
                raise Refused(
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "OWN_OFFER",
                    "you have made (or accepted) this offer; the others answer it",
                )
            settled.status = (
                play_pb2.OFFER_STATUS_WITHDRAWN if seat == offer.by.seat else play_pb2.OFFER_STATUS_DECLINED
            )
        elif not request.accept:
            settled.status = play_pb2.OFFER_STATUS_DECLINED
            settled.declined_by = seat
        else:
            settled.accepted_seats.append(seat)
        # Once the game is changed the answer must be stored and told even if the caller goes
        # away: shielded, like every action (gateway/actions.py).
        return await asyncio.shield(self._settle(meta, settled, kind, rev, seat))

    async def _settle(self, meta: GameMeta, settled: play_pb2.Offer, kind: str, rev: int, seat: int) -> play_pb2.Offer:
        if settled.status == PENDING and len(settled.accepted_seats) == meta.seats:
            await self._carry_out(meta, settled, seat)
            settled.status = play_pb2.OFFER_STATUS_ACCEPTED
        done = settled.status != PENDING
        if not await self._store(settled, kind, rev, settled=done):
            raise no_offer(kind)  # answered meanwhile: read it again
        await self._tell(meta, settled)
        return settled

    async def _carry_out(self, meta: GameMeta, offer: play_pb2.Offer, seat: int) -> None:
        """What an accepted offer does (before it is marked accepted: a failure leaves it pending)."""
        if offer.kind == play_pb2.OFFER_KIND_REMATCH:
            offer.new_game_id = await self._rematch(meta)
            return
        request_id = f"{'draw' if offer.kind == play_pb2.OFFER_KIND_DRAW else 'tb'}-{offer.version}"
        if offer.kind == play_pb2.OFFER_KIND_DRAW:
            await self.actions.apply(
                meta, seat, expected_version=offer.version, request_id=request_id, draw_agreed=True
            )
        else:
            to_version = await self._take_back_to(meta, offer.by.seat)
            await self.actions.apply(
                meta, seat, expected_version=offer.version, request_id=request_id, take_back_to=to_version
            )

    async def _rematch(self, meta: GameMeta) -> str:
        """The same game, options, clock and rating, seats rotated by one."""
        players = [self._seated(meta, seat).player for seat in range(meta.seats)]
        rotated = players[1:] + players[:1]
        return await self.directory.start_game(
            game=meta.game,
            options=meta.game_options(),
            players=rotated,
            per_move_s=meta.per_move_s,
            rated=meta.rated,
            origin=f"rematch:{meta.game_id}",
            game_id=rematch_id(meta.game_id),
        )

    async def abort(self, player_id: str, request: play_pb2.AbortGameRequest) -> play_pb2.GameSummary:
        check_id("game_id", request.game_id)
        meta = await self.directory.meta(request.game_id)
        seats = meta.seats_of(player_id)  # any of the caller's seats may abort (NOT_A_PLAYER: none)
        seat = resolve_seat(meta, player_id, seats[0] if len(seats) > 1 else None)
        if meta.origin.startswith("tournament:"):
            # An aborted game ranks every seat alike: a tournament would score it as a draw.
            raise not_allowed("a tournament game cannot be aborted; resign or offer a draw")
        status = await self._status(meta)
        if status.over:
            raise Refused(grpc.StatusCode.FAILED_PRECONDITION, "GAME_OVER", "the game is over")
        moved = {a.seat for a in await self._recorded(meta.game_id) if a.WhichOneof("action") == "move"}
        if len(moved) >= meta.seats:
            raise Refused(
                grpc.StatusCode.FAILED_PRECONDITION,
                "TOO_LATE_TO_ABORT",
                "every player has moved: resign or offer a draw instead",
            )
        applied = await self.actions.apply(meta, seat, expected_version=status.version, request_id="abort", abort=True)
        return await self.directory.summary(meta.game_id, applied.response.status, meta)
