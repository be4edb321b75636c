"""The move path: one action of one game, from its request to its answer, in one function
(MovePath.act). The unary ApplyMove and every entry of the ApplyMoves stream come here.

    check → fetch → apply → store (and send) → answer

The state comes from the cache (services/host/cache.py) when its version matches, else from one
Redis read; the pure rules judge the action; one Lua script (kit/redis/lua/rules/commit.lua)
checks the version and the request id and writes the state, the events, the kept answer, the
record, the turn clock and the wake-up to watchers at once. Nothing is written before the commit,
so a refusal at any step leaves the game as it was, and a retried request id is answered with the
first answer.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, NamedTuple, TypeVar

import grpc
from redis.exceptions import RedisError
from tafel.games.v1 import games_pb2
from tafel.rules.v1 import rules_pb2
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

from kit import timesource
from kit.errors import Refused, as_refused, invalid
from services.host import encoded
from services.host.cache import CachedGame, GameCache
from services.host.codec import GameCodec, GameEnvelope, MalformedMessage
from services.host.metrics import RulesMetrics
from services.host.replay import ReplayFailed, positions
from services.host.requests import Action, checked
from services.host.store import (
    ClockArm,
    CommitCall,
    CommitResult,
    Committed,
    Conflict,
    GameStore,
    Missing,
    NoScript,
    Replayed,
    StoredGame,
)

StateT = TypeVar("StateT")
MoveT = TypeVar("MoveT")
OptionsT = TypeVar("OptionsT")
EventT = TypeVar("EventT")
ViewT = TypeVar("ViewT")

# Commuting placements that lose the commit race to another seat's are re-applied on the new state;
# each loss means another seat's action landed, so a table of S seats needs at most S - 1 retries.
MAX_REBASES = 16
log = logging.getLogger("tafel.rules")


class Fetched(NamedTuple, Generic[StateT]):
    game: CachedGame[StateT]
    fresh: bool  # read from Redis for this try (a refusal then stands; a cached state may be stale)


@dataclass(slots=True)
class Judged(Generic[StateT]):
    """An action applied to a state: the commit that writes it and what follows it."""

    after: CachedGame[StateT]  # the game once committed
    response: bytes  # the encoded ApplyMoveResponse, before the clock's fields
    commit: CommitCall  # GameStore.commit_args
    stamp: tuple[int, bytes] | None  # the deadline a new turn gets and its encoded field (clocked)
    in_window: bool  # judged inside a commuting window: a lost commit race is judged again


@dataclass(slots=True)
class Begun(Generic[StateT]):
    """An action of a stream batch whose commit was sent (MovePath.begin)."""

    action: Action
    judged: Judged[StateT]
    future: asyncio.Future[Any]  # the commit script's raw reply
    started: float


@dataclass(slots=True)
class Back(Generic[StateT]):
    """A take-back's position, or why there is none."""

    state: StateT | None
    refused: IllegalMove | None

    def unwrap(self) -> StateT:
        if self.refused is not None:
            raise self.refused
        assert self.state is not None
        return self.state


class _Stale(Exception):
    """The cached state refused the action but may be stale: judge it again on Redis's."""


class MovePath(Generic[StateT, MoveT, OptionsT, EventT, ViewT]):
    def __init__(
        self,
        rules: Rules[StateT, MoveT, OptionsT, EventT, ViewT],
        codec: GameCodec[StateT, MoveT, OptionsT, EventT, ViewT],
        store: GameStore,
        metrics: RulesMetrics,
        cache: GameCache[StateT],
    ) -> None:
        self.rules = rules
        self.codec = codec
        self.envelope = GameEnvelope(codec)
        self.store = store
        self.metrics = metrics
        self.cache = cache

    async def act(self, request: rules_pb2.ApplyMoveRequest) -> bytes:
        """Apply one action and return its encoded ApplyMoveResponse, or raise Refused
        (MalformedMessage for a move the game's codec cannot read). A commuting move whose commit
        lost the race to another seat's goes round again on the new state."""
        started = time.perf_counter()
        try:
            action = self.check(request)  # 1. check
            base = request.expected_version  # the version it is applied against (newer when it commutes)
            for _ in range(MAX_REBASES):
                fetched = self.cached(action, base) or await self.fetch(action, base)  # 2. fetch
                if isinstance(fetched, Replayed):
                    return self._replayed(fetched, action.digest)
                base = fetched.game.version
                try:
                    back = await self.taken_back_to(action, fetched) if action.kind == "take_back" else None
                    judged = self.apply(action, fetched, back)  # 3. apply
                except _Stale:
                    self.cache.forget(action.game_id)
                    continue
                result = await self.store.run_commit(judged.commit)  # 4. store and send
                answer = self.answer(action, judged, result)  # 5. answer
                if answer is not None:
                    self._applied(started)
                    return answer
            raise Refused(
                grpc.StatusCode.ABORTED,
                "VERSION_MISMATCH",
                "the game kept moving; read it and retry",
                current_version=base,
            )
        except Refused as refused:
            self.metrics.count(refused.reason)
            raise
        except RedisError as error:
            raise self._store_failed(request.game_id, error) from None

    # -- a stream batch's actions: the same steps, without a task each -------------------------------
    # A batch's entries whose games are cached at their versions are checked, applied and their
    # commits sent at once, and one task reads the replies in order (one connection answers in
    # order). Measured with `.venv/bin/python -m tools.bench_rules_service --seconds 3 --concurrency
    # 32`, "stream ApplyMoves, 32 games, batched", server CPU (rules service + Redis) an action, the
    # tree before this move path and this one alternated 3 times in one run: a task per entry
    # 70.5-74.0 µs against 62.4-65.4 (+13%); these steps 67.1-68.7 against 63.9-67.7 (+4%, about
    # the run's noise). Every other entry takes act().

    def begin(self, request: rules_pb2.ApplyMoveRequest) -> Begun[StateT] | None:
        """act()'s steps 1-3 and the commit sent, for an action of a batch; None where it takes
        act() (its game not cached at its version, a take-back, a cluster). Raises what act does."""
        started = time.perf_counter()
        try:
            action = self.check(request)
            fetched = None if action.kind == "take_back" else self.cached(action, request.expected_version)
            if fetched is None:
                return None
            try:
                judged = self.apply(action, fetched)
            except _Stale:
                self.cache.forget(action.game_id)
                return None
        except Refused as refused:
            self.metrics.count(refused.reason)
            raise
        future = self.store.start_commit(judged.commit)
        if future is None:
            return None
        return Begun(action, judged, future, started)

    async def end(self, begun: Begun[StateT]) -> bytes | None:
        """A begun action's steps 4-5: its answer or Refused, as act() gives them; None where it
        takes act() after all (Redis lacked the script; a commuting move lost the commit race)."""
        try:
            result = self.store.commit_result(await begun.future)
            if isinstance(result, NoScript):
                return None
            answer = self.answer(begun.action, begun.judged, result)
        except Refused as refused:
            self.metrics.count(refused.reason)
            raise
        except RedisError as error:  # the connection failed, or an error reply
            raise self._store_failed(begun.action.game_id, error) from None
        if answer is not None:
            self._applied(begun.started)
        return answer

    def _applied(self, started: float) -> None:
        self.metrics.count("APPLIED")
        self.metrics.latency.observe(time.perf_counter() - started)

    def _store_failed(self, game_id: str, error: RedisError) -> Refused:
        self.cache.forget(game_id)
        failed = unavailable(error)
        self.metrics.count(failed.reason)
        if failed.reason == "STORE_UNAVAILABLE":
            log.warning("redis unavailable", extra={"game_id": game_id})
        return failed

    # -- 1. check: the request alone -----------------------------------------------------------------

    def check(self, request: rules_pb2.ApplyMoveRequest) -> Action:
        cached = self.cache.get(request.game_id)
        return checked(request, self.envelope, None if cached is None else cached.keys)

    # -- 2. fetch: the game at the version the action was made against -------------------------------

    def cached(self, action: Action, base: int) -> Fetched[StateT] | None:
        """The cached game when it is at `base` (no coroutine: the common case)."""
        cached = self.cache.get(action.game_id)
        if cached is not None and cached.version == base:
            return Fetched(cached, False)
        return None

    async def fetch(self, action: Action, base: int) -> Fetched[StateT] | Replayed:
        """Redis's game (Replayed: the request id was answered before). A game that moved on since
        `base` is a VERSION_MISMATCH, unless the action commutes with what came since (then it is
        judged on the newer state)."""
        loaded = await self.load(action.game_id, action.request.request_id)
        if isinstance(loaded, Replayed):
            return loaded
        game = CachedGame(loaded.version, self.decode(loaded), loaded, loaded.window_from, action.keys)
        self.cache.remember(action.game_id, game)
        expected = action.request.expected_version
        if game.version != base and not self._commutes(game, expected, action.kind):
            raise _mismatch(game.version, expected)
        return Fetched(game, True)

    async def load(self, game_id: str, request_id: str = "") -> StoredGame | Replayed:
        loaded = await self.store.load(game_id, request_id)
        if isinstance(loaded, Missing):
            raise Refused(grpc.StatusCode.NOT_FOUND, "GAME_NOT_FOUND", f"there is no game {game_id}")
        return loaded

    def decode(self, stored: StoredGame) -> StateT:
        if stored.game != self.rules.name:
            message = f"there is no {self.rules.title} game {stored.game_id}"
            raise Refused(grpc.StatusCode.NOT_FOUND, "GAME_NOT_FOUND", message)
        return self.codec.state_from_bytes(stored.state)

    def _commutes(self, game: CachedGame[StateT], expected: int, kind: str) -> bool:
        """A move made against `expected` may be applied to the newer `game`: it is a move (not a
        resignation or a timeout), the game has a commuting window now, and the mover's version
        lies inside it (it saw this round's roll). Its legality is then judged on `game`."""
        return kind == "move" and game.window_from is not None and game.window_from <= expected < game.version

    # -- 3. apply: the pure rules, and the commit that would write their result ----------------------

    def apply(self, action: Action, fetched: Fetched[StateT], back: Back[StateT] | None = None) -> Judged[StateT]:
        """The action applied to the fetched game, or Refused; _Stale when a cached state refused
        it (judge again on Redis's). `back`: a take-back's position (taken_back_to)."""
        game, fresh = fetched
        request = action.request
        seat = request.seat
        seats = game.game.seats
        if seat >= seats:
            raise invalid("BAD_SEAT", f"seat {seat} does not exist in a {seats}-seat game")
        events: Sequence[Any]
        try:
            if action.move is not None:
                state, events = self.rules.apply_move(game.state, seat, action.move)
            elif action.kind == "resignation":
                state, events = self.rules.resign(game.state, seat)
            elif action.kind == "timeout":
                state, events = self.rules.timeout(game.state, seat)
            elif back is not None:
                state, events = back.unwrap(), (TakenBack(request.take_back.to_version),)
            else:
                state, events = self._end(game, _ENDINGS[action.kind])
        except IllegalMove as illegal:
            if not fresh:
                raise _Stale from None  # another replica may have moved the game
            expected = request.expected_version
            if game.version != expected:
                # Made against an older version and not legal now: the mover is behind.
                raise _mismatch(game.version, expected) from None
            raise Refused(
                grpc.StatusCode.FAILED_PRECONDITION,
                illegal.reason,
                illegal.message,
                current_version=game.version,
            ) from None
        return self._judged(action, game, state, events)

    def _judged(self, action: Action, game: CachedGame[StateT], state: StateT, events: Sequence[Any]) -> Judged[StateT]:
        """The commit of `state` and `events` as version game.version + 1, and its answer."""
        request = action.request
        version = game.version + 1
        window_from = self._window_after(game, state, version, taken_back=action.kind == "take_back")
        events_out = self.envelope.events_to_bytes(events, version)
        outcome = self.rules.outcome(state)
        over = outcome is not None
        to_act = sorted(self.rules.to_act(state))
        status = encoded.status(version, to_act, outcome)
        response, wake_up = encoded.response_and_wake_up(
            action.game_id, version, [event for _, event in events_out], status
        )
        now_ns = timesource.now_ns()  # time.time_ns itself unless a test moves the clock
        clock = action.clock
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
            game_id=action.game_id,
            expected_version=game.version,
            request_id=request.request_id,
            state=self.codec.state_to_bytes(state),
            events=events_out,
            response=response,
            over=over,
            publish=wake_up,
            action=encoded.recorded_action(request.seat, version, now_ns, action.recorded),
            status=status,
            digest=action.digest,
            window_from=window_from,
            clock=arm,
            keys=action.keys,
        )
        after = CachedGame(version, state, game.game, window_from, action.keys)
        return Judged(after, response, commit, stamp, game.window_from is not None)

    def _window_after(self, before: CachedGame[StateT], state: StateT, version: int, *, taken_back: bool) -> int | None:
        """The start of the commuting window in force after an action took `before` to `state`
        at `version`: kept while the window goes on, `version` when a new one opens (always after
        a take-back: nothing made before it commutes with what follows it)."""
        window = self.rules.commute_window(state)
        if window is None:
            return None
        if not taken_back and before.window_from is not None and self.rules.commute_window(before.state) == window:
            return before.window_from
        return version

    def _end(self, game: CachedGame[StateT], reason: str) -> tuple[StateT, Sequence[Any]]:
        """A platform ending (a draw agreed, an abort) of the running game; IllegalMove when over,
        or when a draw is asked of a game of other than two seats."""
        if self.rules.outcome(game.state) is not None:
            raise IllegalMove(GAME_OVER, "the game is over")
        if reason == DRAW_AGREED and game.game.seats != 2:
            raise IllegalMove(OFFER_NOT_ALLOWED, "a draw by agreement is for two-player games only")
        state = self.rules.end(game.state, reason)
        outcome = self.rules.outcome(state)
        assert outcome is not None and outcome.reason == reason, "Rules.end must end the game with its reason"
        return state, (GameEnded(outcome),)

    async def taken_back_to(self, action: Action, fetched: Fetched[StateT]) -> Back[StateT]:
        """The position a take-back returns to, rebuilt from the game's recorded actions, or its
        refusal (raised by apply, which treats it as any illegal action)."""
        try:
            return Back(await self._rebuilt(fetched.game, action.request.take_back.to_version), None)
        except IllegalMove as illegal:
            return Back(None, illegal)

    async def _rebuilt(self, game: CachedGame[StateT], to_version: int) -> StateT:
        """The replay must arrive at the game's state as it stands before anything goes back, so
        a record that cannot rebuild the game (rules changed since) is refused rather than taken
        back to a position that never was."""
        current = game.version
        if self.rules.outcome(game.state) is not None:
            raise IllegalMove(GAME_OVER, "the game is over")
        if to_version >= current:
            message = f"the game is at version {current}: nothing after version {to_version} to take back"
            raise IllegalMove(NOTHING_TO_TAKE_BACK, message)
        if not self.rules.takes_back:
            raise IllegalMove(OFFER_NOT_ALLOWED, f"{self.rules.title} takes no moves back")
        stored = game.game
        seed, rows = await self.store.history(stored.game_id)
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
            log.warning("take-back replay failed", extra={"game_id": stored.game_id, "error": str(failed)})
            states = []
        if len(states) == current + 1 and states[current] == game.state:
            back: StateT = states[to_version]
            return back
        message = "this game's record does not rebuild its positions: none can be taken back"
        raise IllegalMove(OFFER_NOT_ALLOWED, message)

    # -- 4. answer: once the commit (store and send, one script) is in --------------------------------

    def answer(self, action: Action, judged: Judged[StateT], result: CommitResult) -> bytes | None:
        """The answer once the commit's result is known; None when another seat's action landed
        first in a game whose moves commute (judge again on the new state)."""
        if isinstance(result, Committed):
            self.cache.remember(action.game_id, judged.after)
            if action.clock is None:
                return judged.response
            return encoded.with_clock(judged.response, result.deadline_ms, judged.stamp)
        self.cache.forget(action.game_id)
        if isinstance(result, Replayed):
            return self._replayed(result, action.digest)
        if isinstance(result, Conflict):
            if action.kind == "move" and judged.in_window:
                return None
            raise _mismatch(result.current_version, action.request.expected_version, moved_on=True)
        raise Refused(grpc.StatusCode.NOT_FOUND, "GAME_NOT_FOUND", f"there is no game {action.game_id}")

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


# The platform's endings by action (rules.proto DrawAgreed, Abort).
_ENDINGS = {"draw_agreed": DRAW_AGREED, "abort": ABORTED}


def _mismatch(current: int, expected: int, *, moved_on: bool = False) -> Refused:
    message = (
        f"the game moved on to version {current}"
        if moved_on
        else f"the game is at version {current}, the action was made against {expected}"
    )
    return Refused(grpc.StatusCode.ABORTED, "VERSION_MISMATCH", message, current_version=current)


def unavailable(error: RedisError) -> Refused:
    """STORE_UNAVAILABLE for an outage; a command Redis refused is INTERNAL (logged), not a retry."""
    return as_refused(error, "game storage is unavailable; retry")
