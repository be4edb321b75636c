"""Vacations in Redis (keys: kit/redis/keys.py, "Vacations"; scripts lua/vacation/). Each change is
one script in the player's {p:<id>} slot: the state hash and the interval log the clocks read
change together."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import grpc

from gateway.vacation.model import HOUR_MS, LOG_KEPT_MS, Vacation, parse_log, utc_year
from kit.errors import Refused, invalid
from kit.redis.keys import vacation_key, vacation_log_key
from kit.redis.layer import RedisLayer
from kit.redis.replies import text
from kit.redis.scripts import script


def _opt(raw: Any) -> int | None:
    value = text(raw) if raw not in (None, b"", "") else ""
    return int(value) if value else None


class VacationStore:
    def __init__(self, layer: RedisLayer, *, allowance_ms: int) -> None:
        self.layer = layer
        self.allowance_ms = allowance_ms

    def _state(self, reply: Sequence[Any], now_ms: int) -> Vacation:
        year = _opt(reply[3]) or utc_year(now_ms)
        used = _opt(reply[4]) or 0
        if year != utc_year(now_ms):
            year, used = utc_year(now_ms), 0 if _opt(reply[1]) is None else used
        return Vacation(_opt(reply[1]), _opt(reply[2]), year, used, self.allowance_ms, now_ms)

    async def get(self, player_id: str, now_ms: int) -> Vacation:
        """The state as of now (one that ended by itself reads as ended, its hours used)."""
        row: Any = await self.layer.call("HMGET", vacation_key(player_id), "s", "e", "y", "u")
        start, end, year, used = _opt(row[0]), _opt(row[1]), _opt(row[2]), _opt(row[3]) or 0
        if start is not None and end is not None and now_ms >= end:
            used += end - start
            start = end = None
        if year != utc_year(now_ms) and start is None:
            year, used = utc_year(now_ms), 0
        return Vacation(start, end, year or utc_year(now_ms), used, self.allowance_ms, now_ms)

    async def start(self, player_id: str, now_ms: int, length_ms: int) -> tuple[bool, Vacation]:
        """Start one of `length_ms` (0: the allowance left); (whether it started now, the state)."""
        reply: Any = await self.layer.run(
            script("vacation/start"),
            [vacation_key(player_id), vacation_log_key(player_id)],
            [now_ms, utc_year(now_ms), self.allowance_ms, length_ms, now_ms - LOG_KEPT_MS],
        )
        outcome = int(reply[0])
        if outcome == -1:
            raise Refused(
                grpc.StatusCode.FAILED_PRECONDITION, "NO_VACATION_LEFT", "this year's vacation allowance is used up"
            )
        if outcome == -2:
            left = max(0, self.allowance_ms - int(text(reply[4])))
            raise invalid(
                "BAD_VACATION_LENGTH",
                f"at most {left // HOUR_MS} hours of vacation are left this year",
                field="duration",
            )
        return outcome == 1, self._state(reply, now_ms)

    async def end(self, player_id: str, now_ms: int) -> tuple[bool, Vacation]:
        """End the one in progress now; (whether it ended now, rather than none running, the state)."""
        reply: Any = await self.layer.run(
            script("vacation/end"), [vacation_key(player_id), vacation_log_key(player_id)], [now_ms]
        )
        state = Vacation(None, None, _opt(reply[3]) or utc_year(now_ms), int(text(reply[4])), self.allowance_ms, now_ms)
        if state.year != utc_year(now_ms):
            state = Vacation(None, None, utc_year(now_ms), 0, self.allowance_ms, now_ms)
        return int(reply[0]) == 1, state

    async def away(self, player_id: str, since_ms: int) -> list[tuple[int, int]]:
        """The player's vacation intervals that end after `since_ms` (the one in progress with its
        planned end)."""
        members: Any = await self.layer.call(
            "ZRANGEBYSCORE", vacation_log_key(player_id), since_ms - LOG_KEPT_MS, "+inf"
        )
        return [(b, e) for b, e in parse_log(members) if e > since_ms]

    async def on_vacation(self, player_ids: Sequence[str], now_ms: int) -> set[str]:
        """Which of the players are on vacation now (one round trip)."""
        if not player_ids:
            return set()
        replies: Any = await self.layer.many([("HGET", vacation_key(p), "e") for p in player_ids])
        ends = {p: _opt(end) for p, end in zip(player_ids, replies, strict=True)}
        return {p for p, end in ends.items() if end is not None and now_ms < end}
