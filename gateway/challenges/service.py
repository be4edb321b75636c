"""ChallengeService and the sweep that expires challenges nobody answered.

A challenge to a player by name (an account), to anyone (open, listed in the lobby), or to a bot by
level. Creating checks what starting would (the game, its options for two seats, the time control),
so an accepted challenge starts its game; the game's id is derived from the challenge's, so an
acceptance retried after a failure starts the same game, never a second one. Every change of a
challenge reaches both players' event streams (gateway/events).

A bot takes every challenge: the challenge is accepted as it is made, with the code of the private
room that seats the challenger and asks a bot pool for the bot (`bot_game`, gateway/challenges/
bots.py); the game starts when the bot sits down, announced like any room's game. Made by a retry
whose first try failed before the room existed, the room is made then (a claim, as an acceptance
takes, keeps two retries from making two rooms)."""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
from redis.exceptions import RedisError
from tafel.play.v1 import challenges_pb2, challenges_pb2_grpc, notices_pb2

from gateway.auth import Authenticator, Identity
from gateway.bot_requests import check_level
from gateway.challenges.store import (
    ACCEPTED,
    CANCELLED,
    DECLINED,
    EXPIRED,
    PENDING,
    STARTING,
    STATUS,
    ChallengeStore,
    new_challenge_id,
    not_found,
    parties,
)
from gateway.events.feed import AccountEvents
from gateway.games import GameDirectory
from gateway.lobby import LobbySettings, canonical_options, check_game, per_move_ms
from gateway.notices.inbox import Inbox, notice_id
from gateway.rules import RulesRouter
from gateway.standing.store import StandingStore
from gateway.timecontrol import time_control_of
from kit.errors import Refused, invalid, refusing
from kit.ids import check_id
from kit.loops import is_outage
from kit.tasks import spawn

log = logging.getLogger("tafel.gateway.challenges")
UNAVAILABLE = "the challenges' storage is unavailable; retry"
DEFAULT_EXPIRY_S, OPEN_EXPIRY_S = 300, 1800
MIN_EXPIRY_S, MAX_EXPIRY_S = 10, 86_400
SWEEP_S = 1.0


def not_pending() -> Refused:
    return Refused(
        grpc.StatusCode.FAILED_PRECONDITION, "CHALLENGE_NOT_PENDING", "the challenge was answered, cancelled or expired"
    )


def pair_of(challenge: challenges_pb2.Challenge) -> tuple[str, str] | None:
    """The two players whose one pending challenge this is (none for open and bot challenges)."""
    if challenge.open or challenge.bot_level:
        return None
    return challenge.challenger.player_id, challenge.challenged.player_id


async def conclude(
    store: ChallengeStore, events: AccountEvents, expected: str, status: str, challenge: challenges_pb2.Challenge
) -> bool:
    """Move the challenge from `expected` to `status` (a compare-and-set: of two racing answers one
    wins), take it out of the pending lists and tell both players; False when it was not in
    `expected` (nothing told)."""
    if await store.move(expected, status, challenge) != 1:
        return False
    await store.settled(challenge, pair_of(challenge))
    await events.append(parties(challenge), challenges_pb2.AccountEvent(challenge=challenge))
    return True


def game_id_of(challenge_id: str) -> str:
    return f"ch-{challenge_id}"


class ChallengeServicer(challenges_pb2_grpc.ChallengeServiceServicer):
    def __init__(
        self,
        auth: Authenticator,
        store: ChallengeStore,
        standing: StandingStore,
        events: AccountEvents,
        directory: GameDirectory,
        router: RulesRouter,
        settings: LobbySettings,
        bot_game: Callable[[Identity, challenges_pb2.Challenge], Awaitable[str]] | None = None,
        may_challenge: Callable[[str, str], Awaitable[bool]] | None = None,
        inbox: Inbox | None = None,
    ) -> None:
        self.auth = auth
        self.store = store
        self.standing = standing
        self.events = events
        self.directory = directory
        self.router = router
        self.settings = settings
        # Seats the challenger in a room a bot is asked to (gateway/challenges/bots.py), answering
        # the room's code. None: this gateway offers no bots (NO_BOTS).
        self.bot_game = bot_game
        # (challenger, challenged) -> whether the challenged player's ChallengePolicy takes it
        # (gateway/people); None: everyone may.
        self.may_challenge = may_challenge
        self.inbox = inbox  # the challenged player's CHALLENGE_RECEIVED (gateway/notices)

    async def _tell(self, challenge: challenges_pb2.Challenge) -> None:
        await self.events.append(parties(challenge), challenges_pb2.AccountEvent(challenge=challenge))

    async def _notice(self, challenge: challenges_pb2.Challenge) -> None:
        """A pending challenge to a player: a notice in their inbox (once per challenge, so a retried
        request completes a notice a failure left unmade)."""
        pending = challenge.status == challenges_pb2.CHALLENGE_STATUS_PENDING
        if self.inbox is None or not challenge.challenged.player_id or not pending:
            return
        note = notices_pb2.Notification(
            notification_id=notice_id("challenge", challenge.challenge_id),
            kind=notices_pb2.NOTIFICATION_KIND_CHALLENGE_RECEIVED,
            challenge_id=challenge.challenge_id,
            game=challenge.game,
            player=challenge.challenger,
        )
        note.at.CopyFrom(challenge.created_at)
        await self.inbox.notify(challenge.challenged.player_id, note)

    # -- making one --------------------------------------------------------------------------------

    @refusing(UNAVAILABLE)
    async def CreateChallenge(
        self, request: challenges_pb2.CreateChallengeRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> challenges_pb2.CreateChallengeResponse:
        me = self.auth.identity(context.invocation_metadata())
        check_id("request_id", request.request_id)
        earlier = await self.store.earlier(me.player_id, request.request_id)
        if earlier is not None:
            return challenges_pb2.CreateChallengeResponse(challenge=await self._again(me, earlier))
        targets = [bool(request.username), bool(request.bot_level), request.open]
        if sum(targets) != 1:
            raise invalid("BAD_CHALLENGE", "name exactly one of a username, a bot level or open")
        if request.rated and me.guest:
            raise Refused(
                grpc.StatusCode.FAILED_PRECONDITION,
                "RATED_NEEDS_ACCOUNT",
                "guests play casual games; register to play rated",
            )
        if request.rated and request.bot_level:
            raise invalid("BAD_CHALLENGE", "games against bots are casual", field="rated")
        if request.bot_level:
            check_level(request.bot_level)
            if self.bot_game is None:
                raise Refused(grpc.StatusCode.UNAVAILABLE, "NO_BOTS", "no bot serves this platform now; retry later")
        check_game(self.router, request.game)
        description = await self.router.describe(request.game)
        if not description.min_seats <= 2 <= description.max_seats:
            raise invalid("BAD_CHALLENGE", "a challenge is for a game of two", field="game")
        options = canonical_options(request.game, request.options, description, most_seats=2)
        per_move = per_move_ms(self.settings, request.time_control)
        expiry_s = float(OPEN_EXPIRY_S if request.open else DEFAULT_EXPIRY_S)
        if request.HasField("expires_in"):
            expiry_s = request.expires_in.ToTimedelta().total_seconds()
            if not MIN_EXPIRY_S <= expiry_s <= MAX_EXPIRY_S:
                raise invalid("BAD_EXPIRY", "a challenge waits 10 seconds to 24 hours", field="expires_in")
        now_ms = int(time.time() * 1000)
        challenge = challenges_pb2.Challenge(
            challenge_id=new_challenge_id(),
            challenger=me.player(),
            bot_level=request.bot_level,
            game=request.game,
            options=options,
            rated=request.rated,
            seat_preference=request.seat_preference,
            status=challenges_pb2.CHALLENGE_STATUS_PENDING,
            open=request.open,
        )
        challenge.time_control.CopyFrom(time_control_of(per_move))
        challenge.created_at.FromMilliseconds(now_ms)
        challenge.expires_at.FromMilliseconds(now_ms + int(expiry_s * 1000))
        if request.username:
            target = await self.standing.account(request.username.strip())
            if target is None:
                raise Refused(
                    grpc.StatusCode.NOT_FOUND,
                    "PLAYER_NOT_FOUND",
                    f"there is no player called {request.username} (a guest has no name to challenge:"
                    " make an open challenge or invite them to a room)",
                )
            barred = target.player_id in await self.standing.avoided(me.player_id)
            if not barred and target.player_id != me.player_id and self.may_challenge is not None:
                barred = not await self.may_challenge(me.player_id, target.player_id)
            if barred:  # a block or the player's policy: one answer, so neither is revealed
                raise Refused(
                    grpc.StatusCode.PERMISSION_DENIED,
                    "CHALLENGE_NOT_ALLOWED",
                    f"{request.username} takes no challenge from you",
                )
            if target.player_id == me.player_id:
                raise invalid("SELF_NOT_ALLOWED", "you cannot challenge yourself", field="username")
            challenge.challenged.CopyFrom(target.player())
            if not await self.store.claim_pair(
                me.player_id, target.player_id, challenge.challenge_id, int(expiry_s * 1000)
            ):
                raise Refused(
                    grpc.StatusCode.ALREADY_EXISTS,
                    "CHALLENGE_PENDING",
                    f"a challenge between you and {target.username} waits already",
                )
        if not await self.store.create(challenge, request.request_id):
            earlier = await self.store.earlier(me.player_id, request.request_id)
            return challenges_pb2.CreateChallengeResponse(challenge=await self._again(me, earlier or ""))
        if request.bot_level:
            return challenges_pb2.CreateChallengeResponse(challenge=await self._bot_takes(me, challenge))
        await self._tell(challenge)
        await self._notice(challenge)
        return challenges_pb2.CreateChallengeResponse(challenge=challenge)

    async def _again(self, me: Identity, challenge_id: str) -> challenges_pb2.Challenge:
        """A CreateChallenge retried: the first one's challenge, a bot's room made now if the first
        try failed before it (a challenge to a bot never waits for an answer)."""
        status, challenge = await self.store.load(challenge_id)
        if status == PENDING and challenge.bot_level and self.bot_game is not None:
            return await self._bot_takes(me, challenge)
        if status == PENDING:
            await self._notice(challenge)
        return challenge

    async def _bot_takes(self, me: Identity, challenge: challenges_pb2.Challenge) -> challenges_pb2.Challenge:
        assert self.bot_game is not None
        if await self.store.move(PENDING, STARTING, challenge) != 1:
            return (await self.store.load(challenge.challenge_id))[1]  # another try took it
        try:
            room_code = await self.bot_game(me, challenge)
        except BaseException:
            await self.store.move(STARTING, PENDING, challenge)  # no room: a retry makes it
            raise
        taken = challenges_pb2.Challenge()
        taken.CopyFrom(challenge)
        taken.status = challenges_pb2.CHALLENGE_STATUS_ACCEPTED
        taken.room_code = room_code
        await conclude(self.store, self.events, STARTING, ACCEPTED, taken)
        return taken

    # -- answering ---------------------------------------------------------------------------------

    @refusing(UNAVAILABLE)
    async def AcceptChallenge(
        self, request: challenges_pb2.AcceptChallengeRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> challenges_pb2.AcceptChallengeResponse:
        me = self.auth.identity(context.invocation_metadata())
        status, challenge = await self.store.load(request.challenge_id)
        if status == ACCEPTED and self._is_taker(challenge, me):
            return challenges_pb2.AcceptChallengeResponse(challenge=challenge)  # a retry
        if challenge.open:
            if challenge.challenger.player_id == me.player_id:
                raise Refused(
                    grpc.StatusCode.PERMISSION_DENIED, "NOT_CHALLENGED", "this is your own challenge: wait for a taker"
                )
            if challenge.challenger.player_id in await self.standing.avoided(me.player_id):
                raise not_found()
        elif challenge.challenged.player_id != me.player_id:
            raise Refused(grpc.StatusCode.PERMISSION_DENIED, "NOT_CHALLENGED", "this challenge is not to you")
        if status != PENDING:
            raise not_pending()
        if challenge.rated and me.guest:
            raise Refused(
                grpc.StatusCode.FAILED_PRECONDITION,
                "RATED_NEEDS_ACCOUNT",
                "guests play casual games; register to play rated",
            )
        taking = challenges_pb2.Challenge()
        taking.CopyFrom(challenge)
        if challenge.open:
            taking.challenged.CopyFrom(me.player())
        if await self.store.move(PENDING, STARTING, taking) != 1:
            raise not_pending()
        try:
            game_id = await self._start(taking)
        except BaseException:
            await self.store.move(STARTING, PENDING, challenge)  # not started: it waits again
            raise
        taking.status = challenges_pb2.CHALLENGE_STATUS_ACCEPTED
        taking.game_id = game_id
        if taking.open:
            await self.store.add_taker(taking)
        await conclude(self.store, self.events, STARTING, ACCEPTED, taking)
        return challenges_pb2.AcceptChallengeResponse(challenge=taking)

    @staticmethod
    def _is_taker(challenge: challenges_pb2.Challenge, me: Identity) -> bool:
        return challenge.challenged.player_id == me.player_id

    async def _start(self, challenge: challenges_pb2.Challenge) -> str:
        challenger, challenged = challenge.challenger, challenge.challenged
        first = {
            challenges_pb2.SEAT_PREFERENCE_FIRST: True,
            challenges_pb2.SEAT_PREFERENCE_SECOND: False,
        }.get(challenge.seat_preference, random.random() < 0.5)
        players = [challenger, challenged] if first else [challenged, challenger]
        return await self.directory.start_game(
            game=challenge.game,
            options=challenge.options,
            players=players,
            per_move_s=challenge.time_control.per_move.ToMilliseconds() / 1000.0,
            rated=challenge.rated,
            origin=f"challenge:{challenge.challenge_id}",
            game_id=game_id_of(challenge.challenge_id),
        )

    async def _end(
        self,
        challenge_id: str,
        me: Identity,
        status: str,
        check: Callable[[challenges_pb2.Challenge], None],
        reason: int = 0,
    ) -> challenges_pb2.Challenge:
        now, challenge = await self.store.load(challenge_id)
        check(challenge)
        if now != PENDING:
            raise not_pending()
        ended = challenges_pb2.Challenge()
        ended.CopyFrom(challenge)
        ended.status = STATUS[status]
        ended.decline_reason = reason  # type: ignore[assignment]
        if not await conclude(self.store, self.events, PENDING, status, ended):
            raise not_pending()
        return ended

    @refusing(UNAVAILABLE)
    async def DeclineChallenge(
        self, request: challenges_pb2.DeclineChallengeRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> challenges_pb2.DeclineChallengeResponse:
        me = self.auth.identity(context.invocation_metadata())
        if request.reason == 0 or request.reason not in challenges_pb2.DeclineReason.values():
            raise invalid("BAD_DECLINE_REASON", "choose a reason from the list", field="reason")

        def mine(challenge: challenges_pb2.Challenge) -> None:
            if challenge.open or challenge.challenged.player_id != me.player_id:
                raise Refused(grpc.StatusCode.PERMISSION_DENIED, "NOT_CHALLENGED", "this challenge is not to you")

        ended = await self._end(request.challenge_id, me, DECLINED, mine, request.reason)
        return challenges_pb2.DeclineChallengeResponse(challenge=ended)

    @refusing(UNAVAILABLE)
    async def CancelChallenge(
        self, request: challenges_pb2.CancelChallengeRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> challenges_pb2.CancelChallengeResponse:
        me = self.auth.identity(context.invocation_metadata())

        def mine(challenge: challenges_pb2.Challenge) -> None:
            if challenge.challenger.player_id != me.player_id:
                raise Refused(
                    grpc.StatusCode.PERMISSION_DENIED, "NOT_CHALLENGER", "only who made the challenge may cancel it"
                )

        ended = await self._end(request.challenge_id, me, CANCELLED, mine)
        return challenges_pb2.CancelChallengeResponse(challenge=ended)

    # -- reading -----------------------------------------------------------------------------------

    @refusing(UNAVAILABLE)
    async def GetChallenge(
        self, request: challenges_pb2.GetChallengeRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> challenges_pb2.GetChallengeResponse:
        me = self.auth.identity(context.invocation_metadata())
        _, challenge = await self.store.load(request.challenge_id)
        if not challenge.open and me.player_id not in parties(challenge):
            raise not_found()
        return challenges_pb2.GetChallengeResponse(challenge=challenge)

    @refusing(UNAVAILABLE)
    async def ListChallenges(
        self, request: challenges_pb2.ListChallengesRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> challenges_pb2.ListChallengesResponse:
        me = self.auth.identity(context.invocation_metadata())
        out = challenges_pb2.ListChallengesResponse()
        for challenge in await self.store.pending_of(me.player_id):
            side = out.outgoing if challenge.challenger.player_id == me.player_id else out.incoming
            side.append(challenge)
        return out

    @refusing(UNAVAILABLE)
    async def ListOpenChallenges(
        self, request: challenges_pb2.ListOpenChallengesRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> challenges_pb2.ListOpenChallengesResponse:
        me = self.auth.identity(context.invocation_metadata())
        if request.game:
            check_game(self.router, request.game)
        avoided = await self.standing.avoided(me.player_id)
        found = [
            c
            for c in await self.store.open()
            if (not request.game or c.game == request.game) and c.challenger.player_id not in avoided
        ]
        return challenges_pb2.ListOpenChallengesResponse(challenges=found)


class ChallengeSweeper:
    """Expires pending challenges past their time (every gateway sweeps; the compare-and-set of
    each expiry lets one win and tell the players)."""

    def __init__(self, store: ChallengeStore, events: AccountEvents, every_s: float = SWEEP_S) -> None:
        self.store = store
        self.events = events
        self.every_s = every_s
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = spawn(self._run(), "challenge sweeper", log=log)

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass

    async def sweep_once(self, now_ms: int | None = None) -> int:
        now = int(time.time() * 1000) if now_ms is None else now_ms
        expired = 0
        for cid in await self.store.due(now):
            try:
                status, challenge = await self.store.load(cid)
            except Refused:  # gone already
                await self.store.settled(challenges_pb2.Challenge(challenge_id=cid), None)
                continue
            if status != PENDING:
                if status != STARTING:
                    await self.store.settled(challenge, None)
                continue
            ended = challenges_pb2.Challenge()
            ended.CopyFrom(challenge)
            ended.status = challenges_pb2.CHALLENGE_STATUS_EXPIRED
            if await conclude(self.store, self.events, PENDING, EXPIRED, ended):
                expired += 1
        return expired

    async def _run(self) -> None:
        while True:
            try:
                await self.sweep_once()
            except RedisError as error:
                if not is_outage(error):
                    raise
                log.warning("cannot sweep challenges now; retrying")
            await asyncio.sleep(self.every_s)
