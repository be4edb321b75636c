"""Applying an action to a game and what follows from it: the next turn deadline, and at the end
the game's record and its removal from the live lists. Used by the play calls and the clock.

Request ids: a client's request id is scoped by its seat before it reaches the rules service
(``s<seat>-<id>``, or a hash when that would exceed 64 characters), so two players of one game can
never collide and a retry through either the unary call or the play stream gets the first answer.
The gateway's own actions use ids no client id maps to (``create``, ``t-<version>-<seat>``).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Awaitable
from typing import NamedTuple, Protocol

import grpc
from google.protobuf import timestamp_pb2
from redis.exceptions import RedisError
from tafel.games.v1 import games_pb2
from tafel.rules.v1 import rules_pb2

from gateway.clocks import CORRESPONDENCE_MS, Clocks, Due
from gateway.games import GameDirectory, GameMeta
from gateway.records import Records
from gateway.rules import RulesRouter
from kit.errors import Refused
from kit.retry import Backoff, retrying

log = logging.getLogger("tafel.gateway.actions")
# The end of a game (record, live lists) once its last action is committed. Nothing else comes back
# to a game that is over (its clock is settled), so a write lost in flight (a Redis Cluster master
# killed: tools/cluster_failover.py --games) is tried again here, after the replica had time to take
# over; every write of it is idempotent (SET NX, ZADD, ZREM).
_END_ATTEMPTS = 3
_END_BACKOFF = Backoff(first_s=0.2, cap_s=1.0)


def rules_request_id(seat: int, client_request_id: str) -> str:
    scoped = f"s{seat}-{client_request_id}"
    if len(scoped) <= 64:
        return scoped
    return "h" + hashlib.sha256(scoped.encode()).hexdigest()[:40]


def timeout_request_id(version: int, seat: int) -> str:
    return f"t-{version}-{seat}"


class Applied(NamedTuple):
    """An action's answer (a NamedTuple: made once per move, cheaper than a frozen dataclass)."""

    response: rules_pb2.ApplyMoveResponse
    deadline: float | None  # the next turn deadline (seconds since the epoch), None when over
    # The rules service's message of that deadline, when it is the one: answers copy it as is
    # (no float round trip, no Python conversion per move).
    stamp: timestamp_pb2.Timestamp | None = None


CORRESPONDENCE_S = CORRESPONDENCE_MS / 1000.0


class FollowUp(Protocol):
    """What follows an action in a correspondence game, and a due deadline's last word."""

    async def after_action(
        self, meta: GameMeta, request: rules_pb2.ApplyMoveRequest, status: games_pb2.GameStatus
    ) -> None: ...

    async def postpone(self, meta: GameMeta, due: Due) -> bool:
        """Whether the due turn's deadline moved on (a vacation) instead of running out."""
        ...


class Actions:
    def __init__(self, directory: GameDirectory, router: RulesRouter, clocks: Clocks, records: Records) -> None:
        self.directory = directory
        self.router = router
        self.clocks = clocks
        self.records = records
        # Correspondence games' follow-up (gateway/correspondence.py), set by the composition root.
        self.correspondence: FollowUp | None = None

    def apply(
        self,
        meta: GameMeta,
        seat: int,
        *,
        expected_version: int,
        request_id: str,
        move: games_pb2.GameMove | None = None,
        resign: bool = False,
        time_out: bool = False,
        draw_agreed: bool = False,
        abort: bool = False,
        take_back_to: int | None = None,
        timeout_s: float | None = None,
        shielded: bool = True,
    ) -> Awaitable[Applied]:
        """Apply one action and settle what follows (await the result): a move, or one of the
        others (rules.proto: resign, time_out, draw_agreed, abort, take_back_to a version, the last
        three once the caller checked the players agreed). A draw or an abort ends the game as a
        last move does: record, live lists, ratings (an aborted game changes none); a take-back
        arms the clock for the position it returns to. `shielded=False` is for callers whose task
        is never cancelled mid-action (the Play stream's action tasks): it saves a task per move.
        Not a coroutine itself: the caller awaits _apply's directly, one coroutine and frame
        fewer per move."""
        request = rules_pb2.ApplyMoveRequest(
            game_id=meta.game_id, seat=seat, expected_version=expected_version, request_id=request_id
        )
        # The rules service arms the turn clock in the same write as the action, and keeps the
        # game's metadata alive with it (the one key it accepts in keep_alive).
        clock = request.turn_clock
        per_move_ms = clock.per_move_ms = max(1, round(meta.per_move_s * 1000))
        clock.ttl_s = self.clocks.ttl_s if per_move_ms < CORRESPONDENCE_MS else self.clocks.ttl_for(per_move_ms)
        clock.keep_alive.append(meta.key)
        if move is not None:
            request.move.CopyFrom(move)
        elif resign:
            request.resignation.SetInParent()
        elif time_out:
            request.timeout.SetInParent()
        elif draw_agreed:
            request.draw_agreed.SetInParent()
        elif abort:
            request.abort.SetInParent()
        elif take_back_to is not None:
            request.take_back.to_version = take_back_to
        # Once sent, the action and what follows from it run to the end even if the caller goes
        # away (a client that disconnects must not leave a game without its next deadline).
        if not shielded:
            return self._apply(meta, request, timeout_s)
        return asyncio.shield(self._apply(meta, request, timeout_s))

    async def forfeit(self, game_id: str, player_id: str, prefix: str) -> None:
        """Resign every seat the player holds in a game still running (a withdrawal from a
        tournament, a suspension). Request ids `<prefix>-<seat>`: a retry is answered, not applied
        twice. A game already over, or gone, is left as it is."""
        try:
            meta = await self.directory.meta(game_id)
        except Refused:
            return
        for seat in meta.seats_of(player_id):
            for _ in range(3):
                try:
                    view = await self.router.get_view(meta.game, rules_pb2.GetViewRequest(game_id=game_id))
                    if view.status.over:
                        return
                    await self.apply(
                        meta, seat, expected_version=view.status.version, request_id=f"{prefix}-{seat}", resign=True
                    )
                    break
                except Refused as refused:
                    if refused.code != grpc.StatusCode.ABORTED:  # ABORTED: the game moved on; again
                        log.info("forfeit refused", extra={"game_id": game_id, "reason": refused.reason})
                        break

    async def _apply(self, meta: GameMeta, request: rules_pb2.ApplyMoveRequest, timeout_s: float | None) -> Applied:
        response = await self.router.apply(meta.game, request, timeout_s=timeout_s)
        if not response.clock_armed:  # a replayed answer: arm again (idempotent)
            settled = await self.settle(meta, response.status)
            if self.correspondence is not None and meta.per_move_s >= CORRESPONDENCE_S:
                await self.correspondence.after_action(meta, request, response.status)
            if response.HasField("turn_deadline") and not response.status.over:
                # The deadline kept with the first answer: the clock holds only the current
                # version's, so a retry after the game moved on would otherwise get none.
                return Applied(response, response.turn_deadline.ToMilliseconds() / 1000.0, response.turn_deadline)
            return Applied(response, settled)
        stamp = response.turn_deadline if response.HasField("turn_deadline") else None
        # (ToMilliseconds checks the range in Python on every call: the rules service wrote it)
        deadline = stamp.seconds * 1000 + stamp.nanos // 1_000_000 if stamp is not None else 0
        self.clocks.armed(deadline)
        if response.status.over:
            await self.end(meta, response.status)
        if self.correspondence is not None and meta.per_move_s >= CORRESPONDENCE_S:
            # Its notices, warnings and a vacation's standing clock (slow games only: the real-time
            # move path does not come here).
            await self.correspondence.after_action(meta, request, response.status)
        return Applied(response, deadline / 1000.0, stamp) if deadline > 0 else Applied(response, None)

    async def settle(self, meta: GameMeta, status: games_pb2.GameStatus) -> float | None:
        """Arm the next deadline, or record the end. Idempotent (a replayed answer settles again).
        The clock first: at the end it arms the finalise deadline that `end` then removes."""
        deadline = await self.clocks.arm(meta.game_id, status, meta.per_move_s)
        if status.over:
            await self.end(meta, status)
        return deadline

    async def end(self, meta: GameMeta, status: games_pb2.GameStatus) -> None:
        """The game's record, then it leaves the live lists, then its finalise deadline goes (left
        there, it has a sweeper do all this if this process dies first); a Redis write that fails
        is tried again."""

        async def once() -> None:
            # One round trip on one Redis, in this order (Records.write says why that is safe).
            finish = (self.directory.finish_commands(meta), [self.clocks.finish_command(meta.game_id, status.version)])
            await self.records.write(meta, status.outcome, then=finish)

        await retrying(once, on=(RedisError,), attempts=_END_ATTEMPTS, backoff=_END_BACKOFF)

    async def on_due(self, due: Due) -> bool:
        """A turn deadline passed: time out the first seat still to act at that version."""
        try:
            meta = await self.directory.meta(due.game_id)
        except Refused as refused:
            return bool(refused.code == grpc.StatusCode.NOT_FOUND)  # the game is gone: nothing to do
        if not due.seats:  # an ended game's finalise deadline: the process that ended it died first
            return await self.finish_ended(meta)
        seat = due.seats[0]
        if self.correspondence is not None and meta.per_move_s >= CORRESPONDENCE_S:
            if await self.correspondence.postpone(meta, due):
                return True
        try:
            rid = timeout_request_id(due.version, seat)
            await self.apply(meta, seat, expected_version=due.version, request_id=rid, time_out=True)
            log.info("turn timed out", extra={"game_id": due.game_id, "seat": seat, "version": due.version})
            return True
        except Refused as refused:
            if refused.code == grpc.StatusCode.UNAVAILABLE:
                return False  # keep the claim; it is taken again when its lease ends
            if refused.code == grpc.StatusCode.NOT_FOUND:
                return True
            # Stale (ABORTED) or over (FAILED_PRECONDITION): make sure the game's state is settled,
            # in case the process that applied its last action died before doing so.
            await self.recover(meta)
            return True

    async def finish_ended(self, meta: GameMeta) -> bool:
        """Write an ended game's record and take it off the live lists (all idempotent); False to
        try again later (the rules service or Redis is down)."""
        try:
            view = await self.router.get_view(meta.game, rules_pb2.GetViewRequest(game_id=meta.game_id))
        except Refused as refused:
            return bool(refused.code != grpc.StatusCode.UNAVAILABLE)
        if view.status.over:
            await self.end(meta, view.status)
            log.info("ended game finished by the sweeper", extra={"game_id": meta.game_id})
        return True

    async def recover(self, meta: GameMeta) -> None:
        try:
            view = await self.router.get_view(meta.game, rules_pb2.GetViewRequest(game_id=meta.game_id))
        except Refused:
            return
        if view.status.over and await self.records.exists(meta.game_id):
            await self.directory.finish(meta)
            await self.clocks.finish(meta.game_id, view.status.version)
            return
        await self.settle(meta, view.status)
