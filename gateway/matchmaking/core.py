"""Matchmaking: queues in Redis, paired by one atomic Lua script, so any number of gateway
replicas take tickets and none is ever paired twice.

A *bucket* is everything two tickets must agree on: the game, its options (canonical bytes, every
default filled in), the time control and the table size range. Each bucket's keys share one hash
tag (``{mm:<bucket id>}``), so every script touches one slot and runs unchanged on Redis Cluster:

- ``q``  zset  ticket -> rating
- ``t``  hash  ticket -> ``<enqueued ms>|<hard expiry ms>|<player id>``
- ``l``  zset  ticket -> lease expiry ms (renewed while the ticket's stream is alive)
- ``p``  hash  ticket -> Player bytes (kept after pairing, for MatchFound)
- ``w``  hash  player id -> its queued ticket (one ticket per player per bucket)
- ``r``  hash  ticket -> ``<game id>|<seat>`` once paired
- ``m``  hash  game id -> the match's tickets in seat order; ``<game id>|s`` -> 1 once started
- ``gc`` zset  game id -> when its result entries are dropped
- ``k``  hash  ``k|<player id>|<request id>`` -> the ticket of a search sent with a request id;
  ``r|<ticket>`` -> that key; ``o|<ticket>`` -> the stream that holds the ticket now (its owner)

Pairing (the PAIR script) takes the queue oldest ticket first; each ticket's rating window is
``base + widen * waited`` (capped), and two tickets fit when their distance is within the larger
of their two windows (a long wait widens what the waiting ticket accepts, so nobody starves). The
oldest ticket's table is filled with the nearest fitting ratings; a table forms when full, or at
its minimum once its oldest ticket has waited ``fill_wait``. The script removes the paired tickets,
records each one's game id and seat, and names the game after the oldest ticket (``m-<ticket>``),
so the game id is fixed before any game is created: a crash or a retry can only create that one
game, because ``GameDirectory.start_game`` is idempotent for a given game id.

The gateway that formed a match starts the game and then marks the match started, publishing a
wake-up; the waiting streams (on whichever replica) learn their game id and seat from the wake-up
or, if it is lost, from their next lease renewal (every tick). If the forming gateway dies before
starting the game, a waiting stream starts it itself after a grace period (same game id).

Tickets carry a short lease renewed by their stream's gateway: a crashed gateway's tickets vanish
within the lease, and every ticket has a hard expiry. Cancelling the call removes the ticket.

A search may carry a request id (FindMatchRequest.request_id). Sent again with the same id — the
SDK does so after a lost connection, through whichever gateway it reaches — it takes over the
ticket still queued for it (or learns the match it was paired into) instead of being refused
ALREADY_QUEUED while the dead stream's ticket waits out its lease and may be paired without its
player. The take-over names a new owner, and a withdrawal by the old owner (its gateway noticing
the lost stream late) is ignored.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import math
import secrets
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import grpc
from redis.asyncio import Redis
from redis.exceptions import RedisError
from tafel.games.v1 import games_pb2
from tafel.play.v1 import play_pb2

from gateway.matchmaking.wakeups import Wakeups
from kit.errors import Refused
from kit.redis.pipe import PipeScript, RedisPipe
from kit.settings import Env

log = logging.getLogger("tafel.gateway.matchmaking")

DEFAULT_RATING = 1500.0
_FINAL_REFUSALS = (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.FAILED_PRECONDITION)
MATCH_CHANNEL = "tafel:lobby:matched"


# ---------------------------------------------------------------------------------------------
# Settings


@dataclass(frozen=True)
class MatchmakingSettings:
    base_window: int = 100  # rating points a fresh ticket accepts
    widen_per_s: float = 10.0  # rating points added per second waited
    max_window: int = 1000
    lease_s: float = 20.0  # a ticket whose gateway stopped renewing it is gone after this
    ticket_ttl_s: float = 600.0  # the longest a ticket waits
    tick_s: float = 0.5  # how often a gateway pairs and renews its buckets
    update_s: float = 2.0  # how often a waiting stream gets MatchQueued
    fill_wait_s: float = 15.0  # a table at its minimum (not full) starts after this wait
    start_grace_s: float = 8.0  # a match not started after this is started by its waiters
    result_ttl_s: float = 900.0  # how long a match's result stays readable

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> MatchmakingSettings:
        env = Env(environ)
        return cls(
            base_window=env.integer("TAFEL_MM_BASE_WINDOW", 100, 0, 10_000),
            widen_per_s=env.number("TAFEL_MM_WIDEN_PER_S", 10.0, 0.0, 10_000.0),
            max_window=env.integer("TAFEL_MM_MAX_WINDOW", 1000, 0, 100_000),
            lease_s=env.number("TAFEL_MM_LEASE_S", 20.0, 2.0, 3600.0),
            ticket_ttl_s=env.number("TAFEL_MM_TICKET_TTL_S", 600.0, 5.0, 86_400.0),
            tick_s=env.number("TAFEL_MM_TICK_S", 0.5, 0.01, 60.0),
            update_s=env.number("TAFEL_MM_UPDATE_S", 2.0, 0.05, 300.0),
            fill_wait_s=env.number("TAFEL_MM_FILL_WAIT_S", 15.0, 0.0, 3600.0),
            start_grace_s=env.number("TAFEL_MM_START_GRACE_S", 8.0, 0.5, 600.0),
            result_ttl_s=env.number("TAFEL_MM_RESULT_TTL_S", 900.0, 10.0, 86_400.0),
        )

    def window(self, waited_s: float) -> int:
        return int(min(self.max_window, self.base_window + self.widen_per_s * max(0.0, waited_s)))


# ---------------------------------------------------------------------------------------------
# What matchmaking calls on the rest of the gateway


class GameStarter(Protocol):
    """The part of gateway.games.GameDirectory that matchmaking and rooms use."""

    async def start_game(
        self,
        *,
        game: str,
        options: games_pb2.GameOptions,
        players: Sequence[play_pb2.Player],
        per_move_s: float,
        rated: bool,
        origin: str,
        game_id: str | None = None,
    ) -> str: ...


class RatingSource(Protocol):
    async def rating(self, player_id: str, game: str) -> float: ...


class HashRatings:
    """Ratings from a Redis hash per game (``tafel:ratings:<game>``: player id -> rating, the
    first number of the value); DEFAULT_RATING when absent or unreadable."""

    def __init__(self, redis: Redis, key: Callable[[str], str] | None = None) -> None:
        self.redis = redis
        self.key = key or (lambda game: f"tafel:ratings:{game}")

    async def rating(self, player_id: str, game: str) -> float:
        raw = await self.redis.hget(self.key(game), player_id)
        return parse_rating(raw)


def parse_rating(raw: bytes | str | None) -> float:
    if raw is None:
        return DEFAULT_RATING
    text = raw.decode() if isinstance(raw, bytes) else raw
    head = text.replace(",", " ").replace("|", " ").replace(":", " ").split()
    try:
        value = float(head[0]) if head else DEFAULT_RATING
    except ValueError:
        return DEFAULT_RATING
    return value if math.isfinite(value) else DEFAULT_RATING


# ---------------------------------------------------------------------------------------------
# Lua

_PRELUDE = """
local Q, T, L, P, W, R, M, GC, K = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9]

local function forget_request(t)
  local rk = redis.call('HGET', K, 'r|' .. t)
  if rk then redis.call('HDEL', K, 'k|' .. rk) end
  redis.call('HDEL', K, 'r|' .. t, 'o|' .. t)
end

local function remove_ticket(t, keep_player)
  local raw = redis.call('HGET', T, t)
  if raw then
    local pid = string.match(raw, '^%d+|%d+|(.*)$')
    if pid and redis.call('HGET', W, pid) == t then redis.call('HDEL', W, pid) end
  end
  redis.call('ZREM', Q, t)
  redis.call('HDEL', T, t)
  redis.call('ZREM', L, t)
  if not keep_player then
    redis.call('HDEL', P, t)
    forget_request(t)
  end
end

local function sweep(now)
  local gone = redis.call('ZRANGEBYSCORE', L, '-inf', now, 'LIMIT', 0, 1000)
  for _, t in ipairs(gone) do remove_ticket(t, false) end
  local old = redis.call('ZRANGEBYSCORE', GC, '-inf', now, 'LIMIT', 0, 200)
  for _, gid in ipairs(old) do
    local ts = redis.call('HGET', M, gid)
    if ts then
      for t in string.gmatch(ts, '[^,]+') do
        redis.call('HDEL', R, t)
        redis.call('HDEL', P, t)
        forget_request(t)
      end
    end
    redis.call('HDEL', M, gid, gid .. '|s')
    redis.call('ZREM', GC, gid)
  end
end

local function touch(ttl)
  for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ttl) end
end
"""

# ARGV: ticket, player id, player bytes, rating, now ms, lease until ms, hard expiry ms, keys ttl ms,
#       request key ("<player id>|<request id>" or ""), owner
# -> {1} queued, {0, prior ticket} the player already waits here (another search),
#    {2, ticket, enqueued ms} the search with this request key resumed (its ticket taken over)
ENQUEUE_LUA = (
    _PRELUDE
    + """
local ticket, pid, player = ARGV[1], ARGV[2], ARGV[3]
local rating, now, lease, hard, ttl = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]),
  tonumber(ARGV[7]), tonumber(ARGV[8])
local rkey, owner = ARGV[9], ARGV[10]
sweep(now)
if rkey ~= '' then
  local known = redis.call('HGET', K, 'k|' .. rkey)
  if known then
    local raw = redis.call('HGET', T, known)
    if raw or redis.call('HEXISTS', R, known) == 1 then
      redis.call('HSET', K, 'o|' .. known, owner)
      local enq = now
      if raw then
        local khard = tonumber(string.match(raw, '^%d+|(%d+)|'))
        redis.call('ZADD', L, math.min(lease, khard), known)
        enq = tonumber(string.match(raw, '^(%d+)|'))
      end
      touch(ttl)
      return {2, known, enq}
    end
  end
end
local prior = redis.call('HGET', W, pid)
if prior and redis.call('HEXISTS', T, prior) == 1 then return {0, prior} end
redis.call('ZADD', Q, rating, ticket)
redis.call('HSET', T, ticket, string.format('%d|%d|%s', now, hard, pid))
redis.call('ZADD', L, math.min(lease, hard), ticket)
redis.call('HSET', P, ticket, player)
redis.call('HSET', W, pid, ticket)
if rkey ~= '' then redis.call('HSET', K, 'k|' .. rkey, ticket, 'r|' .. ticket, rkey, 'o|' .. ticket, owner) end
touch(ttl)
return {1}
"""
)

# ARGV: ticket, owner ("" = whoever holds it).
# -> {1} removed from the queue, {2, "gid|seat"} already paired, {0} unknown,
#    {3} held by another owner now (a resent search took it over): left alone
CANCEL_LUA = (
    _PRELUDE
    + """
local t = ARGV[1]
local holder = redis.call('HGET', K, 'o|' .. t)
if ARGV[2] and ARGV[2] ~= '' and holder and holder ~= ARGV[2] then return {3} end
if redis.call('HEXISTS', T, t) == 1 then
  remove_ticket(t, false)
  return {1}
end
local r = redis.call('HGET', R, t)
if r then return {2, r} end
return {0}
"""
)

# ARGV: now ms, lease until ms, keys ttl ms, tickets...
# -> per ticket: "q" queued (lease renewed), "m|gid|seat|started" paired, "x" gone (expired)
RENEW_LUA = (
    _PRELUDE
    + """
local now, lease, ttl = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
sweep(now)
local out = {}
for i = 4, #ARGV do
  local t = ARGV[i]
  local raw = redis.call('HGET', T, t)
  if raw then
    local hard = tonumber(string.match(raw, '^%d+|(%d+)|'))
    redis.call('ZADD', L, math.min(lease, hard), t)
    out[#out + 1] = 'q'
  else
    local r = redis.call('HGET', R, t)
    if r then
      local gid = string.match(r, '^([^|]+)|')
      local s = redis.call('HGET', M, gid .. '|s') or '0'
      out[#out + 1] = 'm|' .. r .. '|' .. s
    else
      out[#out + 1] = 'x'
    end
  end
end
touch(ttl)
return out
"""
)

# ARGV: game id.  -> {tickets csv, started flag, player bytes...} or {} when unknown
LOOKUP_LUA = (
    _PRELUDE
    + """
local gid = ARGV[1]
local ts = redis.call('HGET', M, gid)
if not ts then return {} end
local out = {ts, redis.call('HGET', M, gid .. '|s') or '0'}
for t in string.gmatch(ts, '[^,]+') do out[#out + 1] = redis.call('HGET', P, t) or '' end
return out
"""
)

# ARGV: game id, channel, payload, mark ("1" started, "f" refused for good)
# -> 1 marked (and published), 0 unknown match
STARTED_LUA = (
    _PRELUDE
    + """
local gid = ARGV[1]
if redis.call('HEXISTS', M, gid) == 0 then return 0 end
if redis.call('HGET', M, gid .. '|s') == '1' then return 1 end
redis.call('HSET', M, gid .. '|s', ARGV[4])
redis.call('PUBLISH', ARGV[2], ARGV[3])
return 1
"""
)

# ARGV: now ms, base window, widen per ms, max window, min seats, max seats, fill wait ms,
#       result ttl ms, keys ttl ms, most matches to form in this call
# -> {{game id, {tickets in seat order}, {player bytes in seat order}}, ...}
PAIR_LUA = (
    _PRELUDE
    + """
local now, base, widen, maxw = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local minseats, maxseats, fillwait = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local resultttl, ttl, most = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10])
sweep(now)
local entries = redis.call('ZRANGE', Q, 0, -1, 'WITHSCORES')
local n = #entries / 2
if n < minseats then
  touch(ttl)
  return {}
end
local ids, rt, enq, win = {}, {}, {}, {}
local widest = 0
for i = 1, n do
  ids[i] = entries[2 * i - 1]
  rt[i] = tonumber(entries[2 * i])
  local raw = redis.call('HGET', T, ids[i]) or ''
  enq[i] = tonumber(string.match(raw, '^(%d+)|') or now)
  win[i] = math.min(maxw, base + widen * math.max(0, now - enq[i]))
  if win[i] > widest then widest = win[i] end
end
local order = {}
for i = 1, n do order[i] = i end
table.sort(order, function(a, b)
  if enq[a] ~= enq[b] then return enq[a] < enq[b] end
  return ids[a] < ids[b]
end)
local function fits(c, group)
  for _, g in ipairs(group) do
    if math.abs(rt[c] - rt[g]) > math.max(win[c], win[g]) then return false end
  end
  return true
end
local taken = {}
local formed = {}
for _, a in ipairs(order) do
  if #formed >= most then break end
  if not taken[a] then
    local group = {a}
    local lo, hi = a - 1, a + 1
    local scanned = 0
    while #group < maxseats and scanned < 64 do
      scanned = scanned + 1
      while lo >= 1 and taken[lo] do lo = lo - 1 end
      while hi <= n and taken[hi] do hi = hi + 1 end
      local dl, dh = math.huge, math.huge
      if lo >= 1 then dl = rt[a] - rt[lo] end
      if hi <= n then dh = rt[hi] - rt[a] end
      if math.min(dl, dh) > widest then break end
      local c
      if dl <= dh then
        c = lo
        lo = lo - 1
      else
        c = hi
        hi = hi + 1
      end
      if fits(c, group) then group[#group + 1] = c end
    end
    if #group >= maxseats or (#group >= minseats and now - enq[a] >= fillwait) then
      for _, g in ipairs(group) do taken[g] = true end
      formed[#formed + 1] = group
    end
  end
end
local out = {}
for _, group in ipairs(formed) do
  local gid = 'm-' .. ids[group[1]]
  local keyed = {}
  for _, g in ipairs(group) do keyed[#keyed + 1] = {redis.sha1hex(gid .. ids[g]), ids[g]} end
  table.sort(keyed, function(x, y) return x[1] < y[1] end)
  local tickets, players = {}, {}
  for seat, kv in ipairs(keyed) do
    local t = kv[2]
    tickets[seat] = t
    players[seat] = redis.call('HGET', P, t) or ''
    remove_ticket(t, true)
    redis.call('HSET', R, t, gid .. '|' .. (seat - 1))
  end
  redis.call('HSET', M, gid, table.concat(tickets, ','))
  redis.call('ZADD', GC, now + resultttl, gid)
  out[#out + 1] = {gid, tickets, players}
end
touch(ttl)
return out
"""
)


# ---------------------------------------------------------------------------------------------
# Scripts, with a bound on how many run at once from this process


class LimitedScript:
    """A Lua script of the lobby. On the process's lean pipelined connection when there is one
    (many calls in one write, no pool checkout); else a registered script whose calls wait for
    one of a few slots, so a burst of lobby calls queues here instead of exhausting the shared
    Redis connection pool."""

    def __init__(self, redis: Redis, lua: str, slots: asyncio.Semaphore, pipe: RedisPipe | None = None) -> None:
        self._piped = PipeScript(pipe, lua) if pipe is not None else None
        self._script = redis.register_script(lua) if pipe is None else None
        self._slots = slots

    async def __call__(self, *, keys: Sequence[str], args: Sequence[Any]) -> Any:
        if self._piped is not None:
            return await self._piped(list(keys), list(args))
        assert self._script is not None
        async with self._slots:
            return await self._script(keys=list(keys), args=list(args))


DEFAULT_REDIS_SLOTS = 32
# One pairing call forms at most this many matches (keeping each script short); a worker that
# hit the limit pairs again at once.
MAX_MATCHES_PER_PAIRING = 200


# ---------------------------------------------------------------------------------------------
# Values


@dataclass(frozen=True)
class BucketSpec:
    """What every ticket of a bucket agrees on. `options` must be canonical (defaults filled)."""

    game: str
    options: games_pb2.GameOptions
    per_move_ms: int
    min_seats: int
    max_seats: int

    @property
    def options_bytes(self) -> bytes:
        return self.options.SerializeToString(deterministic=True)

    @property
    def bucket_id(self) -> str:
        digest = hashlib.sha1(
            b"\0".join(
                (
                    self.game.encode(),
                    self.options_bytes,
                    str(self.per_move_ms).encode(),
                    str(self.min_seats).encode(),
                    str(self.max_seats).encode(),
                )
            )
        )
        return digest.hexdigest()[:20]


@dataclass(frozen=True)
class BucketKeys:
    queue: str
    tickets: str
    leases: str
    players: str
    owners: str
    results: str
    matches: str
    gc: str
    requests: str

    def all(self) -> list[str]:
        return [
            self.queue,
            self.tickets,
            self.leases,
            self.players,
            self.owners,
            self.results,
            self.matches,
            self.gc,
            self.requests,
        ]


def bucket_keys(bucket_id: str) -> BucketKeys:
    tag = f"tafel:{{mm:{bucket_id}}}"
    return BucketKeys(
        queue=f"{tag}:q",
        tickets=f"{tag}:t",
        leases=f"{tag}:l",
        players=f"{tag}:p",
        owners=f"{tag}:w",
        results=f"{tag}:r",
        matches=f"{tag}:m",
        gc=f"{tag}:gc",
        requests=f"{tag}:k",
    )


@dataclass(frozen=True)
class FormedMatch:
    game_id: str
    tickets: tuple[str, ...]  # in seat order
    players: tuple[play_pb2.Player, ...]  # in seat order


@dataclass(frozen=True)
class TicketStatus:
    """A ticket as a renewal saw it: queued, paired (game id, seat, started) or gone."""

    kind: str  # "queued" | "matched" | "gone"
    game_id: str = ""
    seat: int = 0
    started: bool = False
    refused: bool = False  # the rules service refused to create the game (it never will)


@dataclass(frozen=True)
class Taken:
    """What queueing a search did: queued `ticket_id` (a new ticket, or with `resumed` the one an
    earlier send of the same search queued), or not (`ticket_id` is the player's other ticket)."""

    ticket_id: str
    queued: bool
    resumed: bool
    enqueued_ms: int


@dataclass(frozen=True)
class MatchDetails:
    game_id: str
    tickets: tuple[str, ...]
    players: tuple[play_pb2.Player, ...]
    started: bool


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _player(raw: Any) -> play_pb2.Player:
    data = raw if isinstance(raw, bytes) else str(raw).encode()
    return play_pb2.Player.FromString(data)


def new_ticket_id() -> str:
    return secrets.token_urlsafe(12)  # 16 characters of [A-Za-z0-9_-]


# ---------------------------------------------------------------------------------------------
# The queue: the scripts, one method each


class MatchQueue:
    """The Redis side of matchmaking: every method is one script call (one round trip)."""

    def __init__(
        self,
        redis: Redis,
        settings: MatchmakingSettings,
        slots: asyncio.Semaphore | None = None,
        pipe: RedisPipe | None = None,
    ) -> None:
        self.redis = redis
        self.settings = settings
        slots = slots or asyncio.Semaphore(DEFAULT_REDIS_SLOTS)
        self._enqueue = LimitedScript(redis, ENQUEUE_LUA, slots, pipe)
        self._cancel = LimitedScript(redis, CANCEL_LUA, slots, pipe)
        self._renew = LimitedScript(redis, RENEW_LUA, slots, pipe)
        self._lookup = LimitedScript(redis, LOOKUP_LUA, slots, pipe)
        self._started = LimitedScript(redis, STARTED_LUA, slots, pipe)
        self._pair = LimitedScript(redis, PAIR_LUA, slots, pipe)

    @property
    def _keys_ttl_ms(self) -> int:
        s = self.settings
        return int((s.ticket_ttl_s + s.result_ttl_s + s.lease_s) * 1000)

    async def enqueue(
        self, bucket_id: str, ticket_id: str, player: play_pb2.Player, rating: float, now_ms: int
    ) -> str | None:
        """Queue a ticket; None when done, else the id of the player's ticket already queued."""
        taken = await self.take(bucket_id, ticket_id, player, rating, now_ms)
        return None if taken.queued else taken.ticket_id

    async def take(
        self,
        bucket_id: str,
        ticket_id: str,
        player: play_pb2.Player,
        rating: float,
        now_ms: int,
        *,
        request_id: str = "",
        owner: str = "",
    ) -> Taken:
        """Queue `ticket_id`, or, for a search sent again with the same request id, take over the
        ticket it queued before (still queued or already paired)."""
        s = self.settings
        request_key = f"{player.player_id}|{request_id}" if request_id else ""
        result = await self._enqueue(
            keys=bucket_keys(bucket_id).all(),
            args=[
                ticket_id,
                player.player_id,
                player.SerializeToString(),
                repr(float(rating)),
                now_ms,
                now_ms + int(s.lease_s * 1000),
                now_ms + int(s.ticket_ttl_s * 1000),
                self._keys_ttl_ms,
                request_key,
                owner,
            ],
        )
        kind = int(result[0])
        if kind == 1:
            return Taken(ticket_id, queued=True, resumed=False, enqueued_ms=now_ms)
        if kind == 2:
            return Taken(_text(result[1]), queued=True, resumed=True, enqueued_ms=int(result[2]))
        return Taken(_text(result[1]), queued=False, resumed=False, enqueued_ms=0)

    async def cancel(self, bucket_id: str, ticket_id: str, owner: str = "") -> bool:
        """Remove a queued ticket; False when it was already paired or gone, or when `owner` no
        longer holds it (a resent search took it over)."""
        result = await self._cancel(keys=bucket_keys(bucket_id).all(), args=[ticket_id, owner])
        return int(result[0]) == 1

    async def renew(self, bucket_id: str, tickets: Sequence[str], now_ms: int) -> list[TicketStatus]:
        if not tickets:
            return []
        s = self.settings
        raw = await self._renew(
            keys=bucket_keys(bucket_id).all(),
            args=[now_ms, now_ms + int(s.lease_s * 1000), self._keys_ttl_ms, *tickets],
        )
        out: list[TicketStatus] = []
        for item in raw:
            text = _text(item)
            if text == "q":
                out.append(TicketStatus("queued"))
            elif text.startswith("m|"):
                _, game_id, seat, started = text.split("|")
                out.append(TicketStatus("matched", game_id, int(seat), started == "1", started == "f"))
            else:
                out.append(TicketStatus("gone"))
        return out

    async def pair(self, spec: BucketSpec, now_ms: int) -> list[FormedMatch]:
        s = self.settings
        raw = await self._pair(
            keys=bucket_keys(spec.bucket_id).all(),
            args=[
                now_ms,
                s.base_window,
                repr(s.widen_per_s / 1000.0),
                s.max_window,
                spec.min_seats,
                spec.max_seats,
                int(s.fill_wait_s * 1000),
                int(s.result_ttl_s * 1000),
                self._keys_ttl_ms,
                MAX_MATCHES_PER_PAIRING,
            ],
        )
        return [
            FormedMatch(
                game_id=_text(game_id),
                tickets=tuple(_text(t) for t in tickets),
                players=tuple(_player(p) for p in players),
            )
            for game_id, tickets, players in raw
        ]

    async def lookup(self, bucket_id: str, game_id: str) -> MatchDetails | None:
        raw = await self._lookup(keys=bucket_keys(bucket_id).all(), args=[game_id])
        if not raw:
            return None
        return MatchDetails(
            game_id=game_id,
            tickets=tuple(_text(raw[0]).split(",")),
            players=tuple(_player(p) for p in raw[2:]),
            started=_text(raw[1]) == "1",
        )

    async def mark_started(
        self, bucket_id: str, game_id: str, tickets: Sequence[str] = (), *, refused: bool = False
    ) -> bool:
        # The wake-up names the bucket and the match's tickets: only a replica holding one of
        # those tickets' streams needs to look (the one that started it has told its own).
        payload = f"{bucket_id}|{','.join(tickets)}"
        result = await self._started(
            keys=bucket_keys(bucket_id).all(), args=[game_id, MATCH_CHANNEL, payload, "f" if refused else "1"]
        )
        return int(result) == 1


# ---------------------------------------------------------------------------------------------
# The process side: per-bucket workers and the waiting streams


@dataclass
class _Waiter:
    ticket_id: str
    enqueued_ms: int
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    status: TicketStatus = field(default_factory=lambda: TicketStatus("queued"))
    matched_at: float | None = None  # monotonic time this process first saw it paired
    details: MatchDetails | None = None  # set when this process started the match itself
    gone: asyncio.Event = field(default_factory=asyncio.Event)  # its search ended, ticket withdrawn


@dataclass
class _Bucket:
    spec: BucketSpec
    waiters: dict[str, _Waiter] = field(default_factory=dict)
    poke: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    renew_now: bool = True  # renew the leases (and learn statuses) on the next pass
    renewed_at: float = 0.0  # monotonic


class Matchmaker:
    """Takes tickets for this process's FindMatch streams, pairs their buckets every tick (and at
    once on a new ticket), starts the games this process paired, and tells each waiting stream
    its game id and seat."""

    def __init__(
        self,
        redis: Redis,
        starter: GameStarter,
        ratings: RatingSource,
        settings: MatchmakingSettings,
        *,
        clock: Callable[[], float] = time.time,
        slots: asyncio.Semaphore | None = None,
        pipe: RedisPipe | None = None,
    ) -> None:
        self.redis = redis
        self.queue = MatchQueue(redis, settings, slots, pipe)
        self.starter = starter
        self.ratings = ratings
        self.settings = settings
        self.clock = clock
        self._buckets: dict[str, _Bucket] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._starting: set[str] = set()
        # (bucket, player) -> the removal of a search that ended early, still in flight
        self._withdrawing: dict[tuple[str, str], asyncio.Task[Any]] = {}
        self._closing = False  # the gateway is stopping: waiting searches end

    def now_ms(self) -> int:
        return int(self.clock() * 1000)

    # -- lifecycle ---------------------------------------------------------------------------

    def attach(self, wakeups: Wakeups) -> None:
        wakeups.on(MATCH_CHANNEL, self._on_wakeup)

    def _on_wakeup(self, payload: bytes) -> None:
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
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # -- a waiting stream ----------------------------------------------------------------------

    async def find(
        self, spec: BucketSpec, player: play_pb2.Player, request_id: str = ""
    ) -> AsyncGenerator[play_pb2.FindMatchResponse, None]:
        """Queue `player` and stream MatchQueued updates, then MatchFound. Raises Refused
        (ALREADY_EXISTS if the player already waits in this bucket for another search,
        DEADLINE_EXCEEDED when the ticket expired). Closing the generator early (a cancelled call)
        removes the ticket. With a `request_id`, a search sent again takes over its ticket."""
        if self._closing:
            raise Refused(grpc.StatusCode.UNAVAILABLE, "GATEWAY_STOPPING", "this gateway is stopping; search elsewhere")
        if spec.max_seats <= 1:
            async for message in self._solo(spec, player):
                yield message
            return
        withdrawing = self._withdrawing.get((spec.bucket_id, player.player_id))
        if withdrawing is not None:  # this player's previous search here is still leaving the queue
            with contextlib.suppress(Exception):
                await asyncio.shield(withdrawing)
        rating = await self.ratings.rating(player.player_id, spec.game)
        ticket_id = new_ticket_id()
        owner = new_ticket_id()  # this stream, as the holder of the ticket
        now = self.now_ms()
        enqueue = asyncio.ensure_future(
            self.queue.take(spec.bucket_id, ticket_id, player, rating, now, request_id=request_id, owner=owner)
        )
        try:
            taken = await asyncio.shield(enqueue)
        except asyncio.CancelledError:
            # Withdrawn while the ticket was being written: take it out once it is in.
            self._withdraw(spec, player, ticket_id, self._withdraw_after(enqueue, spec.bucket_id, owner))
            raise
        if not taken.queued:
            raise Refused(
                grpc.StatusCode.ALREADY_EXISTS,
                "ALREADY_QUEUED",
                "you already wait for a match with these settings; cancel that call first",
                metadata={"ticket_id": taken.ticket_id},
            )
        ticket_id = taken.ticket_id
        waiter = _Waiter(ticket_id, taken.enqueued_ms)
        bucket = self._bucket(spec)
        bucket.waiters[ticket_id] = waiter
        if taken.resumed:
            bucket.renew_now = True  # it may have been paired meanwhile: learn that on this pass
        bucket.poke.set()
        done = False
        try:
            yield self._queued(waiter)
            while True:
                try:
                    await asyncio.wait_for(waiter.wake.wait(), self.settings.update_s)
                except TimeoutError:
                    yield self._queued(waiter)
                    continue
                waiter.wake.clear()
                status = waiter.status
                if self._closing and not (status.kind == "matched" and status.started):
                    raise Refused(
                        grpc.StatusCode.UNAVAILABLE,
                        "GATEWAY_STOPPING",
                        "this gateway is stopping; search again (with the same request id) elsewhere",
                    )
                if status.kind == "gone":
                    done = True
                    raise Refused(
                        grpc.StatusCode.DEADLINE_EXCEEDED,
                        "TICKET_EXPIRED",
                        "no match was found in time; ask again",
                    )
                if status.kind == "matched" and status.refused:
                    done = True
                    raise Refused(
                        grpc.StatusCode.FAILED_PRECONDITION,
                        "MATCH_REFUSED",
                        "the game's rules service refused these settings for this table; change them",
                    )
                if status.kind == "matched" and status.started:
                    done = True
                    details = waiter.details or await self.queue.lookup(spec.bucket_id, status.game_id)
                    yield self._found(ticket_id, status, details)
                    return
                if status.kind == "matched" and waiter.matched_at is not None:
                    waited = time.monotonic() - waiter.matched_at
                    if waited > self.settings.start_grace_s * 4:
                        done = True
                        raise Refused(
                            grpc.StatusCode.UNAVAILABLE,
                            "MATCH_NOT_STARTED",
                            "a match was found but its game could not be started; ask again",
                        )
        finally:
            if bucket.waiters.get(ticket_id) is waiter:  # a resent search may hold the ticket now
                del bucket.waiters[ticket_id]
            if not done:
                # The call ended early (cancelled, disconnected): take the ticket out of the
                # queue, in a task of its own so the cancellation of this one cannot stop it.
                task = self._withdraw(spec, player, ticket_id, self._cancel(spec.bucket_id, ticket_id, owner))
                # The search ends once its ticket has left the queue (a caller that withdraws and
                # searches again must not race its own old ticket); shielded, so a second
                # cancellation cannot stop the removal.
                with contextlib.suppress(Exception, asyncio.CancelledError):
                    await asyncio.shield(task)
            waiter.gone.set()

    async def _withdraw_after(self, enqueue: asyncio.Future[Taken], bucket_id: str, owner: str) -> None:
        with contextlib.suppress(Exception):
            taken = await enqueue
            if taken.queued:
                await self._cancel(bucket_id, taken.ticket_id, owner)

    def _withdraw(
        self, spec: BucketSpec, player: play_pb2.Player, ticket_id: str, removal: Awaitable[Any]
    ) -> asyncio.Task[Any]:
        """Run a ticket's removal in a task of its own; the player's next search in this bucket
        waits for it (see find)."""
        key = (spec.bucket_id, player.player_id)
        task = self._spawn(removal, f"mm-cancel-{ticket_id}")
        self._withdrawing[key] = task

        def done(finished: asyncio.Task[Any]) -> None:
            if self._withdrawing.get(key) is finished:
                del self._withdrawing[key]

        task.add_done_callback(done)
        return task

    async def _cancel(self, bucket_id: str, ticket_id: str, owner: str = "") -> None:
        for attempt in range(3):
            try:
                await self.queue.cancel(bucket_id, ticket_id, owner)
                return
            except RedisError:
                await asyncio.sleep(0.2 * (attempt + 1))
        # The lease will drop it.

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
        try:
            while bucket.waiters:
                bucket.poke.clear()
                try:
                    await self._tick(bucket)
                except RedisError:
                    log.warning("matchmaking tick failed: redis unavailable", extra={"bucket": spec.bucket_id})
                except Exception:  # never let one bad tick stop the bucket's waiters being served
                    log.exception("matchmaking tick failed", extra={"bucket": spec.bucket_id})
                if not bucket.waiters:
                    break
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(bucket.poke.wait(), self.settings.tick_s)
        finally:
            if self._buckets.get(spec.bucket_id) is bucket and not bucket.waiters:
                del self._buckets[spec.bucket_id]

    async def _tick(self, bucket: _Bucket) -> None:
        """Pair on every pass (a new ticket pokes one); renew the leases, which also tells the
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
        statuses = await self.queue.renew(spec.bucket_id, [w.ticket_id for w in waiters], self.now_ms())
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
        self, spec: BucketSpec, game_id: str, players: Sequence[play_pb2.Player], tickets: Sequence[str]
    ) -> None:
        if game_id in self._starting:
            return
        self._starting.add(game_id)
        self._spawn(self._start(spec, game_id, tuple(players), tuple(tickets)), f"mm-start-{game_id}")

    def _wake_started(self, spec: BucketSpec, details: MatchDetails) -> None:
        """This process started the match: its own waiters learn their seats now, without a
        renewal round trip (waiters on other replicas learn it from the wake-up)."""
        bucket = self._buckets.get(spec.bucket_id)
        if bucket is None:
            return
        for seat, ticket in enumerate(details.tickets):
            waiter = bucket.waiters.get(ticket)
            if waiter is not None:
                waiter.status = TicketStatus("matched", details.game_id, seat, started=True)
                waiter.details = details
                waiter.wake.set()

    async def _start(
        self, spec: BucketSpec, game_id: str, players: tuple[play_pb2.Player, ...], tickets: tuple[str, ...]
    ) -> None:
        try:
            for attempt in range(4):
                try:
                    await self.starter.start_game(
                        game=spec.game,
                        options=spec.options,
                        players=players,
                        per_move_s=spec.per_move_ms / 1000.0,
                        rated=not any(p.guest for p in players),
                        origin="match",
                        game_id=game_id,
                    )
                    await self.queue.mark_started(spec.bucket_id, game_id, tickets)
                    self._wake_started(spec, MatchDetails(game_id, tickets, players, started=True))
                    return
                except asyncio.CancelledError:
                    raise
                except Refused as refused:
                    if refused.code not in _FINAL_REFUSALS:
                        log.warning("could not start a matched game: %s", refused.reason, extra={"game_id": game_id})
                        await asyncio.sleep(0.25 * 2**attempt)
                        continue
                    # It will never start (e.g. options this table size does not allow): tell the
                    # waiters now rather than let them wait.
                    log.warning("a matched game was refused: %s", refused.reason, extra={"game_id": game_id})
                    await self.queue.mark_started(spec.bucket_id, game_id, tickets, refused=True)
                    return
                except Exception:
                    log.warning(
                        "could not start a matched game",
                        exc_info=True,
                        extra={"game_id": game_id, "attempt": attempt + 1},
                    )
                    await asyncio.sleep(0.25 * 2**attempt)
        finally:
            self._starting.discard(game_id)
