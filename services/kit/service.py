"""The gRPC adapter that turns any pure rules module into a `tafel.rules.v1.RulesService`.

Per action: validate the request, take the game's state (from a small in-memory cache when its
version matches, else one Redis read), run the pure rules, and commit with one Lua script that
checks the version and the request id. The cache is only a cache: every write is checked against
Redis, so any replica can serve any game.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import grpc
from redis.exceptions import RedisError
from tafel.games.v1 import games_pb2
from tafel.rules.v1 import rules_pb2, rules_pb2_grpc

from kit import errors, timesource
from kit.errors import Refused, abort, as_refused, invalid
from kit.ids import check_id
from kit.mailbox import Mailbox
from kit.slots import Slots
from kit.tasks import spawn as supervised
from kit.handlers import add_pre_encoded
from services.kit import encoded
from services.kit.codec import GameCodec, GameEnvelope, MalformedMessage, outcome_to_proto
from services.kit.describe import describe_game
from tafel_rules.game import (
    ABORTED,
    DRAW_AGREED,
    GAME_OVER,
    NOTHING_TO_TAKE_BACK,
    OFFER_NOT_ALLOWED,
    GameEnded,
    IllegalMove,
    InvalidOptions,
    Rules,
    TakenBack,
)
from services.kit.metrics import RulesMetrics
from services.kit.replay import ReplayFailed, positions
from services.kit.store import (
    ClockArm,
    CommitCall,
    CommitKeys,
    CommitResult,
    Committed,
    Conflict,
    Exists,
    GameStore,
    Missing,
    NewEvent,
    NoScript,
    Replayed,
    StoredGame,
    commit_keys,
)
from services.kit.views import ReplayViews

StateT = TypeVar("StateT")
MoveT = TypeVar("MoveT")
OptionsT = TypeVar("OptionsT")
EventT = TypeVar("EventT")
ViewT = TypeVar("ViewT")

MAX_SEAT = 63
MAX_IN_FLIGHT_PER_STREAM = 1024
# Commuting placements that lose the commit race to another seat's are re-applied on the new state;
# each loss means another seat's action landed, so a table of S seats needs at most S - 1 retries.
MAX_REBASES = 16
# Said in every ApplyMoves stream's initial metadata: this service answers ApplyMovesRequest.create
# and .view on the stream (rules.proto), so a caller may skip the per-game unary calls.
STREAM_CALLS = (("tafel-stream-calls", "create,view"),)
log = logging.getLogger("tafel.rules")
PRE_ENCODED = ("ApplyMove", "ApplyMoves")  # the methods whose answers are joined bytes (add_rules_service)


def request_digest(request: rules_pb2.ApplyMoveRequest, move: bytes | None = None) -> bytes:
    """What a request asks for: its seat and action. Not its expected version (a retry made after
    learning a newer version is the same request) nor its turn clock (the caller's bookkeeping).
    `move`: the request's move encoded deterministically, when the caller has it already."""
    action = request.WhichOneof("action") or ""
    if action == "move":
        body = move if move is not None else request.move.SerializeToString(deterministic=True)
    elif action == "take_back":
        body = request.take_back.SerializeToString(deterministic=True)
    else:  # resignation, timeout, draw_agreed, abort: empty messages
        body = b""
    return hashlib.blake2b(f"{request.seat}:{action}:".encode() + body, digest_size=12).digest()


@dataclass
class CachedGame(Generic[StateT]):
    version: int
    state: StateT
    game: StoredGame
    window_from: int | None  # the version the state's commuting window began at
    keys: CommitKeys  # the keys its commits name


@dataclass(slots=True)
class _Action:
    """An ApplyMoveRequest checked and decoded: what every try of it shares."""

    request: rules_pb2.ApplyMoveRequest
    game_id: str
    action: str  # the request's action field: move, resignation, timeout, draw_agreed, abort, take_back
    move: Any  # the game's move (None for the others)
    recorded: bytes  # RecordedAction's action field, encoded
    clock: rules_pb2.TurnClock | None
    keys: CommitKeys
    digest: bytes


@dataclass(slots=True)
class _Judged(Generic[StateT]):
    """An action applied to a state: the commit that writes it and what follows it."""

    after: CachedGame[StateT]  # the game once committed
    response: bytes  # the encoded ApplyMoveResponse, before the clock's fields
    commit: CommitCall  # GameStore.commit_args
    stamp: tuple[int, bytes] | None  # the deadline a new turn gets and its encoded field (clocked)


@dataclass(slots=True)
class _InFlight(Generic[StateT]):
    """An action whose commit was sent (RulesServicer._start)."""

    act: _Action
    judged: _Judged[StateT]
    future: asyncio.Future[Any]  # the commit script's raw reply
    started: float


class RulesServicer(rules_pb2_grpc.RulesServiceServicer, Generic[StateT, MoveT, OptionsT, EventT, ViewT]):
    def __init__(
        self,
        rules: Rules[StateT, MoveT, OptionsT, EventT, ViewT],
        codec: GameCodec[StateT, MoveT, OptionsT, EventT, ViewT],
        store: GameStore,
        metrics: RulesMetrics,
        *,
        cache_games: int = 10_000,
        rules_url: str = "",
    ) -> None:
        self.rules = rules
        self.rules_url = rules_url
        self.codec = codec
        self.envelope = GameEnvelope(codec)
        self.store = store
        self.replays = ReplayViews(rules, codec, store)  # GetReplayViews (services/kit/views.py)
        self.metrics = metrics
        self.cache_games = cache_games
        self._cache: OrderedDict[str, CachedGame[StateT]] = OrderedDict()
        metrics.cached_games.set_function(lambda: len(self._cache))
        # Optional game hooks: a commuting window (moves of different seats made within one window
        # commute, e.g. Colour Square's simultaneous placements of a round) and the events the
        # opening state has beside GameCreated (e.g. round 1's roll).
        self._window: Any = getattr(rules, "commute_window", None)
        self._opening: Any = getattr(rules, "opening_events", None)
        # The platform's endings by action (rules.proto DrawAgreed, Abort).
        self._endings = {"draw_agreed": DRAW_AGREED, "abort": ABORTED}

    # -- helpers ---------------------------------------------------------------------------------

    def _status(self, state: StateT, version: int) -> games_pb2.GameStatus:
        outcome = self.rules.outcome(state)
        status = games_pb2.GameStatus(
            version=version, to_act=sorted(self.rules.to_act(state)), over=outcome is not None
        )
        if outcome is not None:
            status.outcome.CopyFrom(outcome_to_proto(outcome))
        return status

    def _remember(self, game_id: str, cached: CachedGame[StateT]) -> None:
        if self.cache_games <= 0:
            return
        self._cache[game_id] = cached
        self._cache.move_to_end(game_id)
        while len(self._cache) > self.cache_games:
            self._cache.popitem(last=False)

    def _forget(self, game_id: str) -> None:
        self._cache.pop(game_id, None)

    def _window_after(self, before: CachedGame[StateT], state: StateT, version: int) -> int | None:
        """The start of the commuting window in force after an action took `before` to `state`
        at `version`: kept while the window goes on, `version` when a new one opens."""
        if self._window is None:
            return None
        window = self._window(state)
        if window is None:
            return None
        if before.window_from is not None and self._window(before.state) == window:
            return before.window_from
        return version

    def _commutes(self, cached: CachedGame[StateT], expected: int, action: str | None) -> bool:
        """A move made against `expected` may be applied to the newer `cached` state: it is a move
        (not a resignation or a timeout), the game has a commuting window now, and the mover's
        version lies inside it (it saw this round's roll). Its legality is then judged on `cached`."""
        return (
            action == "move"
            and cached.window_from is not None
            and cached.window_from <= expected < cached.version
        )

    @staticmethod
    def _replayed(replayed: Replayed, digest: bytes) -> bytes:
        """The first answer, as it was kept (an encoded ApplyMoveResponse)."""
        if replayed.digest != digest:
            raise invalid(
                "REQUEST_ID_REUSED",
                "this request id was already used for a different request: use a new id for a new request",
                field="request_id",
            )
        return replayed.response

    def _decode(self, stored: StoredGame) -> StateT:
        if stored.game != self.rules.name:
            message = f"there is no {self.rules.title} game {stored.game_id}"
            raise Refused(grpc.StatusCode.NOT_FOUND, "GAME_NOT_FOUND", message)
        return self.codec.state_from_bytes(stored.state)

    async def _load(self, game_id: str, request_id: str = "") -> StoredGame | Replayed:
        loaded = await self.store.load(game_id, request_id)
        if isinstance(loaded, Missing):
            raise Refused(grpc.StatusCode.NOT_FOUND, "GAME_NOT_FOUND", f"there is no game {game_id}")
        return loaded

    # -- the action path ----------------------------------------------------------------------------

    async def apply(self, request: rules_pb2.ApplyMoveRequest) -> bytes:
        """Apply one action and return its encoded ApplyMoveResponse, or raise Refused. Shared by
        the unary call and the stream."""
        started = time.perf_counter()
        try:
            response = await self._apply(request)
        except Refused as refused:
            self.metrics.count(refused.reason)
            raise
        except RedisError as error:
            raise self._store_failed(request.game_id, error) from None
        self._applied(started)
        return response

    def _applied(self, started: float) -> None:
        self.metrics.count("APPLIED")
        self.metrics.latency.observe(time.perf_counter() - started)

    def _store_failed(self, game_id: str, error: RedisError) -> Refused:
        self._forget(game_id)
        refused = _unavailable(error)
        self.metrics.count(refused.reason)
        if refused.reason == "STORE_UNAVAILABLE":
            log.warning("redis unavailable", extra={"game_id": game_id})
        return refused

    async def _apply(self, request: rules_pb2.ApplyMoveRequest) -> bytes:
        act = self._check(request)
        expected = request.expected_version
        base = expected  # the version the action is applied against (newer when it commutes)
        for _ in range(MAX_REBASES):
            cached = self._cache.get(act.game_id)
            fresh = cached is None or cached.version != base
            if fresh:
                loaded = await self._load(act.game_id, request.request_id)
                if isinstance(loaded, Replayed):
                    return self._replayed(loaded, act.digest)
                cached = CachedGame(loaded.version, self._decode(loaded), loaded, loaded.window_from, act.keys)
                self._remember(act.game_id, cached)
                if loaded.version != base:
                    if not self._commutes(cached, expected, act.action):
                        raise _mismatch(loaded.version, expected)
                    base = loaded.version
            assert cached is not None
            back = None
            if act.action == "take_back":
                back = await self._taken_back_to(act, cached, fresh)
                if back is None:
                    continue
            judged = self._judge(act, cached, base, fresh, back)
            if judged is None:
                continue
            result = await self.store.run_commit(judged.commit)
            answer = self._settle(act, judged, result)
            if answer is not None:
                return answer
        raise Refused(
            grpc.StatusCode.ABORTED, "VERSION_MISMATCH", "the game kept moving; read it and retry",
            current_version=base,
        )

    def _check(self, request: rules_pb2.ApplyMoveRequest) -> _Action:
        """The request checked and decoded: what every try of it shares."""
        game_id = request.game_id
        check_id("game_id", game_id)
        check_id("request_id", request.request_id)
        action = request.WhichOneof("action")
        if action is None:
            raise invalid("ACTION_MISSING", "set one of move, resignation, timeout, draw_agreed, abort, take_back")
        if request.seat > MAX_SEAT:
            raise invalid("BAD_SEAT", f"seat {request.seat} does not exist")
        move, move_bytes = None, b""
        if action == "move":
            move = self.envelope.move_from_union(request.move)
            move_bytes = request.move.SerializeToString(deterministic=True)
            recorded = encoded.recorded_move(move_bytes)
        elif action == "take_back":
            recorded = encoded.recorded_taken_back(request.take_back.to_version)
        else:
            recorded = _RECORDED[action]
        cached = self._cache.get(game_id)
        keys = cached.keys if cached is not None else commit_keys(game_id)
        clock = request.turn_clock if request.HasField("turn_clock") else None
        if clock is not None:
            _check_turn_clock(clock, keys.meta)
        return _Action(request, game_id, action, move, recorded, clock, keys, request_digest(request, move_bytes))

    def _judge(
        self, act: _Action, cached: CachedGame[StateT], base: int, fresh: bool, back: StateT | None = None
    ) -> _Judged[StateT] | None:
        """The action applied to `cached` (at version `base`) and the commit that writes it; None
        when the cached state may be stale (forgotten: judge again on Redis's). `back`: a
        take-back's position, rebuilt by _taken_back_to."""
        request = act.request
        seat = request.seat
        seats = cached.game.seats
        if seat >= seats:
            raise invalid("BAD_SEAT", f"seat {seat} does not exist in a {seats}-seat game")
        events: Sequence[Any]
        try:
            if act.move is not None:
                state, events = self.rules.apply_move(cached.state, seat, act.move)
            elif act.action == "resignation":
                state, events = self.rules.resign(cached.state, seat)
            elif act.action == "timeout":
                state, events = self.rules.timeout(cached.state, seat)
            elif back is not None:
                state, events = back, (TakenBack(request.take_back.to_version),)
            else:
                state, events = self._end(cached, self._endings[act.action])
        except IllegalMove as illegal:
            if not fresh:
                # The cached state may be stale (another replica moved the game): judge again
                # against Redis before refusing.
                self._forget(act.game_id)
                return None
            expected = request.expected_version
            if base != expected:
                # Made against an older version and not legal now: the mover is behind.
                raise _mismatch(base, expected) from None
            raise Refused(
                grpc.StatusCode.FAILED_PRECONDITION, illegal.reason, illegal.message, current_version=expected
            ) from None

        version = base + 1
        if back is None:
            window_from = self._window_after(cached, state, version)
        else:  # a new window: nothing made before the take-back commutes with what follows it
            window_from = version if self._window is not None and self._window(state) is not None else None
        events_out = self.envelope.events_to_bytes(events, version)
        outcome = self.rules.outcome(state)
        over = outcome is not None
        to_act = sorted(self.rules.to_act(state))
        status = encoded.status(version, to_act, outcome)
        response, wake_up = encoded.response_and_wake_up(
            act.game_id, version, [event for _, event in events_out], status
        )
        now_ns = timesource.now_ns()  # time.time_ns itself unless a test moves the clock
        clock = act.clock
        arm: ClockArm | None = None
        stamp: tuple[int, bytes] | None = None
        if clock is not None:
            now_ms, per_move_ms = now_ns // 1_000_000, clock.per_move_ms
            due = now_ms + per_move_ms  # a new turn's deadline: encoded once, for Redis and the answer
            stamp = (due, encoded.deadline_field(due))
            arm = ClockArm(
                to_act="" if over else ",".join([str(seat) for seat in to_act]),
                per_move_ms=per_move_ms,
                now_ms=now_ms,
                ttl_s=clock.ttl_s,
                keep_meta=bool(clock.keep_alive),  # checked: only the game's metadata key
                stamp=stamp[1],
            )
        commit = self.store.commit_args(
            game_id=act.game_id,
            expected_version=base,
            request_id=request.request_id,
            state=self.codec.state_to_bytes(state),
            events=events_out,
            response=response,
            over=over,
            publish=wake_up,
            action=encoded.recorded_action(seat, version, now_ns, act.recorded),
            status=status,
            digest=act.digest,
            window_from=window_from,
            clock=arm,
            keys=act.keys,
        )
        return _Judged(CachedGame(version, state, cached.game, window_from, act.keys), response, commit, stamp)

    def _end(self, cached: CachedGame[StateT], reason: str) -> tuple[StateT, Sequence[Any]]:
        """A platform ending (a draw agreed, an abort) of the running game; IllegalMove when over,
        or when a draw is asked of a game of other than two seats."""
        if self.rules.outcome(cached.state) is not None:
            raise IllegalMove(GAME_OVER, "the game is over")
        if reason == DRAW_AGREED and cached.game.seats != 2:
            raise IllegalMove(OFFER_NOT_ALLOWED, "a draw by agreement is for two-player games only")
        state = self.rules.end(cached.state, reason)
        outcome = self.rules.outcome(state)
        assert outcome is not None and outcome.reason == reason, "Rules.end must end the game with its reason"
        return state, (GameEnded(outcome),)

    async def _taken_back_to(self, act: _Action, cached: CachedGame[StateT], fresh: bool) -> StateT | None:
        """The position a take-back returns to, rebuilt from the game's recorded actions, or
        Refused; None when the cached state may be stale (forgotten: judge again on Redis's).
        The replay must arrive at the game's state as it stands before anything goes back, so a
        record that cannot rebuild the game (one made before seeds were kept, rules changed
        since) is refused rather than taken back to a position that never was."""
        game_id, current = act.game_id, cached.version
        to_version = act.request.take_back.to_version
        refusal: tuple[str, str] | None = None
        if self.rules.outcome(cached.state) is not None:
            refusal = (GAME_OVER, "the game is over")
        elif to_version >= current:
            message = f"the game is at version {current}: nothing after version {to_version} to take back"
            refusal = (NOTHING_TO_TAKE_BACK, message)
        elif not self.rules.takes_back:
            refusal = (OFFER_NOT_ALLOWED, f"{self.rules.title} takes no moves back")
        if refusal is None:
            seed, rows = await self.store.history(game_id)
            stored = cached.game
            try:
                options = self.envelope.options_from_union(
                    games_pb2.GameOptions.FromString(stored.options), self.rules.default_options()
                )
                initial = self.rules.new_game(options, stored.seats, seed)
                actions = [games_pb2.RecordedAction.FromString(row) for row in rows]
                # (Actions committed after `current`, if any, are not read: the commit judged on
                # `current` then conflicts.)
                states = positions(self.rules, self.envelope, initial, actions, upto=current)
            except (ReplayFailed, MalformedMessage, InvalidOptions) as failed:
                log.warning("take-back replay failed", extra={"game_id": game_id, "error": str(failed)})
                states = []
            if len(states) == current + 1 and states[current] == cached.state:
                back: StateT = states[to_version]
                return back
            refusal = (OFFER_NOT_ALLOWED, "this game's record does not rebuild its positions: none can be taken back")
        if not fresh:
            self._forget(game_id)
            return None
        raise Refused(grpc.StatusCode.FAILED_PRECONDITION, *refusal, current_version=current)

    def _settle(self, act: _Action, judged: _Judged[StateT], result: CommitResult) -> bytes | None:
        """The answer once the commit's result is known; None when another seat's action landed
        first in a game whose moves commute (judge again on the new state)."""
        if isinstance(result, Committed):
            self._remember(act.game_id, judged.after)
            if act.clock is None:
                return judged.response
            return encoded.with_clock(judged.response, result.deadline_ms, judged.stamp)
        self._forget(act.game_id)
        if isinstance(result, Replayed):
            return self._replayed(result, act.digest)
        if isinstance(result, Conflict):
            if act.action == "move" and self._window is not None:
                return None
            raise _mismatch(result.current_version, act.request.expected_version, moved_on=True)
        raise Refused(grpc.StatusCode.NOT_FOUND, "GAME_NOT_FOUND", f"there is no game {act.game_id}")

    def _start(self, request: rules_pb2.ApplyMoveRequest, started: float) -> _InFlight[StateT] | None:
        """An action begun without a task of its own, for a stream's batch: when its game's state
        is cached at the version the action was made against, it is judged and its commit sent at
        once, and one task per batch waits for the replies (_finish), in order (one connection
        answers in order). None where it needs apply() (a load, a rebase, a cluster). Raises what
        _check and _judge raise."""
        act = self._check(request)
        if act.action == "take_back":
            return None  # reads the game's history first: apply()
        cached = self._cache.get(act.game_id)
        if cached is None or cached.version != request.expected_version:
            return None
        judged = self._judge(act, cached, cached.version, False)
        if judged is None:
            return None
        future = self.store.start_commit(judged.commit)
        if future is None:
            return None
        return _InFlight(act, judged, future, started)

    async def _finish(self, flight: _InFlight[StateT]) -> bytes | None:
        """A started action's answer or Refused, as apply() gives them (with their metrics); None
        where it needs apply() after all (Redis lacked the script; a commuting game's rebase)."""
        try:
            result = self.store.commit_result(await flight.future)
            if isinstance(result, NoScript):
                return None
            answer = self._settle(flight.act, flight.judged, result)
        except Refused as refused:
            self.metrics.count(refused.reason)
            raise
        except RedisError as error:  # the connection failed, or an error reply
            raise self._store_failed(flight.act.game_id, error) from None
        if answer is not None:
            self._applied(flight.started)
        return answer

    # -- RPCs ---------------------------------------------------------------------------------------

    async def DescribeGame(
        self, request: rules_pb2.DescribeGameRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> rules_pb2.DescribeGameResponse:
        return describe_game(self.rules, self.codec, self.rules_url)

    async def CreateGame(
        self, request: rules_pb2.CreateGameRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> rules_pb2.CreateGameResponse:
        try:
            return await self._create_or_unavailable(request)
        except Refused as refused:
            await abort(context, refused)

    async def _create(self, request: rules_pb2.CreateGameRequest) -> rules_pb2.CreateGameResponse:
        check_id("game_id", request.game_id)
        check_id("request_id", request.request_id, required=False)
        try:
            options = self.envelope.options_from_union(request.options, self.rules.default_options())
            self.rules.check_options(options, request.seats)
        except MalformedMessage as bad:
            raise invalid(bad.reason, bad.message) from None
        except InvalidOptions as bad:
            raise invalid("BAD_OPTIONS", bad.message, field=bad.field) from None
        seed = request.seed or secrets.randbits(63)
        state = self.rules.new_game(options, request.seats, seed)
        options_union = self.envelope.options_to_union(options)
        created = games_pb2.GameEvent(event_id="0-1", version=0)
        created.created.game = self.rules.name
        created.created.seats = request.seats
        created.created.options.CopyFrom(options_union)
        opening = [created]
        if self._opening is not None:
            more = self.envelope.events_to_union(self._opening(state), 0)
            for index, event in enumerate(more, start=2):  # (GameCreated is 0-1)
                event.event_id = f"0-{index}"
            opening.extend(more)
        response = rules_pb2.CreateGameResponse(
            game_id=request.game_id, options=options_union, status=self._status(state, 0), events=opening
        )
        options_bytes = options_union.SerializeToString()
        state_bytes = self.codec.state_to_bytes(state)
        window_from = 0 if self._window is not None and self._window(state) is not None else None
        result = await self.store.create(
            game_id=request.game_id,
            request_id=request.request_id,
            game=self.rules.name,
            seats=request.seats,
            options=options_bytes,
            state=state_bytes,
            seed=seed,
            created=[NewEvent(event.event_id, event.SerializeToString()) for event in opening],
            response=response.SerializeToString(),
            publish=games_pb2.GameEventBatch(
                game_id=request.game_id, events=opening, status=response.status
            ).SerializeToString(),
            status=response.status.SerializeToString(),
            window_from=window_from,
        )
        if isinstance(result, Replayed):
            return rules_pb2.CreateGameResponse.FromString(result.response)
        if isinstance(result, Exists):
            raise Refused(grpc.StatusCode.ALREADY_EXISTS, "GAME_EXISTS", f"a game {request.game_id} exists already")
        self.metrics.games_created.inc()
        # The first move usually comes here next (routing is by game): start it from memory.
        stored = StoredGame(
            game_id=request.game_id,
            game=self.rules.name,
            seats=request.seats,
            version=0,
            state=state_bytes,
            options=options_bytes,
            last_event_id=opening[-1].event_id,
            over=response.status.over,
            window_from=window_from,
        )
        self._remember(request.game_id, CachedGame(0, state, stored, window_from, commit_keys(request.game_id)))
        return response

    async def ApplyMove(  # type: ignore[override]
        self, request: rules_pb2.ApplyMoveRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> bytes:
        """Answers pre-encoded (registered with add_rules_service)."""
        try:
            return await self.apply(request)
        except MalformedMessage as bad:
            await abort(context, invalid(bad.reason, bad.message))
        except Refused as refused:
            await abort(context, refused)

    async def ApplyMoves(  # type: ignore[override]
        self,
        request_iterator: AsyncIterator[rules_pb2.ApplyMovesRequest],
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> AsyncIterator[bytes]:
        """Many games' actions on one stream. Each is handled in its own task; one writer (this
        generator) sends the answers as they complete, so a slow game never blocks another. A
        caller that batches its requests gets every answer ready at once in one message. Answers
        are encoded ApplyMovesResponses (registered with add_rules_service); a batch is joined
        from them."""
        loop = asyncio.get_running_loop()
        answers: Mailbox[bytes | None] = Mailbox(loop)  # (asyncio.Queue: several Python calls an item)
        slots = Slots(loop, MAX_IN_FLIGHT_PER_STREAM)  # taken by read() alone
        tasks: set[asyncio.Task[None]] = set()

        async def handle(message: rules_pb2.ApplyMovesRequest) -> None:
            try:
                try:
                    if message.HasField("request"):
                        answer = encoded.applied_answer(message.correlation_id, await self.apply(message.request))
                    else:
                        response = rules_pb2.ApplyMovesResponse(correlation_id=message.correlation_id)
                        if message.HasField("create"):
                            response.created.CopyFrom(await self._create_or_unavailable(message.create))
                        else:
                            response.viewed.CopyFrom(await self._view_or_unavailable(message.view))
                        answer = response.SerializeToString()
                except MalformedMessage as bad:
                    answer = _refusal(message.correlation_id, invalid(bad.reason, bad.message))
                except Refused as refused:
                    answer = _refusal(message.correlation_id, refused)
                except Exception:
                    # A bug: this entry is refused INTERNAL now (the gateway's caller would wait
                    # for its deadline), without the exception's text; logged once, here.
                    log.exception("action failed", extra={"correlation_id": message.correlation_id})
                    answer = _refusal(message.correlation_id, _internal())
                answers.put_nowait(answer)
            finally:
                slots.release()

        batching = False

        def spawn(work: Coroutine[Any, Any, None]) -> None:
            task = supervised(work, "rules stream entry", log=log)
            tasks.add(task)
            task.add_done_callback(tasks.discard)

        def start(message: rules_pb2.ApplyMovesRequest) -> None:
            spawn(handle(message))

        def begin(message: rules_pb2.ApplyMovesRequest) -> _InFlight[StateT] | None:
            """A batch entry's action started without a task (_start), else handled as any entry
            (its own task, or its refusal now). Holds one of the stream's slots."""
            if not message.HasField("request"):
                start(message)
                return None
            try:
                flight = self._start(message.request, time.perf_counter())
            except (MalformedMessage, Refused) as error:
                if isinstance(error, MalformedMessage):
                    refused = invalid(error.reason, error.message)
                else:
                    self.metrics.count(error.reason)  # as apply() counts its refusals
                    refused = error
                answers.put_nowait(_refusal(message.correlation_id, refused))
                slots.release()
                return None
            if flight is None:
                start(message)
            return flight

        async def finish(flights: list[tuple[rules_pb2.ApplyMovesRequest, _InFlight[StateT]]]) -> None:
            """The replies of a batch's started actions, in the order they were sent."""
            waiting = iter(flights)
            try:
                for message, flight in waiting:
                    handed_on = False
                    try:
                        applied = await self._finish(flight)
                        if applied is None:
                            start(message)  # apply() from the beginning; the slot goes with it
                            handed_on = True
                        else:
                            answers.put_nowait(encoded.applied_answer(message.correlation_id, applied))
                    except Refused as refused:
                        answers.put_nowait(_refusal(message.correlation_id, refused))
                    except Exception:  # a bug: as in handle(), refused now and logged once
                        log.exception("action failed", extra={"correlation_id": message.correlation_id})
                        answers.put_nowait(_refusal(message.correlation_id, _internal()))
                    finally:
                        if not handed_on:
                            slots.release()
            finally:
                for _, flight in waiting:  # the stream ended first: nobody reads these replies
                    flight.future.cancel()

        async def read() -> None:
            nonlocal batching
            try:
                async for message in request_iterator:
                    if message.HasField("request") or message.HasField("create") or message.HasField("view"):
                        if not slots.try_take():
                            await slots.take()
                        start(message)
                    if message.batch:
                        batching = True
                        flights = []
                        for item in message.batch:
                            if not slots.try_take():
                                await slots.take()
                            flight = begin(item)
                            if flight is not None:
                                flights.append((item, flight))
                        if flights:
                            spawn(finish(flights))
                if tasks:
                    await asyncio.gather(*tuple(tasks), return_exceptions=True)
            finally:
                answers.put_nowait(None)

        await context.send_initial_metadata(STREAM_CALLS)
        self.metrics.open_streams.inc()
        # Its failure ends the stream (read's finally); supervised, so it is also logged.
        reader = supervised(read(), "rules stream reader", log=log)
        try:
            while True:
                answer = await answers.get()
                if answer is None:
                    break
                rest = answers.get_many() if batching else []
                if not rest:
                    yield answer
                    continue
                batch = [answer]
                ended = False
                for more in rest:
                    if more is None:
                        ended = True
                        break
                    batch.append(more)
                yield encoded.answer_batch(batch)
                if ended:
                    break
        finally:
            self.metrics.open_streams.dec()
            reader.cancel()
            for task in tuple(tasks):
                task.cancel()

    async def GetView(
        self, request: rules_pb2.GetViewRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> rules_pb2.GetViewResponse:
        try:
            return await self._view_or_unavailable(request)
        except Refused as refused:
            await abort(context, refused)

    async def GetReplayViews(
        self, request: rules_pb2.GetReplayViewsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> rules_pb2.GetReplayViewsResponse:
        try:
            return await self.replays.views(request)
        except Refused as refused:
            await abort(context, refused)

    async def _create_or_unavailable(self, request: rules_pb2.CreateGameRequest) -> rules_pb2.CreateGameResponse:
        """CreateGame's work for the stream: a Redis failure is the same retryable refusal."""
        try:
            return await self._create(request)
        except RedisError as error:
            raise _unavailable(error) from None

    async def _view_or_unavailable(self, request: rules_pb2.GetViewRequest) -> rules_pb2.GetViewResponse:
        """GetView's work, shared with the stream: raises Refused (a Redis failure is retryable)."""
        try:
            return await self._view(request)
        except RedisError as error:
            raise _unavailable(error) from None

    async def _view(self, request: rules_pb2.GetViewRequest) -> rules_pb2.GetViewResponse:
        check_id("game_id", request.game_id)
        loaded = await self._load(request.game_id)
        assert isinstance(loaded, StoredGame)
        seat = request.seat if request.HasField("seat") else None
        if seat is not None and seat >= loaded.seats:
            raise invalid("BAD_SEAT", f"seat {seat} does not exist in a {loaded.seats}-seat game")
        state = self._decode(loaded)
        return rules_pb2.GetViewResponse(
            view=self.envelope.view_to_union(self.rules.view(state, seat)),
            status=self._status(state, loaded.version),
            last_event_id=loaded.last_event_id,
            game=loaded.game,
            seats=loaded.seats,
            options=games_pb2.GameOptions.FromString(loaded.options),
        )


# The longest turn: correspondence's 14 days a move (the gateway checks which lengths it offers).
MAX_PER_MOVE_MS = 14 * 86_400_000

# RecordedAction's action for the actions that carry no value (a move and a take-back do).
_RECORDED = {
    "resignation": encoded.RECORDED_RESIGNATION,
    "timeout": encoded.RECORDED_TIMEOUT,
    "draw_agreed": encoded.RECORDED_DRAW_AGREED,
    "abort": encoded.RECORDED_ABORTED,
}


def _check_turn_clock(clock: rules_pb2.TurnClock, meta: str) -> None:
    """`meta`: the game's metadata key (kit/redis/keys.py meta_key)."""
    if not 1 <= clock.per_move_ms <= MAX_PER_MOVE_MS:
        field = "turn_clock.per_move_ms"
        raise invalid("BAD_TURN_CLOCK", f"{field} must be 1 to {MAX_PER_MOVE_MS:,}", field=field)
    if not 60 <= clock.ttl_s <= 31_536_000:
        raise invalid("BAD_TURN_CLOCK", "turn_clock.ttl_s must be 60 to 31,536,000", field="turn_clock.ttl_s")
    # The commit refreshes named keys only (lua/rules/commit.lua): the one key a caller may keep
    # alive with the clock is the game's metadata key, the gateway's (kit/redis/keys.py meta_key).
    for key in clock.keep_alive:
        if key != meta:
            raise invalid(
                "BAD_TURN_CLOCK", f"turn_clock.keep_alive may name only {meta}", field="turn_clock.keep_alive"
            )


def _mismatch(current: int, expected: int, *, moved_on: bool = False) -> Refused:
    message = (
        f"the game moved on to version {current}"
        if moved_on
        else f"the game is at version {current}, the action was made against {expected}"
    )
    return Refused(grpc.StatusCode.ABORTED, "VERSION_MISMATCH", message, current_version=current)


def _internal() -> Refused:
    """An entry that failed with a bug: INTERNAL, readable, never the exception's text."""
    return Refused(grpc.StatusCode.INTERNAL, "INTERNAL", errors.INTERNAL)


def _refusal(correlation_id: int, refused: Refused) -> bytes:
    """The encoded ApplyMovesResponse refusing an entry."""
    response = rules_pb2.ApplyMovesResponse(correlation_id=correlation_id)
    response.refusal.code = refused.code.value[0]
    response.refusal.reason = refused.reason
    response.refusal.message = refused.message
    if refused.current_version is not None:
        response.refusal.current_version = refused.current_version
    return response.SerializeToString()


def _unavailable(error: RedisError) -> Refused:
    """STORE_UNAVAILABLE for an outage; a command Redis refused is INTERNAL (logged), not a retry."""
    return as_refused(error, "game storage is unavailable; retry")


def add_rules_service(servicer: RulesServicer[Any, Any, Any, Any, Any], server: grpc.aio.Server) -> None:
    """The generated registration, with ApplyMove and ApplyMoves answering pre-encoded bytes."""
    add_pre_encoded(
        rules_pb2_grpc.add_RulesServiceServicer_to_server, servicer, server, service_names()[0], PRE_ENCODED
    )


def service_names() -> Sequence[str]:
    return (rules_pb2.DESCRIPTOR.services_by_name["RulesService"].full_name,)
