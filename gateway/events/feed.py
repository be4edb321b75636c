"""Appending to accounts' event streams (any gateway, any feature): one XADD per player into its
own stream (a day, about 1,000 events kept) and a wake-up on its channel for the gateways holding
its watches. The event id is the stream entry's id: per account, increasing, the resume point."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from redis.exceptions import RedisError
from tafel.play.v1 import challenges_pb2

from kit.redis.keys import player_key
from kit.redis.layer import RedisLayer

log = logging.getLogger("tafel.gateway.events")
KEEP_EVENTS = 1000
KEEP_S = 86_400


def events_key(player_id: str) -> str:
    return player_key(player_id, "events")


def wake_channel(player_id: str) -> str:
    return player_key(player_id, "wake")


def contacts_key(player_id: str) -> str:
    """set: the players whose streams hold an event naming this one (a day): an erased account's
    name is replaced in exactly those streams."""
    return player_key(player_id, "contacts")


class AccountEvents:
    def __init__(self, redis: RedisLayer) -> None:
        self.redis = redis

    async def append(self, player_ids: Iterable[str], event: challenges_pb2.AccountEvent) -> None:
        """Add `event` to each player's stream (its id and time are set per stream on reading)."""
        if not event.HasField("at"):
            event.at.GetCurrentTime()
        payload = event.SerializeToString()
        commands: list[Any] = []
        publish = await self.redis.publish_verb()  # the wake-up channel carries the account's tag
        ids = list(dict.fromkeys(player_ids))  # each once, in order
        for player_id in ids:
            key = events_key(player_id)
            commands += [
                ("XADD", key, "MAXLEN", "~", KEEP_EVENTS, "*", "e", payload),
                ("EXPIRE", key, KEEP_S),
                (publish, wake_channel(player_id), b"1"),
            ]
            others = [other for other in ids if other != player_id]
            if others:
                commands += [("SADD", contacts_key(player_id), *others), ("EXPIRE", contacts_key(player_id), KEEP_S)]
        await self.redis.many(commands)


class GameAnnouncer:
    """GameDirectory's `announce`: a game_started event to each of its players. A failure to tell
    is logged, not raised: the game has started (its players find it in ListMyGames)."""

    def __init__(self, events: AccountEvents) -> None:
        self.events = events

    async def __call__(self, meta: Any) -> None:
        # A matched game is stored with origin "match"; the event names it as the contract does.
        origin = "matchmaking" if meta.origin == "match" else meta.origin
        started = challenges_pb2.GameStarted(game_id=meta.game_id, game=meta.game, origin=origin)
        started.players.extend(meta.seated_players())
        try:
            await self.events.append([p[0] for p in meta.players], challenges_pb2.AccountEvent(game_started=started))
        except RedisError:
            log.warning("could not announce a game's start", extra={"game_id": meta.game_id})
