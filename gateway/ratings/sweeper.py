"""The backstop for a crash between a game's record and its rating update: one replica at a time
(a lease in Redis, RATINGS_SWEEP_LOCK) reads the records index by end time from its cursor
(RATINGS_SWEEP_CURSOR, minus `lag_s`, for records written a little after their end time) and
applies every record whose hint (``tafel:{g:<id>}:rated``, set once a record is processed) is
missing. The applied markers make a repeat harmless."""

from __future__ import annotations

import logging
import secrets
import time
from typing import Any

from tafel.play.v1 import play_pb2

from gateway.ratings.book import RatingBook
from kit.loops import Loop
from kit.redis.keys import RATINGS_SWEEP_CURSOR, RATINGS_SWEEP_LOCK, RECORDS, rated_hint_key, record_key
from kit.redis.replies import text
from kit.redis.scripts import script

log = logging.getLogger("tafel.gateway.ratings")


class RatingSweeper:
    def __init__(
        self,
        book: RatingBook,
        *,
        interval_s: float = 30.0,
        lag_s: float = 300.0,
        batch: int = 200,
    ) -> None:
        self.book = book
        self.redis = book.redis
        self.interval_s = interval_s
        self.lag_ms = int(lag_s * 1000)
        self.batch = batch
        self.loop = Loop("rating sweeper", self._step, every_s=interval_s, log=log)
        self.applied = 0

    def start(self) -> None:
        self.loop.start()

    async def stop(self) -> None:
        await self.loop.stop()

    async def _step(self) -> None:
        await self.sweep_once()

    async def sweep_once(self, now_ms: int | None = None) -> int:
        """One pass; returns how many records it applied (0 when another replica holds the lease)."""
        token = secrets.token_hex(8)
        lease_ms = int(max(self.interval_s, 5.0) * 2000)
        if await self.redis.call("SET", RATINGS_SWEEP_LOCK, token, "NX", "PX", lease_ms) is None:
            return 0
        applied = 0
        try:
            now = int(time.time() * 1000) if now_ms is None else now_ms
            cursor_raw = await self.redis.call("GET", RATINGS_SWEEP_CURSOR)
            cursor = int(cursor_raw) if cursor_raw is not None else now - self.lag_ms
            low = cursor - self.lag_ms
            highest = cursor
            offset = 0
            while True:
                flat: Any = await self.redis.call(
                    "ZRANGEBYSCORE", RECORDS, low, "+inf", "WITHSCORES", "LIMIT", offset, self.batch
                )
                rows = [(text(flat[i]), int(float(flat[i + 1]))) for i in range(0, len(flat), 2)]
                if not rows:
                    break
                offset += len(rows)
                hints = await self.redis.many([("EXISTS", rated_hint_key(game_id)) for game_id, _ in rows])
                for (game_id, ended), hinted in zip(rows, hints, strict=True):
                    highest = max(highest, ended)
                    if hinted:
                        continue
                    stored: Any = await self.redis.call("GET", record_key(game_id))
                    if stored is None:
                        continue
                    record = play_pb2.GameRecord.FromString(bytes(stored))
                    if await self.book.apply_record(record) == "applied":
                        applied += 1
                    await self.redis.call("SET", rated_hint_key(game_id), "1", "EX", self.book.hint_ttl_s)
                if len(rows) < self.batch:
                    break
            await self.redis.call("SET", RATINGS_SWEEP_CURSOR, min(highest, now))
        finally:
            await self.redis.run(script("leases/release"), [RATINGS_SWEEP_LOCK], [token])
        self.applied += applied
        return applied
