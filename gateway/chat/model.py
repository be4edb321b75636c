"""Chat's values: a channel named by a caller (checked, with its Redis keys), a line's text made
safe and bounded, message ids and their order, and a stored line turned into a ChatMessage."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Any

import grpc
from tafel.play.v1 import social_pb2

from kit.errors import Refused, invalid
from kit.ids import ID_PATTERN, stream_id
from kit.redis.keys import chat_key, chat_wake_channel
from kit.redis.replies import text

MAX_CHARS = 500
RATE_LINES = 5  # lines per player ...
RATE_WINDOW_MS = 10_000  # ... in this window
HISTORY = 100  # lines sent first by a watch from now
MAX_PAGE = 500
CONTEXT = 10  # lines kept before and after a reported one

S = social_pb2
KIND_PARTS: dict[int, str] = {
    S.CHAT_CHANNEL_KIND_GAME_PLAYERS: "players",
    S.CHAT_CHANNEL_KIND_GAME_SPECTATORS: "spectators",
    S.CHAT_CHANNEL_KIND_ROOM: "room",
    S.CHAT_CHANNEL_KIND_TOURNAMENT: "tournament",
}


@dataclass(frozen=True)
class Channel:
    kind: int  # a ChatChannelKind
    owner: str  # the game id, room code or tournament id

    @property
    def key(self) -> str:
        return chat_key(KIND_PARTS[self.kind], self.owner)

    @property
    def wake(self) -> str:
        return chat_wake_channel(self.key)

    @property
    def is_game(self) -> bool:
        return self.kind in (S.CHAT_CHANNEL_KIND_GAME_PLAYERS, S.CHAT_CHANNEL_KIND_GAME_SPECTATORS)

    def proto(self) -> social_pb2.ChatChannel:
        return social_pb2.ChatChannel(kind=self.kind, id=self.owner)  # type: ignore[arg-type]


def channel_of(proto: social_pb2.ChatChannel) -> Channel:
    if proto.kind not in KIND_PARTS or not ID_PATTERN.match(proto.id):
        raise invalid(
            "BAD_CHAT_CHANNEL", "name a channel: its kind and the game id, room code or tournament id", field="channel"
        )
    return Channel(proto.kind, proto.id)


def not_found() -> Refused:
    return Refused(grpc.StatusCode.NOT_FOUND, "CHAT_CHANNEL_NOT_FOUND", "there is no such chat channel for you")


def clean_text(raw: str) -> str:
    """Line breaks and control characters become spaces; trimmed; 1-500 characters."""
    if len(raw) > 8 * MAX_CHARS:  # far too long whatever cleaning would take away
        raise invalid("CHAT_TOO_LONG", f"a chat line is at most {MAX_CHARS} characters", field="text")
    cleaned = "".join(" " if unicodedata.category(c) in ("Cc", "Zl", "Zp") or c in "\u0085" else c for c in raw).strip()
    if not cleaned:
        raise invalid("CHAT_EMPTY", "say something: the line is empty", field="text")
    if len(cleaned) > MAX_CHARS:
        raise invalid("CHAT_TOO_LONG", f"a chat line is at most {MAX_CHARS} characters", field="text")
    return cleaned


def message_key(message_id: str) -> tuple[int, int]:
    """A stored message id's order (ids Redis gave: always well formed)."""
    ms, _, seq = message_id.partition("-")
    return int(ms), int(seq or 0)


def check_message_id(value: str, field: str = "after_message_id") -> tuple[int, int]:
    parts = stream_id(value)
    if parts is None:
        raise invalid("BAD_MESSAGE_ID", f'{field} is not a message id like "1700000000000-0"', field=field)
    return parts


def out_of_range(message: str) -> Refused:
    return Refused(grpc.StatusCode.OUT_OF_RANGE, "MESSAGE_ID_OUT_OF_RANGE", message)


def decode(channel: Channel, entry_id: Any, line: bytes) -> social_pb2.ChatMessage:
    """A stored line (author, text) with its id, channel and time (the id's milliseconds)."""
    message = social_pb2.ChatMessage.FromString(line)
    message.message_id = text(entry_id)
    message.channel.CopyFrom(channel.proto())
    message.at.FromMilliseconds(message_key(message.message_id)[0])
    return message


def line_of(flat: Any) -> bytes:
    """The `m` field of a stream entry's flat field list."""
    for i in range(0, len(flat) - 1, 2):
        if flat[i] == b"m":
            return bytes(flat[i + 1])
    return b""
