"""Private rooms: a table with a short invite code that others join; it starts by itself when its
seats are filled, or when the host starts it once the game's minimum is seated.

Each room's keys share one hash tag (``{room:<code>}``), so every script touches one slot
(kit/redis/keys.py room_keys; what each key holds: kit/redis/lua/rooms/room.lua; the scripts,
one per change, are the other files there):

- ``tafel:{room:C}``       hash: the room (game, options, host, seats, state, game id, expiry, version)
- ``tafel:{room:C}:seats`` list: player ids in joining order (= seat order)
- ``tafel:{room:C}:who``   hash: player id -> Player bytes

Every change is one script (no GET-modify-SET): of two joins for the last seat exactly one wins.
The change that fills the table (or the host's start) moves the room to *starting* and fixes the
game id in the same script; the gateway that made that change creates the game (idempotent for
that id) and marks the room *started*. Anyone who later sees a room still *starting* (a gateway died
in between) creates the same game again, harmlessly, and marks it. Every change publishes the code
on one channel (ROOMS_CHANNEL), taken through the process's one pub/sub connection; watchers
re-read the room (and also poll, in case a message is lost).
Rooms expire: an open room after ``room_ttl``, a started one ``started_ttl`` after it started, a
closed (emptied) one shortly after.

Seats are taken in joining order, and the game seats them so, except where the host asked to sit
last (``hl`` in the room's hash, ``host_last``): a challenge to a bot whose challenger moves second
(gateway/challenges/bots.py). It is written once, right after the create and before anyone but the
host knows the code, so every gateway that starts the room's game reads it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import re
import secrets
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import grpc
from tafel.games.v1 import games_pb2
from tafel.play.v1 import play_pb2

from gateway.games import PRIVATE_ORIGIN
from gateway.matchmaking.ports import GameStarter
from gateway.settings import RoomSettings
from gateway.timecontrol import time_control_of
from kit.errors import Refused, invalid
from kit.redis.keys import ROOMS_CHANNEL, room_keys
from kit.redis.layer import RedisLayer
from kit.redis.pubsub import PubSub, Subscription
from kit.redis.replies import text
from kit.redis.scripts import script
from kit.tasks import spawn

log = logging.getLogger("tafel.gateway.rooms")

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


def _not_enough(least: int, seated: int) -> str:
    """NOT_ENOUGH_PLAYERS in a player's words (counts with their plurals)."""
    players = "1 player is" if seated == 1 else f"{seated} players are"
    return f"this game needs at least {least} players and {players} seated: wait for more, or add a bot"


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normalize_code(raw: str) -> str:
    """An invite code as typed (any case, spaces or dashes) -> its canonical form, or
    INVALID_ARGUMENT."""
    code = re.sub(r"[\s-]", "", raw).upper()
    if not _CODE_PATTERN.match(code):
        raise invalid(
            "BAD_ROOM_CODE",
            f"that is not a room code: a code is {CODE_LENGTH} letters and digits, as in the invite link",
            field="code",
        )
    return code


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
    host_last: bool = False  # the game seats the host after the others (joining order otherwise)

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
        room.time_control.CopyFrom(time_control_of(self.per_move_ms))
        room.expires_at.FromMilliseconds(self.expires_ms)
        return room

    @property
    def final(self) -> bool:
        return self.state in ("started", "closed")


def _bytes(value: Any) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode()


def _snapshot(code: str, raw: Any) -> RoomSnapshot:
    flat, players = raw
    meta = {text(flat[i]): flat[i + 1] for i in range(0, len(flat), 2)}
    return RoomSnapshot(
        code=code,
        state=text(meta.get("s", b"closed")),
        game=text(meta.get("g", b"")),
        options=games_pb2.GameOptions.FromString(_bytes(meta.get("o", b""))),
        per_move_ms=int(meta.get("pm", 0)),
        host=play_pb2.Player.FromString(_bytes(meta.get("hb", b""))),
        players=tuple(play_pb2.Player.FromString(_bytes(p)) for p in players),
        seats=int(meta.get("n", 0)),
        min_seats=int(meta.get("mn", 0)),
        game_id=text(meta.get("gid", b"")),
        expires_ms=int(meta.get("x", 0)),
        version=int(meta.get("v", 0)),
        watchable=text(meta.get("w", b"0")) == "1",
        host_last=text(meta.get("hl", b"0")) == "1",
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
        layer: RedisLayer,
        pubsub: PubSub,
        starter: GameStarter,
        settings: RoomSettings,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.layer = layer
        self.pubsub = pubsub
        self.starter = starter
        self.settings = settings
        self.clock = clock
        self._watchers: dict[str, set[asyncio.Event]] = {}
        self._starting: dict[str, asyncio.Future[RoomSnapshot]] = {}
        self._subscription: Subscription | None = None

    def now_ms(self) -> int:
        return int(self.clock() * 1000)

    async def listen(self) -> None:
        """Subscribe to the rooms' changes (idempotent); watchers poll too, so a slow confirmation
        or a lost message only delays them."""
        if self._subscription is None:
            self.pubsub.start()
            self._subscription = self.pubsub.subscribe(ROOMS_CHANNEL, self._on_wakeup, on_live=self._on_live)
        with contextlib.suppress(TimeoutError):
            await self._subscription.ready()

    def close(self) -> None:
        if self._subscription is not None:
            self._subscription.cancel()
            self._subscription = None

    def _on_live(self, again: bool) -> None:
        if again:  # changes may have been missed while reconnecting: every watcher re-reads
            for events in self._watchers.values():
                for event in events:
                    event.set()

    def _on_wakeup(self, _channel: bytes, payload: bytes) -> None:
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
        host_last: bool = False,
    ) -> RoomSnapshot:
        now = self.now_ms()
        expires = now + int(self.settings.room_ttl_s * 1000)
        for _ in range(8):
            code = new_code()
            raw = await self.layer.run(
                script("rooms/create"),
                room_keys(code),
                [
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
            if text(raw[0]) == "OK":
                room = _snapshot(code, raw[1])
                if host_last and room.seats > 1:
                    await self.layer.call("HSET", room_keys(code)[0], "hl", "1")
                    room = dataclasses.replace(room, host_last=True)
                return await self._settled(room)
        raise Refused(grpc.StatusCode.UNAVAILABLE, "NO_FREE_CODE", "could not find a free room code; retry")

    async def join(self, code: str, player: play_pb2.Player) -> RoomSnapshot:
        raw = await self.layer.run(
            script("rooms/join"),
            room_keys(code),
            [player.player_id, player.SerializeToString(), new_room_game_id(), ROOMS_CHANNEL, code],
        )
        status = text(raw[0])
        if status == "NOT_FOUND":
            raise _not_found(code)
        room = _snapshot(code, raw[1])
        if status == "FULL":
            raise Refused(grpc.StatusCode.FAILED_PRECONDITION, "ROOM_FULL", "every seat of the room is taken")
        if status == "STATE":
            raise _state_refusal(room)
        return await self._settled(room)

    async def leave(self, code: str, player: play_pb2.Player) -> RoomSnapshot:
        raw = await self.layer.run(
            script("rooms/leave"),
            room_keys(code),
            [player.player_id, ROOMS_CHANNEL, code, self.now_ms(), int(self.settings.closed_ttl_s * 1000)],
        )
        status = text(raw[0])
        if status == "NOT_FOUND":
            raise _not_found(code)
        room = _snapshot(code, raw[1])
        if status == "NOT_IN_ROOM":
            raise Refused(grpc.StatusCode.FAILED_PRECONDITION, "NOT_IN_ROOM", "you are not in this room")
        if status == "STATE":
            raise _state_refusal(room)
        return room

    async def start(self, code: str, player: play_pb2.Player) -> RoomSnapshot:
        raw = await self.layer.run(
            script("rooms/start"), room_keys(code), [player.player_id, new_room_game_id(), ROOMS_CHANNEL, code]
        )
        status = text(raw[0])
        if status == "NOT_FOUND":
            raise _not_found(code)
        room = _snapshot(code, raw[1])
        if status == "NOT_HOST":
            raise Refused(grpc.StatusCode.PERMISSION_DENIED, "NOT_HOST", "only the room's host may start it")
        if status == "NOT_ENOUGH":
            raise Refused(
                grpc.StatusCode.FAILED_PRECONDITION,
                "NOT_ENOUGH_PLAYERS",
                _not_enough(room.min_seats, len(room.players)),
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
        raw = await self.layer.run(script("rooms/read"), room_keys(code), [])
        if text(raw[0]) == "NOT_FOUND":
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
            # Shared by every caller settling this room, each through a shield: one that is
            # cancelled leaves the start running, so its failure is logged here (once) too.
            pending = spawn(self._start_game(room), f"room start {room.code}", log=log)
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
            players = room.players
            if room.host_last:
                host = room.host.player_id
                players = tuple(p for p in players if p.player_id != host) + tuple(
                    p for p in players if p.player_id == host
                )
            await self.starter.start_game(
                game=room.game,
                options=room.options,
                players=players,
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
        raw = await self.layer.run(
            script("rooms/settle"),
            room_keys(room.code),
            [room.game_id, ROOMS_CHANNEL, room.code, self.now_ms() + ttl_ms, state],
        )
        if text(raw[0]) == "NOT_FOUND":
            raise _not_found(room.code)
        return _snapshot(room.code, raw[1])
