"""Turn clocks: deadlines in Redis that any gateway replica sweeps.

The keys and the arming script are in services/kit/turn_clock.py (the rules store arms in the
same script that commits a move when asked, which saves the gateway a round trip per move); this
module adds ``tafel:clocks:claimed`` (members being handled, score the end of the claim's lease).

After an applied action whose answer did not arm the clock (a replayed answer, the game's
creation), the gateway arms it from the new GameStatus with the same script.

Every replica runs a sweeper. It claims due deadlines with one script (moved to the claimed set
with a lease, so a replica that dies mid-timeout leaves the claim to be taken again when the lease
ends), applies a Timeout for the first seat still to act (request id derived from the version, so
two replicas can never time a seat out twice), and sleeps until the next deadline, a local wake-up,
or at most TAFEL_CLOCK_MAX_WAIT_S (deadlines armed by other replicas). Deadlines live only in Redis,
so a timeout still applies after every gateway was restarted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError
from tafel.games.v1 import games_pb2

from kit.redis.pipe import PipeScript, RedisPipe
from services.kit.turn_clock import ARM_FUNCTION, CLOCKS_KEY, clock_key

log = logging.getLogger("tafel.gateway.clocks")
CLAIMED_KEY = "tafel:clocks:claimed"
CLAIM_BATCH = 100

ARM_LUA = (
    ARM_FUNCTION
    + """
local r = arm(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], tonumber(ARGV[6]))
if r[1] == 1 and KEYS[3] then redis.call('EXPIRE', KEYS[3], tonumber(ARGV[6])) end
return r
"""
)

CLAIM_LUA = """
local now = tonumber(ARGV[1])
local lease = now + tonumber(ARGV[2])
local out = {}
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[3]))
for _, m in ipairs(due) do
  redis.call('ZREM', KEYS[1], m)
  redis.call('ZADD', KEYS[2], lease, m)
  table.insert(out, m)
end
local lapsed = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, tonumber(ARGV[3]))
for _, m in ipairs(lapsed) do
  redis.call('ZADD', KEYS[2], lease, m)
  table.insert(out, m)
end
local nxt = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local nxt_claim = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
return {out, nxt[2] or '', nxt_claim[2] or ''}
"""


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
    return int(time.time() * 1000)


class Clocks:
    def __init__(
        self,
        redis: Redis,
        *,
        ttl_s: int,
        max_wait_s: float = 1.0,
        lease_s: float = 10.0,
        concurrency: int = 64,
        meta_key: Callable[[str], str] | None = None,
        pipe: RedisPipe | None = None,
    ) -> None:
        self.redis = redis
        self.ttl_s = ttl_s
        self.max_wait_s = max_wait_s
        self.lease_ms = int(lease_s * 1000)
        # The arm runs once per move: over the lean pipelined connection when there is one.
        self._arm: Any = PipeScript(pipe, ARM_LUA) if pipe is not None else redis.register_script(ARM_LUA)
        self._claim = redis.register_script(CLAIM_LUA)
        self._meta_key = meta_key
        self._wake = asyncio.Event()
        self._next_due_ms: float = 0.0
        self._slots = asyncio.Semaphore(concurrency)
        self._task: asyncio.Task[None] | None = None
        self._handling: set[asyncio.Task[None]] = set()
        self._inflight: set[str] = set()
        self.fired = 0

    async def close(self) -> None:
        if isinstance(self._arm, PipeScript):
            await self._arm.pipe.close()

    async def arm(self, game_id: str, status: games_pb2.GameStatus, per_move_s: float) -> float | None:
        """Set the game's deadline after `status`; returns it (seconds since the epoch) or None."""
        to_act = "" if status.over else ",".join(str(seat) for seat in status.to_act)
        keys = [clock_key(game_id), CLOCKS_KEY]
        if self._meta_key is not None:
            keys.append(self._meta_key(game_id))
        reply: Any = await self._arm(
            keys=keys,
            args=[game_id, status.version, to_act, int(per_move_s * 1000), now_ms(), self.ttl_s],
        )
        deadline = int(reply[1])
        if deadline <= 0:
            return None
        if int(reply[0]) == 1:
            self.armed(deadline)
        return deadline / 1000.0

    def armed(self, deadline_ms: int) -> None:
        """A deadline was armed (here or by a rules service for this process's action): wake the
        sweeper if it comes before the one it sleeps towards."""
        if deadline_ms > 0 and (self._next_due_ms == 0 or deadline_ms < self._next_due_ms):
            self._wake.set()

    async def deadline(self, game_id: str, version: int) -> float | None:
        """The deadline in force at `version`, if that is the clock's version."""
        if isinstance(self._arm, PipeScript):  # the lean connection when there is one
            stored: Any = await self._arm.pipe.call("HMGET", clock_key(game_id), "v", "d")
        else:
            stored = await self.redis.hmget(clock_key(game_id), ["v", "d"])
        if stored[0] is None or int(stored[0]) != version:
            return None
        deadline = int(stored[1] or 0)
        return deadline / 1000.0 if deadline > 0 else None

    # -- the sweeper --------------------------------------------------------------------------------

    def start(self, handler: DueHandler) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._sweep(handler), name="clock sweeper")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        for task in tuple(self._handling):
            task.cancel()
        if self._handling:
            await asyncio.gather(*tuple(self._handling), return_exceptions=True)

    async def sweep_once(self, handler: DueHandler) -> tuple[int, float | None]:
        """Claim and start handling what is due; returns (claimed, the next deadline in ms)."""
        now = now_ms()
        reply: Any = await self._claim(keys=[CLOCKS_KEY, CLAIMED_KEY], args=[now, self.lease_ms, CLAIM_BATCH])
        members, next_due, next_claim = reply
        for raw in members:
            member = raw.decode() if isinstance(raw, bytes) else str(raw)
            if member in self._inflight:
                continue
            due = Due.parse(member)
            if due is None:
                await self.redis.zrem(CLAIMED_KEY, member)
                continue
            self._inflight.add(member)
            task = asyncio.get_running_loop().create_task(self._handle(handler, due))
            self._handling.add(task)
            task.add_done_callback(self._handling.discard)
        candidates = [float(x) for x in (next_due, next_claim) if x not in (b"", "", None)]
        return len(members), (min(candidates) if candidates else None)

    async def _handle(self, handler: DueHandler, due: Due) -> None:
        try:
            async with self._slots:
                settled = await handler(due)
            if settled:
                await self.redis.zrem(CLAIMED_KEY, due.member)
                self.fired += 1
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("timeout handling failed", extra={"game_id": due.game_id})
        finally:
            self._inflight.discard(due.member)

    async def _sweep(self, handler: DueHandler) -> None:
        while True:
            self._wake.clear()
            try:
                claimed, next_ms = await self.sweep_once(handler)
            except RedisError:
                log.warning("clock sweep failed: redis unavailable")
                claimed, next_ms = 0, None
                await asyncio.sleep(self.max_wait_s)
            if claimed >= CLAIM_BATCH:
                continue
            wait = self.max_wait_s
            if next_ms is not None:
                wait = min(wait, max(0.0, (next_ms - now_ms()) / 1000.0))
                self._next_due_ms = next_ms
            else:
                self._next_due_ms = 0
            if wait > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), wait)


def seats_text(seats: Sequence[int]) -> str:
    return ",".join(str(seat) for seat in seats)
