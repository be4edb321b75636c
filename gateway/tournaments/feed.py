"""Tournament event streams for watchers: one blocking reader per gateway process.

Each tournament's events are a Redis Stream (kit/redis/keys.py tournament_events_key). A watcher first reads what it
missed (XRANGE after its last id), then takes live events from the process's feed: one task on
its own connection reading every watched stream with one XREAD BLOCK call, fanning entries out to
the local watchers' queues. The feed's cursor for a stream is taken before the watcher's catch-up
read, so nothing falls between the two; ids already delivered are skipped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError
from tafel.play.v1 import tournaments_pb2

from kit.redis.keys import tournament_events_key as events_key
from kit.redis.keys import tournament_key
from kit.retry import Attempts, Backoff

log = logging.getLogger("tafel.gateway.tournaments")
QUEUE_SIZE = 2_000
READ_BACKOFF = Backoff(first_s=0.5, cap_s=2.0)  # between failed reads while Redis is away
_SLOW: tuple[str, bytes] = ("", b"slow")
_CLOSED: tuple[str, bytes] = ("", b"closed")


def _text(raw: Any) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)


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
    def __init__(self, redis: Redis, reader: Redis, *, block_ms: int = 500) -> None:
        self.redis = redis  # shared client: catch-up reads
        self.reader = reader  # own connection: the blocking XREAD
        self.block_ms = block_ms
        self._queues: dict[str, set[asyncio.Queue[tuple[str, bytes]]]] = {}
        self._cursors: dict[str, str] = {}
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def watchers(self) -> int:
        return sum(len(q) for q in self._queues.values())

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="tournament feed")

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
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
            last: Any = await self.redis.xrevrange(key, count=1)
            self._cursors.setdefault(tid, _text(last[0][0]) if last else "0-0")
        self._queues.setdefault(tid, set()).add(queue)
        self._changed.set()
        try:
            seen = after or "0-0"
            while True:
                ms, seq = id_key(seen)
                rows: Any = await self.redis.xrange(key, min=f"{ms}-{seq + 1}", count=500)
                if not rows:
                    break
                for raw_id, fields in rows:
                    seen = _text(raw_id)
                    yield decode(seen, fields)
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

    async def _run(self) -> None:
        failures = Attempts(READ_BACKOFF)
        while True:
            if not self._cursors:
                self._changed.clear()
                await self._changed.wait()
                continue
            streams: dict[Any, Any] = {events_key(tid): cursor for tid, cursor in self._cursors.items()}
            try:
                result: Any = await self.reader.xread(streams, count=500, block=self.block_ms)
            except RedisError:
                log.warning("tournament feed read failed; retrying")
                await failures.failed()
                continue
            failures.reset()
            for raw_key, rows in result or []:
                key = _text(raw_key)
                tid = key[len(tournament_key("")) : -len(":events")]
                for raw_id, fields in rows:
                    event_id = _text(raw_id)
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
