"""Tournament event streams for watchers: one blocking reader per gateway process.

Each tournament's events are a Redis Stream (kit/redis/keys.py tournament_events_key). A watcher
first reads what it missed (XRANGE after its last id, on the Redis layer), then takes live events
from the process's feed: one task on its own connection reading every watched stream with one
XREAD BLOCK call, fanning entries out to the local watchers' queues. The feed's cursor for a stream
is taken before the watcher's catch-up read, so nothing falls between the two; ids already
delivered are skipped. The reader is a kit.loops.Loop step: a Redis failure backs off
(kit/retry.py), logged once per outage.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from redis.asyncio import Redis
from tafel.play.v1 import tournaments_pb2

from kit.ids import is_last_stream_id
from kit.loops import Loop
from kit.redis.keys import tournament_events_key as events_key
from kit.redis.keys import tournament_key
from kit.redis.layer import RedisLayer
from kit.redis.replies import pairs, text
from kit.retry import Backoff

log = logging.getLogger("tafel.gateway.tournaments")
QUEUE_SIZE = 2_000
IDLE_S = 60.0  # nothing watched: the reader waits (a new watcher wakes it)
READ_BACKOFF = Backoff(first_s=0.5, cap_s=2.0)  # between failed reads while Redis is away
_SLOW: tuple[str, bytes] = ("", b"slow")
_CLOSED: tuple[str, bytes] = ("", b"closed")


def id_key(event_id: str) -> tuple[int, int]:
    ms, _, seq = event_id.partition("-")
    return int(ms or 0), int(seq or 0)


def decode(event_id: str, fields: dict[Any, Any]) -> tournaments_pb2.TournamentEvent:
    raw = fields.get(b"e", fields.get("e", b""))
    event = tournaments_pb2.TournamentEvent.FromString(raw if isinstance(raw, bytes) else str(raw).encode())
    event.event_id = event_id
    return event


class SlowWatcher(Exception):
    """The watcher fell too far behind; it resumes from its last event id."""


class FeedClosed(Exception):
    """The process is shutting down; the watcher resumes elsewhere from its last event id."""


class TournamentFeed:
    def __init__(self, layer: RedisLayer, reader: Redis, *, block_ms: int = 500) -> None:
        self.layer = layer  # catch-up reads, on the pipelined connection
        self.reader = reader  # own connection: the blocking XREAD
        self.block_ms = block_ms
        self._queues: dict[str, set[asyncio.Queue[tuple[str, bytes]]]] = {}
        self._cursors: dict[str, str] = {}
        # The one blocking reader: a Redis failure backs off (kit/loops.py, logged once per outage).
        self.loop = Loop("tournament feed", self._read_once, every_s=1.0, log=log, backoff=READ_BACKOFF)

    @property
    def watchers(self) -> int:
        return sum(len(q) for q in self._queues.values())

    def start(self) -> None:
        self.loop.start()

    async def close(self) -> None:
        await self.loop.stop()
        for queues in self._queues.values():
            for queue in queues:
                with contextlib.suppress(asyncio.QueueEmpty):
                    while queue.full():
                        queue.get_nowait()
                queue.put_nowait(_CLOSED)
        await self.reader.aclose()

    async def watch(
        self, tid: str, after: str = "", *, live: bool = True
    ) -> AsyncIterator[tournaments_pb2.TournamentEvent]:
        """Events after `after` ("" = from the start), then (when `live`) new ones as they come,
        until the caller stops."""
        self.start()
        key = events_key(tid)
        queue: asyncio.Queue[tuple[str, bytes]] = asyncio.Queue(QUEUE_SIZE)
        if tid not in self._cursors:
            last: Any = await self.layer.call("XREVRANGE", key, "+", "-", "COUNT", 1)
            self._cursors.setdefault(tid, text(last[0][0]) if last else "0-0")
        self._queues.setdefault(tid, set()).add(queue)
        self.loop.wake()  # a stream to read: the reader starts on it (if it was idle)
        try:
            seen = after or "0-0"
            while True:
                if is_last_stream_id(id_key(seen)):
                    break  # nothing comes after the greatest id (Redis would refuse the range)
                rows: Any = await self.layer.call("XRANGE", key, f"({seen}", "+", "COUNT", 500)
                if not rows:
                    break
                for raw_id, fields in rows:
                    seen = text(raw_id)
                    yield decode(seen, pairs(fields))
            while live:
                event_id, raw = await queue.get()
                if (event_id, raw) == _SLOW:
                    raise SlowWatcher
                if (event_id, raw) == _CLOSED:
                    raise FeedClosed
                if id_key(event_id) <= id_key(seen):
                    continue
                seen = event_id
                yield decode(event_id, {b"e": raw})
        finally:
            queues = self._queues.get(tid)
            if queues is not None:
                queues.discard(queue)
                if not queues:
                    del self._queues[tid]
                    self._cursors.pop(tid, None)

    async def _read_once(self) -> float:
        """One XREAD BLOCK over every watched stream, fanned out; the seconds until the next."""
        if not self._cursors:
            return IDLE_S
        streams: dict[Any, Any] = {events_key(tid): cursor for tid, cursor in self._cursors.items()}
        result: Any = await self.reader.xread(streams, count=500, block=self.block_ms)
        for raw_key, rows in result or []:
            key = text(raw_key)
            tid = key[len(tournament_key("")) : -len(":events")]
            for raw_id, fields in rows:
                event_id = text(raw_id)
                if tid in self._cursors:
                    self._cursors[tid] = event_id
                raw = fields.get(b"e", b"")
                for queue in list(self._queues.get(tid, ())):
                    try:
                        queue.put_nowait((event_id, raw))
                    except asyncio.QueueFull:
                        self._queues[tid].discard(queue)
                        with contextlib.suppress(asyncio.QueueEmpty):
                            queue.get_nowait()
                        queue.put_nowait(_SLOW)
        return 0.0
