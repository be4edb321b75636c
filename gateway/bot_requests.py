"""Bot opponents on request (tafel.play.v1.BotService).

A person in an open room asks for a bot; the request goes on a per-game Redis list; bot pools
(`tafel bot-pool`, ordinary API clients) hold ServeBotRequests streams and each request is popped
by exactly one of them (LPOP/BLPOP are atomic), which then joins the room by its code like any
player. Requests expire with their list (a room that nobody serves stays an ordinary room).

Keys: kit/redis/keys.py bot_queue_key (this module's); a request goes on with lua/bots/request.lua
(push and expiry together). Each serving stream blocks on its own pooled Redis connection (BLPOP):
bot pools are a handful of operator processes, not per-player watchers, so this does not
multiply with players.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator, Sequence
from typing import Any, Protocol

import grpc
from redis.exceptions import RedisError
from tafel.play.v1 import bots_pb2, bots_pb2_grpc, play_pb2

from kit.errors import Refused, invalid, is_outage, refusing
from kit.redis.keys import bot_queue_key
from kit.redis.layer import RedisLayer
from kit.redis.scripts import script
from kit.retry import Attempts

REQUEST_TTL_S = 600
BLOCK_S = 2
LEVELS = (1, 2, 3)


class PlayerSource(Protocol):
    async def player(self, context: grpc.aio.ServicerContext[Any, Any]) -> play_pb2.Player: ...


class RoomLookup(Protocol):
    async def room(self, code: str) -> play_pb2.Room: ...


class BotServicer(bots_pb2_grpc.BotServiceServicer):
    def __init__(self, layer: RedisLayer, auth: PlayerSource, rooms: RoomLookup, games: Sequence[str]) -> None:
        self.layer = layer
        self.auth = auth
        self.rooms = rooms
        self.games = tuple(games)

    @refusing("retry later")
    async def RequestBot(
        self, request: bots_pb2.RequestBotRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> bots_pb2.RequestBotResponse:
        player = await self.auth.player(context)
        if request.level not in LEVELS:
            raise invalid("BAD_LEVEL", f"level must be 1, 2 or 3, not {request.level}", field="level")
        if not request.room_code:
            raise invalid("BAD_ROOM_CODE", "room_code is required", field="room_code")
        room = await self.rooms.room(request.room_code)
        if room.state != play_pb2.ROOM_STATE_OPEN:
            raise Refused(grpc.StatusCode.FAILED_PRECONDITION, "ROOM_NOT_OPEN", "the room is not open")
        if player.player_id not in {p.player_id for p in room.players}:
            raise Refused(
                grpc.StatusCode.PERMISSION_DENIED, "NOT_IN_ROOM", "only a player in the room may ask for a bot"
            )
        request_id = secrets.token_hex(8)
        entry = json.dumps(
            {"request_id": request_id, "game": room.game, "room_code": room.code, "level": request.level}
        )
        await self.layer.run(script("bots/request"), [bot_queue_key(room.game)], [entry, REQUEST_TTL_S])
        return bots_pb2.RequestBotResponse(request_id=request_id)

    @refusing("retry later")
    async def ServeBotRequests(
        self, request: bots_pb2.ServeBotRequestsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[bots_pb2.ServeBotRequestsResponse]:
        await self.auth.player(context)
        games = list(request.games) or list(self.games)
        unknown = [g for g in games if g not in self.games]
        if unknown:
            raise invalid("UNKNOWN_GAME", f"no such game: {', '.join(unknown)}", field="games")
        keys = [bot_queue_key(g) for g in games]
        outage = Attempts()
        while not context.cancelled():
            try:
                # Blocking: on a pooled redis-py connection, never the shared pipelined one.
                popped: Any = await self.layer.client.blpop(keys, timeout=BLOCK_S)
            except RedisError as error:
                # Redis away: keep the stream, try again. An error reply (a queue that is not a
                # list) fails every try alike: it ends the stream INTERNAL (refusing), logged once,
                # instead of spinning unseen while the pool waits for requests that never come.
                if not is_outage(error):
                    raise
                await outage.failed()
                continue
            outage.reset()
            if popped is None:
                continue
            data = json.loads(popped[1])
            yield bots_pb2.ServeBotRequestsResponse(
                request=bots_pb2.BotRequest(
                    request_id=data["request_id"], game=data["game"], room_code=data["room_code"], level=data["level"]
                )
            )
