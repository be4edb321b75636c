"""Bot opponents on request (tafel.play.v1.BotService).

A person in an open room asks for a bot; the request goes on a per-game Redis list; bot pools
(`tafel bot-pool`, ordinary API clients) hold ServeBotRequests streams and each request is taken
by exactly one of them, which then joins the room by its code like any player. Requests expire
with their list (a room that nobody serves stays an ordinary room).

No request is lost until its bot has taken the seat: a request handed to a pool moves
into an in-flight set with a lease in the same script (lua/bots/take.lua), so a gateway killed
between the take and the pool's read, or a pool that dies before its bot joins, leaves it there.
The bot's join settles it (`tafel-bot-request` metadata on JoinRoom, lua/bots/joined.lua); a
lease that runs out is claimed by a sweeper on any gateway (`BotSweeper`, a kit/loops.py loop),
which puts it back on its queue while its room is open with more empty seats than other pending
requests, else drops it. A room's pending requests (a hash) make asking again safe: a RequestBot
while they cover the room's empty seats answers one of them (the player's own first) instead of
queueing another bot.

A bot is marked by the platform, never by itself: the join that names a request
pending for its room seats the joiner as a bot of the requested level (Player.bot, bot_level and
the display name "Bot (level N)", kept with the seat in the room and so in the game and its record).
The id a pool is handed is the request's own; the person who asked is told only a digest of it
(`public_id`), so no person can pass for the bot they asked for: a join naming an id that is not
pending for the room is refused (NOT_A_BOT_REQUEST), unless the joiner already sits there (a
retried join whose first answer was lost). Leaderboards: games with a bot are room games, never
rated, and a bot signs in as a guest, never rated either, so no bot is listed and no game against
one counts (decision: unrated rather than marked, since a level's strength is fixed by its code, a
rating won from it says nothing about a person, and farming a weak bot would climb the board).

Keys: kit/redis/keys.py bot_queue_key, bot_signal_key, bot_pending_key, BOTS_IN_FLIGHT (this
module's). Each serving stream blocks on its own pooled Redis connection (BLPOP on the wake-ups,
then take.lua): bot pools are a handful of operator processes, not per-player watchers, so this
does not multiply with players.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any, Protocol

import grpc
from redis.exceptions import RedisError
from tafel.play.v1 import bots_pb2, bots_pb2_grpc, play_pb2

from gateway.auth import PlayerSource
from kit.errors import Refused, invalid, is_outage, refusing
from kit.loops import Loop
from kit.redis.keys import BOTS_IN_FLIGHT, bot_pending_key, bot_queue_key, bot_signal_key
from kit.redis.layer import RedisLayer
from kit.redis.replies import text
from kit.redis.scripts import script
from kit.retry import Attempts

REQUEST_TTL_S = 600
BLOCK_S = 2
LEVELS = (1, 2, 3)
LEASE_S = 15.0
BOT_REQUEST_HEADER = "tafel-bot-request"  # a bot pool's JoinRoom names the request it serves
SWEEP_BATCH = 100

log = logging.getLogger("tafel.gateway.bots")


def public_id(request_id: str) -> str:
    """What the person who asked for a bot is told: a digest of the request's id, which only the
    pool handed the request learns (its bot's join proves it was handed the request)."""
    return hashlib.sha256(f"bot-request:{request_id}".encode()).hexdigest()[:16]


def bot_words(level: int) -> str:
    return f"Bot (level {level})"


def _now_ms() -> int:
    return int(time.time() * 1000)


class RoomLookup(Protocol):
    async def room(self, code: str) -> play_pb2.Room: ...


class BotServicer(bots_pb2_grpc.BotServiceServicer):
    def __init__(
        self,
        layer: RedisLayer,
        auth: PlayerSource,
        rooms: RoomLookup,
        games: Sequence[str],
        *,
        lease_s: float = LEASE_S,
    ) -> None:
        self.layer = layer
        self.auth = auth
        self.rooms = rooms
        self.games = tuple(games)
        self.lease_ms = int(lease_s * 1000)

    @refusing("retry later")
    async def RequestBot(
        self, request: bots_pb2.RequestBotRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> bots_pb2.RequestBotResponse:
        player = await self.auth.player(context)
        check_level(request.level)
        if not request.room_code:
            raise invalid("BAD_ROOM_CODE", "room_code is required", field="room_code")
        room = await self.rooms.room(request.room_code)
        request_id = await queue_bot(self.layer, room, player, request.level)
        return bots_pb2.RequestBotResponse(request_id=public_id(request_id))

    @refusing("retry later")
    async def ServeBotRequests(
        self, request: bots_pb2.ServeBotRequestsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[bots_pb2.ServeBotRequestsResponse]:
        await self.auth.player(context)
        games = list(request.games) or list(self.games)
        unknown = [g for g in games if g not in self.games]
        if unknown:
            raise invalid("UNKNOWN_GAME", f"no such game: {', '.join(unknown)}", field="games")
        queues = [bot_queue_key(g) for g in games]
        signals = [bot_signal_key(g) for g in games]
        outage = Attempts()
        idle = False
        while not context.cancelled():
            try:
                if idle:
                    # Blocking: on a pooled redis-py connection, never the shared pipelined one.
                    # Only a wake-up is popped here; the request itself moves in take.lua, so
                    # nothing is lost if this gateway dies now. A timeout takes anyway (a
                    # wake-up may have been lost, or a request re-queued by a sweeper).
                    await self.layer.client.blpop(signals, timeout=BLOCK_S)
                taken: Any = await self.layer.run(
                    script("bots/take"), [BOTS_IN_FLIGHT, *queues], [_now_ms(), self.lease_ms]
                )
            except RedisError as error:
                # Redis away: keep the stream, try again. An error reply (a queue that is not a
                # list) fails every try alike: it ends the stream INTERNAL (refusing), logged once,
                # instead of spinning unseen while the pool waits for requests that never come.
                if not is_outage(error):
                    raise
                await outage.failed()
                continue
            outage.reset()
            idle = taken is None
            if taken is None:
                continue
            data = json.loads(taken)
            yield bots_pb2.ServeBotRequestsResponse(
                request=bots_pb2.BotRequest(
                    request_id=data["request_id"], game=data["game"], room_code=data["room_code"], level=data["level"]
                )
            )


def check_level(level: int) -> None:
    if level not in LEVELS:
        raise invalid("BAD_LEVEL", f"level must be 1, 2 or 3, not {level}", field="level")


async def queue_bot(layer: RedisLayer, room: play_pb2.Room, player: play_pb2.Player, level: int) -> str:
    """Ask the pools for a bot of `level` for `room`, on behalf of `player` (seated there): the one
    path of RequestBot and of a challenge to a bot (gateway/challenges/bots.py). Answers the
    request's own id (the pool's: tell a person only its `public_id`)."""
    check_level(level)
    if room.state != play_pb2.ROOM_STATE_OPEN:
        raise Refused(grpc.StatusCode.FAILED_PRECONDITION, "ROOM_NOT_OPEN", "the room is not open")
    if player.player_id not in {p.player_id for p in room.players}:
        raise Refused(grpc.StatusCode.PERMISSION_DENIED, "NOT_IN_ROOM", "only a player in the room may ask for a bot")
    empty = room.seats - len(room.players)
    if empty <= 0:
        raise Refused(grpc.StatusCode.FAILED_PRECONDITION, "ROOM_FULL", "every seat of the room is taken")
    request_id = secrets.token_hex(8)
    entry = json.dumps(
        {
            "request_id": request_id,
            "game": room.game,
            "room_code": room.code,
            "level": level,
            "player_id": player.player_id,
        }
    )
    keys = [bot_queue_key(room.game), bot_pending_key(room.code), bot_signal_key(room.game)]
    raw = await layer.run(script("bots/request"), keys, [entry, request_id, player.player_id, empty, REQUEST_TTL_S])
    # QUEUED: this id; PENDING: the room's pending requests already cover its empty seats, so the
    # answer is one of them (a retry after a lost answer or a dead gateway). Several bots for one
    # table are several requests, each while a seat is left uncovered: each is its own pool guest.
    return text(raw[1])


async def as_bot(layer: RedisLayer, room_code: str, request_id: str, player: play_pb2.Player) -> play_pb2.Player | None:
    """The joiner as the bot of a request pending for `room_code` (its level from the request),
    or None when no such request is pending."""
    entry = await layer.call("HGET", bot_pending_key(room_code), request_id)
    if entry is None:
        return None
    level = int(json.loads(entry)["level"])
    bot = play_pb2.Player()
    bot.CopyFrom(player)
    bot.bot, bot.bot_level, bot.display_name = True, level, bot_words(level)
    return bot


async def settle_joined(layer: RedisLayer, game: str, room_code: str, request_id: str) -> None:
    """The bot for `request_id` has its seat in `room_code`: the request is done (JoinRoom calls
    this for a join that names the request it serves)."""
    keys = [BOTS_IN_FLIGHT, bot_pending_key(room_code), bot_queue_key(game)]
    await layer.run(script("bots/joined"), keys, [request_id])


class BotSweeper:
    """Re-queues requests whose lease ran out with no bot seated (its pool or the gateway that
    handed it out died) while their room still needs a bot; drops the others. Every gateway runs
    one: due requests are claimed atomically (lua/bots/due.lua), so each is decided once."""

    def __init__(self, layer: RedisLayer, rooms: RoomLookup, *, lease_s: float = LEASE_S) -> None:
        self.layer = layer
        self.rooms = rooms
        self.lease_ms = int(lease_s * 1000)
        # A quarter of the lease: a lost request is back on its queue within 1.25 leases.
        self.loop = Loop("bot request sweeper", self._sweep, every_s=max(0.25, lease_s / 4), log=log)

    def start(self) -> None:
        self.loop.start()

    async def stop(self) -> None:
        await self.loop.stop()

    async def _sweep(self) -> float | None:
        raw: Any = await self.layer.run(script("bots/due"), [BOTS_IN_FLIGHT], [_now_ms(), self.lease_ms, SWEEP_BATCH])
        for i in range(0, len(raw), 2):
            await self._decide(text(raw[i]), int(text(raw[i + 1])))
        return 0.0 if len(raw) // 2 >= SWEEP_BATCH else None

    async def _decide(self, entry: str, claimed: int) -> None:
        data = json.loads(entry)
        code, game = data["room_code"], data["game"]
        requeue = False
        try:
            room = await self.rooms.room(code)
        except Refused:
            room = None  # gone (expired): nobody to serve
        if room is not None and room.state == play_pb2.ROOM_STATE_OPEN:
            pending = int(await self.layer.call("HLEN", bot_pending_key(code)))
            # The other pending requests (this one is among them) each claim an empty seat.
            requeue = room.seats - len(room.players) > pending - 1
        keys = [BOTS_IN_FLIGHT, bot_pending_key(code), bot_queue_key(game), bot_signal_key(game)]
        args = [entry, claimed, data["request_id"], 1 if requeue else 0, REQUEST_TTL_S]
        if await self.layer.run(script("bots/settle"), keys, args) and requeue:
            log.info("bot request re-queued: no bot joined within its lease", extra={"room": code})
