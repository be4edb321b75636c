"""The tournament director's calls (TournamentService): update, remove a player, pause and resume,
start the next round, terminate, correct a result, announce, the audit log; and the reads built for
organisers: the games listed page by page, the export.

Directors: the tournament's organiser, or a player whose role is in roles.DIRECTORS (the
servicer's `director` callable). Every change is "read, compute with the pure engine, compare-and-
set" (store.direct: the change, its audit entry and its events in one script), retried from a fresh
read when someone else wrote first, so replicas and restarts stay exact. What follows outside Redis
(games aborted or resigned, notices) is idempotent and runs after the write.
"""

from __future__ import annotations

import csv
import dataclasses
import hmac
import io
import itertools
import json
import re
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import grpc
from google.protobuf import field_mask_pb2
from google.protobuf.json_format import MessageToDict
from tafel.play.v1 import notices_pb2, play_pb2, tournaments_pb2

from gateway.auth import Authenticator
from gateway.paging import decode_offset, encode_offset
from gateway.timecontrol import time_control_of
from gateway.tournaments import engine, messages
from gateway.tournaments.model import Entrant, Format, State
from gateway.tournaments.runner import ATTEMPTS, TournamentRunner
from gateway.tournaments.store import Loaded, Spec, TournamentStore, audit_entry, now_ms
from kit.errors import Refused, invalid, refusing
from kit.ids import check_id
from kit.redis.keys import record_key

UNAVAILABLE = "tournaments are unavailable; retry"
MAX_REASON = 200
MAX_ANNOUNCEMENT = 1000
MAX_RATING, MAX_RATED_GAMES = 4000, 10_000
MAX_ROUND_TIMES = 64
GAMES_PAGE_DEFAULT, GAMES_PAGE_MAX = 100, 500
EXPORT_CHUNK = 64 * 1024
INVITATION = re.compile(r"^[A-Za-z0-9_-]{4,32}$")
# CreateTournamentRequest fields a director may change, before and after the start.
UPDATABLE = frozenset(
    {
        "name",
        "options",
        "rounds",
        "table_size",
        "time_control",
        "capacity",
        "starts_at",
        "rated",
        "registration_opens_at",
        "registration_closes_at",
        "entry",
        "invitation_code",
        "late_join_until_round",
        "round_start_times",
        "manual_rounds",
    }
)
UPDATABLE_RUNNING = frozenset({"name", "rounds", "late_join_until_round", "round_start_times", "manual_rounds"})

Change = dict[str, Any]


def precondition(reason: str, message: str) -> Refused:
    return Refused(grpc.StatusCode.FAILED_PRECONDITION, reason, message)


def not_director() -> Refused:
    return Refused(grpc.StatusCode.PERMISSION_DENIED, "NOT_ORGANISER", "only the tournament's directors may do this")


def refused_from(error: engine.TournamentError) -> Refused:
    return precondition(error.reason, str(error))


def check_reason(reason: str, *, required: bool = False, code: str = "BAD_REASON") -> str:
    reason = reason.strip()
    if len(reason) > MAX_REASON or (required and not reason):
        need = "1" if required else "0"
        raise invalid(code, f"a reason is {need}-{MAX_REASON} characters", field="reason")
    return reason


def rfc3339(ms: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ms / 1000, UTC).isoformat().replace("+00:00", "Z")


def directors_fields(
    request: tournaments_pb2.CreateTournamentRequest, fmt: Format, rounds: int, starts_at_ms: int, *, open_from: int = 2
) -> dict[str, Any]:
    """The directors' settings of a Create (or Update) request, checked: the Spec fields.
    `open_from`: the first round not yet started (round times before it are not checked for
    being in the future: they have passed)."""
    now = now_ms()
    opens = request.registration_opens_at.ToMilliseconds() if request.HasField("registration_opens_at") else 0
    closes = request.registration_closes_at.ToMilliseconds() if request.HasField("registration_closes_at") else 0
    if (
        (request.HasField("registration_opens_at") and opens <= 0)
        or (request.HasField("registration_closes_at") and closes <= 0)
        or (opens and closes and opens >= closes)
        or (closes and starts_at_ms and closes > starts_at_ms)
    ):
        raise invalid(
            "BAD_REGISTRATION_WINDOW",
            "registration must open before it closes, and close no later than the start",
            field="registration_closes_at",
        )
    entry = request.entry
    if entry.min_rating > MAX_RATING or entry.min_rated_games > MAX_RATED_GAMES:
        raise invalid("BAD_ENTRY", f"entry: rating 0-{MAX_RATING}, rated games 0-{MAX_RATED_GAMES}", field="entry")
    code = ""
    if entry.invitation_required:
        code = request.invitation_code
        if not INVITATION.match(code):
            raise invalid(
                "BAD_INVITATION_CODE",
                "an invitation code is 4-32 characters of A-Z a-z 0-9 _ -",
                field="invitation_code",
            )
    late = request.late_join_until_round
    if late and (fmt is not Format.SWISS or late > rounds):
        raise invalid("BAD_LATE_JOIN", "late joining is for Swiss, up to the last round", field="late_join_until_round")
    times = [t.ToMilliseconds() for t in request.round_start_times]
    most = rounds - 1 if fmt in (Format.SWISS, Format.TABLES) else MAX_ROUND_TIMES
    in_order = all(a < b for a, b in itertools.pairwise(times))
    upcoming = [t for number, t in enumerate(times, start=2) if number >= open_from]
    if (
        len(times) > most
        or not in_order
        or any(t <= now for t in upcoming)
        or (starts_at_ms and times and times[0] <= starts_at_ms)
    ):
        raise invalid(
            "BAD_ROUND_TIMES",
            "round start times must be in the future, in order, one per round after the first at most",
            field="round_start_times",
        )
    return {
        "reg_opens_ms": opens,
        "reg_closes_ms": closes,
        "min_rating": int(entry.min_rating),
        "min_rated_games": int(entry.min_rated_games),
        "invitation_code": code,
        "late_join_until_round": int(late),
        "round_times_ms": tuple(times),
        "manual_rounds": bool(request.manual_rounds),
    }


def request_of(spec: Spec) -> tournaments_pb2.CreateTournamentRequest:
    """The Create request that makes `spec` (what an update starts from)."""
    out = tournaments_pb2.CreateTournamentRequest(
        request_id="update",
        name=spec.name,
        game=spec.game,
        format=messages.FORMATS[spec.format],  # type: ignore[arg-type]
        rounds=spec.rounds,
        table_size=spec.table_size,
        capacity=spec.capacity,
        rated=spec.rated,
        invitation_code=spec.invitation_code,
        late_join_until_round=spec.late_join_until_round,
        manual_rounds=spec.manual_rounds,
    )
    out.options.ParseFromString(spec.options)
    out.time_control.CopyFrom(time_control_of(spec.per_move_ms))
    if spec.starts_at_ms:
        out.starts_at.FromMilliseconds(spec.starts_at_ms)
    if spec.reg_opens_ms:
        out.registration_opens_at.FromMilliseconds(spec.reg_opens_ms)
    if spec.reg_closes_ms:
        out.registration_closes_at.FromMilliseconds(spec.reg_closes_ms)
    out.entry.min_rating = spec.min_rating
    out.entry.min_rated_games = spec.min_rated_games
    out.entry.invitation_required = bool(spec.invitation_code)
    for at in spec.round_times_ms:
        out.round_start_times.add().FromMilliseconds(at)
    if spec.arena_ms:
        out.arena_duration.FromMilliseconds(spec.arena_ms)
    return out


def _event(**kind: Any) -> tournaments_pb2.TournamentEvent:
    return tournaments_pb2.TournamentEvent(**kind)


def _player_of(state: State, player_id: str) -> play_pb2.Player:
    entrant = state.entrant(player_id)
    return play_pb2.Player(player_id=player_id, username=entrant.username, guest=entrant.guest)


class JoinMethods:
    """Entry conditions and late joining (mixed into DirectorMethods' users)."""

    store: TournamentStore
    runner: TournamentRunner

    async def _load(self, tid: str) -> Loaded:
        raise NotImplementedError

    async def _pool_entry(self, loaded: Loaded, player_id: str) -> tuple[float, int]:
        """The player's rating and rated games in the tournament's game's leaderboard."""
        book = self.runner.book
        if book is None:
            return 1500.0, 0
        spec = loaded.spec
        pool = await book.pools.pool_for(spec.game, spec.table_size if spec.format is Format.TABLES else 2)
        if pool is None:
            return 1500.0, 0
        stored = await book.stored(pool, player_id)
        return (stored.rating.rating, stored.games) if stored else (1500.0, 0)

    async def may_join(self, loaded: Loaded, caller: play_pb2.Player, code: str) -> None:
        """The registration window, the invitation code, a ban and the entry conditions; a player
        already in is answered as before (a retried join)."""
        spec = loaded.spec
        pid = caller.player_id
        if any(p[0] == pid for p in loaded.players):
            return
        if await self.store.banned(spec.tournament_id, pid):
            raise Refused(
                grpc.StatusCode.PERMISSION_DENIED, "BANNED_FROM_TOURNAMENT", "a director removed you for good"
            )
        now = now_ms()
        if loaded.status == "registering":
            if spec.reg_opens_ms and now < spec.reg_opens_ms:
                raise Refused(
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "REGISTRATION_NOT_OPEN",
                    f"registration opens at {rfc3339(spec.reg_opens_ms)}",
                    metadata={"opens_at": rfc3339(spec.reg_opens_ms)},
                )
            if spec.reg_closes_ms and now >= spec.reg_closes_ms:
                raise precondition("NOT_REGISTERING", "registration has closed")
        if spec.invitation_code and not hmac.compare_digest(code.encode(), spec.invitation_code.encode()):
            raise Refused(
                grpc.StatusCode.PERMISSION_DENIED, "BAD_INVITATION_CODE", "this tournament needs its invitation code"
            )
        if spec.min_rating or spec.min_rated_games:
            rating, games = await self._pool_entry(loaded, pid)
            if spec.min_rating and rating < spec.min_rating:
                raise Refused(
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "RATING_TOO_LOW",
                    f"this tournament needs a rating of at least {spec.min_rating}",
                    metadata={"min_rating": str(spec.min_rating)},
                )
            if spec.min_rated_games and games < spec.min_rated_games:
                raise Refused(
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "TOO_FEW_RATED_GAMES",
                    f"this tournament needs at least {spec.min_rated_games} rated games",
                    metadata={"min_rated_games": str(spec.min_rated_games)},
                )

    async def late_join(self, tid: str, caller: play_pb2.Player) -> None:
        """Join a running Swiss until its late-join round: the lowest seed, no points, paired from
        the next round. Idempotent."""
        rating: float | None = None
        for _ in range(ATTEMPTS):
            loaded = await self._load(tid)
            spec = loaded.spec
            state = loaded.state
            if loaded.status != "running" or state is None or not spec.late_join_until_round:
                raise precondition("NOT_REGISTERING", "registration has closed")
            if any(e.player_id == caller.player_id for e in state.entrants):
                return
            if len(loaded.players) >= spec.capacity:
                raise precondition("TOURNAMENT_FULL", "the tournament is full")
            if rating is None:
                rating = (await self._pool_entry(loaded, caller.player_id))[0]
            entrant = Entrant(caller.player_id, caller.username, rating, bool(caller.guest))
            try:
                new = engine.late_join(state, entrant, spec.late_join_until_round)
            except engine.TournamentError as error:
                raise refused_from(error) from None
            event = _event(player_joined=tournaments_pb2.TournamentPlayerJoined(player=caller))
            reply = await self.store.direct(loaded, state=new, add=_me(caller), events=[event])
            if reply == 1:
                return
        raise Refused(grpc.StatusCode.ABORTED, "BUSY", "the tournament kept changing; retry")


class DirectorMethods(JoinMethods):
    """Mixed into TournamentServicer (service.py), which provides these."""

    auth: Authenticator
    store: TournamentStore
    runner: TournamentRunner
    director: Callable[[str], bool]

    async def _load(self, tid: str) -> Loaded:
        raise NotImplementedError

    async def _spec(
        self, request: tournaments_pb2.CreateTournamentRequest, organiser: Any, *, open_from: int = 2
    ) -> Spec:
        raise NotImplementedError

    # -- helpers ------------------------------------------------------------------------------------

    def directs(self, loaded: Loaded, player_id: str) -> bool:
        return player_id == loaded.spec.organiser[0] or self.director(player_id)

    async def _directing(self, context: Any, tid: str) -> tuple[play_pb2.Player, Loaded]:
        caller = self.auth.identity(context.invocation_metadata()).player()
        loaded = await self._load(tid)
        if not self.directs(loaded, caller.player_id):
            raise not_director()
        return caller, loaded

    async def _change(self, tid: str, compute: Callable[[Loaded], Change | None]) -> tuple[Loaded, bool]:
        """Compute a change from a fresh read and write it compare-and-set, again on a conflict.
        (after, changed): changed False when `compute` found nothing to do."""
        for _ in range(ATTEMPTS):
            loaded = await self._load(tid)
            change = compute(loaded)
            if change is None:
                return loaded, False
            if await self.store.direct(loaded, **change) == 1:
                return await self._load(tid), True
        raise Refused(grpc.StatusCode.ABORTED, "BUSY", "the tournament kept changing; retry")

    def _running_state(self, loaded: Loaded) -> State:
        if loaded.status != "running" or loaded.state is None:
            raise precondition("NOT_RUNNING", f"the tournament is {loaded.status}")
        return loaded.state

    def _next_round_state(self, loaded: Loaded) -> State:
        if loaded.status == "finished":
            raise precondition("NO_NEXT_ROUND", "every round has been played")
        return self._running_state(loaded)

    def _answer(self, loaded: Loaded, caller: Any) -> tournaments_pb2.Tournament:
        """`caller`: a Player or an Identity (its player_id)."""
        return messages.tournament(loaded, director=self.directs(loaded, caller.player_id))

    async def _notify(self, players: list[play_pb2.Player], note: notices_pb2.Notification) -> None:
        await self.runner.notices.send(players, note)

    # -- update -------------------------------------------------------------------------------------

    @refusing(UNAVAILABLE)
    async def UpdateTournament(
        self, request: tournaments_pb2.UpdateTournamentRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tournaments_pb2.UpdateTournamentResponse:
        caller, first = await self._directing(context, request.tournament_id)
        paths = list(request.update_mask.paths)
        if not paths or any(p not in UPDATABLE for p in paths):
            raise invalid("BAD_UPDATE_MASK", f"update_mask names the fields to change: {sorted(UPDATABLE)}")
        if first.status in ("finished", "cancelled"):
            raise precondition("ALREADY_STARTED", f"the tournament is {first.status}")
        if first.status == "running" and any(p not in UPDATABLE_RUNNING for p in paths):
            raise invalid("BAD_UPDATE_MASK", f"after the start only {sorted(UPDATABLE_RUNNING)} change")
        mask = field_mask_pb2.FieldMask(paths=paths)
        specs: dict[tuple[int, int], Spec] = {}

        async def new_spec(loaded: Loaded) -> Spec:
            # Validated like a new tournament (the game's rules service is asked): once per read.
            merged = request_of(loaded.spec)
            mask.MergeMessage(request.settings, merged, replace_message_field=True, replace_repeated_field=True)
            played = len(loaded.state.rounds) if loaded.state is not None else 0
            made = await self._spec(merged, None, open_from=played + 2)
            spec = dataclasses.replace(
                made,
                tournament_id=loaded.spec.tournament_id,
                organiser=loaded.spec.organiser,
                created_ms=loaded.spec.created_ms,
            )
            if loaded.status == "registering" and spec.capacity < len(loaded.players):
                raise invalid("BAD_CAPACITY", "capacity is below the players registered", field="capacity")
            return spec

        detail = "changed " + ", ".join(sorted(paths))
        for _ in range(ATTEMPTS):
            loaded = await self._load(request.tournament_id)
            if loaded.status not in ("registering", "running"):
                raise precondition("ALREADY_STARTED", f"the tournament is {loaded.status}")
            if loaded.status == "running" and any(p not in UPDATABLE_RUNNING for p in paths):
                raise invalid("BAD_UPDATE_MASK", f"after the start only {sorted(UPDATABLE_RUNNING)} change")
            version = (loaded.rev, loaded.registration_version)
            spec = specs.get(version) or await new_spec(loaded)
            specs[version] = spec
            state = None
            if loaded.status == "running" and loaded.state is not None and "rounds" in paths:
                current = loaded.state
                if current.config.format is not Format.SWISS and spec.rounds != loaded.spec.rounds:
                    raise invalid("BAD_UPDATE_MASK", "only a Swiss tournament's rounds change after the start")
                if spec.rounds < len(current.rounds):
                    raise invalid("BAD_ROUNDS", "not below the rounds played", field="rounds")
                state = dataclasses.replace(
                    current, config=dataclasses.replace(current.config, rounds=spec.rounds or current.config.rounds)
                )
            view = dataclasses.replace(loaded, spec=spec, state=state or loaded.state)
            shown = messages.tournament(view)
            del shown.players[:]  # player_count stays: an update of 10,000 players' Swiss stays small
            event = _event(updated=tournaments_pb2.TournamentUpdated(tournament=shown))
            starts = spec.starts_at_ms if loaded.status == "registering" else -1
            reply = await self.store.direct(
                loaded,
                spec=spec,
                state=state,
                starts_at_ms=starts,
                events=[event],
                audit=audit_entry(_me(caller), "UpdateTournament", detail),
            )
            if reply == 1:
                break
        else:
            raise Refused(grpc.StatusCode.ABORTED, "BUSY", "the tournament kept changing; retry")
        after = await self._load(request.tournament_id)
        if after.status == "running":
            await self.runner.advance(request.tournament_id)  # a round whose time moved may start now
            after = await self._load(request.tournament_id)
        return tournaments_pb2.UpdateTournamentResponse(tournament=self._answer(after, caller))

    # -- players ------------------------------------------------------------------------------------

    @refusing(UNAVAILABLE)
    async def RemovePlayer(
        self, request: tournaments_pb2.RemovePlayerRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tournaments_pb2.RemovePlayerResponse:
        caller, _ = await self._directing(context, request.tournament_id)
        reason = check_reason(request.reason)
        pid = request.player_id
        if not pid:
            raise invalid("BAD_PLAYER_ID", "name the player", field="player_id")
        action = "banned" if request.ban else "removed"

        def compute(loaded: Loaded) -> Change | None:
            left = tournaments_pb2.TournamentPlayerLeft(by_director=True, banned=request.ban, reason=reason)
            audit = audit_entry(_me(caller), "RemovePlayer", f"{action} {pid}", reason)
            if loaded.status == "registering":
                entry = next((p for p in loaded.players if p[0] == pid), None)
                if entry is None:
                    if not request.ban:
                        raise precondition("NOT_ENTERED", "that player does not take part in this tournament")
                    return {"ban": pid, "audit": audit}
                left.player.CopyFrom(messages.player(entry))
                return {
                    "remove": pid,
                    "ban": pid if request.ban else "",
                    "events": [_event(player_left=left)],
                    "audit": audit,
                }
            state = self._running_state(loaded)
            if pid not in {e.player_id for e in state.entrants}:
                raise precondition("NOT_ENTERED", "that player does not take part in this tournament")
            new = engine.ban(state, pid) if request.ban else engine.withdraw(state, pid)
            if new == state:
                return None
            left.player.CopyFrom(_player_of(state, pid))
            left.withdrawn = True
            return {
                "state": new,
                "ban": pid if request.ban else "",
                "events": [_event(player_left=left)],
                "audit": audit,
            }

        after, _ = await self._change(request.tournament_id, compute)
        if after.status == "running":
            await self.runner.after_withdrawal(request.tournament_id, pid)
            after = await self._load(request.tournament_id)
        return tournaments_pb2.RemovePlayerResponse(tournament=self._answer(after, caller))

    # -- rounds -------------------------------------------------------------------------------------

    async def _set_paused(self, context: Any, tid: str, paused: bool) -> tuple[play_pb2.Player, Loaded]:
        caller, _ = await self._directing(context, tid)

        def compute(loaded: Loaded) -> Change | None:
            state = self._running_state(loaded)
            if state.paused == paused:
                return None
            return {
                "state": dataclasses.replace(state, paused=paused),
                "events": [_event(paused=tournaments_pb2.TournamentPaused(paused=paused))],
                "audit": audit_entry(_me(caller), "PauseTournament" if paused else "ResumeTournament", ""),
            }

        await self._change(tid, compute)
        await self.runner.advance(tid)
        return caller, await self._load(tid)

    @refusing(UNAVAILABLE)
    async def PauseTournament(
        self, request: tournaments_pb2.PauseTournamentRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tournaments_pb2.PauseTournamentResponse:
        caller, after = await self._set_paused(context, request.tournament_id, True)
        return tournaments_pb2.PauseTournamentResponse(tournament=self._answer(after, caller))

    @refusing(UNAVAILABLE)
    async def ResumeTournament(
        self, request: tournaments_pb2.ResumeTournamentRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tournaments_pb2.ResumeTournamentResponse:
        caller, after = await self._set_paused(context, request.tournament_id, False)
        return tournaments_pb2.ResumeTournamentResponse(tournament=self._answer(after, caller))

    @refusing(UNAVAILABLE)
    async def StartNextRound(
        self, request: tournaments_pb2.StartNextRoundRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tournaments_pb2.StartNextRoundResponse:
        caller, first = await self._directing(context, request.tournament_id)
        tid = first.spec.tournament_id
        self._next_round_state(first)
        await self.runner.advance(tid)  # results already in count before deciding

        def compute(loaded: Loaded) -> Change | None:
            state = self._next_round_state(loaded)
            try:
                released = engine.release(state)
            except engine.TournamentError as error:
                raise refused_from(error) from None
            events = [_event(paused=tournaments_pb2.TournamentPaused(paused=False))] if state.paused else []
            number = len(state.rounds) + 1
            return {
                "state": released,
                "events": events,
                "audit": audit_entry(_me(caller), "StartNextRound", f"round {number}"),
            }

        await self._change(tid, compute)
        await self.runner.advance(tid)
        after = await self._load(tid)
        out = tournaments_pb2.StartNextRoundResponse(tournament=self._answer(after, caller))
        state = after.state
        if state is not None and state.current is not None:
            out.round.CopyFrom(messages.round_message(tid, state, state.current))
        return out

    @refusing(UNAVAILABLE)
    async def TerminateTournament(
        self, request: tournaments_pb2.TerminateTournamentRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tournaments_pb2.TerminateTournamentResponse:
        caller, _ = await self._directing(context, request.tournament_id)
        reason = check_reason(request.reason)

        def compute(loaded: Loaded) -> Change | None:
            if loaded.status == "finished" and loaded.state is not None and loaded.state.terminated:
                return None
            state = self._running_state(loaded)
            ended = engine.terminate(state)
            finished = tournaments_pb2.TournamentFinished(
                standings=messages.standings(ended), terminated=True, reason=reason
            )
            return {
                "state": ended,
                "events": [_event(finished=finished)],
                "audit": audit_entry(_me(caller), "TerminateTournament", f"after round {len(state.rounds)}", reason),
            }

        after, _ = await self._change(request.tournament_id, compute)
        state = after.state
        if state is not None and state.current is not None:
            rnd = state.current
            for g in rnd.games:
                if g.aborted:
                    game_id = engine.game_id(after.spec.tournament_id, rnd.number, g)
                    await self.runner.abort_game(game_id, f"terminate-{after.spec.tournament_id}")
        return tournaments_pb2.TerminateTournamentResponse(tournament=self._answer(after, caller))

    # -- results ------------------------------------------------------------------------------------

    @refusing(UNAVAILABLE)
    async def CorrectResult(
        self, request: tournaments_pb2.CorrectResultRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tournaments_pb2.CorrectResultResponse:
        caller, first = await self._directing(context, request.tournament_id)
        reason = check_reason(request.reason, required=True, code="BAD_CORRECTION")
        tid = first.spec.tournament_id
        if first.status == "running":
            await self.runner.advance(tid)  # a result already recorded is corrected, not overtaken
        was_playing: list[bool] = []

        def compute(loaded: Loaded) -> Change | None:
            if loaded.status not in ("running", "finished") or loaded.state is None:
                raise precondition("NOT_RUNNING", f"the tournament is {loaded.status}")
            state = loaded.state
            try:
                new = engine.correct(state, request.round, request.board, request.decider, request.ranks, reason)
            except engine.TournamentError as error:
                if error.reason == "BAD_CORRECTION":
                    raise invalid("BAD_CORRECTION", str(error), field="ranks") from None
                raise refused_from(error) from None
            if new == state:
                return None
            before = state.rounds[request.round - 1].game(request.board, request.decider)
            was_playing[:] = [before is not None and before.result is None and not before.aborted]
            game = new.rounds[request.round - 1].game(request.board, request.decider)
            assert game is not None
            corrected = tournaments_pb2.TournamentResultCorrected(
                round=request.round, game=messages.game(tid, new, request.round, game), reason=reason
            )
            standings = tournaments_pb2.TournamentStandingsChanged(
                standings=messages.standings(new), rounds_completed=messages.rounds_completed(new)
            )
            ranks = "-".join(str(r) for r in request.ranks)
            return {
                "state": new,
                "events": [_event(result_corrected=corrected), _event(standings_changed=standings)],
                "audit": audit_entry(
                    _me(caller),
                    "CorrectResult",
                    f"round {request.round} board {request.board} decider {request.decider}: ranks {ranks}",
                    reason,
                ),
            }

        after, changed = await self._change(tid, compute)
        state = after.state
        assert state is not None
        game = state.rounds[request.round - 1].game(request.board, request.decider)
        assert game is not None
        game_id = engine.game_id(tid, request.round, game)
        if changed and was_playing and was_playing[0]:
            await self.runner.abort_game(game_id, f"correct-{tid}")
        ranks = "-".join(str(r) for r in game.result.ranks) if game.result else ""
        note = notices_pb2.Notification(
            notification_id=f"tcorr:{tid}:{request.round}:{request.board}:{request.decider}:{ranks}",
            kind=notices_pb2.NOTIFICATION_KIND_RESULT_CORRECTED,
            tournament_id=tid,
            tournament_name=after.spec.name,
            round=request.round,
            game_id=game_id,
            game=after.spec.game,
            text=game.note,
        )
        await self._notify([_player_of(state, p) for p in game.seats], note)
        if after.status == "running":
            await self.runner.advance(tid)  # the round may be complete now
            after = await self._load(tid)
            state = after.state or state
        fixed = state.rounds[request.round - 1].game(request.board, request.decider) or game
        return tournaments_pb2.CorrectResultResponse(
            game=messages.game(tid, state, request.round, fixed), standings=messages.standings(state)
        )

    # -- announcements and the audit ----------------------------------------------------------------

    @refusing(UNAVAILABLE)
    async def Announce(
        self, request: tournaments_pb2.AnnounceRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tournaments_pb2.AnnounceResponse:
        caller, loaded = await self._directing(context, request.tournament_id)
        check_id("request_id", request.request_id)
        text = request.text.strip()
        if not 1 <= len(text) <= MAX_ANNOUNCEMENT:
            raise invalid("BAD_ANNOUNCEMENT", f"an announcement is 1-{MAX_ANNOUNCEMENT} characters", field="text")
        if loaded.status == "cancelled":
            raise precondition("NOT_RUNNING", "the tournament was cancelled")
        state = loaded.state
        if state is not None:
            players = [_player_of(state, e.player_id) for e in state.entrants if not state.is_withdrawn(e.player_id)]
        else:
            players = [messages.player(p) for p in loaded.players]
        tid = loaded.spec.tournament_id
        event = _event(announcement=tournaments_pb2.TournamentAnnouncement(director=caller, text=text))
        audit = audit_entry(_me(caller), "Announce", text[:200])
        verdict, value = await self.store.announce(tid, request.request_id, len(players), audit, event)
        if verdict == -1:
            raise Refused(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "ANNOUNCEMENTS_TOO_FAST",
                "at most 10 announcements an hour",
                metadata={"retry_after_ms": str(value)},
                retry_after_s=value / 1000,
            )
        note = notices_pb2.Notification(
            notification_id=f"tann:{tid}:{request.request_id}",
            kind=notices_pb2.NOTIFICATION_KIND_ANNOUNCEMENT,
            tournament_id=tid,
            tournament_name=loaded.spec.name,
            player=caller,
            text=text,
            game=loaded.spec.game,
        )
        # Sent again on a retry too: a notice is stored once per id, so the ones a failed first
        # try missed arrive now and the others are not repeated.
        await self._notify(players, note)
        return tournaments_pb2.AnnounceResponse(recipients=value)

    @refusing(UNAVAILABLE)
    async def ListTournamentAudit(
        self, request: tournaments_pb2.ListTournamentAuditRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tournaments_pb2.ListTournamentAuditResponse:
        _, loaded = await self._directing(context, request.tournament_id)
        out = tournaments_pb2.ListTournamentAuditResponse()
        for row in await self.store.audit(loaded.spec.tournament_id):
            entry = out.entries.add(action=row["action"], detail=row["detail"], reason=row["reason"])
            entry.at.FromMilliseconds(int(row["at"]))
            entry.director.CopyFrom(messages.player(tuple(row["by"])))
        return out

    # -- reads for organisers -----------------------------------------------------------------------

    @refusing(UNAVAILABLE)
    async def ListTournamentGames(
        self, request: tournaments_pb2.ListTournamentGamesRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tournaments_pb2.ListTournamentGamesResponse:
        self.auth.identity(context.invocation_metadata())
        if request.page_size < 0:
            raise invalid("BAD_PAGE_SIZE", "page_size must not be negative", field="page_size")
        size = min(request.page_size or GAMES_PAGE_DEFAULT, GAMES_PAGE_MAX)
        loaded = await self._load(request.tournament_id)
        tid = loaded.spec.tournament_id
        listing = f"tgames:{tid}:{request.round}:{request.player_id}"
        offset = decode_offset(listing, request.page_token)
        state = loaded.state
        out = tournaments_pb2.ListTournamentGamesResponse()
        if state is None:
            return out
        rounds = state.rounds
        if request.round:
            rounds = rounds[request.round - 1 : request.round]
        seen = 0
        for rnd in rounds:
            for g in rnd.games:
                if request.player_id and request.player_id not in g.seats:
                    continue
                if seen >= offset + size:
                    out.next_page_token = encode_offset(listing, offset + size)
                    return out
                if seen >= offset:
                    out.games.append(messages.game(tid, state, rnd.number, g))
                seen += 1
        return out

    @refusing(UNAVAILABLE)
    async def ExportTournament(
        self, request: tournaments_pb2.ExportTournamentRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[tournaments_pb2.ExportTournamentResponse]:
        self.auth.identity(context.invocation_metadata())
        if request.format not in (tournaments_pb2.EXPORT_FORMAT_CSV, tournaments_pb2.EXPORT_FORMAT_JSON):
            raise invalid("BAD_EXPORT", "choose CSV or JSON", field="format")
        known = (
            tournaments_pb2.EXPORT_PART_STANDINGS,
            tournaments_pb2.EXPORT_PART_PAIRINGS,
            tournaments_pb2.EXPORT_PART_GAMES,
        )
        parts = list(dict.fromkeys(request.parts)) or list(known)
        if any(p not in known for p in parts):
            raise invalid("BAD_EXPORT", "parts: standings, pairings, games", field="parts")
        loaded = await self._load(request.tournament_id)
        exporter = Export(loaded, self.store)
        csv_out = request.format == tournaments_pb2.EXPORT_FORMAT_CSV
        kind = "text/csv; charset=utf-8" if csv_out else "application/json"
        for part in (p for p in known if p in parts):
            name = {known[0]: "standings", known[1]: "pairings", known[2]: "games"}[part]
            file_name = f"{loaded.spec.tournament_id}-{name}.{'csv' if csv_out else 'json'}"
            data = await exporter.render(name, csv_out)
            for start in range(0, max(len(data), 1), EXPORT_CHUNK):
                chunk = data[start : start + EXPORT_CHUNK]
                yield tournaments_pb2.ExportTournamentResponse(
                    file_name=file_name, content_type=kind, data=chunk, last=start + EXPORT_CHUNK >= len(data)
                )


def _me(player: play_pb2.Player) -> tuple[str, str, bool]:
    return (player.player_id, player.username, bool(player.guest))


# -- the export ------------------------------------------------------------------------------------

STANDINGS_COLUMNS = (
    "rank",
    "player_id",
    "username",
    "seed",
    "rating",
    "points",
    "buchholz",
    "sonneborn_berger",
    "score_total",
    "games",
    "wins",
    "draws",
    "losses",
    "byes",
    "withdrawn",
    "banned",
    "reached_round",
)
PAIRINGS_COLUMNS = (
    "round",
    "board",
    "decider",
    "seat",
    "player_id",
    "username",
    "state",
    "game_id",
    "rank",
    "score",
    "points",
    "missed",
    "absent",
    "correction_reason",
)
GAMES_COLUMNS = (
    "round",
    "board",
    "decider",
    "game_id",
    "seat",
    "player_id",
    "username",
    "rank",
    "score",
    "outcome",
    "actions",
)


def _number(value: float) -> str:
    return f"{value:g}"


def _flag(value: bool) -> str:
    return "1" if value else "0"


class Export:
    """One tournament's export, read once (the state as it stood when the call came)."""

    def __init__(self, loaded: Loaded, store: TournamentStore) -> None:
        self.loaded = loaded
        self.store = store
        self.tid = loaded.spec.tournament_id
        self.state = loaded.state

    def standings(self) -> list[tournaments_pb2.Standing]:
        return messages.standings(self.state) if self.state is not None else []

    def games(self) -> Iterator[tournaments_pb2.TournamentGame]:
        if self.state is None:
            return
        for rnd in self.state.rounds:
            for g in rnd.games:
                yield messages.game(self.tid, self.state, rnd.number, g)

    async def records(self) -> list[tuple[tournaments_pb2.TournamentGame, play_pb2.GameRecord | None]]:
        games = [g for g in self.games() if g.game_id]
        out: list[tuple[tournaments_pb2.TournamentGame, play_pb2.GameRecord | None]] = []
        for start in range(0, len(games), 500):
            batch = games[start : start + 500]
            raw: list[Any] = await self.store.redis.many([("GET", record_key(g.game_id)) for g in batch])
            out.extend(
                (g, play_pb2.GameRecord.FromString(r) if r is not None else None)
                for g, r in zip(batch, raw, strict=True)
            )
        return out

    async def render(self, part: str, as_csv: bool) -> bytes:
        if part == "standings":
            rows = self.standings()
            if not as_csv:
                return _json([_dict(s) for s in rows])
            return _csv(STANDINGS_COLUMNS, (_standing_row(s) for s in rows))
        if part == "pairings":
            games = list(self.games())
            if not as_csv:
                return _json([_dict(g) for g in games])
            return _csv(PAIRINGS_COLUMNS, (row for g in games for row in _pairing_rows(g)))
        records = await self.records()
        if not as_csv:
            return _json(
                [
                    {
                        "round": g.round,
                        "board": g.board,
                        "decider": g.decider,
                        "game_id": g.game_id,
                        "record": _dict(r) if r is not None else None,
                    }
                    for g, r in records
                ]
            )
        return _csv(GAMES_COLUMNS, (row for g, r in records for row in _game_rows(g, r)))


def _dict(message: Any) -> dict[str, Any]:
    return MessageToDict(message, preserving_proto_field_name=True)


def _json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, indent=1).encode()


def _csv(columns: tuple[str, ...], rows: Iterator[list[str]] | Any) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(columns)
    writer.writerows(rows)
    return buffer.getvalue().encode()


def _standing_row(s: tournaments_pb2.Standing) -> list[str]:
    return [
        str(s.rank),
        s.player.player_id,
        s.player.username,
        str(s.seed),
        _number(s.rating),
        _number(s.points),
        _number(s.buchholz),
        _number(s.sonneborn_berger),
        str(s.score_total),
        str(s.games),
        str(s.wins),
        str(s.draws),
        str(s.losses),
        str(s.byes),
        _flag(s.withdrawn),
        _flag(s.banned),
        str(s.reached_round),
    ]


GAME_STATE_NAMES = {
    v.number: v.name.removeprefix("TOURNAMENT_GAME_STATE_").lower()
    for v in tournaments_pb2.TournamentGameState.DESCRIPTOR.values
}


def _pairing_rows(g: tournaments_pb2.TournamentGame) -> Iterator[list[str]]:
    for seat, p in enumerate(g.players):
        yield [
            str(g.round),
            str(g.board),
            str(g.decider),
            str(seat),
            p.player_id,
            p.username,
            GAME_STATE_NAMES.get(g.state, ""),
            g.game_id,
            str(g.ranks[seat]) if seat < len(g.ranks) else "",
            str(g.scores[seat]) if seat < len(g.scores) else "",
            _number(g.points[seat]) if seat < len(g.points) else "",
            _flag(g.missed[seat]) if seat < len(g.missed) else "",
            _flag(g.absent[seat]) if seat < len(g.absent) else "",
            g.correction_reason,
        ]


def _game_rows(g: tournaments_pb2.TournamentGame, record: play_pb2.GameRecord | None) -> Iterator[list[str]]:
    actions = json.dumps([_dict(a) for a in record.actions], ensure_ascii=False) if record is not None else ""
    outcome = record.outcome.reason if record is not None else ""
    for seat, p in enumerate(g.players):
        yield [
            str(g.round),
            str(g.board),
            str(g.decider),
            g.game_id,
            str(seat),
            p.player_id,
            p.username,
            str(record.outcome.ranks[seat]) if record is not None and seat < len(record.outcome.ranks) else "",
            str(record.outcome.scores[seat]) if record is not None and seat < len(record.outcome.scores) else "",
            outcome,
            actions if seat == 0 else "",
        ]
