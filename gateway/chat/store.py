"""Chat in Redis (kit/redis/keys.py, "Chat"): one stream per channel, written by lua/chat/send
(request id, XADD bounded to CHAT_KEEP, expiry, wake-up in one step, in the channel's slot), the
per-player rate window by lua/chat/rate, and the reads every watch, listing and report makes."""

from __future__ import annotations

import time
from typing import Any

import grpc
from tafel.play.v1 import social_pb2

from gateway.chat.model import (
    CONTEXT,
    RATE_LINES,
    RATE_WINDOW_MS,
    Channel,
    check_message_id,
    decode,
    line_of,
    message_key,
    out_of_range,
)
from kit.errors import Refused
from kit.ids import is_last_stream_id
from kit.redis.keys import (
    CHAT_KEEP,
    chat_rate_key,
    chat_request_key,
    chat_written_key,
    player_key,
    request_digest,
    room_keys,
    settings_key,
    tournament_key,
)
from kit.redis.layer import RedisLayer
from kit.redis.replies import pairs, text
from kit.redis.scripts import script


def _owner_key(channel: Channel) -> str:
    """The key whose expiry the channel's lines take (a game's: their own, kept per keep_game_ms)."""
    if channel.kind == social_pb2.CHAT_CHANNEL_KIND_ROOM:
        return room_keys(channel.owner)[0]
    if channel.kind == social_pb2.CHAT_CHANNEL_KIND_TOURNAMENT:
        return tournament_key(channel.owner)
    return channel.key


class ChatStore:
    def __init__(self, layer: RedisLayer, *, keep_game_ms: int = 0) -> None:
        self.layer = layer
        # A game's lines are kept as long as its record (0: forever): each line renews this.
        self.keep_game_ms = keep_game_ms

    def decode_entries(self, channel: Channel, entries: Any) -> list[social_pb2.ChatMessage]:
        return [decode(channel, entry_id, line_of(flat)) for entry_id, flat in entries]

    async def remembered(self, channel: Channel, player_id: str, request_id: str) -> social_pb2.ChatMessage | None:
        """The message a request id made already, if it did."""
        entry_id = await self.layer.call("HGET", chat_request_key(channel.key, player_id, request_id), "i")
        if entry_id is None:
            return None
        entries: Any = await self.layer.call("XRANGE", channel.key, entry_id, entry_id)
        return decode(channel, entry_id, line_of(entries[0][1]) if entries else b"")

    async def wait_ms(self, player_id: str, request_id: str) -> int:
        """0 when the player may send a line now (and it is counted), else how long to wait."""
        member = request_digest(player_id, request_id)
        now = int(time.time() * 1000)
        return int(
            await self.layer.run(
                script("chat/rate"), [chat_rate_key(player_id)], [now, RATE_WINDOW_MS, RATE_LINES, member]
            )
        )

    async def append(
        self, channel: Channel, player_id: str, request_id: str, message: social_pb2.ChatMessage
    ) -> social_pb2.ChatMessage:
        line = social_pb2.ChatMessage(author=message.author, text=message.text).SerializeToString()
        keep = self.keep_game_ms if channel.is_game else 0
        # Remembered before the line is written: an erasure finds every line it must rewrite.
        written = chat_written_key(player_id)
        await self.layer.many(
            [("SADD", written, channel.key)] + ([("PEXPIRE", written, self.keep_game_ms)] if self.keep_game_ms else [])
        )
        reply = await self.layer.run(
            script("chat/send"),
            [channel.key, chat_request_key(channel.key, player_id, request_id), _owner_key(channel)],
            [line, keep, CHAT_KEEP, channel.wake],
        )
        if text(reply[0]) == "DUP":
            return decode(channel, reply[1], reply[2])
        return decode(channel, reply[1], line)

    async def last_id(self, channel: Channel) -> str:
        newest: Any = await self.layer.call("XREVRANGE", channel.key, "+", "-", "COUNT", 1)
        return text(newest[0][0]) if newest else ""

    async def latest(self, channel: Channel, count: int) -> list[social_pb2.ChatMessage]:
        entries: Any = await self.layer.call("XREVRANGE", channel.key, "+", "-", "COUNT", count)
        return self.decode_entries(channel, list(reversed(entries)))

    async def after(self, channel: Channel, after_id: str, count: int) -> list[social_pb2.ChatMessage]:
        """Up to `count` lines after `after_id` ("": from the oldest kept), oldest first."""
        if after_id and is_last_stream_id(message_key(after_id)):
            return []
        start = f"({after_id}" if after_id else "-"
        entries: Any = await self.layer.call("XRANGE", channel.key, start, "+", "COUNT", count)
        return self.decode_entries(channel, entries)

    async def check_after(self, channel: Channel, after: str) -> str:
        """`after` when every line after it is still kept; BAD_MESSAGE_ID or OUT_OF_RANGE else.
        Answers the channel's last id."""
        last = await self.last_id(channel)
        if not after:
            return last
        parts = check_message_id(after)
        if not last or parts > message_key(last):
            raise out_of_range("this message id is past the end of the channel; watch from its last")
        first: Any = await self.layer.call("XRANGE", channel.key, "-", "+", "COUNT", 1)
        if parts < message_key(text(first[0][0])):
            # Before the oldest kept line: lines after it may have been trimmed, unless none ever
            # was. Redis 7 counts the entries ever added; 6.2 does not, and a full channel counts.
            info = pairs(await self.layer.call("XINFO", "STREAM", channel.key))
            added = info.get(b"entries-added")
            length = int(info.get(b"length", 0))
            trimmed = int(added) > length if added is not None else length >= CHAT_KEEP
            if trimmed:
                raise out_of_range("lines after this id are no longer kept; list what is kept and watch from there")
        return last

    async def around(self, channel: Channel, message_id: str) -> list[social_pb2.ChatMessage]:
        """The message and up to CONTEXT lines before and after it, oldest first."""
        if check_message_id(message_id, "message_id") == (0, 0):  # no line has it ("(0-0" is no range)
            raise Refused(grpc.StatusCode.NOT_FOUND, "MESSAGE_NOT_FOUND", "there is no such message in this channel")
        before, found, after = await self.layer.many(
            [
                ("XREVRANGE", channel.key, f"({message_id}", "-", "COUNT", CONTEXT),
                ("XRANGE", channel.key, message_id, message_id),
                ("XRANGE", channel.key, f"({message_id}", "+", "COUNT", CONTEXT)
                if not is_last_stream_id(message_key(message_id))
                else ("XRANGE", channel.key, "+", "+"),
            ]
        )
        if not found:
            raise Refused(grpc.StatusCode.NOT_FOUND, "MESSAGE_NOT_FOUND", "there is no such message in this channel")
        return self.decode_entries(channel, [*reversed(before), *found, *after])


async def avoided_by(layer: RedisLayer, player_id: str) -> tuple[set[str], bool]:
    """The ids a player blocks or mutes (gateway/standing's lists) and whether they turned chat off
    (gateway/people's settings), read here in one round trip."""
    blocks, mutes, chat = await layer.many(
        [
            ("HKEYS", player_key(player_id, "blocks")),
            ("HKEYS", player_key(player_id, "mutes")),
            ("HGET", settings_key(player_id), "chat"),
        ]
    )
    return {text(p) for p in (*blocks, *mutes)}, chat == b"0"
