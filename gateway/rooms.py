"""Private rooms: a table with a short invite code that others join; it starts by itself when its
seats are filled, or when the host starts it once the game's minimum is seated.

Each room's keys share one hash tag (``{room:<code>}``), so every script touches one slot:

- ``tafel:{room:C}``       hash: ``g`` game, ``o`` GameOptions bytes (canonical), ``pm`` per-move ms,
  ``h`` host player id, ``hb`` host Player bytes, ``n`` seats, ``mn`` the game's minimum seats,
  ``s`` state (open | starting | started | closed), ``gid`` the game id once starting, ``x`` expiry
  (ms since the epoch), ``v`` version (bumped on every change), ``c`` created ms
- ``tafel:{room:C}:seats`` list: player ids in joining order (= seat order)
- ``tafel:{room:C}:who``   hash: player id -> Player bytes

Every change is one script (no GET-modify-SET): of two joins for the last seat exactly one wins.
The change that fills the table (or the host's start) moves the room to *starting* and fixes the
game id in the same script; the gateway that made that change creates the game (idempotent for
that id) and marks the room *started*. Anyone who later sees a room still *starting* (a gateway died
in between) creates the same game again, harmlessly, and marks it. Every change publishes the code
on one channel; watchers re-read the room (and also poll, in case a message is lost).
Rooms expire: an open room after ``room_ttl``, a started one ``started_ttl`` after it started, a
closed (emptied) one shortly after.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import re
import secrets
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import grpc
from redis.asyncio import Redis
from tafel.games.v1 import games_pb2
from tafel.play.v1 import play_pb2

from gateway.games import PRIVATE_ORIGIN
from gateway.matchmaking import DEFAULT_REDIS_SLOTS, GameStarter, LimitedScript, Wakeups
from kit.errors import Refused, invalid
from kit.redis.pipe import RedisPipe
from kit.settings import Env

log = logging.getLogger("tafel.gateway.rooms")

ROOM_CHANNEL = "tafel:lobby:rooms"
# No 0/O, 1/I/L: a code read aloud or off a screen cannot be mistyped into another.
CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
CODE_LENGTH = 10  # 31^10 ~ 8e14 codes: guessing one of 1,000 open rooms at 1,000 tries/s takes ~25 years
_CODE_PATTERN = re.compile(f"^[{CODE_ALPHABET}]{{{CODE_LENGTH}}}$")
_STATES = {
    "open": play_pb2.ROOM_STATE_OPEN,
    "starting": play_pb2.ROOM_STATE_OPEN,  # shown as open until the game exists
    "started": play_pb2.ROOM_STATE_STARTED,
    "closed": play_pb2.ROOM_STATE_CLOSED,
}


@dataclass(frozen=True)
class RoomSettings:
    room_ttl_s: float = 3600.0  # an open room lives this long
    started_ttl_s: float = 3600.0  # a started room stays readable this long
    closed_ttl_s: float = 60.0  # an emptied room stays readable (as closed) this long
    poll_s: float = 5.0  # watchers re-read this often even without a wake-up

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> RoomSettings:
        env = Env(environ)
        return cls(
            room_ttl_s=env.number("TAFEL_ROOM_TTL_S", 3600.0, 10.0, 7 * 86_400.0),
            started_ttl_s=env.number("TAFEL_ROOM_STARTED_TTL_S", 3600.0, 10.0, 7 * 86_400.0),
            closed_ttl_s=env.number("TAFEL_ROOM_CLOSED_TTL_S", 60.0, 1.0, 86_400.0),
            poll_s=env.number("TAFEL_ROOM_POLL_S", 5.0, 0.05, 300.0),
        )


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normalize_code(raw: str) -> str:
    """An invite code as typed (any case, spaces or dashes) -> its canonical form, or
    INVALID_ARGUMENT."""
    code = re.sub(r"[\s-]", "", raw).upper()
    if not _CODE_PATTERN.match(code):
        raise invalid("BAD_ROOM_CODE", f"a room code is {CODE_LENGTH} characters of {CODE_ALPHABET}", field="code")
    return code


def room_keys(code: str) -> list[str]:
    tag = f"tafel:{{room:{code}}}"
    return [tag, f"{tag}:seats", f"{tag}:who"]


# ---------------------------------------------------------------------------------------------
# Lua: every script answers {status, {meta hash as a flat list, player bytes in seat order}}

_PRELUDE = """
local META, SEATS, WHO = KEYS[1], KEYS[2], KEYS[3]
local function snapshot()
  local meta = redis.call('HGETALL', META)
  local ids = redis.call('LRANGE', SEATS, 0, -1)
  local players = {}
  for i, pid in ipairs(ids) do players[i] = redis.call('HGET', WHO, pid) or '' end
  return {meta, players}
end
local function expire_at(ms)
  for i = 1, #KEYS do redis.call('PEXPIREAT', KEYS[i], ms) end
end
local function changed(channel, code)
  redis.call('HINCRBY', META, 'v', 1)
  redis.call('PUBLISH', channel, code)
end
"""

# ARGV: game, options, per-move ms, host id, host bytes, seats, min seats, now ms, expires ms, game id,
# watchable (1/0)
CREATE_LUA = (
    _PRELUDE
    + """
if redis.call('EXISTS', META) == 1 then return {'TAKEN'} end
redis.call('HSET', META, 'g', ARGV[1], 'o', ARGV[2], 'pm', ARGV[3], 'h', ARGV[4], 'hb', ARGV[5],
           'n', ARGV[6], 'mn', ARGV[7], 's', 'open', 'x', ARGV[9], 'v', 1, 'c', ARGV[8], 'w', ARGV[11])
redis.call('RPUSH', SEATS, ARGV[4])
redis.call('HSET', WHO, ARGV[4], ARGV[5])
if tonumber(ARGV[6]) <= 1 then redis.call('HSET', META, 's', 'starting', 'gid', ARGV[10]) end
expire_at(tonumber(ARGV[9]))
return {'OK', snapshot()}
"""
)

# ARGV: player id, player bytes, game id (used if this join fills the table), channel, code
JOIN_LUA = (
    _PRELUDE
    + """
if redis.call('EXISTS', META) == 0 then return {'NOT_FOUND'} end
local pid = ARGV[1]
if redis.call('HEXISTS', WHO, pid) == 1 then return {'OK', snapshot()} end
if redis.call('HGET', META, 's') ~= 'open' then return {'STATE', snapshot()} end
local n = tonumber(redis.call('HGET', META, 'n'))
if redis.call('LLEN', SEATS) >= n then return {'FULL', snapshot()} end
redis.call('RPUSH', SEATS, pid)
redis.call('HSET', WHO, pid, ARGV[2])
if redis.call('LLEN', SEATS) >= n then redis.call('HSET', META, 's', 'starting', 'gid', ARGV[3]) end
changed(ARGV[4], ARGV[5])
return {'OK', snapshot()}
"""
)

# ARGV: player id, channel, code, now ms, closed ttl ms
LEAVE_LUA = (
    _PRELUDE
    + """
if redis.call('EXISTS', META) == 0 then return {'NOT_FOUND'} end
local pid = ARGV[1]
if redis.call('HEXISTS', WHO, pid) == 0 then return {'NOT_IN_ROOM', snapshot()} end
if redis.call('HGET', META, 's') ~= 'open' then return {'STATE', snapshot()} end
redis.call('LREM', SEATS, 0, pid)
redis.call('HDEL', WHO, pid)
if redis.call('LLEN', SEATS) == 0 then
  local until_ms = math.min(tonumber(redis.call('HGET', META, 'x')), tonumber(ARGV[4]) + tonumber(ARGV[5]))
  redis.call('HSET', META, 's', 'closed', 'x', until_ms)
  expire_at(until_ms)
elseif redis.call('HGET', META, 'h') == pid then
  local next_host = redis.call('LINDEX', SEATS, 0)
  redis.call('HSET', META, 'h', next_host, 'hb', redis.call('HGET', WHO, next_host))
end
changed(ARGV[2], ARGV[3])
return {'OK', snapshot()}
"""
)

# ARGV: player id, game id, channel, code
START_LUA = (
    _PRELUDE
    + """
if redis.call('EXISTS', META) == 0 then return {'NOT_FOUND'} end
if redis.call('HGET', META, 'h') ~= ARGV[1] then return {'NOT_HOST', snapshot()} end
local s = redis.call('HGET', META, 's')
if s == 'starting' or s == 'started' then return {'OK', snapshot()} end
if s ~= 'open' then return {'STATE', snapshot()} end
local count = redis.call('LLEN', SEATS)
if count < tonumber(redis.call('HGET', META, 'mn')) then return {'NOT_ENOUGH', snapshot()} end
redis.call('HSET', META, 's', 'starting', 'gid', ARGV[2], 'n', count)
changed(ARGV[3], ARGV[4])
return {'OK', snapshot()}
"""
)

# ARGV: game id, channel, code, expires ms, new state (started | closed)
SETTLE_LUA = (
    _PRELUDE
    + """
if redis.call('EXISTS', META) == 0 then return {'NOT_FOUND'} end
if redis.call('HGET', META, 's') == 'starting' and redis.call('HGET', META, 'gid') == ARGV[1] then
  redis.call('HSET', META, 's', ARGV[5], 'x', ARGV[4])
  expire_at(tonumber(ARGV[4]))
  changed(ARGV[2], ARGV[3])
end
return {'OK', snapshot()}
"""
)

READ_LUA = (
    _PRELUDE
    + """
if redis.call('EXISTS', META) == 0 then return {'NOT_FOUND'} end
return {'OK', snapshot()}
"""
)


# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RoomSnapshot:
    code: str
    state: str
    game: str
    options: games_pb2.GameOptions
    per_move_ms: int
    host: play_pb2.Player
    players: tuple[play_pb2.Player, ...]
    seats: int
    min_seats: int
    game_id: str
    expires_ms: int
    version: int
    watchable: bool = False

    def to_proto(self) -> play_pb2.Room:
        room = play_pb2.Room(
            code=self.code,
            game=self.game,
            options=self.options,
            host=self.host,
            players=self.players,
            seats=self.seats,
            state=_STATES.get(self.state, play_pb2.ROOM_STATE_UNSPECIFIED),
            game_id=self.game_id if self.state == "started" else "",
            watchable=self.watchable,
        )
        room.time_control.per_move.FromMilliseconds(self.per_move_ms)
        room.expires_at.FromMilliseconds(self.expires_ms)
        return room

    @property
    def final(self) -> bool:
        return self.state in ("started", "closed")


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _bytes(value: Any) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode()


def _snapshot(code: str, raw: Any) -> RoomSnapshot:
    flat, players = raw
    meta = {_text(flat[i]): flat[i + 1] for i in range(0, len(flat), 2)}
    return RoomSnapshot(
        code=code,
        state=_text(meta.get("s", b"closed")),
        game=_text(meta.get("g", b"")),
        options=games_pb2.GameOptions.FromString(_bytes(meta.get("o", b""))),
        per_move_ms=int(meta.get("pm", 0)),
        host=play_pb2.Player.FromString(_bytes(meta.get("hb", b""))),
        players=tuple(play_pb2.Player.FromString(_bytes(p)) for p in players),
        seats=int(meta.get("n", 0)),
        min_seats=int(meta.get("mn", 0)),
        game_id=_text(meta.get("gid", b"")),
        expires_ms=int(meta.get("x", 0)),
        version=int(meta.get("v", 0)),
        watchable=_text(meta.get("w", b"0")) == "1",
    )


def _not_found(code: str) -> Refused:
    return Refused(grpc.StatusCode.NOT_FOUND, "ROOM_NOT_FOUND", f"no open room {code} (rooms expire)")


def _state_refusal(room: RoomSnapshot) -> Refused:
    if room.state in ("starting", "started"):
        return Refused(grpc.StatusCode.FAILED_PRECONDITION, "ROOM_STARTED", "the room's game has started")
    return Refused(grpc.StatusCode.FAILED_PRECONDITION, "ROOM_CLOSED", "the room is closed")


def new_room_game_id() -> str:
    return "r-" + secrets.token_urlsafe(12)


class Rooms:
    """Private tables, all state in Redis; any gateway replica serves any room."""

    def __init__(
        self,
        redis: Redis,
        starter: GameStarter,
        settings: RoomSettings,
        *,
        clock: Callable[[], float] = time.time,
        slots: asyncio.Semaphore | None = None,
        pipe: RedisPipe | None = None,
    ) -> None:
        self.redis = redis
        self.starter = starter
        self.settings = settings
        self.clock = clock
        slots = slots or asyncio.Semaphore(DEFAULT_REDIS_SLOTS)
        self._create = LimitedScript(redis, CREATE_LUA, slots, pipe)
        self._join = LimitedScript(redis, JOIN_LUA, slots, pipe)
        self._leave = LimitedScript(redis, LEAVE_LUA, slots, pipe)
        self._start = LimitedScript(redis, START_LUA, slots, pipe)
        self._settle = LimitedScript(redis, SETTLE_LUA, slots, pipe)
        self._read = LimitedScript(redis, READ_LUA, slots, pipe)
        self._watchers: dict[str, set[asyncio.Event]] = {}
        self._starting: dict[str, asyncio.Future[RoomSnapshot]] = {}

    def now_ms(self) -> int:
        return int(self.clock() * 1000)

    def attach(self, wakeups: Wakeups) -> None:
        wakeups.on(ROOM_CHANNEL, self._on_wakeup)

    def _on_wakeup(self, payload: bytes) -> None:
        for event in self._watchers.get(payload.decode(errors="replace"), ()):
            event.set()

    # -- operations ------------------------------------------------------------------------------

    async def create(
        self,
        *,
        game: str,
        options: games_pb2.GameOptions,
        per_move_ms: int,
        seats: int,
        min_seats: int,
        host: play_pb2.Player,
        watchable: bool = False,
    ) -> RoomSnapshot:
        now = self.now_ms()
        expires = now + int(self.settings.room_ttl_s * 1000)
        for _ in range(8):
            code = new_code()
            raw = await self._create(
                keys=room_keys(code),
                args=[
                    game,
                    options.SerializeToString(deterministic=True),
                    per_move_ms,
                    host.player_id,
                    host.SerializeToString(),
                    seats,
                    min_seats,
                    now,
                    expires,
                    new_room_game_id(),
                    1 if watchable else 0,
                ],
            )
            if _text(raw[0]) == "OK":
                return await self._settled(_snapshot(code, raw[1]))
        raise Refused(grpc.StatusCode.UNAVAILABLE, "NO_FREE_CODE", "could not find a free room code; retry")

    async def join(self, code: str, player: play_pb2.Player) -> RoomSnapshot:
        raw = await self._join(
            keys=room_keys(code),
            args=[player.player_id, player.SerializeToString(), new_room_game_id(), ROOM_CHANNEL, code],
        )
        status = _text(raw[0])
        if status == "NOT_FOUND":
            raise _not_found(code)
        room = _snapshot(code, raw[1])
        if status == "FULL":
            raise Refused(grpc.StatusCode.FAILED_PRECONDITION, "ROOM_FULL", "every seat of the room is taken")
        if status == "STATE":
            raise _state_refusal(room)
        return await self._settled(room)

    async def leave(self, code: str, player: play_pb2.Player) -> RoomSnapshot:
        raw = await self._leave(
            keys=room_keys(code),
            args=[player.player_id, ROOM_CHANNEL, code, self.now_ms(), int(self.settings.closed_ttl_s * 1000)],
        )
        status = _text(raw[0])
        if status == "NOT_FOUND":
            raise _not_found(code)
        room = _snapshot(code, raw[1])
        if status == "NOT_IN_ROOM":
            raise Refused(grpc.StatusCode.FAILED_PRECONDITION, "NOT_IN_ROOM", "you are not in this room")
        if status == "STATE":
            raise _state_refusal(room)
        return room

    async def start(self, code: str, player: play_pb2.Player) -> RoomSnapshot:
        raw = await self._start(keys=room_keys(code), args=[player.player_id, new_room_game_id(), ROOM_CHANNEL, code])
        status = _text(raw[0])
        if status == "NOT_FOUND":
            raise _not_found(code)
        room = _snapshot(code, raw[1])
        if status == "NOT_HOST":
            raise Refused(grpc.StatusCode.PERMISSION_DENIED, "NOT_HOST", "only the room's host may start it")
        if status == "NOT_ENOUGH":
            raise Refused(
                grpc.StatusCode.FAILED_PRECONDITION,
                "NOT_ENOUGH_PLAYERS",
                f"{room.game} needs at least {room.min_seats} players; {len(room.players)} are seated",
            )
        if status == "STATE":
            raise _state_refusal(room)
        return await self._settled(room)

    async def get(self, code: str) -> RoomSnapshot:
        room = await self._get(code)
        if room is None:
            raise _not_found(code)
        return await self._settled_quietly(room)

    async def _get(self, code: str) -> RoomSnapshot | None:
        raw = await self._read(keys=room_keys(code), args=[])
        if _text(raw[0]) == "NOT_FOUND":
            return None
        return _snapshot(code, raw[1])

    async def watch(self, code: str) -> AsyncIterator[RoomSnapshot]:
        """The room now and after every change, ending with the started (or closed) room."""
        event = asyncio.Event()
        self._watchers.setdefault(code, set()).add(event)
        try:
            room = await self.get(code)
            yield room
            while not room.final:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(event.wait(), self.settings.poll_s)
                event.clear()
                latest = await self._get(code)
                if latest is None:
                    # Expired: say so once, as closed.
                    yield dataclasses.replace(room, state="closed")
                    return
                latest = await self._settled_quietly(latest)
                if latest.version != room.version or latest.state != room.state:
                    room = latest
                    yield room
        finally:
            watchers = self._watchers.get(code)
            if watchers is not None:
                watchers.discard(event)
                if not watchers:
                    del self._watchers[code]

    # -- starting the game -----------------------------------------------------------------------

    async def _settled(self, room: RoomSnapshot) -> RoomSnapshot:
        """A room that is *starting* gets its game created (once per process at a time; the game
        id makes it idempotent across processes) and is marked started."""
        if room.state != "starting":
            return room
        pending = self._starting.get(room.game_id)
        if pending is None:
            pending = asyncio.ensure_future(self._start_game(room))
            self._starting[room.game_id] = pending
            pending.add_done_callback(lambda _: self._starting.pop(room.game_id, None))
        return await asyncio.shield(pending)

    async def _settled_quietly(self, room: RoomSnapshot) -> RoomSnapshot:
        """For reads: try to finish a start left half done, but a failure only leaves the room as
        it is (open, starting) rather than failing the read."""
        try:
            return await self._settled(room)
        except Refused as refused:
            if refused.reason == "ROOM_CLOSED":
                return (await self._get(room.code)) or dataclasses.replace(room, state="closed")
            return room
        except Exception:
            log.warning("could not start a room's game", exc_info=True, extra={"code": room.code})
            return room

    async def _start_game(self, room: RoomSnapshot) -> RoomSnapshot:
        try:
            await self.starter.start_game(
                game=room.game,
                options=room.options,
                players=room.players,
                per_move_s=room.per_move_ms / 1000.0,
                rated=False,
                origin="room" if room.watchable else PRIVATE_ORIGIN,
                game_id=room.game_id,
            )
        except Refused as refused:
            if refused.code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.FAILED_PRECONDITION):
                # The game can never be created from this room: close it rather than leave it stuck.
                log.warning("room game refused; closing the room", extra={"code": room.code, "reason": refused.reason})
                await self._settle_as(room, "closed", int(self.settings.closed_ttl_s * 1000))
                raise Refused(
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "ROOM_CLOSED",
                    "the room's game could not be created; the room is closed",
                ) from None
            raise
        return await self._settle_as(room, "started", int(self.settings.started_ttl_s * 1000))

    async def _settle_as(self, room: RoomSnapshot, state: str, ttl_ms: int) -> RoomSnapshot:
        raw = await self._settle(
            keys=room_keys(room.code),
            args=[room.game_id, ROOM_CHANNEL, room.code, self.now_ms() + ttl_ms, state],
        )
        if _text(raw[0]) == "NOT_FOUND":
            raise _not_found(room.code)
        return _snapshot(room.code, raw[1])
