"""A challenge to a bot (ChallengeServicer's `bot_game`): a private room of two for the challenger
with the challenge's game, options and clock, and a bot request for it through the path RequestBot
takes (gateway/bot_requests.py queue_bot). A pool's bot joins naming the request, so the platform
seats it as the bot of the challenge's level; the full room starts its game by itself, announced on
the challenger's event stream like any room's. No pool serving the game: the request is the
sweeper's like any other (re-queued while the room waits), and the challenger waits in the room,
free to leave it (which closes it)."""

from __future__ import annotations

import random

from tafel.play.v1 import challenges_pb2

from gateway.auth import Identity
from gateway.bot_requests import queue_bot
from gateway.catalogue import Catalogue
from gateway.rooms import Rooms
from kit.redis.layer import RedisLayer


def challenger_first(preference: challenges_pb2.SeatPreference.ValueType) -> bool:
    """The seat preference decided: first, second, or drawn now (the room is made as the game's
    seats are fixed, so this is the draw the contract places "when the game starts")."""
    if preference == challenges_pb2.SEAT_PREFERENCE_FIRST:
        return True
    if preference == challenges_pb2.SEAT_PREFERENCE_SECOND:
        return False
    return random.random() < 0.5


class BotChallenges:
    def __init__(self, layer: RedisLayer, rooms: Rooms, catalogue: Catalogue) -> None:
        self.layer = layer
        self.rooms = rooms
        self.catalogue = catalogue

    async def __call__(self, challenger: Identity, challenge: challenges_pb2.Challenge) -> str:
        """Seat the challenger and ask for the bot; answers the room's code."""
        description = await self.catalogue.describe(challenge.game)
        host = challenger.player()
        room = await self.rooms.create(
            game=challenge.game,
            options=challenge.options,
            per_move_ms=challenge.time_control.per_move.ToMilliseconds(),
            seats=2,
            min_seats=max(1, int(description.min_seats)),
            host=host,
            host_last=not challenger_first(challenge.seat_preference),
        )
        await queue_bot(self.layer, room.to_proto(), host, challenge.bot_level)
        return room.code
