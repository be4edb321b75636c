"""Revoked sessions (SignOut): known to every gateway without a Redis round trip per call.

A revocation is written to Redis (a hash of revoked session ids with their tokens' expiry, and a
hash of players signed out everywhere with the time before which their tokens no longer count) and
published on one channel; every gateway mirrors both (kit/redis/mirror.py), so checking a token
stays a dictionary look-up. Entries leave once no token they could refuse is still unexpired.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from kit.redis.keys import REVOKED_SESSIONS, SESSIONS_CHANNEL, SIGNED_OUT_PLAYERS
from kit.redis.layer import RedisLayer
from kit.redis.mirror import Mirror
from kit.redis.pipe import Command
from kit.redis.replies import pairs

log = logging.getLogger("tafel.gateway.sessions")


class Revocations(Mirror):
    channel = SESSIONS_CHANNEL
    log = log

    def __init__(self, redis: RedisLayer, token_ttl_s: int) -> None:
        super().__init__()
        self.redis = redis
        self.token_ttl_s = token_ttl_s
        self.sessions: dict[str, float] = {}
        self.players: dict[str, int] = {}

    def revoked(self, player_id: str, session_id: str, issued_ms: int) -> bool:
        if session_id and session_id in self.sessions:
            return True
        before = self.players.get(player_id)
        return before is not None and issued_ms < before

    def _apply(self, payload: str) -> None:
        kind, _, rest = payload.partition(":")
        key, _, value = rest.rpartition(":")
        try:
            if kind == "s":
                self.sessions[key] = float(value)
            elif kind == "p":
                self.players[key] = max(int(value), self.players.get(key, 0))
        except ValueError:
            log.warning("ignoring a malformed revocation message")

    async def revoke_session(self, session_id: str, expires_at: float) -> None:
        payload = f"s:{session_id}:{expires_at}"
        self._apply(payload)
        await self.redis.many(
            [("HSET", REVOKED_SESSIONS, session_id, str(expires_at)), ("PUBLISH", SESSIONS_CHANNEL, payload)]
        )

    async def revoke_player(self, player_id: str, before_ms: int) -> None:
        payload = f"p:{player_id}:{before_ms}"
        self._apply(payload)
        await self.redis.many(
            [("HSET", SIGNED_OUT_PLAYERS, player_id, str(before_ms)), ("PUBLISH", SESSIONS_CHANNEL, payload)]
        )

    async def load(self) -> None:
        """Read every revocation, dropping those no unexpired token can match any more."""
        now = time.time()
        replies: Any = await self.redis.many([("HGETALL", REVOKED_SESSIONS), ("HGETALL", SIGNED_OUT_PLAYERS)])
        sessions, players = pairs(replies[0]), pairs(replies[1])
        stale_sessions = [sid for sid, expires in sessions.items() if float(expires) <= now]
        stale_players = [pid for pid, before in players.items() if int(before) / 1000 + self.token_ttl_s <= now]
        for sid, expires in sessions.items():
            if sid not in stale_sessions:
                self.sessions[sid.decode()] = float(expires)
        for pid, before in players.items():
            if pid not in stale_players:
                self.players[pid.decode()] = max(int(before), self.players.get(pid.decode(), 0))
        forget: list[Command] = []
        if stale_sessions:
            forget.append(("HDEL", REVOKED_SESSIONS, *stale_sessions))
        if stale_players:
            forget.append(("HDEL", SIGNED_OUT_PLAYERS, *stale_players))
        await self.redis.many(forget)
        for gone in [session for session, expires in self.sessions.items() if expires <= now]:
            del self.sessions[gone]

    def on_message(self, channel: bytes, payload: bytes) -> None:
        self._apply(payload.decode(errors="replace"))
