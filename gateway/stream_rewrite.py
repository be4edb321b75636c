"""Replacing an erased (or renamed) player inside a stream of protobuf entries: a tournament's
events, an account's events (field `e`), a chat channel's lines (field `m`). The stream is written
again with every entry's id and its expiry kept (lua/streams/rewrite.lua), only if nothing was
added since it was read (else read again)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from google.protobuf.message import Message

from kit.proto_players import replace_player
from kit.redis.layer import RedisLayer
from kit.redis.replies import pairs
from kit.redis.scripts import script

ATTEMPTS = 5


async def replace_player_in_stream(
    redis: RedisLayer,
    key: str,
    message_type: type[Message],
    player_id: str,
    new: Message,
    field: bytes = b"e",
    also: Callable[[Message], None] | None = None,
) -> None:
    """`also` changes an entry that named the player a little more (an erased author's chat line
    loses its words, not only its name)."""
    for _ in range(ATTEMPTS):
        entries: Any = await redis.call("XRANGE", key, "-", "+")
        if not entries:
            return
        changed = False
        args: list[Any] = [entries[-1][0], field]
        for entry_id, flat in entries:
            payload = pairs(flat).get(field, b"")
            if player_id.encode() in payload:
                message = message_type.FromString(payload)
                if replace_player(message, player_id, new):
                    if also is not None:
                        also(message)
                    payload = message.SerializeToString()
                    changed = True
            args += [entry_id, payload]
        if not changed:
            return
        if int(await redis.run(script("streams/rewrite"), [key], args)):
            return
