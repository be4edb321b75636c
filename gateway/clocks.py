"""Turn clocks: deadlines in Redis that any gateway replica sweeps.

The keys (kit/redis/keys.py, "Turn clocks") are this module's. Their layout is written by one Lua
function, lua/clocks/arm_function.lua, which this module's arm (lua/clocks/arm.lua) and the rules
service's commit (lua/rules/commit.lua, arming in the same script as the move, which saves the
gateway a round trip per move) both include: two writers, one definition. Games live in
GAME_SHARDS shards (kit/redis/keys.py, "Game shards"); each shard has its deadline set and its
claimed set (members being handled, score the end of the claim's lease), both in the shard's slot
with its games' keys. The claimed sets are written only here.

After an applied action whose answer did not arm the clock (a replayed answer, the game's
creation), the gateway arms it from the new GameStatus with clocks/arm.

A correspondence turn's deadline may move after it was armed (its player's vacation: clocks/extend,
gateway/correspondence.py, which Actions.on_due asks before timing a correspondence seat out).

Every replica runs a sweeper covering every shard. It claims due deadlines (moved to the claimed
set with a lease, so a replica that dies mid-timeout leaves the claim to be taken again when the
lease ends) with one script for all shards on a single Redis, one script per shard, all sent at
once, on a Redis Cluster (a script touches one slot there); applies a Timeout for the first seat
still to act (request id derived from the version, so two replicas can never time a seat out
twice); and sleeps until the earliest next deadline over all shards, a local wake-up, or at most
TAFEL_CLOCK_MAX_WAIT_S (deadlines armed by other replicas); the loop is kit/loops.py's (an outage
logged once, retried with backoff). Deadlines live only in Redis, so a timeout still
applies after every gateway was restarted.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tafel.games.v1 import games_pb2

from kit import timesource
from kit.loops import Loop
from kit.redis.keys import GAME_SHARDS, claimed_key, clock_key, clocks_key, game_shard, meta_key
from kit.redis.layer import RedisLayer
from kit.redis.pipe import Command
from kit.redis.scripts import script
from kit.retry import Backoff
from kit.tasks import spawn

log = logging.getLogger("tafel.gateway.clocks")
CLAIM_BATCH = 100
CORRESPONDENCE_MS = 86_400_000  # gateway/timecontrol.py DAY_MS: a day or more a move
_STARTED_KEPT = 4096  # games whose start's deadline is kept (their watches start right after)


@dataclass(frozen=True)
class Due:
    game_id: str
    version: int
    seats: tuple[int, ...]
    member: str

    @classmethod
    def parse(cls, member: str) -> Due | None:
        parts = member.split("|")
        if len(parts) != 3:
            return None
        try:
            seats = tuple(int(s) for s in parts[2].split(",") if s)
            return cls(parts[0], int(parts[1]), seats, member)
        except ValueError:
            return None


# What to do with a due deadline. Return True when it is settled (applied, stale or moot) and
# False to leave the claim for a later retry (e.g. the rules service is down).
DueHandler = Callable[[Due], Awaitable[bool]]


def now_ms() -> int:
    return timesource.now_ms()


class Clocks:
    def __init__(
        self,
        layer: RedisLayer,
        *,
        ttl_s: int,
        max_wait_s: float = 1.0,
        lease_s: float = 10.0,
        concurrency: int = 64,
        vacation_s: int = 30 * 86_400,
    ) -> None:
        self.layer = layer
        self.ttl_s = ttl_s
        self.vacation_s = vacation_s
        self.max_wait_s = max_wait_s
        self.lease_ms = int(lease_s * 1000)
        self._next_due_ms: float = 0.0
        self._slots = asyncio.Semaphore(concurrency)
        self._loop: Loop | None = None
        self._handling: set[asyncio.Task[None]] = set()
        self._inflight: set[str] = set()
        self._first_shard = 0  # rotates, so a batch cut short never starves the later shards
        self.fired = 0
        # game -> (version, deadline ms) armed here at a game's start: its watches' first views
        # ask for it at once (a version's deadline never changes once armed: arm_function).
        self._started: OrderedDict[str, tuple[int, int]] = OrderedDict()

    def ttl_for(self, per_move_ms: int) -> int:
        """The clock's TTL (and its game's keys'): a correspondence turn may last 14 days and a
        vacation on top (at most a year's allowance), so those games' keys outlive both."""
        if per_move_ms < CORRESPONDENCE_MS:
            return self.ttl_s
        return max(self.ttl_s, per_move_ms // 1000 + self.vacation_s + 7 * 86_400)

    def arm_parts(
        self, game_id: str, status: games_pb2.GameStatus, per_move_s: float
    ) -> tuple[list[str], list[str | int]]:
        """The keys (clock, clocks) and arguments (game version toact permove now ttl) of
        clocks/arm_function, for this module's arm and for a script that arms in the same write
        (games/start)."""
        to_act = "" if status.over else ",".join(str(seat) for seat in status.to_act)
        return (
            [clock_key(game_id), clocks_key(game_shard(game_id))],
            [game_id, status.version, to_act, int(per_move_s * 1000), now_ms(), self.ttl_for(int(per_move_s * 1000))],
        )

    def settled(self, armed: int, deadline_ms: int) -> float | None:
        """What an arming script answered: the deadline (seconds since the epoch) or None, and the
        sweeper woken when this arming set it."""
        if deadline_ms <= 0:
            return None
        if armed == 1:
            self.armed(deadline_ms)
        return deadline_ms / 1000.0

    async def arm(self, game_id: str, status: games_pb2.GameStatus, per_move_s: float) -> float | None:
        """Set the game's deadline after `status`; returns it (seconds since the epoch) or None.
        The game's metadata key lives as long as its clock."""
        keys, args = self.arm_parts(game_id, status, per_move_s)
        reply: Any = await self.layer.run(script("clocks/arm"), [*keys, meta_key(game_id)], args)
        return self.settled(int(reply[0]), int(reply[1]))

    async def finish(self, game_id: str, version: int) -> None:
        """The game that ended at `version` is recorded and off the live lists: drop the finalise
        deadline its end armed (lua/clocks/arm_function.lua says why it exists)."""
        await self.layer.call(*self.finish_command(game_id, version))

    @staticmethod
    def finish_command(game_id: str, version: int) -> Command:
        """finish()'s command, for a caller that sends it with others (the game's record). The
        finalise member is arm()'s for that version with no seat to act, a member no turn deadline
        ever has, so removing it alone can never remove a turn deadline (a script checking the
        clock first was three commands and a round trip of its own)."""
        return ("ZREM", clocks_key(game_shard(game_id)), f"{game_id}|{version}|")

    def armed(self, deadline_ms: int) -> None:
        """A deadline was armed (here or by a rules service for this process's action): wake the
        sweeper if it comes before the one it sleeps towards."""
        if self._loop is not None and deadline_ms > 0 and (self._next_due_ms == 0 or deadline_ms < self._next_due_ms):
            self._loop.wake()

    def remember(self, game_id: str, version: int, deadline: float | None) -> None:
        """The deadline a game's start armed (or found armed) at `version`, for deadline()."""
        if deadline is None:
            return
        self._started[game_id] = (version, round(deadline * 1000))
        if len(self._started) > _STARTED_KEPT:
            self._started.popitem(last=False)

    async def deadline(self, game_id: str, version: int) -> float | None:
        """The deadline in force at `version`, if that is the clock's version (at a game's first
        version, the one its start here armed: no read)."""
        started = self._started.get(game_id)
        if started is not None and started[0] == version:
            return started[1] / 1000.0
        stored: Any = await self.layer.call("HMGET", clock_key(game_id), "v", "d")
        if stored[0] is None or int(stored[0]) != version:
            return None
        deadline = int(stored[1] or 0)
        return deadline / 1000.0 if deadline > 0 else None

    # -- the sweeper --------------------------------------------------------------------------------

    def start(self, handler: DueHandler) -> None:
        if self._loop is None:
            # A Redis outage is retried with backoff capped at the longest wait, so the sweeps
            # resume within max_wait_s of Redis coming back.
            self._loop = Loop(
                "clock sweeper",
                lambda: self._sweep_step(handler),
                every_s=self.max_wait_s,
                log=log,
                backoff=Backoff(first_s=min(0.1, self.max_wait_s), cap_s=self.max_wait_s),
            )
            self._loop.start()

    async def stop(self) -> None:
        if self._loop is not None:
            await self._loop.stop()
            self._loop = None
        for task in tuple(self._handling):
            task.cancel()
        if self._handling:
            await asyncio.gather(*tuple(self._handling), return_exceptions=True)

    async def idle(self) -> None:
        """Wait until the timeouts being handled are done (their claims dropped when settled)."""
        while self._handling:
            await asyncio.gather(*tuple(self._handling), return_exceptions=True)

    async def sweep_once(self, handler: DueHandler) -> tuple[int, float | None]:
        """Claim and start handling what is due in every shard; returns (claimed, the next deadline
        in ms over all shards). A claim cut short by its batch leaves due members behind, so the
        next deadline it answers is already past: the loop sweeps again at once."""
        now = now_ms()
        start = self._first_shard
        self._first_shard = (start + 1) % GAME_SHARDS
        shards = [(start + i) % GAME_SHARDS for i in range(GAME_SHARDS)]
        if self.layer.cluster:
            # One slot a script: a claim per shard, all in flight together (one write per master).
            groups = [[clocks_key(k), claimed_key(k)] for k in shards]
        else:
            # A single Redis does not check slots: every shard in one script, about the cost of one.
            groups = [[key for k in shards for key in (clocks_key(k), claimed_key(k))]]
        args = [now, self.lease_ms, CLAIM_BATCH]
        replies: list[Any] = list(
            await asyncio.gather(*(self.layer.run(script("clocks/claim"), keys, args) for keys in groups))
        )
        members = [raw for reply in replies for raw in reply[0]]
        candidates = [float(x) for reply in replies for x in reply[1:] if x not in (b"", "", None)]
        for raw in members:
            member = raw.decode() if isinstance(raw, bytes) else str(raw)
            if member in self._inflight:
                continue
            due = Due.parse(member)
            if due is None:
                await self._unclaim(member)
                continue
            self._inflight.add(member)
            task = spawn(self._handle(handler, due), "clock timeout", log=log)  # (_handle logs its own failures)
            self._handling.add(task)
            task.add_done_callback(self._handling.discard)
        return len(members), (min(candidates) if candidates else None)

    async def _unclaim(self, member: str) -> None:
        """Drop a settled (or unreadable) claim from its shard's claimed set."""
        game_id = member.split("|", 1)[0]
        await self.layer.call("ZREM", claimed_key(game_shard(game_id)), member)

    async def _handle(self, handler: DueHandler, due: Due) -> None:
        try:
            async with self._slots:
                settled = await handler(due)
            if settled:
                await self._unclaim(due.member)
                if due.seats:  # a turn deadline (not an ended game's finalise deadline)
                    self.fired += 1
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("timeout handling failed", extra={"game_id": due.game_id})
        finally:
            self._inflight.discard(due.member)

    async def _sweep_step(self, handler: DueHandler) -> float:
        """One sweep; the seconds until the next (the next deadline, at most max_wait_s, since
        other replicas arm deadlines this one does not hear of)."""
        claimed, next_ms = await self.sweep_once(handler)
        if claimed >= CLAIM_BATCH:
            return 0.0  # more are due: at once
        if next_ms is None:
            self._next_due_ms = 0
            return self.max_wait_s
        self._next_due_ms = next_ms
        return min(self.max_wait_s, max(0.0, (next_ms - now_ms()) / 1000.0))


def seats_text(seats: Sequence[int]) -> str:
    return ",".join(str(seat) for seat in seats)
