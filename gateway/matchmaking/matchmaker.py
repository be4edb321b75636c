"""The process side of matchmaking: per-bucket workers and the waiting streams.

Takes tickets for this process's searches (FindMatch calls and Play-stream searches), pairs their
buckets every tick (and a new ticket's bucket in the script that queues it), starts the games this
process paired, and tells each waiting stream its game id and seat. One search per player per
game (claims.py) is checked before a ticket is taken.

A correspondence search (a day or more a move) outlives its stream: a stream that ends without
StopFinding (a lost connection, a closed page, a stopping gateway) parks its ticket (park.lua:
queued, unowned, its lease and claim set to its hard expiry, a week after it queued) instead of
withdrawing it. The next search in its bucket, on any gateway, pairs with it and starts the game
(its players learn it from GameStarted on their event streams); the player's next search for it
takes it over; CancelSearch withdraws it; searches.py lists it. A real-time search leaves the queue
with its stream, as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
from redis.exceptions import RedisError
from tafel.play.v1 import play_pb2

from gateway.games import Followup
from gateway.matchmaking.claims import SearchClaims, claim_token
from gateway.matchmaking.model import BucketSpec, Leaving, MatchDetails, Taken, TicketStatus, new_ticket_id
from gateway.matchmaking.ports import GameStarter, RatingSource
from gateway.matchmaking.queue import (
    MAX_MATCHES_PER_PAIRING,
    PAIRED,
    PARKED,
    TAKEN_OVER,
    WITHDRAWN,
    MatchQueue,
)
from gateway.matchmaking.ratings_source import DEFAULT_RATING
from gateway.matchmaking.searches import WaitingSearches
from gateway.settings import MatchmakingSettings
from gateway.timecontrol import is_correspondence, time_control_of
from kit import timesource
from kit.errors import Refused
from kit.loops import is_outage
from kit.redis.keys import MATCHED_CHANNEL, clock_key
from kit.redis.layer import RedisLayer
from kit.redis.pubsub import PubSub, Subscription
from kit.redis.replies import text
from kit.redis.scripts import script
from kit.retry import Attempts, Backoff, retrying
from kit.tasks import supervise

log = logging.getLogger("tafel.gateway.matchmaking")

_FINAL_REFUSALS = (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.FAILED_PRECONDITION)
_WITHDRAW_BACKOFF = Backoff(first_s=0.2, cap_s=1.0)
# A matched game's creation is tried 4 times, 0.25 s, 0.5 s, 1 s, 2 s apart (the waiters on any
# replica start it themselves after start_grace_s if all of them fail).
_START_BACKOFF = Backoff(first_s=0.25, cap_s=2.0)


@dataclass
class _Waiter:
    ticket_id: str
    player_id: str
    enqueued_ms: int
    owner: str = ""  # this stream, as the ticket's holder (a search taking the ticket over names another)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    status: TicketStatus = field(default_factory=lambda: TicketStatus("queued"))
    matched_at: float | None = None  # monotonic time this process first saw it paired
    details: MatchDetails | None = None  # set when this process started the match itself
    released: bool = False  # that start released this search's claim already
    told: bool = False  # that start marked the player told (bucket.lua told) already
    gone: asyncio.Event = field(default_factory=asyncio.Event)  # its search ended, ticket withdrawn
    # Its search came to an end of its own (started, expired, refused): only the claim is left.
    settled: bool = False


@dataclass
class _Bucket:
    spec: BucketSpec
    waiters: dict[str, _Waiter] = field(default_factory=dict)
    poke: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    renew_now: bool = True  # renew the leases (and learn statuses) on the next pass
    renewed_at: float = 0.0  # monotonic
    # When the renewal last read the waiters' block lists again (each was read as it queued).
    blocks_read_at: float = field(default_factory=time.monotonic)


class Matchmaker:
    """This process's searches; any number of processes share the queues in Redis."""

    def __init__(
        self,
        layer: RedisLayer,
        pubsub: PubSub,
        starter: GameStarter,
        ratings: RatingSource,
        settings: MatchmakingSettings,
        *,
        clock: Callable[[], float] = timesource.now_s,
    ) -> None:
        self.queue = MatchQueue(layer, settings)
        self.claims = SearchClaims(layer, settings.lease_ms)
        self.searches = WaitingSearches(layer)
        self.pubsub = pubsub
        self.starter = starter
        self.ratings = ratings
        self.settings = settings
        self.clock = clock
        self._buckets: dict[str, _Bucket] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._starting: set[str] = set()
        # A match this process started for a search whose stream was still registering its waiter
        # (its own enqueue paired it): ticket -> what _wake_started would have set, adopted by find.
        self._early: dict[str, tuple[TicketStatus, MatchDetails, bool, bool]] = {}
        # (game, player) -> the end of a search (its ticket's removal, its claim's release), in flight
        self._withdrawing: dict[tuple[str, str], asyncio.Task[Any]] = {}
        self._closing = False  # the gateway is stopping: waiting searches end
        self._subscription: Subscription | None = None

    def now_ms(self) -> int:
        return int(self.clock() * 1000)

    # -- lifecycle ---------------------------------------------------------------------------

    async def listen(self) -> None:
        """Subscribe to the wake-ups of matches started elsewhere (idempotent). Waiters also learn
        their matches on lease renewal, so a wake-up lost (or a slow confirmation) only delays them."""
        if self._subscription is None:
            self.pubsub.start()
            self._subscription = self.pubsub.subscribe(MATCHED_CHANNEL, self._on_wakeup, on_live=self._on_live)
        with contextlib.suppress(TimeoutError):
            await self._subscription.ready()

    def _on_live(self, again: bool) -> None:
        if again:  # wake-ups may have been lost while reconnecting: every bucket renews now
            for bucket in self._buckets.values():
                bucket.renew_now = True
                bucket.poke.set()

    def _on_wakeup(self, _channel: bytes, payload: bytes) -> None:
        bucket_id, _, tickets = payload.decode(errors="replace").partition("|")
        bucket = self._buckets.get(bucket_id)
        if bucket is None:
            return
        if tickets:
            waiting = [bucket.waiters.get(t) for t in tickets.split(",")]
            if not any(w is not None and not w.status.started for w in waiting):
                return  # none of this match's seats waits here, or they already know
        bucket.renew_now = True
        bucket.poke.set()

    async def close(self) -> None:
        """Stop: every waiting search ends UNAVAILABLE (GATEWAY_STOPPING: search again elsewhere,
        with the same request id) once its ticket has left the queue, then the workers stop."""
        self._closing = True
        if self._subscription is not None:
            self._subscription.cancel()
        waiters = [w for b in self._buckets.values() for w in b.waiters.values()]
        for waiter in waiters:
            waiter.wake.set()
        if waiters:
            ends = [asyncio.ensure_future(w.gone.wait()) for w in waiters]
            await asyncio.wait(ends, timeout=self.settings.update_s + 2.0)
            for end in ends:
                end.cancel()
        tasks = [b.task for b in self._buckets.values() if b.task is not None] + list(self._tasks)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def _spawn(self, coro: Awaitable[Any], name: str) -> asyncio.Task[Any]:
        task: asyncio.Task[Any] = asyncio.ensure_future(coro)
        task.set_name(name)
        supervise(task, name, log=log)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # -- a waiting stream ----------------------------------------------------------------------

    async def find(
        self, spec: BucketSpec, player: play_pb2.Player, request_id: str = "", leaving: Leaving | None = None
    ) -> AsyncGenerator[play_pb2.FindMatchResponse, None]:
        """Queue `player` and stream MatchQueued updates, then MatchFound. Raises Refused
        (ALREADY_EXISTS if the player searches for this game with other settings, DEADLINE_EXCEEDED when the
        ticket expired). Closing the generator early (a cancelled call) removes the ticket. A search
        sent again (the same request id), or any other search of the player in this bucket, takes
        over the ticket (also one paired into a match the player was not told of: this search
        answers with it); the search that held it ends ABORTED/SEARCH_TAKEN_OVER, here at once,
        on another process at its next renewal. (ALREADY_QUEUED is left for a search of the game
        in another bucket.) A correspondence search whose stream ends otherwise than by
        `leaving.withdraw` stays queued (parked, see the module's docstring)."""
        if self._closing:
            raise Refused(grpc.StatusCode.UNAVAILABLE, "GATEWAY_STOPPING", "this gateway is stopping; search elsewhere")
        if spec.max_seats <= 1:
            async for message in self._solo(spec, player):
                yield message
            return
        await self._previous_search_ended(spec, player.player_id)
        taken, owner = await self._enqueue(spec, player, request_id)
        bucket, waiter = self._wait_here(spec, taken, player.player_id, owner)
        slow = is_correspondence(spec.per_move_ms)
        try:
            if slow:  # listed for ListMySearches (a real-time search is listed nowhere: no write)
                await self._note(spec, request_id, waiter)
            yield self._queued(waiter)
            while True:
                if not await self._news(waiter):
                    yield self._queued(waiter)  # how long it waited, its rating window now
                    continue
                found = await self._outcome(spec, waiter)
                if found is not None:
                    yield found
                    return
        finally:
            await self._leave(
                spec, player, bucket, waiter, park=slow and not (leaving is not None and leaving.withdraw)
            )

    async def _previous_search_ended(self, spec: BucketSpec, player_id: str) -> None:
        """The player's previous search for the game may still be ending here (its ticket leaving
        the queue): a new one waits for that, so it cannot race its own old ticket."""
        withdrawing = self._withdrawing.get((spec.game, player_id))
        if withdrawing is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(withdrawing)

    async def _enqueue(self, spec: BucketSpec, player: play_pb2.Player, request_id: str) -> tuple[Taken, str]:
        """Claim the game and queue a ticket (or take the player's waiting one over): what was taken
        and this stream's owner token. Refuses ALREADY_QUEUED when a search in another bucket of
        the game holds the claim."""
        # A guest is never rated (a game with a guest is unrated, and only rated games write
        # ratings), so its rating is the default: no lookup, a round trip fewer a guest's search.
        rating = DEFAULT_RATING if player.guest else await self.ratings.rating(player.player_id, spec.game)
        ticket_id = new_ticket_id()
        owner = new_ticket_id()  # this stream, as the holder of the ticket
        enqueue = asyncio.ensure_future(self._take(spec, player, ticket_id, rating, self.now_ms(), request_id, owner))
        try:
            taken = await asyncio.shield(enqueue)
        except asyncio.CancelledError:
            # Withdrawn while the ticket was being written: take it out once it is in.
            self._withdraw(spec, player, ticket_id, self._withdraw_after(enqueue, spec, player.player_id, owner))
            raise
        if not taken.queued:
            self._early.pop(ticket_id, None)
            raise Refused(
                grpc.StatusCode.ALREADY_EXISTS,
                "ALREADY_QUEUED",
                "you already search for a match of this game; stop that search first",
                metadata={"ticket_id": taken.ticket_id},
            )
        return taken, owner

    def _wait_here(self, spec: BucketSpec, taken: Taken, player_id: str, owner: str) -> tuple[_Bucket, _Waiter]:
        """The ticket's waiter in its bucket's worker: it replaces a search of this process that held
        the ticket before (that one ends taken over), adopts a match this process started while
        the ticket was being queued, and has the worker pair or renew at once where the enqueue
        left work."""
        waiter = _Waiter(taken.ticket_id, player_id, taken.enqueued_ms, owner)
        bucket = self._bucket(spec)
        replaced = bucket.waiters.get(waiter.ticket_id)
        if replaced is not None:
            replaced.status = TicketStatus("taken_over")
            replaced.wake.set()
        bucket.waiters[waiter.ticket_id] = waiter
        early = self._early.pop(waiter.ticket_id, None)
        if early is not None:  # its own enqueue paired it and this process started the match already
            waiter.status, waiter.details, waiter.released, waiter.told = early
            waiter.wake.set()
        if taken.resumed:
            bucket.renew_now = True  # it may have been paired meanwhile: learn that on this pass
            bucket.poke.set()
        elif len(taken.matches) >= MAX_MATCHES_PER_PAIRING:
            bucket.poke.set()  # the enqueue's pairing stopped at its limit: pair the rest now
        return bucket, waiter

    async def _news(self, waiter: _Waiter) -> bool:
        """Whether the worker changed the waiter's status within an update's interval."""
        try:
            # (asyncio.timeout, not wait_for: 3.11's wait_for runs the wait in a task of its own)
            async with asyncio.timeout(self.settings.update_s):
                await waiter.wake.wait()
        except TimeoutError:
            return False
        waiter.wake.clear()
        return True

    async def _outcome(self, spec: BucketSpec, waiter: _Waiter) -> play_pb2.FindMatchResponse | None:
        """What the waiter's status means for its stream: MatchFound once its game started, a
        refusal that ends the search, or None while it still waits (paired, its game not started
        yet). Marks the search settled where its ticket's own end came (only its claim is left)."""
        status = waiter.status
        if self._closing and not (status.kind == "matched" and status.started):
            raise Refused(
                grpc.StatusCode.UNAVAILABLE,
                "GATEWAY_STOPPING",
                "this gateway is stopping; search again (with the same request id) elsewhere",
            )
        if status.kind == "taken_over":  # its ticket is the newer search's now: left alone
            raise Refused(
                grpc.StatusCode.ABORTED,
                "SEARCH_TAKEN_OVER",
                "a newer search of yours for this game took this one over",
            )
        if status.kind == "failed":  # this bucket's worker cannot pair or renew (a bug)
            raise Refused(grpc.StatusCode.INTERNAL, "INTERNAL", "matchmaking failed; search again")
        if status.kind == "unavailable":
            raise Refused(
                grpc.StatusCode.UNAVAILABLE,
                "STORE_UNAVAILABLE",
                "matchmaking's storage is unavailable; search again (with the same request id)",
            )
        if status.kind == "gone":
            waiter.settled = True
            raise Refused(
                grpc.StatusCode.DEADLINE_EXCEEDED,
                "TICKET_EXPIRED",
                "no match was found in time; ask again",
            )
        if status.kind == "matched" and status.refused:
            waiter.settled = True
            raise Refused(
                grpc.StatusCode.FAILED_PRECONDITION,
                "MATCH_REFUSED",
                "the game's rules service refused these settings for this table; change them",
            )
        if status.kind == "matched" and status.started:
            waiter.settled = True
            details = waiter.details or await self.queue.lookup(spec.bucket_id, status.game_id)
            if not waiter.told:
                # Before the answer leaves: a search sent the moment it arrives must queue
                # afresh, not attach to this match.
                await self._tell(spec, waiter)
            return self._found(waiter.ticket_id, status, details)
        if status.kind == "matched" and waiter.matched_at is not None:
            waited = time.monotonic() - waiter.matched_at
            if waited > self.settings.start_grace_s * 4:
                waiter.settled = True
                raise Refused(
                    grpc.StatusCode.UNAVAILABLE,
                    "MATCH_NOT_STARTED",
                    "a match was found but its game could not be started; ask again",
                )
        return None

    async def _leave(
        self, spec: BucketSpec, player: play_pb2.Player, bucket: _Bucket, waiter: _Waiter, *, park: bool
    ) -> None:
        """The stream's search ends: a settled one releases its claim (unless this process's start
        of its match did that already: a second release was 2 round trips a game); one that ended
        before (cancelled, disconnected, the gateway stopping) withdraws its ticket, or parks it where `park`
        (a correspondence search not withdrawn by its player). In a task of its own, so the
        cancellation of the stream cannot stop it."""
        try:
            if bucket.waiters.get(waiter.ticket_id) is waiter:  # a resent search may hold the ticket now
                del bucket.waiters[waiter.ticket_id]
            if waiter.settled and waiter.released:
                return
            ticket_id, owner = waiter.ticket_id, waiter.owner
            ending: Awaitable[None]
            if waiter.settled:
                ending = self._release(spec, player.player_id, ticket_id)
            elif park and waiter.status.kind != "failed":
                ending = self._park(spec, player.player_id, ticket_id, owner)
            else:
                ending = self._cancel(spec, player.player_id, ticket_id, owner)
            task = self._withdraw(spec, player, ticket_id, ending)
            # The search ends once its ticket has left the queue (a caller that withdraws and
            # searches again must not race its own old ticket); shielded, so a second
            # cancellation cannot stop the removal.
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.shield(task)
        finally:
            waiter.gone.set()

    async def _take(
        self,
        spec: BucketSpec,
        player: play_pb2.Player,
        ticket_id: str,
        rating: float,
        now_ms: int,
        request_id: str,
        owner: str,
    ) -> Taken:
        """Claim the player's search for the game, then queue in the bucket (claims.py says why
        in this order); a claim held for another bucket of the game refuses the search."""
        pid, game, bucket_id = player.player_id, spec.game, spec.bucket_id
        if not self.queue.layer.cluster:
            # One Redis: the claim, the enqueue (paired at once) and the claim's re-pointing in
            # one script (claims.py).
            taken = await self.queue.take(
                bucket_id,
                ticket_id,
                player,
                rating,
                now_ms,
                request_id=request_id,
                owner=owner,
                pairing=spec,
                claim=(self.claims.key(pid, game), self.claims.lease_ms),
            )
            self._start_formed(spec, taken)
            return taken
        mine = claim_token(bucket_id, ticket_id)
        # The player's block lists live in their own slot: read beside the claim (no round trip
        # more), for the bucket's script to keep them from the players they block or are blocked by.
        holder, (avoid,) = await asyncio.gather(self.claims.claim(pid, game, mine), self.queue.avoids([pid]))
        if holder is not None:
            held_bucket, _, held_ticket = holder.partition("|")
            if held_bucket != bucket_id:
                return Taken(held_ticket, queued=False, resumed=False, enqueued_ms=0)
            # This bucket's: its script decides (a take-over, the player's other ticket here, or
            # a claim left by a search that never queued).
        claimed = holder or mine
        try:
            # A new ticket is paired in the same script (the bucket's worker pairs on its ticks,
            # as windows widen): a pairing pass after each enqueue was a round trip a ticket.
            taken = await self.queue.take(
                bucket_id,
                ticket_id,
                player,
                rating,
                now_ms,
                request_id=request_id,
                owner=owner,
                pairing=spec,
                avoid=avoid,
            )
        except Exception:
            if holder is None:
                with contextlib.suppress(Exception):
                    await self.claims.release(pid, game, mine)
            raise
        final = claim_token(bucket_id, taken.ticket_id)
        if final != claimed:
            holder = await self.claims.claim(pid, game, final, replacing=claimed)
            other_bucket, _, other_ticket = (holder or "").partition("|")
            if holder is not None and other_bucket != bucket_id and taken.queued and not taken.resumed:
                # The claim ran out meanwhile and a search in another bucket took it: that one stands.
                await self.queue.withdraw(bucket_id, taken.ticket_id, owner)
                self._start_formed(spec, taken)
                return Taken(other_ticket, queued=False, resumed=False, enqueued_ms=0)
        self._start_formed(spec, taken)
        return taken

    def _start_formed(self, spec: BucketSpec, taken: Taken) -> None:
        """Start what the enqueue's pairing formed, whether or not this search still waits (the
        other seats do); after the claim is final, since a start releases the seats' claims."""
        for match in taken.matches:
            self._start_soon(spec, match.game_id, match.players, match.tickets, searching=taken.ticket_id)

    async def _withdraw_after(
        self, enqueue: asyncio.Future[Taken], spec: BucketSpec, player_id: str, owner: str
    ) -> None:
        with contextlib.suppress(Exception):
            taken = await enqueue
            self._early.pop(taken.ticket_id, None)
            if taken.queued:
                await self._cancel(spec, player_id, taken.ticket_id, owner)

    def _withdraw(
        self, spec: BucketSpec, player: play_pb2.Player, ticket_id: str, removal: Awaitable[Any]
    ) -> asyncio.Task[Any]:
        """Run a search's end in a task of its own; the player's next search for the game waits
        for it (see find)."""
        key = (spec.game, player.player_id)
        task = self._spawn(removal, f"mm-cancel-{ticket_id}")
        self._withdrawing[key] = task

        def done(finished: asyncio.Task[Any]) -> None:
            if self._withdrawing.get(key) is finished:
                del self._withdrawing[key]

        task.add_done_callback(done)
        return task

    async def _cancel(self, spec: BucketSpec, player_id: str, ticket_id: str, owner: str) -> None:
        """Withdraw a ticket and release its claim, unless a resent search holds both now."""

        async def withdraw() -> None:
            if await self.queue.withdraw(spec.bucket_id, ticket_id, owner) != TAKEN_OVER:
                await self.claims.release(player_id, spec.game, claim_token(spec.bucket_id, ticket_id))

        with contextlib.suppress(RedisError):  # the leases (ticket and claim) will drop them
            await retrying(withdraw, on=(RedisError,), attempts=3, backoff=_WITHDRAW_BACKOFF)

    async def _park(self, spec: BucketSpec, player_id: str, ticket_id: str, owner: str) -> None:
        """A correspondence search's stream ended unasked: its ticket and claim stay until its
        hard expiry (unless paired meanwhile, or a newer search holds both)."""
        token = claim_token(spec.bucket_id, ticket_id)

        async def park() -> None:
            now = self.now_ms()
            kind, expiry = await self.queue.park(spec.bucket_id, ticket_id, owner, now, spec.per_move_ms)
            if kind == PARKED:
                await self.claims.refresh(player_id, spec.game, token, ttl_ms=max(1, expiry - now))
            elif kind != TAKEN_OVER:  # paired (the start releases it too) or gone
                await self.claims.release(player_id, spec.game, token)

        with contextlib.suppress(RedisError):  # the leases (ticket and claim) will drop them
            await retrying(park, on=(RedisError,), attempts=3, backoff=_WITHDRAW_BACKOFF)

    async def _note(self, spec: BucketSpec, request_id: str, waiter: _Waiter) -> None:
        search = play_pb2.WaitingSearch(
            game=spec.game,
            options=spec.options,
            time_control=time_control_of(spec.per_move_ms),
            min_seats=spec.min_seats,
            max_seats=spec.max_seats,
            request_id=request_id,
            ticket_id=waiter.ticket_id,
        )
        search.queued_at.FromMilliseconds(waiter.enqueued_ms)
        search.expires_at.FromMilliseconds(waiter.enqueued_ms + self.queue.hold_ms(spec.per_move_ms))
        with contextlib.suppress(RedisError):  # not listed; it waits all the same
            await self.searches.note(waiter.player_id, spec.bucket_id, search)

    # -- the player's waiting searches (LobbyService.ListMySearches, CancelSearch) ---------------

    async def waiting(self, player_id: str) -> list[play_pb2.WaitingSearch]:
        """The player's correspondence searches still waiting, oldest first."""
        return [noted.search for noted in await self.searches.waiting(player_id, self.now_ms())]

    async def cancel_search(self, player_id: str, game: str) -> tuple[bool, str]:
        """Withdraw the player's search for `game`, whoever holds it: (withdrawn, the game id when
        it had been paired already). Idempotent."""
        withdrawing = self._withdrawing.get((game, player_id))
        if withdrawing is not None:  # a stream of it is ending here (parking): after that
            with contextlib.suppress(Exception):
                await asyncio.shield(withdrawing)
        noted = await self.searches.get(player_id, game)
        holder = await self.queue.layer.call("GET", self.claims.key(player_id, game))
        if holder is not None:
            bucket_id, _, ticket_id = text(holder).partition("|")
        elif noted is not None:
            bucket_id, ticket_id = noted.bucket_id, noted.search.ticket_id
        else:
            return False, ""
        kind, game_id = await self.queue.withdraw_search(bucket_id, ticket_id)
        if kind == PAIRED:  # told now: their next search queues afresh instead of answering this game
            await self.queue.told(bucket_id, ticket_id)
        await self.claims.release(player_id, game, claim_token(bucket_id, ticket_id))
        await self.searches.forget(player_id, game, ticket_id)
        expired = noted is not None and noted.search.ticket_id == ticket_id and noted.expires_ms <= self.now_ms()
        return kind == WITHDRAWN and not expired, game_id

    async def _tell(self, spec: BucketSpec, waiter: _Waiter) -> None:
        """The player is told the match of `waiter`'s ticket (the bucket stops offering it to their
        next search); on one Redis its claim goes in the same call."""
        claim = None
        if not self.queue.layer.cluster and not waiter.released:
            claim = (self.claims.key(waiter.player_id, spec.game), claim_token(spec.bucket_id, waiter.ticket_id))
        with contextlib.suppress(RedisError):  # left attachable until the match's result is dropped
            await self.queue.told(spec.bucket_id, waiter.ticket_id, claim)
            waiter.told = True
            waiter.released = waiter.released or claim is not None

    async def _release(self, spec: BucketSpec, player_id: str, ticket_id: str) -> None:
        """A search that ended (paired, expired, refused) frees the game for the player's next one."""
        token = claim_token(spec.bucket_id, ticket_id)
        with contextlib.suppress(RedisError):  # the claim's lease will drop it
            await retrying(
                lambda: self.claims.release(player_id, spec.game, token),
                on=(RedisError,),
                attempts=3,
                backoff=_WITHDRAW_BACKOFF,
            )

    async def _solo(self, spec: BucketSpec, player: play_pb2.Player) -> AsyncIterator[play_pb2.FindMatchResponse]:
        """A one-seat table needs no queue: the game starts at once."""
        ticket_id = new_ticket_id()
        game_id = await self.starter.start_game(
            game=spec.game,
            options=spec.options,
            players=[player],
            per_move_s=spec.per_move_ms / 1000.0,
            rated=False,
            origin="match",
            game_id=f"m-{ticket_id}",
        )
        found = play_pb2.MatchFound(ticket_id=ticket_id, game_id=game_id, seat=0)
        found.players.add(seat=0, player=player)
        yield play_pb2.FindMatchResponse(matched=found)

    def _queued(self, waiter: _Waiter) -> play_pb2.FindMatchResponse:
        waited_s = max(0.0, (self.now_ms() - waiter.enqueued_ms) / 1000.0)
        queued = play_pb2.MatchQueued(ticket_id=waiter.ticket_id, rating_window=self.settings.window(waited_s))
        queued.waited.FromMilliseconds(int(waited_s * 1000))
        return play_pb2.FindMatchResponse(queued=queued)

    @staticmethod
    def _found(ticket_id: str, status: TicketStatus, details: MatchDetails | None) -> play_pb2.FindMatchResponse:
        found = play_pb2.MatchFound(ticket_id=ticket_id, game_id=status.game_id, seat=status.seat)
        if details is not None:
            for seat, player in enumerate(details.players):
                found.players.add(seat=seat, player=player)
        return play_pb2.FindMatchResponse(matched=found)

    # -- the per-bucket worker -----------------------------------------------------------------

    def _bucket(self, spec: BucketSpec) -> _Bucket:
        bucket = self._buckets.get(spec.bucket_id)
        if bucket is None:
            bucket = _Bucket(spec)
            self._buckets[spec.bucket_id] = bucket
        if bucket.task is None or bucket.task.done():
            bucket.task = asyncio.create_task(self._work(bucket), name=f"mm-bucket-{spec.bucket_id}")
        return bucket

    async def _work(self, bucket: _Bucket) -> None:
        spec = bucket.spec
        down_since: float | None = None  # monotonic start of a Redis outage
        try:
            while bucket.waiters:
                bucket.poke.clear()
                try:
                    await self._tick(bucket)
                    down_since = None
                except Exception as error:
                    # A waiter learns its match only from these ticks: one that cannot run must
                    # end the searches (a bug at once, an outage once the tickets' lease is over)
                    # rather than leave their clients waiting for ever. The worker goes on for
                    # the searches that come next.
                    if is_outage(error):
                        if down_since is None:
                            down_since = time.monotonic()
                            log.warning("matchmaking tick failed: redis unavailable", extra={"bucket": spec.bucket_id})
                        if time.monotonic() - down_since > self.settings.lease_ms / 1000.0:
                            self._fail_waiters(bucket, "unavailable")
                    else:
                        log.exception("matchmaking tick failed", extra={"bucket": spec.bucket_id})
                        self._fail_waiters(bucket, "failed")
                if not bucket.waiters:
                    break
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self.settings.tick_s):
                        await bucket.poke.wait()
        finally:
            if self._buckets.get(spec.bucket_id) is bucket and not bucket.waiters:
                del self._buckets[spec.bucket_id]

    @staticmethod
    def _fail_waiters(bucket: _Bucket, kind: str) -> None:
        for waiter in bucket.waiters.values():
            if not waiter.status.started:
                waiter.status = TicketStatus(kind)
                waiter.wake.set()

    async def _tick(self, bucket: _Bucket) -> None:
        """Pair on every pass (a new ticket pairs in its enqueue); renew the leases, which also tells the
        waiters of matches formed elsewhere, once per tick or when a wake-up names a local seat:
        renewing every waiter on every new ticket made a busy bucket quadratic."""
        spec = bucket.spec
        matches = await self.queue.pair(spec, self.now_ms())
        for match in matches:
            self._start_soon(spec, match.game_id, match.players, match.tickets)
        if len(matches) >= MAX_MATCHES_PER_PAIRING:
            bucket.poke.set()
        now = time.monotonic()
        if not bucket.renew_now and now - bucket.renewed_at < self.settings.tick_s:
            return
        bucket.renew_now = False
        bucket.renewed_at = now
        waiters = list(bucket.waiters.values())
        # Every update_s the renewal reads the waiters' block lists again: a block made while both
        # players wait (e.g. right after their last game) keeps them apart from then on.
        reread = now - bucket.blocks_read_at >= self.settings.update_s
        if reread:
            bucket.blocks_read_at = now
        statuses = await self.queue.renew(
            spec.bucket_id,
            [w.ticket_id for w in waiters],
            self.now_ms(),
            [w.owner for w in waiters],
            players=[w.player_id for w in waiters] if reread else (),
            per_move_ms=spec.per_move_ms,
        )
        # The claims of the searches still queued get the same lease (one round trip: the
        # pipelined connection sends these together).
        await asyncio.gather(
            *(
                self.claims.refresh(w.player_id, spec.game, claim_token(spec.bucket_id, w.ticket_id))
                for w, status in zip(waiters, statuses, strict=True)
                if status.kind == "queued"
            )
        )
        for waiter, status in zip(waiters, statuses, strict=True):
            if status.kind == "queued":
                continue
            if status.kind == "matched" and not status.started and not status.refused:
                if waiter.matched_at is None:
                    waiter.matched_at = time.monotonic()
                elif time.monotonic() - waiter.matched_at > self.settings.start_grace_s:
                    # The gateway that paired it has not started the game: start it here (the
                    # game id is fixed, so this cannot create a second game).
                    details = await self.queue.lookup(spec.bucket_id, status.game_id)
                    if details is not None:
                        self._start_soon(spec, status.game_id, details.players, details.tickets)
            waiter.status = status
            waiter.wake.set()

    def _start_soon(
        self,
        spec: BucketSpec,
        game_id: str,
        players: Sequence[play_pb2.Player],
        tickets: Sequence[str],
        searching: str = "",
    ) -> None:
        """`searching`: the ticket of a search here whose own enqueue formed this match (its waiter
        may not be registered yet when the game starts)."""
        if game_id in self._starting:
            return
        self._starting.add(game_id)
        self._spawn(self._start(spec, game_id, tuple(players), tuple(tickets), searching), f"mm-start-{game_id}")

    def _wake_started(
        self, spec: BucketSpec, details: MatchDetails, released: bool, told: Sequence[str], searching: str = ""
    ) -> None:
        """This process started the match: its own waiters learn their seats now, without a
        renewal round trip (waiters on other replicas learn it from the wake-up); `released`:
        their claims are released already; `told`: the tickets marked told in the start."""
        bucket = self._buckets.get(spec.bucket_id)
        for seat, ticket in enumerate(details.tickets):
            waiter = bucket.waiters.get(ticket) if bucket is not None else None
            if waiter is None and ticket == searching:
                status = TicketStatus("matched", details.game_id, seat, started=True)
                self._early[ticket] = (status, details, released, ticket in told)
            if waiter is not None:
                waiter.status = TicketStatus("matched", details.game_id, seat, started=True)
                waiter.details = details
                waiter.released = released
                waiter.told = ticket in told
                waiter.wake.set()

    async def _start(
        self,
        spec: BucketSpec,
        game_id: str,
        players: tuple[play_pb2.Player, ...],
        tickets: tuple[str, ...],
        searching: str = "",
    ) -> None:
        attempts = Attempts(_START_BACKOFF)
        try:
            # Paired: the players' searches for the game are over, so their claims go before anyone
            # learns the match, not when each stream next runs: a player who searches again the
            # moment MatchFound arrives must not find the old claim. On one Redis in the script that
            # marks the match started; on a cluster (other slots) now, before the game exists. (A
            # waiter here skips its own release when these went through; one elsewhere, or after
            # a failed release, does it again.)
            claims = [
                (self.claims.key(player.player_id, spec.game), claim_token(spec.bucket_id, ticket))
                for player, ticket in zip(players, tickets, strict=True)
            ]
            # The seats whose streams wait here are told now (in the script that marks the match
            # started); the others stay attachable until a stream of theirs tells them.
            local = self._buckets.get(spec.bucket_id)
            told = [t for t in tickets if t == searching or (local is not None and t in local.waiters)]
            released = False
            if self.queue.layer.cluster:
                with contextlib.suppress(RedisError):
                    await asyncio.gather(
                        *(
                            self.claims.release(player.player_id, spec.game, token)
                            for player, (_, token) in zip(players, claims, strict=True)
                        )
                    )
                    released = True
                claims = []
            for attempt in range(4):
                try:
                    # On one Redis the match is marked started in the start's own write (guarded:
                    # it does nothing unless the start ran), else (a cluster, a start it could not
                    # follow) right after it.
                    followup = None
                    if not self.queue.layer.cluster:
                        keys, args = self.queue.started_call(
                            spec.bucket_id, game_id, tickets, claims=claims, guard=clock_key(game_id), told=told
                        )
                        followup = Followup(script("matchmaking/started"), keys, args)
                    await self.starter.start_game(
                        game=spec.game,
                        options=spec.options,
                        players=players,
                        per_move_s=spec.per_move_ms / 1000.0,
                        rated=not any(p.guest for p in players),
                        origin="match",
                        game_id=game_id,
                        followed_by=followup,
                    )
                    if followup is None or not followup.ran:
                        await self.queue.mark_started(spec.bucket_id, game_id, tickets, claims=claims, told=told)
                    released = released or bool(claims)  # released in that script
                    details = MatchDetails(game_id, tickets, players, started=True)
                    self._wake_started(spec, details, released, told, searching)
                    return
                except asyncio.CancelledError:
                    raise
                except Refused as refused:
                    if refused.code not in _FINAL_REFUSALS:
                        log.warning("could not start a matched game: %s", refused.reason, extra={"game_id": game_id})
                        await attempts.failed()
                        continue
                    # It will never start (e.g. options this table size does not allow): tell the
                    # waiters now rather than let them wait.
                    log.warning("a matched game was refused: %s", refused.reason, extra={"game_id": game_id})
                    await self.queue.mark_started(spec.bucket_id, game_id, tickets, refused=True, claims=claims)
                    return
                except Exception:
                    log.warning(
                        "could not start a matched game",
                        exc_info=True,
                        extra={"game_id": game_id, "attempt": attempt + 1},
                    )
                    await attempts.failed()
        finally:
            self._starting.discard(game_id)
