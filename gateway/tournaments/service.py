"""TournamentService: create, list, join, leave, start, cancel, standings, rounds, watch.

Every call needs a signed-in caller (guests too: their games are never rated).
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import secrets
from collections.abc import AsyncIterator, Awaitable
from typing import Any, TypeVar

import grpc
from redis.exceptions import RedisError
from tafel.play.v1 import tournaments_pb2, tournaments_pb2_grpc

from gateway.auth import Authenticator
from gateway.games import check_id
from gateway.lobby import LobbySettings, canonical_options, per_move_ms
from gateway.rules_router import RulesRouter
from gateway.tournaments import messages
from gateway.tournaments.feed import FeedClosed, SlowWatcher, TournamentFeed
from gateway.tournaments.model import MAX_TABLE, MIN_TABLE, Format
from gateway.tournaments.runner import TournamentRunner
from gateway.tournaments.store import PREFIX, Loaded, Spec, TournamentStore, list_key, now_ms
from kit.errors import Refused, abort, invalid

log = logging.getLogger("tafel.gateway.tournaments")
T = TypeVar("T")

MAX_ROUNDS = 30
DEFAULT_CAPACITY, MIN_CAPACITY, MAX_CAPACITY = 64, 2, 4096
DEFAULT_TABLE = 4
MAX_NAME = 80
MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE = 100, 20


def not_found(tid: str) -> Refused:
    return Refused(grpc.StatusCode.NOT_FOUND, "TOURNAMENT_NOT_FOUND", f"there is no tournament {tid}")


def precondition(reason: str, message: str) -> Refused:
    return Refused(grpc.StatusCode.FAILED_PRECONDITION, reason, message)


def unavailable() -> Refused:
    return Refused(grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE", "tournaments are unavailable; retry")


def new_tournament_id() -> str:
    return "t" + secrets.token_hex(8)


def _page(token: str, listing: str) -> int:
    if not token:
        return 0
    try:
        if len(token) > 256:
            raise ValueError
        name, offset = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        if name != listing or not isinstance(offset, int) or offset < 0:
            raise ValueError
        return offset
    except (binascii.Error, ValueError, TypeError):
        raise invalid("BAD_PAGE_TOKEN", "page_token is not a token this listing issued") from None


def _token(listing: str, offset: int) -> str:
    raw = json.dumps([listing, offset], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


class TournamentServicer(tournaments_pb2_grpc.TournamentServiceServicer):
    def __init__(
        self,
        auth: Authenticator,
        store: TournamentStore,
        runner: TournamentRunner,
        feed: TournamentFeed,
        router: RulesRouter,
        settings: LobbySettings,
    ) -> None:
        self.auth = auth
        self.store = store
        self.runner = runner
        self.feed = feed
        self.router = router
        self.settings = settings

    async def _guard(self, context: grpc.aio.ServicerContext[Any, Any], work: Awaitable[T]) -> T:
        try:
            return await work
        except Refused as refused:
            await abort(context, refused)
        except RedisError:
            await abort(context, unavailable())

    async def _load(self, tid: str) -> Loaded:
        check_id("tournament_id", tid)
        loaded = await self.store.load(tid)
        if loaded is None:
            raise not_found(tid)
        return loaded

    # -- create -------------------------------------------------------------------------------------

    async def _spec(self, request: tournaments_pb2.CreateTournamentRequest, organiser: Any) -> Spec:
        check_id("request_id", request.request_id)
        name = request.name.strip()
        if not 1 <= len(name) <= MAX_NAME:
            raise invalid("BAD_NAME", f"a tournament name is 1-{MAX_NAME} characters", field="name")
        if not request.game or not self.router.offers(request.game):
            raise invalid("UNKNOWN_GAME", f"there is no game type {request.game} here", field="game")
        fmt = messages.FORMAT_OF.get(request.format)
        if fmt is None:
            raise invalid("BAD_FORMAT", "choose a tournament format", field="format")
        description = await self.router.describe(request.game)
        low, high = int(description.min_seats), int(description.max_seats)
        table_size = 0
        rounds = 0
        if fmt is Format.TABLES:
            table_size = request.table_size or DEFAULT_TABLE
            if not (MIN_TABLE <= table_size <= MAX_TABLE and low <= table_size <= high):
                raise invalid(
                    "BAD_TABLE_SIZE",
                    f"tables seat {max(MIN_TABLE, low)}..{min(MAX_TABLE, high)} for {request.game}",
                    field="table_size",
                )
        elif not low <= 2 <= high:
            raise invalid("BAD_FORMAT", f"{request.game} is not a two-player game: use tables", field="format")
        # Every table of a tournament seats two or more: a solo-only option is refused now.
        options = canonical_options(request.game, request.options, description, most_seats=table_size or 2)
        if fmt in (Format.SWISS, Format.TABLES):
            rounds = request.rounds
            if not 1 <= rounds <= MAX_ROUNDS:
                raise invalid("BAD_ROUNDS", f"rounds must be 1..{MAX_ROUNDS}", field="rounds")
        capacity = request.capacity or DEFAULT_CAPACITY
        if not MIN_CAPACITY <= capacity <= MAX_CAPACITY:
            raise invalid("BAD_CAPACITY", f"capacity must be {MIN_CAPACITY}..{MAX_CAPACITY}", field="capacity")
        if fmt is Format.TABLES and capacity < 3:
            raise invalid("BAD_CAPACITY", "tables need room for at least 3 players", field="capacity")
        starts_at = request.starts_at.ToMilliseconds() if request.HasField("starts_at") else 0
        if request.HasField("starts_at") and starts_at <= 0:
            raise invalid("BAD_START", "starts_at must be a time after 1970", field="starts_at")
        return Spec(
            tournament_id=new_tournament_id(),
            name=name,
            game=request.game,
            options=options.SerializeToString(),
            format=fmt,
            rounds=rounds,
            table_size=table_size,
            per_move_ms=per_move_ms(self.settings, request.time_control),
            capacity=capacity,
            starts_at_ms=starts_at,
            organiser=(organiser.player_id, organiser.username, bool(organiser.guest)),
            rated=request.rated,
            created_ms=now_ms(),
        )

    async def CreateTournament(
        self, request: tournaments_pb2.CreateTournamentRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tournaments_pb2.CreateTournamentResponse:
        async def work() -> tournaments_pb2.CreateTournamentResponse:
            caller = self.auth.identity(context.invocation_metadata()).player()
            spec = await self._spec(request, caller)
            request_key = f"{PREFIX}:req:{caller.player_id}:{request.request_id}"
            tid = await self.store.create(spec, request_key)
            if not tid:
                raise Refused(grpc.StatusCode.ABORTED, "ID_TAKEN", "retry")
            loaded = await self._load(tid)
            return tournaments_pb2.CreateTournamentResponse(tournament=messages.tournament(loaded))

        return await self._guard(context, work())

    # -- reads --------------------------------------------------------------------------------------

    async def GetTournament(
        self, request: tournaments_pb2.GetTournamentRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tournaments_pb2.GetTournamentResponse:
        async def work() -> tournaments_pb2.GetTournamentResponse:
            self.auth.identity(context.invocation_metadata())
            loaded = await self._load(request.tournament_id)
            return tournaments_pb2.GetTournamentResponse(tournament=messages.tournament(loaded))

        return await self._guard(context, work())

    async def ListTournaments(
        self, request: tournaments_pb2.ListTournamentsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tournaments_pb2.ListTournamentsResponse:
        async def work() -> tournaments_pb2.ListTournamentsResponse:
            self.auth.identity(context.invocation_metadata())
            status = "all"
            if request.state:
                if request.state not in messages.STATE_NAME:
                    raise invalid("BAD_STATE", "unknown tournament state", field="state")
                status = messages.STATE_NAME[request.state]
            if request.page_size < 0:
                raise invalid("BAD_PAGE_SIZE", "page_size must not be negative")
            size = min(request.page_size or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
            listing = list_key(status)
            offset = _page(request.page_token, listing)
            raw: Any = await self.store.redis.zrevrange(listing, offset, offset + size)
            ids = [x.decode() if isinstance(x, bytes) else str(x) for x in raw]
            more = len(ids) > size
            out = tournaments_pb2.ListTournamentsResponse(
                next_page_token=_token(listing, offset + size) if more else ""
            )
            for tid in ids[:size]:
                loaded = await self.store.load(tid)
                if loaded is not None:
                    out.tournaments.append(messages.tournament(loaded))
            return out

        return await self._guard(context, work())

    async def GetStandings(
        self, request: tournaments_pb2.GetStandingsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tournaments_pb2.GetStandingsResponse:
        async def work() -> tournaments_pb2.GetStandingsResponse:
            self.auth.identity(context.invocation_metadata())
            loaded = await self._load(request.tournament_id)
            state = loaded.state
            if state is None:
                return tournaments_pb2.GetStandingsResponse()
            return tournaments_pb2.GetStandingsResponse(
                standings=messages.standings(state),
                rounds_completed=messages.rounds_completed(state),
                final=state.finished,
            )

        return await self._guard(context, work())

    async def GetRound(
        self, request: tournaments_pb2.GetRoundRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tournaments_pb2.GetRoundResponse:
        async def work() -> tournaments_pb2.GetRoundResponse:
            self.auth.identity(context.invocation_metadata())
            loaded = await self._load(request.tournament_id)
            state = loaded.state
            if state is None or not state.rounds:
                raise Refused(grpc.StatusCode.NOT_FOUND, "NO_ROUND", "no round has been paired yet")
            number = request.round or len(state.rounds)
            if not 1 <= number <= len(state.rounds):
                raise Refused(grpc.StatusCode.NOT_FOUND, "NO_ROUND", f"no round {number}")
            rnd = state.rounds[number - 1]
            return tournaments_pb2.GetRoundResponse(round=messages.round_message(loaded.spec.tournament_id, state, rnd))

        return await self._guard(context, work())

    # -- players and organiser ----------------------------------------------------------------------

    async def JoinTournament(
        self, request: tournaments_pb2.JoinTournamentRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tournaments_pb2.JoinTournamentResponse:
        async def work() -> tournaments_pb2.JoinTournamentResponse:
            caller = self.auth.identity(context.invocation_metadata()).player()
            loaded = await self._load(request.tournament_id)
            event = tournaments_pb2.TournamentEvent(player_joined=tournaments_pb2.TournamentPlayerJoined(player=caller))
            reply = await self.store.join(
                loaded.spec.tournament_id,
                (caller.player_id, caller.username, bool(caller.guest)),
                loaded.spec.capacity,
                event,
            )
            if reply == -3:
                raise not_found(request.tournament_id)
            if reply == -2:
                raise precondition("TOURNAMENT_FULL", "the tournament is full")
            if reply == -1:
                raise precondition("NOT_REGISTERING", "registration has closed")
            after = await self._load(request.tournament_id)
            return tournaments_pb2.JoinTournamentResponse(tournament=messages.tournament(after))

        return await self._guard(context, work())

    async def LeaveTournament(
        self, request: tournaments_pb2.LeaveTournamentRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tournaments_pb2.LeaveTournamentResponse:
        async def work() -> tournaments_pb2.LeaveTournamentResponse:
            caller = self.auth.identity(context.invocation_metadata()).player()
            loaded = await self._load(request.tournament_id)
            tid = loaded.spec.tournament_id
            event = tournaments_pb2.TournamentEvent(player_left=tournaments_pb2.TournamentPlayerLeft(player=caller))
            reply = await self.store.unregister(tid, caller.player_id, event)
            if reply == -3:
                raise not_found(tid)
            if reply == -1:
                current = await self._load(tid)
                if current.status != "running":
                    raise precondition("NOT_RUNNING", f"the tournament is {current.status}")
                after = await self.runner.withdraw(tid, caller)
            else:
                after = await self._load(tid)
            return tournaments_pb2.LeaveTournamentResponse(tournament=messages.tournament(after))

        return await self._guard(context, work())

    async def StartTournament(
        self, request: tournaments_pb2.StartTournamentRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tournaments_pb2.StartTournamentResponse:
        async def work() -> tournaments_pb2.StartTournamentResponse:
            caller = self.auth.identity(context.invocation_metadata())
            loaded = await self._load(request.tournament_id)
            after = await self.runner.start_tournament(loaded.spec.tournament_id, by=caller.player_id)
            return tournaments_pb2.StartTournamentResponse(tournament=messages.tournament(after))

        return await self._guard(context, work())

    async def CancelTournament(
        self, request: tournaments_pb2.CancelTournamentRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tournaments_pb2.CancelTournamentResponse:
        async def work() -> tournaments_pb2.CancelTournamentResponse:
            caller = self.auth.identity(context.invocation_metadata())
            loaded = await self._load(request.tournament_id)
            if caller.player_id != loaded.spec.organiser[0]:
                raise Refused(grpc.StatusCode.PERMISSION_DENIED, "NOT_ORGANISER", "only the organiser cancels it")
            if loaded.status != "cancelled":
                event = tournaments_pb2.TournamentEvent(
                    cancelled=tournaments_pb2.TournamentCancelled(reason="CANCELLED_BY_ORGANISER")
                )
                if await self.store.cancel(loaded, event) != 1:
                    current = await self._load(request.tournament_id)
                    if current.status != "cancelled":
                        raise precondition("ALREADY_STARTED", f"the tournament is {current.status}")
            after = await self._load(request.tournament_id)
            return tournaments_pb2.CancelTournamentResponse(tournament=messages.tournament(after))

        return await self._guard(context, work())

    # -- watching -----------------------------------------------------------------------------------

    async def WatchTournament(
        self, request: tournaments_pb2.WatchTournamentRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[tournaments_pb2.WatchTournamentResponse]:
        try:
            self.auth.identity(context.invocation_metadata())
            loaded = await self._load(request.tournament_id)
            after = request.after_event_id
            if after and not _event_id_ok(after):
                raise invalid("BAD_EVENT_ID", "after_event_id is not an event id", field="after_event_id")
            # An ended tournament has no live part: its stream is what is stored.
            live = loaded.status in ("registering", "running")
            async for event in self.feed.watch(request.tournament_id, after, live=live):
                yield tournaments_pb2.WatchTournamentResponse(event=event)
                if event.WhichOneof("kind") in ("finished", "cancelled"):
                    return
        except Refused as refused:
            await abort(context, refused)
        except FeedClosed:
            await abort(
                context,
                Refused(grpc.StatusCode.UNAVAILABLE, "SHUTTING_DOWN", "resume from the last event id you saw"),
            )
        except SlowWatcher:
            await abort(
                context,
                Refused(grpc.StatusCode.UNAVAILABLE, "WATCHER_TOO_SLOW", "resume from the last event id you saw"),
            )
        except RedisError:
            await abort(context, unavailable())


def _event_id_ok(value: str) -> bool:
    ms, dash, seq = value.partition("-")
    return bool(dash) and ms.isdigit() and seq.isdigit() and len(value) <= 40
