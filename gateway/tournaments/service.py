"""TournamentService: create, list, join, leave, start, cancel, standings, rounds, watch.

Every call needs a signed-in caller (guests too: their games are never rated).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
from tafel.play.v1 import tournaments_pb2, tournaments_pb2_grpc

from gateway.auth import Authenticator
from gateway.catalogue import Catalogue
from gateway.lobby import LobbySettings, canonical_options, per_move_ms
from gateway.paging import decode_offset, encode_offset, page_size_of
from gateway.tournaments import messages
from gateway.tournaments.arena_runner import duration_ms as arena_duration_ms
from gateway.tournaments.directing import DirectorMethods, directors_fields
from gateway.tournaments.feed import FeedClosed, SlowWatcher, TournamentFeed
from gateway.tournaments.model import MIN_TABLE, Format
from gateway.tournaments.runner import TournamentRunner
from gateway.tournaments.store import Loaded, Spec, TournamentStore, now_ms
from kit.errors import Refused, invalid, refusing
from kit.ids import check_id, stream_id
from kit.redis.keys import tournament_list_key, tournament_request_key
from kit.redis.replies import text

log = logging.getLogger("tafel.gateway.tournaments")
UNAVAILABLE = "tournaments are unavailable; retry"

MAX_ROUNDS = 30
# 16,384: room for the 10,000-player Swiss an online organiser runs (docs/benchmarks.md).
DEFAULT_CAPACITY, MIN_CAPACITY, MAX_CAPACITY = 64, 2, 16_384
DEFAULT_TABLE = 4
MAX_NAME = 80


def not_found(tid: str) -> Refused:
    return Refused(grpc.StatusCode.NOT_FOUND, "TOURNAMENT_NOT_FOUND", f"there is no tournament {tid}")


def precondition(reason: str, message: str) -> Refused:
    return Refused(grpc.StatusCode.FAILED_PRECONDITION, reason, message)


def new_tournament_id() -> str:
    return "t" + secrets.token_hex(8)


class TournamentServicer(DirectorMethods, tournaments_pb2_grpc.TournamentServiceServicer):
    def __init__(
        self,
        auth: Authenticator,
        store: TournamentStore,
        runner: TournamentRunner,
        feed: TournamentFeed,
        router: Catalogue,
        settings: LobbySettings,
        director: Callable[[str], bool] = lambda player_id: False,
    ) -> None:
        self.auth = auth
        # An organiser (or admin) of the platform: the powers of a tournament's creator over any.
        self.director = director
        self.store = store
        self.runner = runner
        self.feed = feed
        self.router = router
        self.settings = settings

    async def _load(self, tid: str) -> Loaded:
        check_id("tournament_id", tid)
        loaded = await self.store.load(tid)
        if loaded is None:
            raise not_found(tid)
        return loaded

    # -- create -------------------------------------------------------------------------------------

    async def _spec(
        self, request: tournaments_pb2.CreateTournamentRequest, organiser: Any, *, open_from: int = 2
    ) -> Spec:
        """A new tournament's spec, checked (`organiser` None: an update's, whose caller keeps the
        tournament's organiser; `open_from`: its first round not yet started)."""
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
        table_size = largest = 0
        rounds = 0
        if fmt is Format.TABLES:
            # Tables seat MIN_TABLE (the format's least) up to the game's most.
            table_size, largest = request.table_size or DEFAULT_TABLE, high
            if not max(MIN_TABLE, low) <= table_size <= high:
                raise invalid(
                    "BAD_TABLE_SIZE",
                    f"tables seat {max(MIN_TABLE, low)}..{high} for {request.game}",
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
        if fmt is Format.TABLES and capacity < MIN_TABLE:
            raise invalid("BAD_CAPACITY", f"tables need room for at least {MIN_TABLE} players", field="capacity")
        arena_ms = 0
        if fmt is Format.ARENA:
            lasts = request.arena_duration
            arena_ms = arena_duration_ms(lasts.seconds, lasts.nanos, shortest_ms=self.runner.arena.shortest_ms)
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
            largest_table=largest,
            per_move_ms=per_move_ms(self.settings, request.time_control),
            capacity=capacity,
            starts_at_ms=starts_at,
            organiser=(organiser.player_id, organiser.username, bool(organiser.guest))
            if organiser
            else ("", "", False),
            rated=request.rated,
            created_ms=now_ms(),
            arena_ms=arena_ms,
            **directors_fields(request, fmt, rounds, starts_at, open_from=open_from),
        )

    @refusing(UNAVAILABLE)
    async def CreateTournament(
        self, request: tournaments_pb2.CreateTournamentRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tournaments_pb2.CreateTournamentResponse:
        caller = self.auth.identity(context.invocation_metadata()).player()
        spec = await self._spec(request, caller)
        request_key = tournament_request_key(caller.player_id, request.request_id)
        tid = await self.store.create(spec, request_key)
        if not tid:
            raise Refused(grpc.StatusCode.ABORTED, "ID_TAKEN", "retry")
        loaded = await self._load(tid)
        return tournaments_pb2.CreateTournamentResponse(tournament=self._answer(loaded, caller))

    # -- reads --------------------------------------------------------------------------------------

    @refusing(UNAVAILABLE)
    async def GetTournament(
        self, request: tournaments_pb2.GetTournamentRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tournaments_pb2.GetTournamentResponse:
        caller = self.auth.identity(context.invocation_metadata())
        loaded = await self._load(request.tournament_id)
        return tournaments_pb2.GetTournamentResponse(tournament=self._answer(loaded, caller))

    @refusing(UNAVAILABLE)
    async def ListTournaments(
        self, request: tournaments_pb2.ListTournamentsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tournaments_pb2.ListTournamentsResponse:
        caller = self.auth.identity(context.invocation_metadata())
        status = "all"
        if request.state:
            if request.state not in messages.STATE_NAME:
                raise invalid("BAD_STATE", "unknown tournament state", field="state")
            status = messages.STATE_NAME[request.state]
        size = page_size_of(request.page_size)
        listing = tournament_list_key(status)
        offset = decode_offset(listing, request.page_token)
        raw: Any = await self.store.redis.call("ZREVRANGE", listing, offset, offset + size)
        ids = [text(x) for x in raw]
        more = len(ids) > size
        out = tournaments_pb2.ListTournamentsResponse(
            next_page_token=encode_offset(listing, offset + size) if more else ""
        )
        for tid in ids[:size]:
            loaded = await self.store.load(tid)
            if loaded is not None:
                out.tournaments.append(self._answer(loaded, caller))
        return out

    @refusing(UNAVAILABLE)
    async def GetStandings(
        self, request: tournaments_pb2.GetStandingsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tournaments_pb2.GetStandingsResponse:
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

    @refusing(UNAVAILABLE)
    async def GetRound(
        self, request: tournaments_pb2.GetRoundRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tournaments_pb2.GetRoundResponse:
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

    # -- players and organiser ----------------------------------------------------------------------

    @refusing(UNAVAILABLE)
    async def JoinTournament(
        self, request: tournaments_pb2.JoinTournamentRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tournaments_pb2.JoinTournamentResponse:
        caller = self.auth.identity(context.invocation_metadata()).player()
        loaded = await self._load(request.tournament_id)
        await self.may_join(loaded, caller, request.invitation_code)
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
        if reply == -4:
            raise Refused(
                grpc.StatusCode.PERMISSION_DENIED, "BANNED_FROM_TOURNAMENT", "a director removed you for good"
            )
        if reply == -1:
            await self.late_join(request.tournament_id, caller)  # Swiss, until its round; else refused
        after = await self._load(request.tournament_id)
        return tournaments_pb2.JoinTournamentResponse(tournament=self._answer(after, caller))

    @refusing(UNAVAILABLE)
    async def LeaveTournament(
        self, request: tournaments_pb2.LeaveTournamentRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tournaments_pb2.LeaveTournamentResponse:
        caller = self.auth.identity(context.invocation_metadata()).player()
        loaded = await self._load(request.tournament_id)
        after = await self.runner.leave(loaded.spec.tournament_id, caller)
        return tournaments_pb2.LeaveTournamentResponse(tournament=self._answer(after, caller))

    @refusing(UNAVAILABLE)
    async def StartTournament(
        self, request: tournaments_pb2.StartTournamentRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tournaments_pb2.StartTournamentResponse:
        caller = self.auth.identity(context.invocation_metadata())
        loaded = await self._load(request.tournament_id)
        by = None if self.director(caller.player_id) else caller.player_id
        after = await self.runner.start_tournament(loaded.spec.tournament_id, by=by)
        return tournaments_pb2.StartTournamentResponse(tournament=self._answer(after, caller))

    @refusing(UNAVAILABLE)
    async def CancelTournament(
        self, request: tournaments_pb2.CancelTournamentRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tournaments_pb2.CancelTournamentResponse:
        caller = self.auth.identity(context.invocation_metadata())
        loaded = await self._load(request.tournament_id)
        if caller.player_id != loaded.spec.organiser[0] and not self.director(caller.player_id):
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
        return tournaments_pb2.CancelTournamentResponse(tournament=self._answer(after, caller))

    @refusing(UNAVAILABLE)
    async def PauseArenaPlay(
        self, request: tournaments_pb2.PauseArenaPlayRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tournaments_pb2.PauseArenaPlayResponse:
        caller = self.auth.identity(context.invocation_metadata()).player()
        loaded = await self._load(request.tournament_id)
        after = await self.runner.arena.pause_play(loaded.spec.tournament_id, caller.player_id, request.paused)
        return tournaments_pb2.PauseArenaPlayResponse(tournament=messages.tournament(after))

    # -- watching -----------------------------------------------------------------------------------

    @refusing(UNAVAILABLE)
    async def WatchTournament(
        self, request: tournaments_pb2.WatchTournamentRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[tournaments_pb2.WatchTournamentResponse]:
        self.auth.identity(context.invocation_metadata())
        loaded = await self._load(request.tournament_id)
        after = request.after_event_id
        if after and not _event_id_ok(after):
            raise invalid("BAD_EVENT_ID", "after_event_id is not an event id", field="after_event_id")
        # An ended tournament has no live part: its stream is what is stored.
        live = loaded.status in ("registering", "running")
        try:
            async for event in self.feed.watch(request.tournament_id, after, live=live):
                yield tournaments_pb2.WatchTournamentResponse(event=event)
                # A live watch ends with the tournament; an ended one's stream is read to its end
                # (a director's correction after the finish is part of it).
                if live and event.WhichOneof("kind") in ("finished", "cancelled"):
                    return
        except FeedClosed:
            raise Refused(
                grpc.StatusCode.UNAVAILABLE, "SHUTTING_DOWN", "resume from the last event id you saw"
            ) from None
        except SlowWatcher:
            raise Refused(
                grpc.StatusCode.UNAVAILABLE, "WATCHER_TOO_SLOW", "resume from the last event id you saw"
            ) from None


def _event_id_ok(value: str) -> bool:
    return stream_id(value) is not None
