"""Reads of a game's live keys (kit/redis/keys.py game_keys), for whoever needs them without
writing them: the gateway's watchers (the event stream, where it ends) and its records (the
action list). The rules service's GameStore, the keys' owner, is one of these plus its scripts.

Every read is one command on the layer's pipelined connection (a watcher's catch-up and a game
end's record read ride the same connection as the moves, no pool checkout).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kit.redis.keys import game_keys
from kit.redis.layer import RedisLayer


@dataclass(frozen=True)
class StreamEntry:
    event_id: str
    payload: bytes  # GameEvent bytes
    status: bytes  # GameStatus bytes after the event's move


class GameReads:
    def __init__(self, layer: RedisLayer) -> None:
        self.layer = layer

    async def read_actions(self, game_id: str) -> list[bytes]:
        """The game's RecordedAction messages, in order: field 'a' of its event stream's entries
        (lua/rules/commit writes each move's action on its first entry)."""
        entries: Any = await self.layer.call("XRANGE", game_keys(game_id).events, "-", "+")
        rows = []
        for _, fields in entries:
            for i in range(0, len(fields) - 1, 2):
                if fields[i] == b"a":
                    rows.append(bytes(fields[i + 1]))
        return rows

    async def read_events(self, game_id: str, after: str = "-", count: int | None = None) -> list[tuple[str, bytes]]:
        """Events after the id `after` ("-" = from the start), in order."""
        return [(row.event_id, row.payload) for row in await self.read_stream(game_id, after, count)]

    async def read_stream(self, game_id: str, after: str = "-", count: int | None = None) -> list[StreamEntry]:
        """Events after the id `after` ("-" = from the start), each with the status kept beside it."""
        start = "-" if after in ("", "-") else f"({after}"
        limit: tuple[str | int, ...] = ("COUNT", count) if count is not None else ()
        reply: Any = await self.layer.call("XRANGE", game_keys(game_id).events, start, "+", *limit)
        rows: list[StreamEntry] = []
        for event_id, fields in reply:
            values = {bytes(fields[i]): bytes(fields[i + 1]) for i in range(0, len(fields) - 1, 2)}
            if b"e" in values:
                rows.append(StreamEntry(bytes(event_id).decode(), values[b"e"], values[b"t"]))
        return rows

    async def end_of_stream(self, game_id: str) -> tuple[str, bool] | None:
        """The game's last event id and whether it is over; None when there is no such game."""
        last, over = await self.layer.call("HMGET", game_keys(game_id).state, "l", "f")
        if last is None:
            return None
        return bytes(last).decode(), bytes(over or b"0") == b"1"
