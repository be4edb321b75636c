"""The Redis game store: every write of a game is one Lua script, one round trip.

Keys are hash-tagged by game (``{g:<id>}``) so one game's keys share a slot and each script runs
unchanged on Redis Cluster:

- ``tafel:{g:ID}:state``  hash: ``v`` version, ``s`` state bytes, ``g`` game, ``n`` seats,
  ``o`` options (GameOptions bytes), ``l`` last event id, ``c`` creating request id, ``f`` 1 when over,
  ``w`` the version the current commuting window began at ("" = none; see RulesServicer)
- stream entries carry ``e`` (the GameEvent) and ``t`` (the GameStatus after that event's move), so
  replayed events carry the status live ones do
- ``tafel:{g:ID}:events`` stream: field ``e`` holds a GameEvent; ids are ``<version>-<index>``
- ``tafel:{g:ID}:reqs``   hash: request id -> the first answer (response bytes), for retries;
  ``<request id>#`` -> a digest of the request it answered (a reused id with another request is
  refused; ``#`` never occurs in an id)
- ``tafel:{g:ID}:actions`` list: RecordedAction per applied action (the game's record)

A move compares the version, drops a repeated request id (answering with the first result), writes
the new state, appends its events and publishes a wake-up carrying those events, atomically.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis

from kit.redis.pipe import PipeScript, RedisPipe, url_of
from services.kit.turn_clock import ARM_FUNCTION, CLOCKS_KEY, clock_key

APPLY_LUA = (
    ARM_FUNCTION
    + """
local function pb_varint(n)
  local out = {}
  repeat
    local b = n % 128
    n = (n - b) / 128
    if n > 0 then b = b + 128 end
    out[#out + 1] = string.char(b)
  until n == 0
  return table.concat(out)
end

-- A google.protobuf.Timestamp field (tag byte given) from milliseconds since the epoch.
local function pb_timestamp_field(tag, ms)
  local nanos = (ms % 1000) * 1000000
  local inner = string.char(8) .. pb_varint((ms - ms % 1000) / 1000)
  if nanos > 0 then inner = inner .. string.char(16) .. pb_varint(nanos) end
  return string.char(tag) .. pb_varint(#inner) .. inner
end

-- The last three arguments: the GameStatus after the move (kept on each event), the request's
-- digest, and the version the commuting window began at ('' = none).
local status = ARGV[#ARGV - 2]
local digest = ARGV[#ARGV - 1]
local prior = redis.call('HGET', KEYS[3], ARGV[2])
if prior then return {1, prior, redis.call('HGET', KEYS[3], ARGV[2] .. '#') or ''} end
local v = redis.call('HGET', KEYS[1], 'v')
if not v then return {3} end
if tonumber(v) ~= tonumber(ARGV[1]) then return {2, v} end
local n = tonumber(ARGV[8])
local last = redis.call('HGET', KEYS[1], 'l')
for i = 1, n do
  last = ARGV[8 + 2 * i - 1]
  redis.call('XADD', KEYS[2], last, 'e', ARGV[8 + 2 * i], 't', status)
end
redis.call('HSET', KEYS[1], 'v', tonumber(ARGV[1]) + 1, 's', ARGV[3], 'l', last, 'f', ARGV[5], 'w', ARGV[#ARGV])
redis.call('HSET', KEYS[3], ARGV[2], ARGV[4], ARGV[2] .. '#', digest)
local ttl = tonumber(ARGV[6])
redis.call('EXPIRE', KEYS[1], ttl)
redis.call('EXPIRE', KEYS[2], ttl)
redis.call('EXPIRE', KEYS[3], ttl)
redis.call('RPUSH', KEYS[4], ARGV[10 + 2 * n])
redis.call('EXPIRE', KEYS[4], ttl)
if n > 0 then redis.call('PUBLISH', ARGV[7], ARGV[9 + 2 * n]) end
if #KEYS >= 6 then
  local b = 10 + 2 * n
  local armed = arm(KEYS[5], KEYS[6], ARGV[b + 1], tonumber(ARGV[1]) + 1, ARGV[b + 2], ARGV[b + 3], ARGV[b + 4],
                    tonumber(ARGV[b + 5]))
  local deadline = tonumber(armed[2])
  if deadline > 0 then
    -- The kept answer gets the deadline armed with it (ApplyMoveResponse.turn_deadline, appended
    -- as an encoded field: protobuf merges concatenated messages), so a retry that comes after
    -- the game moved on (the clock no longer holds this version) is answered with it too.
    redis.call('HSET', KEYS[3], ARGV[2], ARGV[4] .. pb_timestamp_field(42, deadline))
  end
  for i = 7, #KEYS do redis.call('EXPIRE', KEYS[i], tonumber(ARGV[b + 5])) end
  return {0, armed[2]}
end
return {0}
"""
)

CREATE_LUA = """
local c = redis.call('HGET', KEYS[1], 'c')
if c then
  if ARGV[1] ~= '' and c == ARGV[1] then
    return {1, redis.call('HGET', KEYS[3], ARGV[1]) or ''}
  end
  return {2}
end
-- ARGV[12] the GameStatus at version 0, ARGV[13] the commuting window's start, then the creation's
-- events as (id, GameEvent) pairs (GameCreated first; ARGV[6] is the last of their ids).
redis.call('HSET', KEYS[1], 'v', 0, 's', ARGV[2], 'g', ARGV[3], 'n', ARGV[4], 'o', ARGV[5],
           'l', ARGV[6], 'c', ARGV[1], 'f', 0, 'w', ARGV[13])
for i = 14, #ARGV - 1, 2 do
  redis.call('XADD', KEYS[2], ARGV[i], 'e', ARGV[i + 1], 't', ARGV[12])
end
if ARGV[1] ~= '' then redis.call('HSET', KEYS[3], ARGV[1], ARGV[8]) end
local ttl = tonumber(ARGV[9])
redis.call('EXPIRE', KEYS[1], ttl)
redis.call('EXPIRE', KEYS[2], ttl)
redis.call('EXPIRE', KEYS[3], ttl)
redis.call('PUBLISH', ARGV[10], ARGV[11])
return {0}
"""

LOAD_LUA = """
local prior = ''
if ARGV[1] ~= '' then prior = redis.call('HGET', KEYS[2], ARGV[1]) or '' end
local digest = ''
if prior ~= '' then digest = redis.call('HGET', KEYS[2], ARGV[1] .. '#') or '' end
return {prior, redis.call('HMGET', KEYS[1], 'v', 's', 'g', 'n', 'o', 'l', 'f', 'w'), digest}
"""


@dataclass(frozen=True)
class GameKeys:
    state: str
    events: str
    requests: str
    actions: str
    channel: str


def game_keys(game_id: str) -> GameKeys:
    tag = f"{{g:{game_id}}}"
    return GameKeys(
        state=f"tafel:{tag}:state",
        events=f"tafel:{tag}:events",
        requests=f"tafel:{tag}:reqs",
        actions=f"tafel:{tag}:actions",
        channel=f"tafel:wake:{tag}",
    )


@dataclass(frozen=True)
class StoredGame:
    game_id: str
    game: str
    seats: int
    version: int
    state: bytes
    options: bytes  # GameOptions
    last_event_id: str
    over: bool
    window_from: int | None = None  # the version the current commuting window began at


@dataclass(frozen=True)
class Committed:
    deadline_ms: int | None = None  # the turn deadline armed with the commit (0: game over)


@dataclass(frozen=True)
class ClockArm:
    """Arm the game's turn clock in the commit (see services/kit/turn_clock.py)."""

    to_act: str  # comma-separated seats to act after the action; "" when over
    per_move_ms: int
    now_ms: int
    ttl_s: int
    keep_alive: Sequence[str] = ()


@dataclass(frozen=True)
class Replayed:
    """The request id was seen before: here is the first answer, and the digest of the request it
    answered (b"" for answers kept before digests were)."""

    response: bytes
    digest: bytes = b""


@dataclass(frozen=True)
class Conflict:
    current_version: int


@dataclass(frozen=True)
class Missing:
    pass


@dataclass(frozen=True)
class Exists:
    pass


CommitResult = Committed | Replayed | Conflict | Missing
CreateResult = Committed | Replayed | Exists
LoadResult = StoredGame | Replayed | Missing


@dataclass(frozen=True)
class StreamEntry:
    event_id: str
    payload: bytes  # GameEvent bytes
    status: bytes  # GameStatus bytes after the event's move (b"" for entries older than this field)


@dataclass(frozen=True)
class NewEvent:
    event_id: str
    payload: bytes  # GameEvent bytes


class GameStore:
    def __init__(self, redis: Redis, *, live_ttl_s: int, finished_ttl_s: int) -> None:
        self.redis = redis
        self.live_ttl_s = live_ttl_s
        self.finished_ttl_s = finished_ttl_s
        # Every script runs on one lean pipelined connection: calls made while others are on the
        # wire leave together, replies are parsed in bulk (redis-py's pooled path, with its retry
        # wrapper, pool checkout and a timeout per reply, was a visible share of a move).
        self._pipe = RedisPipe(url_of(redis))
        self._apply = PipeScript(self._pipe, APPLY_LUA)
        self._create = PipeScript(self._pipe, CREATE_LUA)
        self._load = PipeScript(self._pipe, LOAD_LUA)

    async def close(self) -> None:
        await self._pipe.close()

    async def create(
        self,
        *,
        game_id: str,
        request_id: str,
        game: str,
        seats: int,
        options: bytes,
        state: bytes,
        created: NewEvent | Sequence[NewEvent],
        response: bytes,
        publish: bytes,
        status: bytes = b"",
        window_from: int | None = None,
    ) -> CreateResult:
        """Write a new game: `created` is its first events (GameCreated first), `status` the
        GameStatus at version 0 kept with each of them."""
        keys = game_keys(game_id)
        if isinstance(created, NewEvent):
            created = (created,)
        pairs: list[Any] = []
        for event in created:
            pairs.extend((event.event_id, event.payload))
        reply: Any = await self._create(
            [keys.state, keys.events, keys.requests],
            [
                request_id,
                state,
                game,
                seats,
                options,
                created[-1].event_id,
                b"",  # (unused: the events follow the fixed arguments)
                response,
                self.live_ttl_s,
                keys.channel,
                publish,
                status,
                "" if window_from is None else window_from,
                *pairs,
            ],
        )
        code = int(reply[0])
        if code == 0:
            return Committed()
        if code == 1:
            return Replayed(bytes(reply[1]))
        return Exists()

    async def load(self, game_id: str, request_id: str = "") -> LoadResult:
        keys = game_keys(game_id)
        reply: Any = await self._load([keys.state, keys.requests], [request_id])
        prior, fields, digest = reply
        if prior:
            return Replayed(bytes(prior), bytes(digest or b""))
        version, state, game, seats, options, last, over, window = fields
        if version is None:
            return Missing()
        return StoredGame(
            game_id=game_id,
            game=bytes(game).decode(),
            seats=int(seats),
            version=int(version),
            state=bytes(state),
            options=bytes(options or b""),
            last_event_id=bytes(last or b"").decode(),
            over=bytes(over or b"0") == b"1",
            window_from=int(window) if window else None,
        )

    async def commit(
        self,
        *,
        game_id: str,
        expected_version: int,
        request_id: str,
        state: bytes,
        events: Sequence[NewEvent],
        response: bytes,
        over: bool,
        publish: bytes,
        action: bytes,
        status: bytes = b"",
        digest: bytes = b"",
        window_from: int | None = None,
        clock: ClockArm | None = None,
    ) -> CommitResult:
        """Commit one action against `expected_version`. `status` (the GameStatus after it) is
        kept on each event; `digest` identifies the request beside its stored answer; `window_from`
        is the version the commuting window in force after the action began at (None: none)."""
        keys = game_keys(game_id)
        args: list[Any] = [
            expected_version,
            request_id,
            state,
            response,
            1 if over else 0,
            self.finished_ttl_s if over else self.live_ttl_s,
            keys.channel,
            len(events),
        ]
        for event in events:
            args.extend((event.event_id, event.payload))
        args.extend((publish, action))
        script_keys = [keys.state, keys.events, keys.requests, keys.actions]
        if clock is not None:
            script_keys.extend((clock_key(game_id), CLOCKS_KEY, *clock.keep_alive))
            args.extend((game_id, clock.to_act, clock.per_move_ms, clock.now_ms, clock.ttl_s))
        args.extend((status, digest, "" if window_from is None else window_from))
        reply: Any = await self._apply(script_keys, args)
        code = int(reply[0])
        if code == 0:
            return Committed(int(reply[1]) if len(reply) > 1 else None)
        if code == 1:
            return Replayed(bytes(reply[1]), bytes(reply[2] or b""))
        if code == 2:
            return Conflict(int(reply[1]))
        return Missing()

    async def read_actions(self, game_id: str) -> list[bytes]:
        """The game's RecordedAction messages, in order."""
        rows: Any = await self.redis.lrange(game_keys(game_id).actions, 0, -1)
        return [bytes(row) for row in rows]

    async def read_events(self, game_id: str, after: str = "-", count: int | None = None) -> list[tuple[str, bytes]]:
        """Events after the id `after` ("-" = from the start), in order."""
        return [(row.event_id, row.payload) for row in await self.read_stream(game_id, after, count)]

    async def read_stream(self, game_id: str, after: str = "-", count: int | None = None) -> list[StreamEntry]:
        """Events after the id `after` ("-" = from the start), each with the status kept beside it."""
        keys = game_keys(game_id)
        start = "-" if after in ("", "-") else f"({after}"
        rows: Any = await self.redis.xrange(keys.events, min=start, max="+", count=count)
        return [
            StreamEntry(_text(event_id), bytes(fields[b"e"]), bytes(fields.get(b"t", b""))) for event_id, fields in rows
        ]

    async def end_of_stream(self, game_id: str) -> tuple[str, bool] | None:
        """The game's last event id and whether it is over; None when there is no such game."""
        last, over = await self.redis.hmget(game_keys(game_id).state, ["l", "f"])
        if last is None:
            return None
        return _text(last), _text(over or b"0") == "1"


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
